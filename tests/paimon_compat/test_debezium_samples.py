"""debezium-json against the real messages of Paimon's Kafka debezium tests (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.debezium import parse
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.types import parse_type
from tests.paimon_compat.samples import SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("cdc", 3, 42))


def _event(value: bytes, key: bytes | None = None) -> DataChangeEvent:
    (event,) = parse(value, key, CTX)
    assert isinstance(event, DataChangeEvent)
    return event


DEBEZIUM_FILES = sample_files("debezium")


def _one(path: str) -> list[bytes]:
    return sample_messages(SAMPLES / "debezium" / path)


@pytest.mark.parametrize("path", DEBEZIUM_FILES)
def test_every_paimon_debezium_sample_parses_and_converts(path: Path) -> None:
    messages = sample_messages(path)
    assert messages
    for value in messages:
        (event,) = parse(value, None, CTX)
        assert isinstance(event, DataChangeEvent)
        assert event.database and event.table
        assert (event.before is None) == (event.op is Op.INSERT)
        assert (event.after is None) == (event.op is Op.DELETE)
        # every value is accepted by the conversion to its column's type
        for row in (event.before, event.after):
            if row is None:
                continue
            types = dict(event.schema.fields)
            for name, value_ in row.items():
                typ = types[name] if event.schema.type_system is TypeSystem.PAIMON else "STRING"
                assert typ is not None
                convert_column(name, [value_], parse_type(typ))


def test_the_samples_are_there() -> None:
    assert len(sample_paths("debezium")) == 29
    assert sum(len(sample_messages(p)) for p in sample_paths("debezium")) == 48


def test_bare_payload_insert_is_untyped() -> None:
    event = _event(_one("table/schemaevolution/debezium-data-1.txt")[0])
    assert event.op is Op.INSERT
    assert (event.database, event.table, event.op_ts_ms) == ("test", "product", 1596684883000)
    assert event.after == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    assert event.schema.type_system is TypeSystem.STRING
    assert event.schema.fields == (("id", None), ("name", None), ("description", None), ("weight", None))
    assert event.schema.primary_keys == ()


def test_bare_payload_delete_and_partial_update() -> None:
    _, delete, update, _ = _one("table/schemaevolution/debezium-data-3.txt")
    d = _event(delete)
    assert d.op is Op.DELETE and d.after is None
    assert d.before == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    u = _event(update)
    assert u.op is Op.UPDATE and u.op_ts_ms == 1596684906000
    # 'before' carries only the changed column: the before image is 'after' overlaid with it
    assert u.after == {"id": 105, "name": "hammer", "description": "14oz carpenter's hammer", "weight": 0.875,
                       "address": "Beijing"}  # fmt: skip
    assert u.before == dict(u.after, address="Shanghai")


def test_schema_evolution_adds_columns_in_later_messages() -> None:
    first = _event(_one("table/schemaevolution/debezium-data-1.txt")[0])
    later = _event(_one("table/schemaevolution/debezium-data-2.txt")[0])
    assert [n for n, _ in later.schema.fields] == [n for n, _ in first.schema.fields] + ["age"]
    assert later.after is not None and later.after["age"] == 18


def test_nested_values_are_kept_for_string_columns() -> None:
    event = _event(_one("table/nestedtype/debezium-data-1.txt")[0])
    assert event.after == {"id": 101, "name": "hammer", "row": {"row_key": "value"}}
    assert convert_column("row", [event.after["row"]], parse_type("STRING")).to_pylist() == ['{"row_key":"value"}']


def test_null_value_is_a_tombstone_between_messages() -> None:
    (first,) = _one("table/nullvalue/debezium-data-1.txt")
    (second,) = _one("table/nullvalue/debezium-data-2.txt")
    assert [e.after for e in parse(first, None, CTX)] == [{"id": 1, "value": "A"}]  # type: ignore[union-attr]
    assert parse(None, b'{"id": 1}', CTX) == []
    assert [e.after for e in parse(second, None, CTX)] == [{"id": 2, "value": "B"}]  # type: ignore[union-attr]


def test_envelope_with_schema_types_the_columns() -> None:
    event = _event(_one("table/schema/include/debezium-data-1.txt")[0])
    assert (event.database, event.table) == ("inventory", "products")
    assert event.op_ts_ms == 0  # source.ts_ms of a snapshot row, as sent
    assert event.schema.type_system is TypeSystem.PAIMON
    assert event.schema.fields == (("id", "INT"), ("name", "STRING"), ("description", "STRING"), ("weight", "DOUBLE"))
    # 3.140000104904175 has 16 digits: read exactly, kept as text for the DOUBLE column
    assert event.after == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter",
                           "weight": "3.140000104904175"}  # fmt: skip


def test_envelope_type_changes_between_messages() -> None:
    types = [dict(_event(_one(f"table/schema/schemaevolution/debezium-data-{i}.txt")[0]).schema.fields).get("age")
             for i in range(1, 6)]  # fmt: skip
    assert types == [None, "INT", "BIGINT", "INT", "STRING"]


def test_envelope_with_null_schema_is_untyped() -> None:
    event = _event(_one("table/schema/schemaevolution/debezium-data-with-delete.txt")[0])
    assert event.op is Op.DELETE
    assert event.schema.type_system is TypeSystem.STRING
    assert [n for n, _ in event.schema.fields] == ["id", "name", "description", "weight"]
    assert event.before == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}


def test_all_types_match_paimons_expected_types_and_values() -> None:
    # KafkaSyncTableActionITCase#testAllTypesWithSchemaImpl
    event = _event(_one("table/schema/alltype/debezium-data-1.txt")[0])
    assert event.op is Op.INSERT  # 'op': 'r', a snapshot read
    assert (event.database, event.table) == ("paimon_sync_table", "all_types_table")
    # Paimon's expected row type, in column order (DataTypes.TIME() is TIME(0))
    expected_types = [
        *["INT", "DECIMAL(2, 1)", "BOOLEAN", "BINARY(8)"],
        *["SMALLINT"] * 7,
        *["INT"] * 6,
        *["BIGINT"] * 3,
        *["DECIMAL(20, 0)"] * 3,
        *["DOUBLE"] * 12,
        *["DECIMAL(8, 3)"] * 3,
        *["STRING"] * 3,
        *["DECIMAL(8, 0)"] * 3,
        *["DECIMAL(38, 10)", "DATE"],
        *[
            "TIMESTAMP(3)",
            "TIMESTAMP(3)",
            "TIMESTAMP(6)",
            "TIMESTAMP(3)",
            "TIMESTAMP(3)",
            "TIMESTAMP(6)",
            "TIMESTAMP(6)",
        ],
        *["STRING"] * 6,
        *["BYTES"] * 6,
        *["STRING", "STRING", "INT", "TIME(0)"],
        *["STRING"] * 9,
    ]
    assert [t for _, t in event.schema.fields] == expected_types
    assert event.schema.fields[-1] == ("_set", "STRING")
    types = dict(event.schema.fields)
    after = event.after
    assert after is not None
    expected_values = {
        "_id": 1, "pt": "1.1", "_bit1": True, "_bit": bytes([0, 0, 0, 0, 0, 0, 0b00000111, 0b11000111]),
        "_bigint_unsigned": "20000000000", "_numeric": "12345.110",
        "_fixed": "123456789876543212345678987654321.110", "_decimal": "11111",
        "_big_decimal": "2222222222222222300000001111.1234567890", "_date": "2023-03-23",
        "_datetime": "2023-03-23 14:30:05.000000", "_datetime3": "2023-03-23 14:30:05.123000",
        "_datetime6": "2023-03-23 14:30:05.123456", "_datetime_p2": "2023-03-24 14:30:05.120000",
        "_timestamp": "2023-03-23 22:00:10.123456", "_timestamp0": "2023-03-23 07:10:00.000000",
        "_bin": b"bytes\x00\x00\x00\x00\x00", "_varbin": b"more bytes", "_json": '{"a": "b"}', "_enum": "value1",
        "_year": 2023, "_time": "10:13:23.000000", "_set": "a,b",
        "_point": '{"coordinates":[1,1],"type":"Point","srid":0}',
        "_linestring": '{"coordinates":[[3,0],[3,3],[3,5]],"type":"LineString","srid":0}',
        "_geometrycollection": '{"geometries":[{"type":"Point","coordinates":[10,10]},{"type":"Point",'
        '"coordinates":[30,30]},{"type":"LineString","coordinates":[[15,15],[20,20]]}],'
        '"type":"GeometryCollection","srid":0}',
    }  # fmt: skip
    assert {n: after[n] for n in expected_values} == expected_values
    time_type = types["_time"]
    assert time_type is not None
    time_ms = convert_column("_time", [after["_time"]], parse_type(time_type)).cast("int32").to_pylist()
    assert time_ms == [36803000]  # Paimon's expected TIME value


def test_bare_payload_messages_of_one_table_share_one_schema_object() -> None:
    c, d = (_event(v) for v in _one("table/schemaevolution/debezium-data-1.txt"))
    assert c.schema is d.schema
