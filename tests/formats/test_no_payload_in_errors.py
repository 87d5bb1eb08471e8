"""Errors carry no payload by default (#24): every string value of every captured message of every
format, in turn, replaced by a marker; whatever error the parser, the assembler (bulk and per-event
paths) or the conversion to Arrow raises for it names position, field and reason, never the marker.
With previews on (``--log-payloads``, ``ParseSpec.log_payloads``) the errors that are about the value
show it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from formats import FORMATS
from ingest.pipeline.assembler import ChunkAssembler
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution import payloads
from schema_evolution.errors import LakeCdcError, MalformedMessage
from schema_evolution.payloads import ddl_fields, describe, preview, previews, reason
from tests.formats.test_fuzz import CTX, GOOD, SAMPLES
from tests.formats.test_malformed_contract import DATA, FOLDERS

MARKER = "SECRET-MARKER-7f3a"
# JSON formats: debezium-avro (binary bodies decoded against registry schemas) is fuzzed and checked
# for payloads in tests/formats/test_debezium_avro.py
NAMES = sorted(f for f in FORMATS if FORMATS[f].with_schemas is None)


# Names and types (schema, not payload): errors may name a table, a column or a type they refuse.
SCHEMA_FIELDS = frozenset(
    {"mysqlType", "pkNames", "schema", "primary_keys", "primary_key_columns", "table", "database", "db"}
    | {"tableName", "dbName", "schema-name", "table-name", "databaseName"}
)


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of the string values (not the keys; not names and types) of a JSON tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k not in SCHEMA_FIELDS:
                yield from _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*path, i))
    elif isinstance(node, str):
        yield path


def _with(message: bytes, path: tuple[Any, ...], value: str) -> bytes:
    tree = json.loads(message)
    node = tree
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return json.dumps(tree).encode()


def marked(fmt: str) -> Iterator[bytes]:
    """``fmt``'s captured messages with one string value a marker (alone, or inside other text),
    and as broken JSON around a marker."""
    for message in SAMPLES[fmt][:15]:  # (all-types.json first, where a format has one)
        for n, path in enumerate(_leaves(json.loads(message))):
            yield _with(message, path, MARKER if n % 2 else f"12 {MARKER} 0000-00-00")
        yield message[:-2] + f' "{MARKER}" x'.encode()
    yield f'{{"x": "{MARKER}"'.encode()
    yield f"[{MARKER}]".encode()


def errors(fmt: str, message: bytes, log_payloads: bool = False) -> Iterator[LakeCdcError]:
    """The errors ``message`` causes: parsed alone, and assembled after a good message of the format
    on each path (so canal's bulk decoder has learned the table)."""
    try:
        FORMATS[fmt].parse(message, None, CTX)
    except LakeCdcError as exc:
        yield exc
    assert GOOD[fmt], f"{fmt}: no captured message that assembles (tests/data)"
    for bulk in (True, False):
        spec = ParseSpec(fmt, TableRouter("ods", table="t"), bulk_path=bulk, log_payloads=log_payloads)
        assembler = ChunkAssembler(spec, "cdc", 3)
        try:
            assembler.add(GOOD[fmt][0], None, 41, None)
            assembler.add(message, None, 42, None)
            assembler.finish()
        except LakeCdcError as exc:
            yield exc


@pytest.fixture(autouse=True)
def _previews_off() -> Iterator[None]:
    with previews(False):
        yield


@pytest.mark.parametrize("fmt", NAMES)
def test_no_error_shows_a_value_by_default(fmt: str) -> None:
    seen = 0
    for message in marked(fmt):
        for exc in errors(fmt, message):
            assert MARKER not in str(exc), f"{type(exc).__name__}: {exc}"
            assert all(MARKER not in str(arg) for arg in exc.args)
            seen += 1
    assert seen >= 10, f"only {seen} errors: the test lost its bad messages"


# format -> a message whose error is about the marked value (so that previews show it)
ABOUT_THE_VALUE: dict[str, list[tuple[str, tuple[Any, ...]]]] = {
    "canal-json": [("unknown-type.json", ("type",))],
    "debezium-json": [("unknown-op.json", ("op",)), ("bad-base64-decimal.json", ("payload", "after", "price"))],
    "maxwell-json": [("unknown-type.json", ("type",))],
    "ogg-json": [("unknown-op.json", ("op_type",)), ("bad-op-ts.json", ("op_ts",))],
    "aws-dms-json": [("unknown-operation.json", ("metadata", "operation"))],
    "aliyun-json": [("unknown-op.json", ("payload", "op"))],
    "json": [],
}


def _about_the_value() -> Iterator[Any]:
    for fmt, cases in ABOUT_THE_VALUE.items():
        for file, path in cases:
            message = (DATA / FOLDERS[fmt] / "malformed" / file).read_bytes().strip()
            yield pytest.param(fmt, _with(message, path, MARKER), id=f"{fmt}:{file}")
    yield pytest.param("canal-json", b'{"data": "' + MARKER.encode() + b'" x}', id="canal-json:not-json")
    # a value that does not convert to its column's type (the conversion to Arrow)
    canal_int = (
        '{"data":[{"id":"' + MARKER + '"}],"database":"shop","table":"t","type":"INSERT","isDdl":false,'
        '"mysqlType":{"id":"int"},"pkNames":["id"]}'
    )
    yield pytest.param("canal-json", canal_int.encode(), id="canal-json:int-column")
    yield pytest.param("aliyun-json", _aliyun_bytes(), id="aliyun-json:bytes-column")


def _aliyun_bytes() -> bytes:
    message = {
        "schema": {
            "dataColumn": [{"name": "id", "type": "LONG"}, {"name": "b", "type": "BYTES"}],
            "primaryKey": ["id"],
            "source": {"dbType": "MySQL", "dbName": "shop", "tableName": "t"},
        },
        "payload": {"before": None, "after": {"dataColumn": {"id": 1, "b": f"{MARKER}!"}}, "op": "INSERT"},
    }
    return json.dumps(message).encode()


@pytest.mark.parametrize(("fmt", "message"), list(_about_the_value()))
def test_previews_show_the_value_the_error_is_about(fmt: str, message: bytes) -> None:
    found = list(errors(fmt, message))
    assert found and all(MARKER not in str(exc) for exc in found)
    # --log-payloads: the driver (enable_previews) and each read task (ParseSpec.log_payloads)
    with previews(True):
        shown = list(errors(fmt, message, log_payloads=True))
    assert shown and all(MARKER in str(exc) for exc in shown), [str(e) for e in shown]
    assert all(isinstance(exc, MalformedMessage) and exc.position is not None for exc in shown)


def test_the_read_task_takes_the_setting_from_its_parse_spec() -> None:
    ChunkAssembler(ParseSpec("canal-json", TableRouter("ods", table="t"), log_payloads=True), "cdc", 0)
    assert payloads.previews_enabled()
    ChunkAssembler(ParseSpec("canal-json", TableRouter("ods", table="t")), "cdc", 0)
    assert not payloads.previews_enabled()


# --- the helpers themselves ------------------------------------------------------------------------


def test_describe_gives_kind_and_size_only() -> None:
    assert describe(MARKER) == "a string of 18 characters"
    assert describe(MARKER.encode()) == "18 bytes"
    assert describe({"a": MARKER}) == "a JSON object of 1 field"
    assert describe([MARKER, 1]) == "a list of 2 items"
    assert describe(12) == describe(1.5) == "a number"
    assert describe(None) == "null"
    assert describe(True) == "a boolean"


def test_preview_without_and_with_previews() -> None:
    assert preview(MARKER) == "a string of 18 characters"
    with previews(True):
        assert preview(MARKER) == repr(MARKER)
        assert preview("x" * 500) == repr("x" * 500)[:80] + "…"
        assert preview(b"\xff" + MARKER.encode()) == repr("\ufffd" + MARKER)
        deep: list[Any] = []
        for _ in range(100_000):
            deep = [deep]
        assert preview(deep) == "a list of 1 item"  # deeper than repr() goes
        assert preview(10**5000) == "a number"  # longer than str() writes


def test_reason_keeps_the_reason_and_drops_the_value() -> None:
    for value in (MARKER, f"  {MARKER.lower()} ", f"a'{MARKER}"):
        try:
            int(value)
        except ValueError as exc:
            text = reason(exc, value)
        assert MARKER.lower() not in text.lower()
        assert text.startswith("invalid literal for int() with base 10: ")
    arrow_like = ValueError(f"Failed to parse string: '{MARKER}' as a scalar of type int32\nmore")
    assert reason(arrow_like, MARKER) == "Failed to parse string: '…' as a scalar of type int32"
    assert reason(ValueError("Integer value 300 not in range: -128 to 127"), 300) == (
        "Integer value … not in range: -128 to 127"
    )
    with previews(True):
        assert reason(arrow_like, MARKER) == f"Failed to parse string: '{MARKER}' as a scalar of type int32"


def test_ddl_log_fields_name_kind_and_length_only() -> None:
    ddl = f"/* app */ ALTER TABLE t ADD COLUMN c INT DEFAULT '{MARKER}'"
    assert ddl_fields(ddl) == {"ddl_kind": "ALTER TABLE", "ddl_chars": len(ddl)}
    assert ddl_fields(f"{MARKER} TABLE") == {"ddl_kind": "other", "ddl_chars": len(MARKER) + 6}
    with previews(True):
        assert ddl_fields(ddl) == {"ddl": ddl}
