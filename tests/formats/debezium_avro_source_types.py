"""Debezium change events in Avro whose columns carry Debezium's ``__debezium.source.column.type``
parameters (the connector's ``column.propagate.source.type``), as Kafka Connect's AvroConverter writes
them: the captured stream ``tests/data/debezium-avro-source-types`` of the format's unit tests, made by
confluent-kafka's real ``AvroSerializer`` against the test registry
(``python -m tests.formats.debezium_avro_source_types`` writes it afresh).

Three value schemas: ``typed`` (every column has its MySQL type), ``mixed`` (one column without the
parameters, one with MariaDB's UUID, which MySQL's mapping does not know) and ``pg`` (the same columns from
a Postgres connector's ``Source`` record)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

FOLDER = Path(__file__).resolve().parents[1] / "data" / "debezium-avro-source-types"


def _params(column: str, mysql: str, length: int | None = None, scale: int | None = None, **more: str) -> Any:
    params = {**more, "__debezium.source.column.type": mysql}
    if length is not None:
        params["__debezium.source.column.length"] = str(length)
    if scale is not None:
        params["__debezium.source.column.scale"] = str(scale)
    return params | {"__debezium.source.column.name": column}


def _columns() -> list[tuple[str, dict[str, Any], Any]]:
    """(column, its Avro type with the parameters, the first row's value)"""
    dec = {"scale": "2", "connect.decimal.precision": "10"}
    return [
        ("id", {"type": "int", "connect.parameters": _params("id", "INT")}, 1),
        ("flag", {"type": "int", "connect.type": "int16", "connect.parameters": _params("flag", "TINYINT", 1)}, 1),
        ("mu", {"type": "int", "connect.parameters": _params("mu", "MEDIUMINT UNSIGNED ZEROFILL", 8)}, 300000),
        (
            "yr",
            {"type": "int", "connect.name": "io.debezium.time.Year", "connect.parameters": _params("yr", "YEAR")},
            2023,
        ),
        (
            "tags",
            {
                "type": "string",
                "connect.name": "io.debezium.data.EnumSet",
                "connect.parameters": _params("tags", "SET", 5, allowed="a,b,c"),
            },
            "a,b",
        ),
        (
            "color",  # a member named "1": the value is the name, never an index
            {
                "type": "string",
                "connect.name": "io.debezium.data.Enum",
                "connect.parameters": _params("color", "ENUM", 1, allowed="1,red"),
            },
            "1",
        ),
        ("amount", {"type": "string", "connect.parameters": _params("amount", "DECIMAL", 8, 3)}, "12345.110"),
        ("ratio", {"type": "float", "connect.parameters": _params("ratio", "REAL")}, 1.000001),
        ("big", {"type": "long", "connect.parameters": _params("big", "BIGINT UNSIGNED")}, 20000000000),
        ("code", {"type": "string", "connect.parameters": _params("code", "CHAR", 4)}, "ab"),
        ("bin", {"type": "bytes", "connect.parameters": _params("bin", "BINARY", 4)}, b"\x01\x02\x00\x00"),
        (
            "ts",
            {
                "type": "long",
                "connect.name": "io.debezium.time.Timestamp",
                "connect.parameters": _params("ts", "DATETIME", 3),
            },
            1679581805123,  # 2023-03-23 14:30:05.123
        ),
        (
            "price",
            {
                "type": "bytes",
                "scale": 2,
                "precision": 10,
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                "connect.parameters": dec | _params("price", "DECIMAL", 10, 2),
                "logicalType": "decimal",
            },
            Decimal("-12.34"),
        ),
    ]


def value_schema(table: str, connector: str = "mysql") -> dict[str, Any]:
    fields = []
    for name, avro, _ in _columns():
        if table == "mixed" and name == "ratio":
            avro = {k: v for k, v in avro.items() if k != "connect.parameters"}
        fields.append({"name": name, "type": ["null", avro], "default": None})
    if table == "mixed":
        uuid = {"type": "string", "connect.parameters": _params("note", "UUID", 36)}
        fields.append({"name": "note", "type": ["null", uuid], "default": None})
    source = {
        "type": "record",
        "name": "Source",
        "namespace": f"io.debezium.connector.{connector}",
        "fields": [
            {"name": "db", "type": "string"},
            {"name": "table", "type": ["null", "string"], "default": None},
            {"name": "ts_ms", "type": "long"},
        ],
        "connect.name": f"io.debezium.connector.{connector}.Source",
    }
    return {
        "type": "record",
        "name": "Envelope",
        "namespace": f"dbz.shop.{table}",
        "fields": [
            {
                "name": "before",
                "type": ["null", {"type": "record", "name": "Value", "fields": fields}],
                "default": None,
            },
            {"name": "after", "type": ["null", "Value"], "default": None},
            {"name": "source", "type": source},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": ["null", "long"], "default": None},
        ],
        "connect.name": f"dbz.shop.{table}.Envelope",
    }


KEY_SCHEMA = {"type": "record", "name": "Key", "fields": [{"name": "id", "type": "int"}]}


def first_row(table: str) -> dict[str, Any]:
    row = {name: value for name, _, value in _columns()}
    return row | {"note": "0b9c5c5e-6f1a-4c1e-9d1e-8a8f2c7a1b11"} if table == "mixed" else row


def capture(folder: Path = FOLDER) -> None:
    """Per table an insert and an update, serialized by the real AvroSerializer against the test registry."""
    from tests.support.schema_registry import FakeSchemaRegistry

    folder.mkdir(parents=True, exist_ok=True)
    with FakeSchemaRegistry() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        key = AvroSerializer(client, json.dumps(KEY_SCHEMA))
        lines = []
        for table, connector in (("typed", "mysql"), ("mixed", "mysql"), ("pg", "postgresql")):
            topic = f"dbz.shop.{table}"
            value = AvroSerializer(client, json.dumps(value_schema(table, connector)))
            row = first_row(table)
            changed = {**row, "flag": 0, "tags": "", "ratio": 2.5}
            for op, before, after in (("c", None, row), ("u", row, changed)):
                source = {"db": "shop", "table": table, "ts_ms": 1679581805000}
                record = {"before": before, "after": after, "source": source, "op": op, "ts_ms": 1679581805001}
                data = value(record, SerializationContext(topic, MessageField.VALUE))
                key_data = key({"id": row["id"]}, SerializationContext(topic, MessageField.KEY))
                assert data is not None and key_data is not None
                lines.append({"topic": topic, "key": key_data.hex(), "value": data.hex()})
        (folder / "schemas.json").write_text(json.dumps({str(i): s for i, s in enumerate(registry.schemas, 1)}))
        (folder / "messages.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


if __name__ == "__main__":
    capture()
