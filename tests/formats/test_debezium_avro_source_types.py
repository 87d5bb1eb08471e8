"""debezium-avro columns typed from Debezium's ``__debezium.source.column.type`` parameters, as Paimon's
``DebeziumSchemaUtils.avroToPaimonDataType`` types them (MySQL's mapping), and the fallback to the Connect
types without them. The messages are captured in ``tests/data/debezium-avro-source-types`` (made by
confluent-kafka's real AvroSerializer, ``tests/formats/debezium_avro_source_types.py``); values are checked
as the chunk builder stores them (``record_schema`` with the job's ``--type-mapping``, ``convert_column``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from formats.debezium_avro import DebeziumAvroParser
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from ingest.pipeline.assembler import ChunkAssembler
from ingest.pipeline.chunk_builder import record_schema
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.type_mapping import TypeMappingMode as M
from sinks.write.chunk_format import deserialize_batch
from tests.formats import debezium_avro_source_types as source_types

CTX = MessageContext(SourcePosition("dbz.shop.typed", 0, 3))


def _events() -> dict[str, list[DataChangeEvent]]:
    schemas = {int(k): v for k, v in json.loads((source_types.FOLDER / "schemas.json").read_text()).items()}
    parser = DebeziumAvroParser(lambda schema_id, pos: schemas[schema_id])
    out: dict[str, list[DataChangeEvent]] = {}
    for line in (source_types.FOLDER / "messages.jsonl").read_text().splitlines():
        message = json.loads(line)
        (event,) = parser(bytes.fromhex(message["value"]), bytes.fromhex(message["key"]), CTX)
        assert isinstance(event, DataChangeEvent)
        out.setdefault(message["topic"].rsplit(".", 1)[1], []).append(event)
    return out


EVENTS = _events()


def _stored(event: DataChangeEvent, image: Mapping[str, Any] | None, modes: frozenset[M] = frozenset()) -> Any:
    """A row image as the chunk builder converts it: (Paimon type, stored value) per column."""
    assert image is not None
    schema = record_schema(event.schema, "t", modes)
    source = dict(event.schema.fields)
    return {
        name: (typ.sql(), convert_column(name, [image[name]], typ, source[name]).to_pylist()[0])
        for name, typ in schema.fields
    }


TYPED = {
    "id": ("INT", 1),
    "flag": ("BOOLEAN", True),  # TINYINT(1)
    "mu": ("BIGINT", 300000),  # MEDIUMINT UNSIGNED ZEROFILL
    "yr": ("INT", 2023),
    "tags": ("ARRAY<STRING>", ["a", "b"]),  # SET, from Debezium's "a,b"
    "color": ("STRING", "1"),  # ENUM: the member's name, even a number
    "amount": ("DECIMAL(8, 3)", Decimal("12345.110")),  # sent as a string (decimal.handling.mode=string)
    "ratio": ("DOUBLE", 1.000001),  # REAL as an Avro float: the float32's shortest digits
    "big": ("DECIMAL(20, 0)", Decimal(20000000000)),  # BIGINT UNSIGNED
    "code": ("CHAR(4)", "ab"),
    "bin": ("VARBINARY(4)", b"\x01\x02\x00\x00"),
    "ts": ("TIMESTAMP(3)", datetime(2023, 3, 23, 14, 30, 5, 123000)),
    "price": ("DECIMAL(10, 2)", Decimal("-12.34")),  # a Connect Decimal (precise), typed as its MySQL type
}


def test_columns_with_the_parameters_are_typed_by_mysqls_mapping() -> None:
    insert, update = EVENTS["typed"]
    assert insert.schema.type_system is TypeSystem.MYSQL
    assert dict(insert.schema.fields)["flag"] == "TINYINT(1)"
    assert dict(insert.schema.fields)["mu"] == "MEDIUMINT(8) UNSIGNED ZEROFILL"
    assert insert.schema.primary_keys == ("id",)
    assert _stored(insert, insert.after) == TYPED
    assert update.op is Op.UPDATE
    after = _stored(update, update.after)
    assert (after["flag"], after["tags"], after["ratio"]) == (
        ("BOOLEAN", False),
        ("ARRAY<STRING>", []),
        ("DOUBLE", 2.5),
    )
    assert _stored(update, update.before) == TYPED


@pytest.mark.parametrize(
    ("mode", "column", "expected"),
    [
        (M.TINYINT1_NOT_BOOL, "flag", ("TINYINT", 1)),
        (M.BIGINT_UNSIGNED_TO_BIGINT, "big", ("BIGINT", 20000000000)),
        (M.CHAR_TO_STRING, "code", ("STRING", "ab")),
        (M.TO_STRING, "amount", ("STRING", "12345.110")),
        (M.TO_STRING, "ratio", ("STRING", "1.000001")),
        (M.TO_STRING, "tags", ("STRING", "a,b")),
    ],
)
def test_type_mapping_options_apply_to_the_parameters_types(mode: M, column: str, expected: tuple[str, Any]) -> None:
    insert = EVENTS["typed"][0]
    assert _stored(insert, insert.after, frozenset({mode}))[column] == expected


def test_a_column_without_them_keeps_its_connect_type_and_the_others_are_mapped_here() -> None:
    """Not every column has a MySQL type (the parameters propagated for some columns only, or MariaDB's
    UUID, which MySQL's mapping does not know): the parser maps those that have one with the default
    mapping, as Paimon, and the others from their Connect types; a SET stays STRING there."""
    insert = EVENTS["mixed"][0]
    assert insert.schema.type_system is TypeSystem.PAIMON
    stored = _stored(insert, insert.after)
    assert stored["ratio"][0] == "FLOAT"  # no parameters: the Connect float32
    assert stored["ratio"][1] == pytest.approx(1.000001, rel=1e-6)
    assert stored["note"] == ("STRING", "0b9c5c5e-6f1a-4c1e-9d1e-8a8f2c7a1b11")  # UUID: the Connect string
    assert stored["tags"] == ("STRING", "a,b")
    expected = {k: v for k, v in TYPED.items() if k not in ("ratio", "tags")}
    assert {k: v for k, v in stored.items() if k in expected} == expected


def test_another_connectors_columns_keep_their_connect_types() -> None:
    """A Postgres connector's column types are not MySQL's: the Connect types, as without the parameters."""
    insert = EVENTS["pg"][0]
    assert insert.schema.type_system is TypeSystem.PAIMON
    stored = _stored(insert, insert.after)
    assert stored["flag"] == ("SMALLINT", 1)
    assert stored["amount"] == ("STRING", "12345.110")
    assert stored["big"] == ("BIGINT", 20000000000)
    assert stored["code"] == ("STRING", "ab")
    assert stored["bin"] == ("BYTES", b"\x01\x02\x00\x00")
    assert stored["tags"] == ("STRING", "a,b")
    assert stored["ts"] == ("TIMESTAMP(3)", datetime(2023, 3, 23, 14, 30, 5, 123000))
    assert stored["price"] == ("DECIMAL(10, 2)", Decimal("-12.34"))


@pytest.mark.parametrize(
    ("type_mapping", "flag", "big"),
    [("", pa.bool_(), pa.decimal128(20, 0)), ("tinyint1-not-bool,bigint-unsigned-to-bigint", pa.int8(), pa.int64())],
)
def test_the_read_task_writes_the_mapped_types(type_mapping: str, flag: pa.DataType, big: pa.DataType) -> None:
    """Through the read task's assembler (parse, route, map with --type-mapping, build the Arrow chunk)."""
    schemas = {int(k): v for k, v in json.loads((source_types.FOLDER / "schemas.json").read_text()).items()}
    parser = DebeziumAvroParser(lambda schema_id, pos: schemas[schema_id])
    spec = ParseSpec("debezium-avro", TableRouter("ods", table="t"), type_mapping=type_mapping)
    assembler = ChunkAssembler(spec, "dbz.shop.typed", 0, parser=parser)
    lines = (source_types.FOLDER / "messages.jsonl").read_text().splitlines()
    typed = [json.loads(line) for line in lines if json.loads(line)["topic"] == "dbz.shop.typed"]
    for offset, message in enumerate(typed):
        assembler.add(bytes.fromhex(message["value"]), bytes.fromhex(message["key"]), offset, None)
    chunks = assembler.finish()
    assert chunks is not None
    (batch,) = [deserialize_batch(row["data"]) for row in chunks.to_pylist() if row["data"] is not None]
    assert (batch.schema.field("flag").type, batch.schema.field("big").type) == (flag, big)
    assert batch.schema.field("tags").type == pa.list_(pa.string())
    assert batch.column("tags").to_pylist() == [["a", "b"], ["a", "b"], []]  # insert; update's before, after
    assert batch.column("amount").to_pylist() == [Decimal("12345.110")] * 3
