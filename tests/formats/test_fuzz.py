"""Fuzzing every registered format (``formats.FORMATS``): arbitrary bytes, and the real messages of
``tests/data/`` mutated (fields removed, types changed, truncated, deeply nested, huge strings,
non-UTF-8 bytes). The parser, and the assembler behind it (the bulk path where the format has one,
the per-event path, the conversion to Arrow), either take a message or refuse it with lakecdc's
own error naming its topic/partition/offset; nothing else escapes (no KeyError, TypeError,
UnicodeDecodeError, RecursionError, orjson or msgspec error).

The number of examples comes from the hypothesis profile (``conftest.py``): bounded in
``make test``, many more under ``make fuzz``. Escapes found so far stay as explicit examples."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from formats import FORMATS
from formats.events import MessageContext
from ingest.pipeline.assembler import ChunkAssembler
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution.errors import LakeCdcError, MalformedMessage, SourcePosition, UnsupportedChange
from tests.conftest import sample_messages
from tests.formats.test_malformed_contract import DATA, FOLDERS

TOPIC, PARTITION, OFFSET = "fuzz", 7, 1234
CTX = MessageContext(SourcePosition(TOPIC, PARTITION, OFFSET), 1_700_000_000_000)
# JSON formats: debezium-avro (binary bodies decoded against registry schemas) is fuzzed and checked
# for payloads in tests/formats/test_debezium_avro.py
NAMES = sorted(f for f in FORMATS if FORMATS[f].with_schemas is None)


def _samples(fmt: str) -> list[bytes]:
    """Every captured message of ``fmt`` (malformed ones too: they are real shapes)."""
    found: list[bytes] = []
    if fmt not in FOLDERS:
        return found  # (test_every_format_has_captured_messages_to_mutate says so)
    for path in sorted((DATA / FOLDERS[fmt]).rglob("*")):
        if path.is_file() and path.suffix in (".json", ".txt"):
            found += [m for m in sample_messages(path) if _is_json(m)]
    return found


def _is_json(message: bytes) -> bool:
    try:
        json.loads(message)
    except ValueError:
        return False
    return True


SAMPLES = {fmt: _samples(fmt) for fmt in NAMES}


def _refused(exc: LakeCdcError, offsets: range) -> None:
    """``exc`` is lakecdc's refusal of a message, naming where it is."""
    assert isinstance(exc, MalformedMessage | UnsupportedChange), f"{type(exc).__name__}: {exc}"
    position = exc.position
    assert isinstance(position, SourcePosition), f"no position: {exc}"
    assert (position.topic, position.partition) == (TOPIC, PARTITION), exc
    assert position.offset in offsets, exc
    assert str(position) in str(exc)


def parse_or_refuse(fmt: str, value: bytes | None, key: bytes | None = None) -> None:
    try:
        FORMATS[fmt].parse(value, key, CTX)
    except LakeCdcError as exc:
        _refused(exc, range(OFFSET, OFFSET + 1))


def _assembler(fmt: str, bulk: bool, database_sync: bool) -> ChunkAssembler:
    router = TableRouter("ods") if database_sync else TableRouter("ods", table="t")
    return ChunkAssembler(ParseSpec(fmt, router, chunk_rows=64, bulk_path=bulk), TOPIC, PARTITION)


def assemble_or_refuse(
    fmt: str, good: list[bytes], value: bytes | None, key: bytes | None, bulk: bool, database_sync: bool
) -> None:
    """``good`` messages (so that a bulk decoder has learned their tables), then ``value``, through
    an assembler to finished chunks."""
    assembler = _assembler(fmt, bulk, database_sync)
    offsets = range(OFFSET, OFFSET + len(good) + 1)
    try:
        for i, message in enumerate(good):
            assembler.add(message, None, OFFSET + i, CTX.timestamp_ms)
        assembler.add(value, key, OFFSET + len(good), CTX.timestamp_ms)
        assembler.finish()
    except LakeCdcError as exc:
        _refused(exc, offsets)


def _assembles(fmt: str, message: bytes) -> bool:
    try:
        _assembler(fmt, True, False).add(message, None, OFFSET, None)
    except LakeCdcError:
        return False
    return True


