"""The compiled Avro decoder (``formats.debezium_avro_decoder``) against fastavro's ``schemaless_reader``:
the same value for every captured debezium-avro message (made by confluent-kafka's AvroSerializer), for
schemas with every Avro type (written by fastavro's ``schemaless_writer``), and for mutated bodies an
error wherever fastavro has one, else fastavro's value."""

from __future__ import annotations

import io
import json
import random
import struct
from pathlib import Path
from typing import Any

import fastavro
import orjson
import pytest

from formats.debezium_avro import HEADER_BYTES
from formats.debezium_avro_columns import collect_named, without_logical_types
from formats.debezium_avro_decoder import compile_decoder, read_long

DATA = Path(__file__).resolve().parents[1] / "data"
ERRORS = (IndexError, ValueError, EOFError, UnicodeDecodeError, RecursionError, struct.error)


def _compiled(schema: Any) -> tuple[Any, Any]:
    named: dict[str, dict[str, Any]] = {}
    collect_named(schema, None, named)
    decode = compile_decoder(schema, named, HEADER_BYTES)
    assert decode is not None
    return decode, fastavro.parse_schema(without_logical_types(schema))


def _fastavro(parsed: Any, data: bytes) -> Any:
    return fastavro.schemaless_reader(io.BytesIO(data[HEADER_BYTES:]), parsed, None)


def _captured() -> list[tuple[str, bytes]]:
    out = []
    for folder in ("debezium-avro", "debezium-avro-source-types"):
        schemas = json.loads((DATA / folder / "schemas.json").read_text())
        for line in (DATA / folder / "messages.jsonl").read_text().splitlines():
            message = json.loads(line)
            for part in ("key", "value"):
                if message[part]:
                    data = bytes.fromhex(message[part])
                    out.append((schemas[str(int.from_bytes(data[1:5], "big"))], data))
    return out


CAPTURED = _captured()


def test_every_captured_message_decodes_as_fastavro_decodes_it() -> None:
    assert len(CAPTURED) > 20
    for schema_text, data in CAPTURED:
        decode, parsed = _compiled(orjson.loads(schema_text))
        assert decode(data) == _fastavro(parsed, data)


def test_mutated_messages_fail_where_fastavro_fails_else_decode_alike() -> None:
    rng = random.Random(26)
    for schema_text, data in CAPTURED:
        decode, parsed = _compiled(orjson.loads(schema_text))
        for _ in range(60):
            mutated = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                mutated[rng.randrange(HEADER_BYTES, len(mutated))] = rng.randrange(256)
            cut = bytes(mutated[: rng.randint(HEADER_BYTES, len(mutated))] if rng.random() < 0.3 else mutated)
            try:
                expected = _fastavro(parsed, cut)
            except Exception:
                with pytest.raises(ERRORS):
                    decode(cut)
                continue
            try:
                got = decode(cut)
            except ERRORS:
                continue  # stricter than fastavro (a negative length, a varint past 10 bytes)
            assert got == expected


EVERY_TYPE = {
    "type": "record",
    "name": "Node",
    "namespace": "t.ns",
    "fields": [
        {"name": "n", "type": "null"},
        {"name": "flag", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "fx2", "type": "Four"},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "choice", "type": ["null", "string", "long", "Color", {"type": "array", "items": "int"}]},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "child", "type": ["null", "Node"], "default": None},
        {"name": "nested", "type": {"type": "record", "name": "Inner", "namespace": "u", "fields": [
            {"name": "x", "type": {"type": "int", "connect.type": "int16"}},
            {"name": "again", "type": ["null", "t.ns.Four"]},
        ]}},
    ],
}  # fmt: skip


def _node(rng: random.Random, depth: int) -> dict[str, Any]:
    return {
        "n": None,
        "flag": rng.random() < 0.5,
        "i": rng.randint(-(2**31), 2**31 - 1),
        "l": rng.choice([0, -1, 63, -64, 64, 2**62, -(2**63), 2**63 - 1]),
        "f": float(rng.randint(-1000, 1000)) / 8,
        "d": rng.uniform(-1e300, 1e300),
        "raw": rng.randbytes(rng.randint(0, 200)),
        "s": "".join(rng.choice("aé✓𝄞 \x00") for _ in range(rng.randint(0, 70))),
        "fx": rng.randbytes(4),
        "fx2": rng.randbytes(4),
        "color": rng.choice(["RED", "GREEN", "BLUE"]),
        "tags": [str(i) for i in range(rng.randint(0, 80))],
        "attrs": {f"k{i}": rng.choice([None, i, -(2**40)]) for i in range(rng.randint(0, 5))},
        "choice": rng.choice([None, "text", 2**33, "BLUE", [1, -2, 3]]),
        "dec": rng.randbytes(rng.randint(0, 5)),
        "child": _node(rng, depth + 1) if depth < 3 and rng.random() < 0.6 else None,
        "nested": {"x": rng.randint(-300, 300), "again": rng.choice([None, b"abcd"])},
    }


def test_every_avro_type_and_recursive_records_decode_as_fastavro_decodes_them() -> None:
    decode, parsed = _compiled(EVERY_TYPE)
    writer = fastavro.parse_schema(without_logical_types(EVERY_TYPE))
    rng = random.Random(7)
    for _ in range(200):
        out = io.BytesIO(b"\x00\x00\x00\x00\x01")
        out.seek(HEADER_BYTES)
        fastavro.schemaless_writer(out, writer, _node(rng, 0))
        data = out.getvalue()
        assert decode(data) == _fastavro(parsed, data)


def test_arrays_in_blocks_with_byte_sizes_decode() -> None:
    """Writers may send an array as blocks with a negative count and the block's size."""
    decode, _ = _compiled({"type": "array", "items": "long"})

    def varint(n: int) -> bytes:
        z, out = (n << 1) ^ (n >> 63), b""
        while z >= 0x80:
            out, z = out + bytes([z & 0x7F | 0x80]), z >> 7
        return out + bytes([z])

    body = varint(-2) + varint(2) + varint(1) + varint(-1) + varint(1) + varint(300) + varint(0)
    assert decode(b"\x00\x00\x00\x00\x01" + body) == [1, -1, 300]
    assert read_long(varint(-(2**63)), 0) == (-(2**63), 10)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "record", "name": "R", "fields": [{"name": "x", "type": "Unknown"}]},
        {"type": "record", "name": "R", "fields": [{"name": "x"}]},
        {"type": "enum", "name": "E"},
    ],
)
def test_schemas_it_does_not_compile_are_left_to_fastavro(schema: Any) -> None:
    assert compile_decoder(schema, {}, HEADER_BYTES) is None
