"""Debezium change events in Avro, as Kafka Connect's AvroConverter writes them, and the same events
as its JSON converter writes them (debezium-json with the schema envelope): the columns cover every
Debezium/Connect logical type lakecdc maps. Used by the format's unit tests, the integration test and
the bench; the Avro bytes come from confluent-kafka's real ``AvroSerializer``."""

from __future__ import annotations

import base64
import json
import struct
from decimal import Decimal
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

NS = "mysql1.shop"


def _p(**params: str) -> dict[str, str]:
    return params


# (field, Avro type (the non-null branch), Connect JSON field schema, Avro value, JSON value)
def columns(version: int = 1) -> list[tuple[str, Any, dict[str, Any], Any, Any]]:
    dec = {"scale": "2", "connect.decimal.precision": "10"}
    point_wkb = bytes.fromhex("0101000000000000000000f03f0000000000000040")  # POINT(1 2)
    cols: list[tuple[str, Any, dict[str, Any], Any, Any]] = [
        ("id", "int", {"type": "int32", "optional": False}, 0, 0),
        ("tiny", {"type": "int", "connect.type": "int16"}, {"type": "int16"}, -7, -7),
        ("small", {"type": "int", "connect.type": "int16"}, {"type": "int16"}, 300, 300),
        ("big", "long", {"type": "int64"}, 2**62, 2**62),
        ("f", "float", {"type": "float"}, 1.5, 1.5),
        ("d", "double", {"type": "double"}, 3.25, 3.25),
        ("flag", "boolean", {"type": "boolean"}, True, True),
        ("name", "string", {"type": "string"}, "größe ✓", "größe ✓"),
        ("raw", "bytes", {"type": "bytes"}, b"\x00\xffab", base64.b64encode(b"\x00\xffab").decode()),
        (
            "price",
            {
                "type": "bytes",
                "scale": 2,
                "precision": 10,
                "connect.version": 1,
                "connect.parameters": dec,
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                "logicalType": "decimal",
            },
            {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": dec},
            Decimal("-12345.67"),
            base64.b64encode((-1234567).to_bytes(4, "big", signed=True)).decode(),
        ),
        (
            "vsd",
            {
                "type": "record",
                "name": "VariableScaleDecimal",
                "namespace": "io.debezium.data",
                "fields": [{"name": "scale", "type": "int"}, {"name": "value", "type": "bytes"}],
                "connect.doc": "Variable scaled decimal",
                "connect.version": 1,
                "connect.name": "io.debezium.data.VariableScaleDecimal",
            },
            {
                "type": "struct",
                "name": "io.debezium.data.VariableScaleDecimal",
                "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}],
            },
            {"scale": 3, "value": (12345).to_bytes(2, "big", signed=True)},
            {"scale": 3, "value": base64.b64encode((12345).to_bytes(2, "big", signed=True)).decode()},
        ),
        ("day", _named("int", "io.debezium.time.Date"), _cj("int32", "io.debezium.time.Date"), 19000, 19000),
        (
            "cday",
            {**_named("int", "org.apache.kafka.connect.data.Date"), "logicalType": "date"},
            _cj("int32", "org.apache.kafka.connect.data.Date"),
            19001,
            19001,
        ),
        (
            "ts3",
            _named("long", "io.debezium.time.Timestamp"),
            _cj("int64", "io.debezium.time.Timestamp"),
            1700000000123,
            1700000000123,
        ),
        (
            "cts",
            {**_named("long", "org.apache.kafka.connect.data.Timestamp"), "logicalType": "timestamp-millis"},
            _cj("int64", "org.apache.kafka.connect.data.Timestamp"),
            1700000000456,
            1700000000456,
        ),
        (
            "ts6",
            _named("long", "io.debezium.time.MicroTimestamp"),
            _cj("int64", "io.debezium.time.MicroTimestamp"),
            1700000000123456,
            1700000000123456,
        ),
        (
            "ts9",
            _named("long", "io.debezium.time.NanoTimestamp"),
            _cj("int64", "io.debezium.time.NanoTimestamp"),
            1700000000123456789,
            1700000000123456789,
        ),
        (
            "tsz",
            _named("string", "io.debezium.time.ZonedTimestamp"),
            _cj("string", "io.debezium.time.ZonedTimestamp"),
            "2023-11-14T22:13:20.5+02:00",
            "2023-11-14T22:13:20.5+02:00",
        ),
        (
            "t6",
            _named("long", "io.debezium.time.MicroTime"),
            _cj("int64", "io.debezium.time.MicroTime"),
            37_230_000_000,
            37_230_000_000,
        ),
        ("t3", _named("int", "io.debezium.time.Time"), _cj("int32", "io.debezium.time.Time"), 37_230_500, 37_230_500),
        (
            "bits",
            {**_named("bytes", "io.debezium.data.Bits"), "connect.parameters": {"length": "12"}},
            {**_cj("bytes", "io.debezium.data.Bits"), "parameters": {"length": "12"}},
            b"\x01\x0f",
            base64.b64encode(b"\x01\x0f").decode(),
        ),
        (
            "doc",
            _named("string", "io.debezium.data.Json"),
            _cj("string", "io.debezium.data.Json"),
            '{"a": [1, 2]}',
            '{"a": [1, 2]}',
        ),
        (
            "mood",
            {**_named("string", "io.debezium.data.Enum"), "connect.parameters": {"allowed": "ok,sad"}},
            {**_cj("string", "io.debezium.data.Enum"), "parameters": {"allowed": "ok,sad"}},
            "sad",
            "sad",
        ),
        (
            "geo",
            {
                "type": "record",
                "name": "Geometry",
                "namespace": "io.debezium.data.geometry",
                "fields": [
                    {"name": "wkb", "type": "bytes"},
                    {"name": "srid", "type": ["null", "int"], "default": None},
                ],
                "connect.doc": "Geometry",
                "connect.version": 1,
                "connect.name": "io.debezium.data.geometry.Geometry",
            },
            {
                "type": "struct",
                "name": "io.debezium.data.geometry.Geometry",
                "fields": [{"type": "bytes", "field": "wkb"}, {"type": "int32", "optional": True, "field": "srid"}],
            },
            {"wkb": point_wkb, "srid": 4326},
            {"wkb": base64.b64encode(point_wkb).decode(), "srid": 4326},
        ),
        # a second geometry refers to the first one's named type, as Debezium's schemas do
        (
            "geo2",
            "io.debezium.data.geometry.Geometry",
            _geometry_json(),
            {"wkb": point_wkb, "srid": None},
            {"wkb": base64.b64encode(point_wkb).decode(), "srid": None},
        ),
        (
            "tags",
            {"type": "array", "items": "string"},
            {"type": "array", "items": {"type": "string"}},
            ["a", "b"],
            ["a", "b"],
        ),
    ]
    if version >= 2:  # a column added (schema version 2 of the same table)
        cols.append(("note", "string", {"type": "string"}, "v2", "v2"))
    return cols


def _named(avro_type: str, name: str) -> dict[str, Any]:
    return {"type": avro_type, "connect.version": 1, "connect.name": name}


def _cj(connect_type: str, name: str) -> dict[str, Any]:
    return {"type": connect_type, "name": name, "version": 1}


def _geometry_json() -> dict[str, Any]:
    return {
        "type": "struct",
        "name": "io.debezium.data.geometry.Geometry",
        "fields": [{"type": "bytes", "field": "wkb"}, {"type": "int32", "optional": True, "field": "srid"}],
    }


def value_schema(table: str, version: int = 1) -> dict[str, Any]:
    fields = []
    for name, avro, _json, _a, _j in columns(version):
        if name == "id":
            fields.append({"name": name, "type": avro})
        else:
            fields.append({"name": name, "type": ["null", avro], "default": None})
    value = {
        "type": "record",
        "name": "Value",
        "namespace": f"{NS}.{table}",
        "fields": fields,
        "connect.name": f"{NS}.{table}.Value",
    }
    source = {
        "type": "record",
        "name": "Source",
        "namespace": "io.debezium.connector.mysql",
        "fields": [
            {"name": "version", "type": "string"},
            {"name": "connector", "type": "string"},
            {"name": "name", "type": "string"},
            {"name": "ts_ms", "type": "long"},
            {"name": "db", "type": "string"},
            {"name": "table", "type": ["null", "string"], "default": None},
        ],
        "connect.name": "io.debezium.connector.mysql.Source",
    }
    return {
        "type": "record",
        "name": "Envelope",
        "namespace": f"{NS}.{table}",
        "fields": [
            {"name": "before", "type": ["null", value], "default": None},
            {"name": "after", "type": ["null", "Value"], "default": None},
            {"name": "source", "type": source},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": ["null", "long"], "default": None},
        ],
        "connect.version": 1,
        "connect.name": f"{NS}.{table}.Envelope",
    }


def key_schema(table: str) -> dict[str, Any]:
    return {
        "type": "record",
        "name": "Key",
        "namespace": f"{NS}.{table}",
        "fields": [{"name": "id", "type": "int"}],
        "connect.name": f"{NS}.{table}.Key",
    }


def row(ident: int, version: int = 1, nulls: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Avro record and the Connect JSON object of one row."""
    avro: dict[str, Any] = {}
    js: dict[str, Any] = {}
    for name, _a, _j, avro_value, json_value in columns(version):
        if name == "id":
            avro[name], js[name] = ident, ident
        elif nulls:
            avro[name], js[name] = None, None
        else:
            avro[name], js[name] = avro_value, json_value
    return avro, js


def envelope(table: str, op: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    source = {
        "version": "2.7.3.Final",
        "connector": "mysql",
        "name": "mysql1",
        "ts_ms": 1764201600000,
        "db": "shop",
        "table": table,
    }
    return {"before": before, "after": after, "source": source, "op": op, "ts_ms": 1764201600100}


def json_message(
    table: str, op: str, before: dict[str, Any] | None, after: dict[str, Any] | None, version: int = 1
) -> bytes:
    """The same event as debezium-json with Kafka Connect's schema envelope."""
    fields = [{**j, "field": n, "optional": n != "id"} for n, _a, j, _av, _jv in columns(version)]
    row_schema = {"type": "struct", "fields": fields, "optional": True, "field": "after"}
    schema = {"type": "struct", "fields": [{**row_schema, "field": "before"}, row_schema]}
    return json.dumps({"schema": schema, "payload": envelope(table, op, before, after)}).encode()


class AvroWriter:
    """Debezium's Kafka Connect AvroConverter in miniature: confluent-kafka's AvroSerializer (topic
    name strategy: subjects ``<topic>-key`` and ``<topic>-value``) over a registry URL."""

    def __init__(self, url: str) -> None:
        self.client = SchemaRegistryClient({"url": url})
        self._serializers: dict[tuple[str, int, bool], AvroSerializer] = {}

    def _serializer(self, table: str, version: int, key: bool) -> AvroSerializer:
        cache = (table, version, key)
        if cache not in self._serializers:
            schema = key_schema(table) if key else value_schema(table, version)
            self._serializers[cache] = AvroSerializer(self.client, json.dumps(schema))
        return self._serializers[cache]

    def key(self, topic: str, table: str, ident: int) -> bytes:
        data = self._serializer(table, 1, True)({"id": ident}, SerializationContext(topic, MessageField.KEY))
        assert data is not None
        return data

    def value(
        self,
        topic: str,
        table: str,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        version: int = 1,
    ) -> bytes:
        record = envelope(table, op, before, after)
        data = self._serializer(table, version, False)(record, SerializationContext(topic, MessageField.VALUE))
        assert data is not None
        return data


def pack_float(x: float) -> float:
    """``x`` as a 32-bit float holds it (Avro ``float``)."""
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


CAPTURED = "debezium-avro"  # tests/data/<this>/: schemas.json (id -> schema) and messages.jsonl


def capture(folder: Any) -> None:
    """Write the captured stream under ``folder`` (``python -m tests.formats.debezium_avro_streams``):
    two tables' inserts, updates, deletes and a tombstone, and table items' second schema version,
    serialized by the real AvroSerializer against the test registry."""
    from pathlib import Path

    from tests.support.schema_registry import FakeSchemaRegistry

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    with FakeSchemaRegistry() as registry:
        writer = AvroWriter(registry.url)
        lines = []

        def put(topic: str, table: str, op: str, ident: int, before: Any, after: Any, version: int = 1) -> None:
            value = writer.value(topic, table, op, before, after, version) if op else None
            key = writer.key(topic, table, ident)
            lines.append({"topic": topic, "key": key.hex(), "value": value.hex() if value else None})

        a1, a2 = row(1)[0], row(2, nulls=True)[0]
        put("shop.items", "items", "r", 1, None, a1)
        put("shop.users", "users", "c", 2, None, a2)
        put("shop.items", "items", "u", 1, a1, {**a1, "name": "changed"})
        put("shop.users", "users", "d", 2, a2, None)
        put("shop.users", "users", "", 2, None, None)  # the tombstone after a delete
        put("shop.items", "items", "c", 3, None, row(3, version=2)[0], version=2)
        (out / "schemas.json").write_text(json.dumps({str(i): s for i, s in enumerate(registry.schemas, 1)}, indent=1))
        (out / "messages.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


if __name__ == "__main__":
    from pathlib import Path

    capture(Path(__file__).resolve().parents[1] / "data" / CAPTURED)
