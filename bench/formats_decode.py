"""Decode rate of debezium-avro against debezium-json (with Kafka Connect's schema envelope) on the same
change events, in one process: the parser alone, and the read task's whole path (``ChunkAssembler``:
parse, route, type-map, build Arrow chunks). The Avro bytes come from confluent-kafka's AvroSerializer
against the test suite's Schema Registry, which also answers the parser's lookups (once per schema id).

    python -m bench.formats_decode [--messages 50000]

Rows: the 26-column table of ``tests/formats/debezium_avro_streams.py`` (every logical type lakecdc maps),
and a narrow 4-column table (id, name, qty, price), inserts and updates."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from formats import debezium
from formats.debezium_avro import DebeziumAvroParser
from formats.events import MessageContext
from ingest.kafka.schema_registry import RegistrySchemas
from ingest.pipeline.assembler import ChunkAssembler
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution.errors import SourcePosition
from tests.formats.debezium_avro_streams import AvroWriter, json_message, row
from tests.support.schema_registry import FakeSchemaRegistry

Messages = list[tuple[bytes, bytes]]


def _wide(writer: AvroWriter, n: int) -> tuple[Messages, Messages]:
    avro, js = [], []
    for i in range(n):
        a, j = row(i)
        op = "c" if i % 3 else "u"
        avro.append((writer.key("shop.items", "items", i), writer.value("shop.items", "items", op, a, a)))
        js.append((json.dumps({"id": i}).encode(), json_message("items", op, j, j)))
    return avro, js


_NARROW_AVRO = {
    "type": "record",
    "name": "Envelope",
    "namespace": "m.shop.orders",
    "fields": [
        {
            "name": "before",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Value",
                    "fields": [
                        {"name": "id", "type": "long"},
                        {"name": "name", "type": ["null", "string"], "default": None},
                        {"name": "qty", "type": ["null", "int"], "default": None},
                        {
                            "name": "price",
                            "type": [
                                "null",
                                {
                                    "type": "bytes",
                                    "connect.name": "org.apache.kafka.connect.data.Decimal",
                                    "connect.parameters": {"scale": "2", "connect.decimal.precision": "10"},
                                    "logicalType": "decimal",
                                    "precision": 10,
                                    "scale": 2,
                                },
                            ],
                            "default": None,
                        },
                    ],
                },
            ],
            "default": None,
        },
        {"name": "after", "type": ["null", "Value"], "default": None},
        {
            "name": "source",
            "type": {
                "type": "record",
                "name": "Source",
                "fields": [
                    {"name": "db", "type": "string"},
                    {"name": "table", "type": "string"},
                    {"name": "ts_ms", "type": "long"},
                ],
            },
        },
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
    ],
}


def _narrow(url: str, n: int) -> tuple[Messages, Messages]:
    import base64
    from decimal import Decimal

    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": url})
    value_ser = AvroSerializer(client, json.dumps(_NARROW_AVRO))
    key_ser = AvroSerializer(
        client, json.dumps({"type": "record", "name": "Key", "fields": [{"name": "id", "type": "long"}]})
    )
    dec = {"scale": "2", "connect.decimal.precision": "10"}
    fields = [
        {"type": "int64", "optional": False, "field": "id"},
        {"type": "string", "optional": True, "field": "name"},
        {"type": "int32", "optional": True, "field": "qty"},
        {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "parameters": dec,
         "field": "price"},
    ]  # fmt: skip
    schema = {"type": "struct", "fields": [
        {"type": "struct", "fields": fields, "optional": True, "field": "before"},
        {"type": "struct", "fields": fields, "optional": True, "field": "after"},
    ]}  # fmt: skip
    avro, js = [], []
    for i in range(n):
        cents = 1000 + i
        a = {"id": i, "name": f"item {i}", "qty": i % 100, "price": Decimal(cents).scaleb(-2)}
        j = {**a, "price": base64.b64encode(cents.to_bytes(4, "big", signed=True)).decode()}
        source = {"db": "shop", "table": "orders", "ts_ms": 1764201600000}
        op = "c" if i % 3 else "u"
        envelope = {"before": a if op == "u" else None, "after": a, "source": source, "op": op, "ts_ms": 1}
        key = key_ser({"id": i}, SerializationContext("orders", MessageField.KEY))
        value = value_ser(envelope, SerializationContext("orders", MessageField.VALUE))
        assert key is not None and value is not None
        avro.append((key, value))
        payload = {**envelope, "before": j if op == "u" else None, "after": j}
        js.append((json.dumps({"id": i}).encode(), json.dumps({"schema": schema, "payload": payload}).encode()))
    return avro, js


def _rate(n: int, run: Callable[[], Any]) -> float:
    """Messages per CPU second of this process, best of three (CPU time: the machine may be shared)."""
    best = 0.0
    for _ in range(3):
        started = time.process_time()
        run()
        best = max(best, n / (time.process_time() - started))
    return best


def _parse_all(parse: Callable[..., Any], messages: Messages) -> Callable[[], None]:
    ctx = MessageContext(SourcePosition("t", 0, 0))

    def run() -> None:
        for key, value in messages:
            parse(value, key, ctx)

    return run


def _assemble_all(fmt: str, parser: Any, messages: Messages) -> Callable[[], None]:
    def run() -> None:
        spec = ParseSpec(fmt, TableRouter("ods", table="t"))
        assembler = ChunkAssembler(spec, "t", 0, parser=parser)
        for offset, (key, value) in enumerate(messages):
            assembler.add(value, key, offset, None)
            if assembler._ready:
                assembler.take()
        assembler.finish()

    return run


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--messages", type=int, default=50_000)
    n = args.parse_args().messages
    with FakeSchemaRegistry() as registry:
        parser = DebeziumAvroParser(RegistrySchemas(registry.url))
        cases = {
            "wide (26 columns)": _wide(AvroWriter(registry.url), n),
            "narrow (4 columns)": _narrow(registry.url, n),
        }
        print("| table | path | debezium-json msg/CPU-s | debezium-avro msg/CPU-s | avro / json |")
        print("|---|---|---|---|---|")
        for name, (avro, js) in cases.items():
            for path, make in (
                ("parser", lambda fmt, p, m: _parse_all(p or debezium.parse, m)),
                ("read task (ChunkAssembler)", lambda fmt, p, m: _assemble_all(fmt, p, m)),
            ):
                json_rate = _rate(n, make("debezium-json", None, js))
                avro_rate = _rate(n, make("debezium-avro", parser, avro))
                print(f"| {name} | {path} | {json_rate:,.0f} | {avro_rate:,.0f} | {avro_rate / json_rate:.2f} |")
        print(f"\nregistry lookups: {registry.id_requests} (schema ids: {len(registry.schemas)})")


if __name__ == "__main__":
    main()
