"""The contract every registered format keeps (``formats.FORMATS``): a malformed message is refused with a
``MalformedMessage`` that names the format, the message's topic/partition/offset and the reason, never
skipped. One case per captured message in ``tests/data/<format>/malformed/``, plus the null value.

The reasons below are those with previews on (``--log-payloads``); by default a reason that would
show a value describes it instead (``DEFAULT_REASONS``): errors carry no payload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from formats import FORMATS
from formats.events import MessageContext
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import previews

DATA = Path(__file__).resolve().parents[1] / "data"
CTX = MessageContext(SourcePosition("cdc", 3, 42))

# format -> its folder under tests/data
FOLDERS = {
    "canal-json": "canal",
    "debezium-json": "debezium",
    "debezium-bson": "debezium-bson",
    "debezium-avro": "debezium-avro",
    "maxwell-json": "maxwell",
    "ogg-json": "ogg",
    "aws-dms-json": "aws-dms",
    "aliyun-json": "aliyun",
    "json": "json",
}

# format -> (file under malformed/, the reason the error must give)
MALFORMED: dict[str, list[tuple[str, str]]] = {
    "canal-json": [
        ("not-json.txt", "not valid JSON"),
        ("array-root.json", "expected a JSON object"),
        ("unknown-type.json", "unknown 'type'"),
        ("update-without-old.json", "'old' is missing"),
        ("update-old-length.json", "2 rows in 'data' but 1 in 'old'"),
        ("data-not-list.json", "'data' must be a list"),
    ],
    "debezium-json": [
        ("not-json.txt", "not valid JSON"),
        ("array-root.json", "expected a JSON object"),
        ("unknown-op.json", "unknown 'op' 'x'"),
        ("missing-op.json", "field 'op' is missing"),
        ("insert-without-after.json", "field 'after' is missing or null in an 'op': 'c' message"),
        ("delete-without-before.json", "field 'before' is missing or null in an 'op': 'd' message"),
        ("after-not-object.json", "field 'after' must be an object, got list"),
        ("payload-not-object.json", "'payload' must be an object"),
        ("schema-without-payload.json", "needs both 'schema' and 'payload'"),
        ("schema-without-after.json", "no 'after' or 'before' struct"),
        ("column-not-in-schema.json", "column 'extra' is not in the message's 'schema'"),
        ("bad-base64-decimal.json", "column 'price' (DECIMAL(10, 2)): cannot read '12.5'"),
        ("source-db-not-string.json", "field 'db' must be a str"),
    ],
    "debezium-avro": [  # past the wire format, tests/formats/test_debezium_avro.py (the bodies need schemas)
        ("not-wire-format.bin", "the value is not in the Confluent Schema Registry wire format"),
        ("short.bin", "3 bytes starting with byte 0"),
        ("wrong-magic.bin", "starting with byte 1"),
    ],
    "debezium-bson": [
        ("not-json.txt", "not valid JSON"),
        ("unknown-op.json", "unknown 'op' 'x'"),
        ("missing-op.json", "field 'op' is missing"),
        ("insert-without-after.json", "field 'after' is missing or null in an 'op': 'c' message"),
        ("after-not-string.json", "field 'after' must be a string of Extended JSON"),
        ("after-not-extended-json.json", "field 'after': not valid Extended JSON"),
        ("after-not-document.json", "field 'after': expected a document, got a list of 2 items"),
        ("bad-oid.json", "field 'after': a malformed Extended JSON value $oid"),
        ("delete-without-before-or-key.json", "no 'before' and no 'id' in the message key for an 'op': 'd'"),
        ("payload-not-object.json", "'payload' must be an object"),
    ],
    "maxwell-json": [
        ("not-json.txt", "not valid JSON"),
        ("array-root.json", "expected a JSON object"),
        ("missing-type.json", "field 'type' is missing"),
        ("unknown-type.json", "unknown 'type' 'replace'"),
        ("insert-without-data.json", "field 'data' is missing or null in a 'insert' message"),
        ("encrypted-data.json", "'encrypt' option is on"),
        ("old-not-object.json", "field 'old' must be a dict, got list"),
        ("ts-not-number.json", "field 'ts' must be a int, got str"),
        ("pk-not-names.json", "'primary_key_columns' must be a column name"),
    ],
    "ogg-json": [
        ("not-json.txt", "not valid JSON"),
        ("missing-op-type.json", "field 'op_type' is missing"),
        ("unknown-op.json", "unknown 'op_type' 'X'"),
        ("truncate.json", "op_type 'T' (TRUNCATE)"),
        ("insert-without-after.json", "field 'after' is missing or null, but op_type 'I' needs it"),
        ("update-without-before.json", "field 'before' is missing or null, but op_type 'U' needs it"),
        ("delete-without-before.json", "field 'before' is missing or null, but op_type 'D' needs it"),
        ("before-not-object.json", "field 'before' must be a JSON object, got list"),
        ("table-without-schema.json", "field 'table' must be 'SCHEMA.TABLE', got 'ITEMS'"),
        ("bad-op-ts.json", "field 'op_ts' is not a timestamp"),
        ("pk-not-list.json", "field 'primary_keys' must be a list, got str"),
    ],
    "aws-dms-json": [
        ("not-json.txt", "not valid JSON"),
        ("unknown-operation.json", "unknown metadata 'operation' 'upsert'"),
        ("missing-metadata.json", "field 'metadata' is missing or null"),
        ("missing-table-name.json", "field 'metadata.table-name' is missing or null"),
        ("missing-record-type.json", "field 'metadata.record-type' is missing or null"),
        ("data-not-object.json", "field 'data' must be a dict, got list"),
    ],
    "aliyun-json": [
        ("not-json.txt", "not valid JSON"),
        ("unknown-op.json", "unknown payload 'op' 'UPSERT'"),
        ("insert-without-after.json", "field 'payload.after' is missing or not an object"),
        ("missing-payload.json", "field 'payload' is missing or null"),
        ("missing-schema.json", "field 'schema' is missing or null"),
        ("column-without-type.json", "every entry of 'schema.dataColumn' needs a string 'name' and 'type'"),
        ("bad-base64.json", "BYTES value 'not base64!' is not Base64 text"),
        ("null-primary-key.json", "'schema.primaryKey' contains null"),
    ],
    "json": [
        ("not-json.txt", "not valid JSON"),
        ("array-root.json", "expected a JSON object, got list"),
        ("scalar-root.json", "expected a JSON object, got str"),
    ],
}

# (format, file) -> the reason without previews, where the one above shows a value
DEFAULT_REASONS: dict[tuple[str, str], str] = {
    ("debezium-json", "unknown-op.json"): "unknown 'op' a string of 1 character (expected c, r, u, d)",
    (
        "debezium-json",
        "bad-base64-decimal.json",
    ): "column 'price' (DECIMAL(10, 2)): cannot read a string of 4 characters",
    ("debezium-bson", "unknown-op.json"): "unknown 'op' a string of 1 character (expected c, r, u, d)",
    ("maxwell-json", "unknown-type.json"): "unknown 'type' a string of 7 characters",
    ("ogg-json", "unknown-op.json"): "unknown 'op_type' a string of 1 character (expected I, U or D)",
    ("ogg-json", "table-without-schema.json"): "field 'table' must be 'SCHEMA.TABLE', got a string of 5 characters",
    ("aws-dms-json", "unknown-operation.json"): "unknown metadata 'operation' a string of 6 characters",
    ("aliyun-json", "unknown-op.json"): "unknown payload 'op' a string of 6 characters",
    ("aliyun-json", "bad-base64.json"): "BYTES value a string of 11 characters is not Base64 text",
}

# A null value (with or without a key): refused as "no value", except where the format gives it a
# meaning (debezium's tombstone after a delete changes no row).
TOMBSTONE_IS_NO_CHANGE = {"debezium-json", "debezium-bson", "debezium-avro"}


def _cases() -> list[Any]:
    return [
        pytest.param(fmt, file, reason, id=f"{fmt}:{file}")
        for fmt in sorted(FORMATS)
        for file, reason in MALFORMED.get(fmt, [])
    ]


def assert_malformed(fmt: str, value: bytes | None, key: bytes | None, reason: str) -> None:
    """``fmt``'s parser refuses ``value`` with a ``MalformedMessage`` that names the format, the
    message's topic/partition/offset and ``reason``."""
    with pytest.raises(MalformedMessage) as info:
        FORMATS[fmt].parse(value, key, CTX)
    text = str(info.value)
    pos = CTX.position
    assert f"malformed {fmt} message at topic '{pos.topic}', partition {pos.partition}, offset {pos.offset}" in text
    assert reason in text
    assert info.value.format == fmt
    assert info.value.position == pos