# The captured messages a table-sync assembler takes: the prefix before a mutated message.
GOOD = {fmt: [m for m in SAMPLES[fmt] if _assembles(fmt, m)] for fmt in NAMES}


def test_every_format_has_captured_messages_to_mutate() -> None:
    for fmt in NAMES:
        assert fmt in FOLDERS, f"{fmt}: add its tests/data folder to FOLDERS"
        assert len(GOOD[fmt]) >= 2, fmt


# --- mutations of real messages ------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**80),  # past int64 (orjson refuses, json reads)
    st.floats(),  # NaN and infinities too (JSON has none)
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: _Raw(str(d))),
    st.text(max_size=20),
    st.sampled_from(["", "0", "-1", "1e400", "null", "true", "0000-00-00 00:00:00", "2024-02-30", "25:61:61"]),
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
)
_NOT_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xc0\xaf"]
_DEPTHS = [2, 64, 255, 256, 1023, 1024, 1025, 10_000]


class _Raw(str):
    """A number written as is (more digits than a double holds)."""


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _replace(root: Any, path: tuple[Any, ...], make: Callable[[Any], Any]) -> Any:
    if not path:
        return make(root)
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = make(parent[path[-1]])
    return root


def _const(value: Any) -> Callable[[Any], Any]:
    return lambda _: value


def _remove(root: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return root
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return root


def _nested(depth: int, kind: str) -> str:
    if kind == "list":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _dumps(node: Any, fillers: dict[str, str]) -> str:
    """JSON text of ``node``; placeholders become their raw text (deep nesting, exact numbers)."""

    def default(o: Any) -> Any:
        raise TypeError(o)

    text = json.dumps(node, ensure_ascii=False, default=default)
    for placeholder, raw in fillers.items():
        text = text.replace(json.dumps(placeholder), raw)
    return text


@st.composite
def mutated(draw: st.DrawFn, fmt: str) -> bytes:
    """A captured message of ``fmt`` with one to four structural changes and maybe a byte-level one."""
    tree = json.loads(draw(st.sampled_from(SAMPLES[fmt])))
    fillers: dict[str, str] = {}
    for n in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(list(_paths(tree))))
        how = draw(st.sampled_from(["remove", "retype", "retype", "nest", "huge", "copy-type"]))
        if how == "remove":
            tree = _remove(tree, path)
        elif how == "retype":
            value = draw(_VALUES)
            if isinstance(value, _Raw):
                fillers[f"\x00raw{n}"] = str(value)
                value = f"\x00raw{n}"
            tree = _replace(tree, path, _const(value))
        elif how == "nest":
            placeholder = f"\x00nest{n}"
            fillers[placeholder] = _nested(draw(st.sampled_from(_DEPTHS)), draw(st.sampled_from(["list", "dict"])))
            tree = _replace(tree, path, _const(placeholder))
        elif how == "huge":
            size = draw(st.sampled_from([1_000, 100_000, 1_000_000]))
            char = draw(st.sampled_from(["x", "7", "é", "\U0001f600", " ", "\\"]))
            tree = _replace(tree, path, _const(char * size))
        else:  # the same value in another JSON type: "12" <-> 12, {"a": 1} <-> [["a", 1]]
            tree = _replace(tree, path, _other_type)
    data = _dumps(tree, fillers).encode()
    cut = draw(st.sampled_from(["none", "none", "truncate", "not-utf8", "not-utf8-in-text"]))
    if cut == "truncate":
        return data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    if cut == "not-utf8":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.sampled_from(_NOT_UTF8)) + data[at:]
    if cut == "not-utf8-in-text":
        quotes = [i for i, b in enumerate(data) if b == 0x22]
        if quotes:
            at = draw(st.sampled_from(quotes)) + 1
            return data[:at] + draw(st.sampled_from(_NOT_UTF8)) + data[at:]
    return data


def _other_type(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return [v]
    if isinstance(v, bool) or v is None:
        return str(v).lower()
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, dict):
        return [[k, x] for k, x in v.items()]
    return {str(i): x for i, x in enumerate(v)}


