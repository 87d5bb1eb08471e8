"""aws-dms-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.aws_dms import parse
from formats.events import DataChangeEvent, MessageContext, Op
from schema_evolution.errors import SourcePosition

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