@pytest.mark.parametrize(("fmt", "file", "reason"), _cases())
def test_malformed_message_names_its_format_position_and_reason(fmt: str, file: str, reason: str) -> None:
    with previews(True):
        assert_malformed(fmt, (DATA / FOLDERS[fmt] / "malformed" / file).read_bytes(), None, reason)


@pytest.mark.parametrize(("fmt", "file", "reason"), _cases())
def test_malformed_message_by_default_describes_values(fmt: str, file: str, reason: str) -> None:
    assert_malformed(
        fmt, (DATA / FOLDERS[fmt] / "malformed" / file).read_bytes(), None, DEFAULT_REASONS.get((fmt, file), reason)
    )


@pytest.mark.parametrize("key", [None, b"key"], ids=["no-key", "with-key"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_null_value(fmt: str, key: bytes | None) -> None:
    if fmt in TOMBSTONE_IS_NO_CHANGE:
        assert FORMATS[fmt].parse(None, key, CTX) == []
    else:
        assert_malformed(fmt, None, key, "no value")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_has_malformed_cases_and_every_captured_one_is_asserted(fmt: str) -> None:
    assert fmt in FOLDERS and MALFORMED.get(fmt), f"{fmt}: no malformed-message cases"
    captured = {p.name for p in (DATA / FOLDERS[fmt] / "malformed").iterdir()}
    assert captured == {file for file, _ in MALFORMED[fmt]}
