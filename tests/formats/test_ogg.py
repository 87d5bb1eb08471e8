"""ogg-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from formats.ogg import parse
from schema_evolution.errors import SourcePosition
from tests.conftest import sample_messages
from tests.formats.strings import as_string

DATA = Path(__file__).resolve().parents[1] / "data" / "ogg"
CTX = MessageContext(SourcePosition("cdc", 3, 42))

PRODUCT_COLUMNS = ("id", "name", "description", "weight")


def _ms(text: str) -> int:
    return (datetime.fromisoformat(text).replace(tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(
        milliseconds=1
    )


def _one(file: str) -> DataChangeEvent:
    (e,) = parse((DATA / file).read_bytes(), None, CTX)
    assert isinstance(e, DataChangeEvent)
    return e


def test_compressed_update_completes_the_before_image_from_after() -> None:
    event = _one("compressed-update.json")
    assert event.before == {"ID": 7, "PRICE": 1.5, "NAME": "widget", "NOTE": None}
    assert event.after == {"ID": 7, "PRICE": 2.25, "NAME": "widget", "NOTE": None}
    assert [n for n, _ in event.schema.fields] == ["ID", "PRICE", "NAME", "NOTE"]
    assert event.op_ts_ms == _ms("2024-02-29 23:59:59.123")


def test_partial_after_image_keeps_unchanged_columns_and_explicit_nulls() -> None:
    event = _one("partial-after-update.json")
    assert event.before == {"ID": 8, "PRICE": 3.0, "NAME": "bolt", "NOTE": None}
    assert event.after == {"ID": 8, "PRICE": None, "NAME": "bolt", "NOTE": None}  # PRICE really became NULL


def test_three_part_name_splits_at_the_first_dot_and_nested_values_become_jsonas_string() -> None:
    event = _one("three-part-name.json")
    assert (event.database, event.table) == ("ORCLPDB1", "SALES.ORDERS")
    assert event.after is not None
    assert event.after["DOC"] == {"lines": [{"sku": "A", "qty": 2}]}
    assert event.after["MEMO"] is None
    assert as_string("DOC", event.after["DOC"]) == '{"lines":[{"sku":"A","qty":2}]}'


def test_message_without_primary_keys_has_none() -> None:
    assert _one("no-primary-keys.json").schema.primary_keys == ()


def test_op_ts_with_a_zone_offset_is_honoured() -> None:
    event = _one("op-ts-with-zone.json")
    assert event.op is Op.DELETE and event.before == {"EVENT": "login"}
    assert event.op_ts_ms == _ms("2024-01-02 03:04:05.500")


def _rows() -> list[DataChangeEvent]:
    out = [e for v in sample_messages(DATA / "insert-update-delete.txt") for e in parse(v, None, CTX)]
    assert all(isinstance(e, DataChangeEvent) for e in out)
    return out  # type: ignore[return-value]


def test_insert_splits_table_at_the_dot_and_reads_op_ts_as_utc() -> None:
    event = _rows()[0]
    assert event.op is Op.INSERT and event.before is None
    assert (event.database, event.table) == ("WH", "BINS")
    assert event.after == {"BIN_ID": 11, "AISLE": "A", "LEVEL": 1, "LOAD": 12.5}
    assert event.schema.fields == (("BIN_ID", None), ("AISLE", None), ("LEVEL", None), ("LOAD", None))
    assert event.schema.type_system is TypeSystem.STRING
    assert event.schema.primary_keys == ("BIN_ID",)
    assert event.op_ts_ms == _ms("2024-03-01 06:00:01.250")


def test_update_carries_before_and_after() -> None:
    event = _rows()[2]
    assert event.op is Op.UPDATE
    assert event.before == {"BIN_ID": 12, "AISLE": "B", "LEVEL": 2, "LOAD": 0.0}
    assert event.after == {"BIN_ID": 12, "AISLE": "B", "LEVEL": 2, "LOAD": 7.75}
    assert event.op_ts_ms == _ms("2024-03-01 06:10:00.500")


def test_delete_has_before_image_only() -> None:
    event = _rows()[3]
    assert event.op is Op.DELETE and event.after is None
    assert event.before == {"BIN_ID": 11, "AISLE": "A", "LEVEL": 1, "LOAD": 12.5}


def test_messages_with_the_same_columns_share_one_schema_object() -> None:
    a, b, c, d = _rows()
    assert a.schema is b.schema is c.schema is d.schema
