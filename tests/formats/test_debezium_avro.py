"""debezium-avro: Debezium change events in the Confluent wire format, decoded against writer schemas
looked up by id. The messages are made by confluent-kafka's real AvroSerializer (captured in
``tests/data/debezium-avro`` and made afresh against the test registry); each is compared with the same
event as debezium-json with Kafka Connect's schema envelope, which must give the same table and rows."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from formats import FORMATS, debezium
from formats.debezium_avro import FORMAT, DebeziumAvroParser
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from ingest.kafka.schema_registry import RegistrySchemas
from schema_evolution.errors import LakeCdcError, MalformedMessage, SourcePosition, UnsupportedChange
from tests.formats.debezium_avro_streams import AvroWriter, json_message, row
from tests.support.schema_registry import FakeSchemaRegistry

DATA = Path(__file__).resolve().parents[1] / "data" / "debezium-avro"
POS = SourcePosition("shop.items", 2, 17)
CTX = MessageContext(POS)


def captured() -> tuple[dict[int, str], list[dict[str, Any]]]:
    schemas = {int(k): v for k, v in json.loads((DATA / "schemas.json").read_text()).items()}
    lines = [json.loads(line) for line in (DATA / "messages.jsonl").read_text().splitlines()]
    for line in lines:
        line["key"] = bytes.fromhex(line["key"]) if line["key"] else None
        line["value"] = bytes.fromhex(line["value"]) if line["value"] else None
    return schemas, lines


class Schemas:
    """A SchemaSource over a dict, counting lookups."""

    def __init__(self, schemas: dict[int, str]) -> None:
        self.schemas = schemas
        self.asked: list[int] = []

    def __call__(self, schema_id: int, pos: SourcePosition) -> str:
        self.asked.append(schema_id)
        return self.schemas[schema_id]


@pytest.fixture(scope="module")
def registry() -> Iterator[FakeSchemaRegistry]:
    with FakeSchemaRegistry() as r:
        yield r


def _normal(row_: Any) -> Any:
    """A row with floats and JSON texts compared by value (the JSON path keeps 1.5 as text when the message
    holds a number too long for a double, and lists as lists)."""
    if row_ is None:
        return None
    out = {}
    for k, v in row_.items():
        if isinstance(v, float) or (isinstance(v, str) and k in ("f", "d")):
            v = float(v)
        if isinstance(v, list):
            v = json.dumps(v, separators=(",", ":"))
        out[k] = v
    return out


@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
@pytest.mark.parametrize("op", ["c", "r", "u", "d"])
def test_every_logical_type_reads_as_the_json_envelope_does(registry: FakeSchemaRegistry, op: str, nulls: bool) -> None:
    writer = AvroWriter(registry.url)
    parser = DebeziumAvroParser(RegistrySchemas(registry.url))
    avro, js = row(5, nulls=nulls)
    avro_before, js_before = (avro, js) if op in ("u", "d") else (None, None)
    avro_after, js_after = (None, None) if op == "d" else (avro, js)
    value = writer.value("shop.items", "items", op, avro_before, avro_after)
    (event,) = parser(value, writer.key("shop.items", "items", 5), CTX)
    (expected,) = debezium.parse(json_message("items", op, js_before, js_after), b'{"id": 5}', CTX)
    assert isinstance(event, DataChangeEvent) and isinstance(expected, DataChangeEvent)
    assert event.schema == expected.schema
    assert event.schema.type_system is TypeSystem.PAIMON and event.schema.primary_keys == ("id",)
    assert (event.op, event.database, event.table, event.op_ts_ms) == (
        expected.op,
        expected.database,
        expected.table,
        expected.op_ts_ms,
    )
    assert _normal(event.after) == _normal(expected.after)
    assert _normal(event.before) == _normal(expected.before)


def test_logical_types_are_mapped_and_converted() -> None:
    schemas, lines = captured()
    (event,) = DebeziumAvroParser(Schemas(schemas))(lines[0]["value"], lines[0]["key"], CTX)
    assert isinstance(event, DataChangeEvent)
    types = dict(event.schema.fields)
    assert types["tiny"] == "SMALLINT" and types["price"] == "DECIMAL(10, 2)" and types["vsd"] == "STRING"
    assert (types["day"], types["cday"], types["ts3"], types["cts"]) == ("DATE", "DATE", "TIMESTAMP(3)", "TIMESTAMP(3)")
    assert (types["ts6"], types["ts9"], types["tsz"]) == ("TIMESTAMP(6)", "TIMESTAMP(9)", "TIMESTAMP(6)")
    assert (types["t6"], types["t3"], types["bits"], types["geo"]) == ("TIME(0)", "TIME(3)", "BINARY(2)", "STRING")
    after = event.after
    assert after is not None
    assert after["price"] == "-12345.67" and after["vsd"] == "12.345"
    assert (after["day"], after["cday"]) == ("2022-01-08", "2022-01-09")
    assert after["cts"] == "2023-11-14 22:13:20.456000"  # Avro's timestamp-millis left to the Connect name
    assert after["ts9"] == "2023-11-14 22:13:20.123456789"
    assert after["tsz"] == "2023-11-14 20:13:20.500000"  # the UTC wall clock
    assert after["bits"] == b"\x0f\x01" and after["raw"] == b"\x00\xffab"
    assert after["geo"] == '{"coordinates":[1,2],"type":"Point","srid":4326}'
    assert after["tags"] == '["a","b"]'


def test_captured_stream_ops_keys_and_tombstone() -> None:
    schemas, lines = captured()
    parser = DebeziumAvroParser(Schemas(schemas))
    events = [
        parser(m["value"], m["key"], MessageContext(SourcePosition(m["topic"], 0, i))) for i, m in enumerate(lines)
    ]
    assert [[e.op for e in es if isinstance(e, DataChangeEvent)] for es in events] == [
        [Op.INSERT],
        [Op.INSERT],
        [Op.UPDATE],
        [Op.DELETE],
        [],
        [Op.INSERT],
    ]
    update = events[2][0]
    assert isinstance(update, DataChangeEvent) and update.before is not None and update.after is not None
    assert (update.before["name"], update.after["name"]) == ("größe ✓", "changed")
    delete = events[3][0]
    assert isinstance(delete, DataChangeEvent) and delete.before is not None
    assert delete.before["id"] == 2 and delete.before["price"] is None
    assert {e.table for es in events for e in es if isinstance(e, DataChangeEvent)} == {"items", "users"}
    # the second schema version of items adds a column
    evolved = events[5][0]
    assert isinstance(evolved, DataChangeEvent)
    assert evolved.schema.fields[-1] == ("note", "STRING") and evolved.after is not None
    assert evolved.after["note"] == "v2"


def test_schemas_are_looked_up_once_per_id_whatever_the_topic() -> None:
    schemas, lines = captured()
    source = Schemas(schemas)
    parser = DebeziumAvroParser(source)
    for _ in range(3):
        for i, m in enumerate(lines):
            parser(m["value"], m["key"], MessageContext(SourcePosition(m["topic"], 0, i)))
    assert sorted(source.asked) == sorted(set(source.asked)) == sorted(schemas)


def test_registry_client_is_asked_once_per_id(registry: FakeSchemaRegistry) -> None:
    writer = AvroWriter(registry.url)
    parser = DebeziumAvroParser(RegistrySchemas(registry.url))
    before = registry.id_requests
    for i in range(20):
        table = ("items", "users")[i % 2]
        value = writer.value(f"shop.{table}", table, "c", None, row(i)[0])
        parser(value, writer.key(f"shop.{table}", table, i), MessageContext(SourcePosition(f"shop.{table}", 0, i)))
    assert registry.id_requests - before == 4  # two value schemas, two key schemas


def test_keys_give_primary_keys_and_a_key_outside_the_wire_format_gives_none() -> None:
    schemas, lines = captured()
    parser = DebeziumAvroParser(Schemas(schemas))
    value = lines[0]["value"]
    for key, keys in ((lines[0]["key"], ("id",)), (None, ()), (b'{"id": 1}', ()), (b"\x00\x00", ())):
        (event,) = parser(value, key, CTX)
        assert isinstance(event, DataChangeEvent) and event.schema.primary_keys == keys


def test_column_named_by_debeziums_source_column_name_parameter() -> None:
    value_schema = {
        "type": "record",
        "name": "Envelope",
        "fields": [
            {
                "name": "after",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "Value",
                        "fields": [
                            {
                                "name": "user_id",
                                "type": {
                                    "type": "int",
                                    "connect.parameters": {"__debezium.source.column.name": "user-id"},
                                },
                            },
                        ],
                    },
                ],
                "default": None,
            },
            {"name": "op", "type": "string"},
        ],
    }
    body = bytes([2, 84, 2, ord("c")])  # after: branch 1, user_id 42; op "c"
    parser = DebeziumAvroParser(Schemas({7: json.dumps(value_schema)}))
    (event,) = parser(b"\x00\x00\x00\x00\x07" + body, None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.schema.fields == (("user-id", "INT"),) and event.after == {"user-id": 42}


def test_schema_change_topic_message_is_a_schema_change_event() -> None:
    schema = {
        "type": "record",
        "name": "SchemaChangeValue",
        "fields": [{"name": "databaseName", "type": "string"}, {"name": "ddl", "type": "string"}],
    }
    body = bytes([8]) + b"shop" + bytes([2 * 27]) + b"ALTER TABLE t ADD COLUMN c INT"[:27]
    (event,) = DebeziumAvroParser(Schemas({3: json.dumps(schema)}))(b"\x00\x00\x00\x00\x03" + body, None, CTX)
    assert isinstance(event, SchemaChangeEvent) and event.database == "shop"


def _envelope_with(op: str) -> bytes:
    schemas, lines = captured()
    envelope = json.loads(schemas[int.from_bytes(lines[0]["value"][1:5], "big")])
    import fastavro

    parsed = fastavro.parse_schema(envelope)
    record = {
        "before": None,
        "after": None,
        "op": op,
        "ts_ms": None,
        "source": {"version": "x", "connector": "mysql", "name": "m", "ts_ms": 1, "db": "shop", "table": "items"},
    }
    import io

    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, record)
    return lines[0]["value"][:5] + buffer.getvalue()


@pytest.mark.parametrize(
    ("op", "error", "reason"),
    [
        ("t", UnsupportedChange, "debezium truncate ('op': 't') is not supported yet"),
        ("m", UnsupportedChange, "logical-decoding message"),
        ("x", MalformedMessage, "unknown 'op'"),
        ("c", MalformedMessage, "field 'after' is missing or null in an 'op': 'c' message"),
        ("d", MalformedMessage, "field 'before' is missing or null in an 'op': 'd' message"),
    ],
)
def test_refused_ops_name_the_position(op: str, error: type[LakeCdcError], reason: str) -> None:
    schemas, _ = captured()
    with pytest.raises(error) as info:
        DebeziumAvroParser(Schemas(schemas))(_envelope_with(op), None, CTX)
    assert reason in str(info.value) and str(POS) in str(info.value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b'{"op": "c"}', "is not in the Confluent Schema Registry wire format"),
        (b"\x00\x00\x01", "is not in the Confluent Schema Registry wire format (magic byte 0"),
        (b"\x01\x00\x00\x00\x01\x02", "starting with byte 1"),
    ],
)
def test_not_the_wire_format(value: bytes, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=r"malformed debezium-avro message at topic 'shop.items'") as info:
        FORMATS[FORMAT].parse(value, None, CTX)
    assert reason in str(info.value)


def test_the_registry_entry_reads_tombstones_and_refuses_lookups_without_a_registry() -> None:
    _, lines = captured()
    assert FORMATS[FORMAT].parse(None, lines[0]["key"], CTX) == []
    with pytest.raises(LakeCdcError, match="needs a Schema Registry for schema id"):
        FORMATS[FORMAT].parse(lines[0]["value"], None, CTX)


def test_unknown_schema_id_is_a_malformed_message(registry: FakeSchemaRegistry) -> None:
    parser = DebeziumAvroParser(RegistrySchemas(registry.url))
    with pytest.raises(MalformedMessage, match=f"has no schema with id 9999.*|{POS}") as info:
        parser(b"\x00\x00\x00\x27\x0f" + b"\x00", None, CTX)
    assert "has no schema with id 9999" in str(info.value) and registry.url in str(info.value)


def _mutations(seed: int, value: bytes) -> Iterator[bytes]:
    rng = random.Random(seed)
    for cut in range(5, len(value), max(1, len(value) // 40)):
        yield value[:cut]  # truncated bodies
    for _ in range(300):
        data = bytearray(value)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(5, len(data))
            data[i] = rng.randrange(256)
        yield bytes(data)
    yield value[:5] + bytes(rng.randrange(256) for _ in range(200))
    yield value[:5] + b"\xff" * 64  # a huge varint length


def test_mutated_bodies_are_parsed_or_refused_with_the_position() -> None:
    schemas, lines = captured()
    parser = DebeziumAvroParser(Schemas(schemas))
    for n, line in enumerate(m for m in lines if m["value"]):
        for value in _mutations(n, line["value"]):
            try:
                parser(value, line["key"], CTX)
            except (MalformedMessage, UnsupportedChange) as exc:
                assert str(POS) in str(exc)


def test_errors_show_no_value_by_default() -> None:
    schemas, lines = captured()
    parser = DebeziumAvroParser(Schemas(schemas))
    marker = "SECRET-MARKER-avro"
    encoded = base64.b64encode(marker.encode())
    for line in lines:
        if not line["value"]:
            continue
        for value in _mutations(7, line["value"]):
            try:
                parser(value, line["key"], CTX)
            except LakeCdcError as exc:
                assert marker not in str(exc) and encoded.decode() not in str(exc)
