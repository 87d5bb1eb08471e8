"""aws-dms-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.aws_dms import parse
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from schema_evolution.errors import SourcePosition
from tests.conftest import sample_messages

DATA = Path(__file__).resolve().parents[1] / "data" / "aws-dms"
CTX = MessageContext(SourcePosition("cdc", 3, 42))


def test_control_record_changes_no_row() -> None:
    assert parse((DATA / "control-create-table.json").read_bytes(), None, CTX) == []


def test_full_load_record_is_an_insert() -> None:
    (e,) = parse((DATA / "load.json").read_bytes(), None, CTX)
    assert isinstance(e, DataChangeEvent)
    assert e.op is Op.INSERT and e.after == {"id": 1, "name": "bolt"} and e.before is None


def test_update_without_before_image_repeats_the_after_image() -> None:
    (e,) = parse((DATA / "update-without-before-image.json").read_bytes(), None, CTX)
    assert isinstance(e, DataChangeEvent) and e.op is Op.UPDATE
    assert e.before == e.after == {"id": 5, "name": "nut"}


def test_before_image_column_absent_from_the_new_row_is_kept_in_the_before_image() -> None:
    (e,) = parse((DATA / "update-before-image-only-column.json").read_bytes(), None, CTX)
    assert isinstance(e, DataChangeEvent)
    assert e.after == {"id": 5, "name": "nut"}
    assert e.before == {"id": 5, "name": "screw", "gone": "x"}
    assert [n for n, _ in e.schema.fields] == ["id", "name", "gone"]


def test_unreadable_timestamp_leaves_op_ts_unknown() -> None:
    value = b'{"data":{"id":1},"metadata":{"timestamp":"yesterday","record-type":"data","operation":"insert",'
    value += b'"schema-name":"s","table-name":"t"}}'
    (e,) = parse(value, None, CTX)
    assert isinstance(e, DataChangeEvent) and e.op_ts_ms is None


def _cdc() -> list[DataChangeEvent]:
    out = [e for v in sample_messages(DATA / "cdc.txt") for e in parse(v, None, CTX)]
    assert all(isinstance(e, DataChangeEvent) for e in out)
    return out  # type: ignore[return-value]


def test_insert_has_after_image_database_and_table() -> None:
    first = _cdc()[0]
    assert first.op is Op.INSERT and first.before is None
    assert (first.database, first.table) == ("tools", "items")
    assert first.after == {"pid": 7, "label": "drill", "stock": 3}
    assert first.schema.fields == (("pid", None), ("label", None), ("stock", None))
    assert first.schema.type_system is TypeSystem.STRING
    assert first.schema.primary_keys == ()
    assert first.op_ts_ms == 1717581600125  # 2024-06-05T10:00:00.125Z


def test_update_takes_its_before_image_from_the_bi_columns() -> None:
    update = _cdc()[2]
    assert update.op is Op.UPDATE
    assert update.after == {"pid": 8, "label": "saw", "stock": 4}
    assert update.before == {"pid": 8, "label": "saw", "stock": 5}
    assert [n for n, _ in update.schema.fields] == ["pid", "label", "stock"]  # no BI_ columns


def test_delete_has_the_row_as_before_image() -> None:
    delete = _cdc()[3]
    assert delete.op is Op.DELETE and delete.after is None
    assert delete.before == {"pid": 7, "label": "drill", "stock": 3}


def test_new_column_appears_in_the_schema_and_json_null_is_sql_null() -> None:
    first, second, *_, wider = _cdc()
    assert first.schema is second.schema
    assert [n for n, _ in wider.schema.fields] == ["pid", "label", "stock", "bin"]
    assert wider.after is not None and wider.after["stock"] is None and wider.after["bin"] == "C-4"
