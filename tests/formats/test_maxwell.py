"""maxwell-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from formats.maxwell import parse
from schema_evolution.errors import SourcePosition
from tests.conftest import sample_messages
from tests.formats.strings import as_string

DATA = Path(__file__).resolve().parents[1] / "data" / "maxwell"
CTX = MessageContext(SourcePosition("cdc", 3, 42))

PRODUCT_COLUMNS = ("id", "name", "description", "weight")


def test_update_without_old_has_before_equal_to_data() -> None:
    # Maxwell omits an empty "old" (e.g. exclude_columns hid the only changed column).
    (event,) = parse((DATA / "update-without-old.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.op is Op.UPDATE
    assert event.before == event.after == {"id": 105, "name": "hammer", "secret": "x"}


def test_update_to_null_without_output_nulls_keeps_the_column() -> None:
    # Without output_nulls Maxwell drops null columns from "data"; "old" still names the column.
    (event,) = parse((DATA / "update-to-null-without-output-nulls.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.before == {"id": 106, "name": "saw", "note": "sharp"}
    assert event.after == {"id": 106, "name": "saw"}
    assert [n for n, _ in event.schema.fields] == ["id", "name", "note"]


def test_nested_values_are_kept_and_stored_as_jsonas_string() -> None:
    (event,) = parse((DATA / "nested-values.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.after is not None
    after = event.after
    assert after["attrs"] == {"color": "red", "sizes": [1, 2]}
    assert after["tags"] == ["a_val", "c_val"]
    assert after["note"] is None
    assert as_string("attrs", after["attrs"]) == '{"color":"red","sizes":[1,2]}'
    assert as_string("tags", after["tags"]) == '["a_val","c_val"]'
    assert as_string("flag", after["flag"]) == "true"
    assert as_string("price", after["price"]) == "12.3"
    assert as_string("blob", after["blob"]) == "AAEC"  # Maxwell's base64 text of a BLOB stays as sent


def test_message_without_primary_key_columns_has_no_keys() -> None:
    (event,) = parse((DATA / "no-primary-keys.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.schema.primary_keys == ()


def test_table_ddl_becomes_schema_change_event_with_millisecond_ts() -> None:
    (event,) = parse((DATA / "table-create.json").read_bytes(), None, CTX)
    assert isinstance(event, SchemaChangeEvent)
    assert (event.database, event.table) == ("test", "e")
    assert event.ddl.startswith("create table test.e")
    assert event.op_ts_ms == 1477053126000


def test_database_ddl_yields_no_event() -> None:
    assert parse((DATA / "database-create.json").read_bytes(), None, CTX) == []


def test_bootstrap_rows_are_inserts_and_markers_carry_nothing() -> None:
    (event,) = parse((DATA / "bootstrap-insert.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.op is Op.INSERT and event.after
    assert parse((DATA / "bootstrap-start.json").read_bytes(), None, CTX) == []


def _rows() -> list[DataChangeEvent]:
    out = [e for v in sample_messages(DATA / "insert-update-delete.txt") for e in parse(v, None, CTX)]
    assert all(isinstance(e, DataChangeEvent) for e in out)
    return out  # type: ignore[return-value]


def test_insert_has_after_image_keys_and_seconds_timestamp() -> None:
    event = _rows()[0]
    assert event.op is Op.INSERT and event.before is None
    assert (event.database, event.table) == ("shop", "lamps")
    assert event.after == {"code": "L-1", "watts": 40, "shade": "linen", "price": 19.9}
    assert event.schema.fields == (("code", None), ("watts", None), ("shade", None), ("price", None))
    assert event.schema.type_system is TypeSystem.STRING
    assert event.schema.primary_keys == ("code",)
    assert event.op_ts_ms == 1712000001000  # "ts" is in seconds


def test_update_before_image_is_data_overlaid_with_old_and_nulls_stay_null() -> None:
    update = _rows()[2]
    assert update.op is Op.UPDATE
    assert update.after == {"code": "L-2", "watts": 60, "shade": "paper", "price": 22.0}
    assert update.before == {**update.after, "shade": None, "price": 24.5}  # "old": the shade WAS null


def test_delete_has_the_row_as_before_image() -> None:
    delete = _rows()[3]
    assert delete.op is Op.DELETE and delete.after is None
    assert delete.before == {"code": "L-1", "watts": 40, "shade": "linen", "price": 19.9}


def test_added_column_changes_the_schema_and_same_columns_share_one() -> None:
    first, second, update, delete, wider = _rows()
    assert first.schema is second.schema is update.schema is delete.schema
    assert [n for n, _ in wider.schema.fields] == ["code", "watts", "shade", "price", "socket"]
