"""Ops become Paimon row kinds in one place; chunks round-trip through Arrow IPC."""

from __future__ import annotations

import pyarrow as pa
import pytest

from formats.events import DataChangeEvent, Op, SourceSchema, TypeSystem
from ingest.pipeline.chunk_builder import ChunkBuilder, MetadataSpec, record_schema
from schema_evolution.computed_specs import parse_computed_columns
from schema_evolution.conversion import ConversionNotes
from schema_evolution.errors import MalformedMessage
from schema_evolution.mysql_types import UnsupportedSourceType
from schema_evolution.type_mapping import TypeMappingMode
from schema_evolution.types import decimal, int_, string, timestamp, varchar
from sinks.write.chunk_format import ROW_KIND_NAMES, VALUE_KIND, deserialize_batch, serialize_batch

SOURCE = SourceSchema(
    (("id", "int"), ("name", "varchar(10)"), ("amount", "decimal(8,2)"), ("ts", "datetime(3)")),
    ("id",),
    TypeSystem.MYSQL,
)


def _event(op: Op, before: dict | None, after: dict | None) -> DataChangeEvent:
    return DataChangeEvent(op, "shop", "orders", SOURCE, before, after, 1)


def _builder() -> ChunkBuilder:
    schema = record_schema(SOURCE, "shop.orders", frozenset())
    return ChunkBuilder("ods.orders", SOURCE, schema, "canal-json", "cdc", 0)


def test_record_schema_maps_types_and_keeps_keys() -> None:
    schema = record_schema(SOURCE, "shop.orders", frozenset())
    assert schema.fields == (("id", int_()), ("name", varchar(10)), ("amount", decimal(8, 2)), ("ts", timestamp(3)))
    assert schema.primary_keys == ("id",)
    assert record_schema(SOURCE, "shop.orders", frozenset({TypeMappingMode.TO_STRING})).fields[0] == (
        "id",
        string(),
    )


def test_update_is_a_minus_u_plus_u_pair_in_source_order() -> None:
    b = _builder()
    row1 = {"id": "1", "name": "a", "amount": "1.50", "ts": "2024-01-01 00:00:00.123"}
    row1b = {**row1, "name": "b"}
    b.add(_event(Op.INSERT, None, row1), 10)
    b.add(_event(Op.UPDATE, row1, row1b), 11)
    b.add(_event(Op.DELETE, row1b, None), 12)
    batch = deserialize_batch(serialize_batch(b.to_batch(ConversionNotes())))
    kinds = [ROW_KIND_NAMES[k] for k in batch.column(VALUE_KIND).to_pylist()]
    assert kinds == ["+I", "-U", "+U", "-D"]
    assert batch.column("name").to_pylist() == ["a", "a", "b", "b"]
    assert batch.schema.field("amount").type == pa.decimal128(8, 2)
    assert b.offsets == [10, 11, 11, 12]


def test_a_value_that_does_not_convert_names_its_offset() -> None:
    b = _builder()
    b.add(_event(Op.INSERT, None, {"id": "1", "name": "a", "amount": "1", "ts": None}), 7)
    b.add(_event(Op.INSERT, None, {"id": "two", "name": "b", "amount": "1", "ts": None}), 8)
    with pytest.raises(MalformedMessage) as info:
        b.to_batch(ConversionNotes())
    assert "topic 'cdc', partition 0, offset 8" in str(info.value)
    assert "column 'id' (INT)" in str(info.value)


def test_metadata_columns_follow_each_row_image() -> None:
    meta = MetadataSpec(("topic", "partition", "offset", "timestamp", "timestamp_type", "table_name", "op_ts"), "k_")
    schema = record_schema(SOURCE, "shop.orders", frozenset(), metadata=meta)
    assert [n for n, _ in schema.fields][-7:] == [
        "k_topic",
        "k_partition",
        "k_offset",
        "k_timestamp",
        "k_timestamp_type",
        "k_table_name",
        "k_op_ts",
    ]
    b = ChunkBuilder("ods.orders", SOURCE, schema, "canal-json", "cdc", 2, metadata=meta)
    row = {"id": "1", "name": "a", "amount": "1.50", "ts": None}
    b.add(_event(Op.INSERT, None, row), 10, 1_700_000_000_123, 1)
    b.add(_event(Op.UPDATE, row, {**row, "name": "b"}), 11, 1_700_000_000_456, 2)
    batch = b.to_batch(ConversionNotes())
    assert batch.column("k_offset").to_pylist() == [10, 11, 11]
    assert batch.column("k_partition").to_pylist() == [2, 2, 2]
    assert batch.column("k_timestamp_type").to_pylist() == ["CreateTime", "LogAppendTime", "LogAppendTime"]
    assert batch.column("k_table_name").to_pylist() == ["orders"] * 3
    assert batch.column("k_timestamp").type == pa.timestamp("ms", tz="UTC")
    assert batch.column("k_timestamp").to_pylist()[0].timestamp() == 1_700_000_000.123
    assert batch.column("k_op_ts").to_pylist()[0].timestamp() == 0.001  # the event's op_ts_ms of 1
    assert batch.schema.names[-1] == VALUE_KIND


def test_computed_columns_follow_the_converted_columns() -> None:
    computed = parse_computed_columns(["y=year(ts)", "n=upper(name)", "seen=now()"])
    schema = record_schema(SOURCE, "shop.orders", frozenset(), computed=computed)
    assert [(n, str(t)) for n, t in schema.fields][-3:] == [("y", "INT"), ("n", "STRING"), ("seen", "TIMESTAMP(3)")]
    b = ChunkBuilder("ods.orders", SOURCE, schema, "canal-json", "cdc", 0, computed=computed)
    row = {"id": "1", "name": "ab", "amount": "1.50", "ts": "2024-05-06 07:08:09.123"}
    b.add(_event(Op.INSERT, None, row), 10, 1_700_000_000_000)
    b.add(_event(Op.DELETE, row, None), 11, 1_700_000_001_000)
    batch = b.to_batch(ConversionNotes())
    assert batch.column("y").to_pylist() == [2024, 2024]
    assert batch.column("n").to_pylist() == ["AB", "AB"]
    # now() is the message's Kafka timestamp, so a replayed batch writes the same values
    assert [t.timestamp() for t in batch.column("seen").to_pylist()] == [1_700_000_000.0, 1_700_000_001.0]


def test_computed_column_on_a_missing_column_is_refused() -> None:
    with pytest.raises(UnsupportedSourceType, match=r"reads column 'nope', which 'shop\.orders' does not have"):
        record_schema(SOURCE, "shop.orders", frozenset(), computed=parse_computed_columns(["y=year(nope)"]))