# --- properties ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", NAMES)
@settings(max_examples=4 * settings().max_examples)  # (the profile's, settings() inherits it)
@given(value=st.binary(max_size=512), key=st.none() | st.binary(max_size=32))
@example(value=b"", key=None)
@example(value=b"\xff\xfe", key=None)
@example(value=b"[" * 100_000, key=None)
@example(value=b'{"a":' * 100_000, key=None)
def test_arbitrary_bytes_are_parsed_or_refused(fmt: str, value: bytes, key: bytes | None) -> None:
    parse_or_refuse(fmt, value, key)


@pytest.mark.parametrize("fmt", NAMES)
@given(data=st.data())
def test_mutated_messages_are_parsed_or_refused(fmt: str, data: st.DataObject) -> None:
    value = data.draw(mutated(fmt))
    key = data.draw(st.none() | st.sampled_from([b'{"id": 1}', b"\xff", b"[" * 5000, b'{"payload": 1, "schema": 2}']))
    parse_or_refuse(fmt, value, key)


@pytest.mark.parametrize("fmt", NAMES)
@given(data=st.data())
def test_mutated_messages_are_assembled_or_refused(fmt: str, data: st.DataObject) -> None:
    """Through the bulk path (where the format has one) and the per-event path, into a table-sync
    and a database-sync router, to finished chunks (the conversion to Arrow)."""
    bulk = FORMATS[fmt].bulk_decoder is not None and data.draw(st.booleans(), label="bulk")
    database_sync = data.draw(st.booleans(), label="database_sync")
    good = data.draw(st.lists(st.sampled_from(GOOD[fmt]), min_size=1, max_size=3))
    value = data.draw(mutated(fmt))
    assemble_or_refuse(fmt, good, value, None, bulk, database_sync)


@pytest.mark.parametrize("fmt", NAMES)
@pytest.mark.parametrize("kind", ["list", "dict"])
def test_deep_nesting_in_each_field_is_refused_or_taken(fmt: str, kind: str) -> None:
    """The first fields of captured messages each replaced by a value nested 10,000 levels deep
    (and 1,000: under orjson's limit, over what it writes back)."""
    for depth in (1_000, 10_000):
        nested = _nested(depth, kind)
        for message in GOOD[fmt][:3]:
            for path in list(_paths(json.loads(message)))[:16]:
                tree = _replace(json.loads(message), path, lambda _: "\x00deep")
                value = _dumps(tree, {"\x00deep": nested}).encode()
                parse_or_refuse(fmt, value)
                assemble_or_refuse(fmt, GOOD[fmt][:1], value, None, True, False)


@pytest.mark.parametrize("fmt", NAMES)
def test_non_utf8_in_each_value_names_the_offset(fmt: str) -> None:
    """Invalid UTF-8 inside each string of each captured message, behind good messages of the same
    table (so canal's bulk lane takes the bad one first): refused with its offset, or taken."""
    for message in GOOD[fmt][:4]:
        quotes = [i for i, b in enumerate(message) if b == 0x22]
        for n, at in enumerate(quotes[1::2][:30]):  # closing quotes: the byte ends a key or a value
            value = message[:at] + (b"\xff", b"\xed\xa0\x80")[n % 2] + message[at:]
            parse_or_refuse(fmt, value)
            for bulk in (True, False):
                assemble_or_refuse(fmt, [message], value, None, bulk, False)


def test_canal_bulk_lane_refuses_non_utf8_with_the_offset() -> None:
    """The escape #24 names: non-UTF-8 text in a value on canal's bulk lane was a bare
    UnicodeDecodeError without an offset."""
    lines = sample_messages(DATA / "canal" / "bulk-path-edges.txt")
    bad = lines[0].replace(b'"x"', b'"\xff\xfe"')
    assembler = _assembler("canal-json", True, False)
    assembler.add(lines[0], None, 10, None)
    with pytest.raises(MalformedMessage) as info:
        assembler.add(bad, None, 11, None)
    assert info.value.position == SourcePosition(TOPIC, PARTITION, 11)


# --- escapes the fuzzing found, each refused now with lakecdc's error and its position ----------

DEEP = "\x00deep"  # a value 1,000 levels deep (over what orjson writes back, under what it reads)
BIG = "\x00big"  # an integer past 64 bits
_CANAL = {"database": "shop", "table": "t", "type": "INSERT", "isDdl": False, "mysqlType": {"id": "int"}}


def _j(node: Any, deep: int = 1000) -> bytes:
    return _dumps(node, {DEEP: _nested(deep, "list"), BIG: "-9223372036854775809"}).encode()


FOUND: list[tuple[str, str, bytes]] = [
    # a list as a primary-key name: TypeError (unhashable) in the schema cache
    ("canal-json", "pkNames-of-lists", _j({**_CANAL, "data": [{"id": "1"}], "pkNames": [["id"]]})),
    # nested deeper than orjson writes back: orjson's "Recursion limit reached" (a TypeError)
    ("aliyun-json", "deep-dataColumn", _j({"schema": {"dataColumn": DEEP}, "payload": {"op": "INSERT"}})),
    ("aliyun-json", "deep-ddl", _j({"ddl": True, "schema": {"dataColumn": []}, "payload": {"ddl": DEEP}})),
    # an object as a table name became the table "{'a': 1}"
    (
        "aliyun-json",
        "object-tableName",
        _j(
            {
                "schema": {"dataColumn": [{"name": "id", "type": "LONG"}], "source": {"tableName": {"a": 1}}},
                "payload": {"op": "INSERT", "after": {"dataColumn": {"id": 1}}},
            }
        ),
    ),
    # debezium's exact-number path: RecursionError in json.loads, orjson's 64-bit limit writing back
    ("debezium-json", "exact-and-deep", _j({"x": BIG, "op": "c", "after": {"a": DEEP}}, deep=5000)),
    ("debezium-json", "exact-big-int-in-row", _j({"op": "c", "after": {"a": [BIG], "b": "12345678901234567.5"}})),
    (
        "debezium-json",
        "exact-big-int-in-schema",
        _j(
            {
                "schema": {"fields": [{"field": "after", "fields": [{"field": "a", "type": "int64", "x": BIG}]}]},
                "payload": {"after": {"a": 1}, "op": "c"},
            }
        ),
    ),
    # a value deeper than repr() goes: RecursionError while the conversion error described it
    ("json", "deep-value", _j({"a": DEEP}, deep=990)),
    # a row without columns: TypeError in the chunk builder's column getter
    ("json", "empty-object", b"{}"),
    (
        "aws-dms-json",
        "empty-data",
        _j({"data": {}, "metadata": {"record-type": "data", "operation": "insert", "table-name": "t"}}),
    ),
    # a table name that is not safe as a directory: refused by routing, now with the position
    ("canal-json", "unsafe-table-name", _j({**_CANAL, "data": [{"id": "1"}], "table": "a/b"})),
]


@pytest.mark.parametrize(("fmt", "message"), [(f, m) for f, _, m in FOUND], ids=[f"{f}:{n}" for f, n, _ in FOUND])
def test_found_escapes_are_refused_with_the_position(fmt: str, message: bytes) -> None:
    parse_or_refuse(fmt, message)
    refused = 0
    for bulk in (True, False):
        for database_sync in (False, True) if fmt != "json" else (False,):  # (json names no table)
            assembler = _assembler(fmt, bulk, database_sync)
            assembler.add(GOOD[fmt][0], None, OFFSET, None)
            try:
                assembler.add(message, None, OFFSET + 1, None)
                assembler.finish()
            except MalformedMessage as exc:
                assert exc.position == SourcePosition(TOPIC, PARTITION, OFFSET + 1), str(exc)
                refused += 1
    assert refused, "taken on every path"


def test_canal_bulk_path_refuses_deep_nesting_with_the_offset() -> None:
    """msgspec's RecursionError on the bulk path (a message nested 10,000 levels deep)."""
    lines = sample_messages(DATA / "canal" / "bulk-path-edges.txt")
    deep = _nested(10_000, "list").encode()
    for bad in (_nested(10_000, "dict").encode(), lines[0][:-1] + b', "x": ' + deep + b"}"):
        assembler = _assembler("canal-json", True, False)
        assembler.add(lines[0], None, 10, None)
        with pytest.raises(MalformedMessage) as info:
            assembler.add(bad, None, 11, None)
        assert info.value.position == SourcePosition(TOPIC, PARTITION, 11)
