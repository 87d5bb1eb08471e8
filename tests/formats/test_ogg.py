"""ogg-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from formats.events import DataChangeEvent, MessageContext, Op
from formats.ogg import parse
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.types import string

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


def _text(column: str, value: Any) -> str | None:
    """A value as the STRING column will hold it (the conversion the sink applies)."""
    result: str | None = convert_column(column, [value], string()).to_pylist()[0]
    return result


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


def test_three_part_name_splits_at_the_first_dot_and_nested_values_become_json_text() -> None:
    event = _one("three-part-name.json")
    assert (event.database, event.table) == ("ORCLPDB1", "SALES.ORDERS")
    assert event.after is not None
    assert event.after["DOC"] == {"lines": [{"sku": "A", "qty": 2}]}
    assert event.after["MEMO"] is None
    assert _text("DOC", event.after["DOC"]) == '{"lines":[{"sku":"A","qty":2}]}'


def test_message_without_primary_keys_has_none() -> None:
    assert _one("no-primary-keys.json").schema.primary_keys == ()


def test_op_ts_with_a_zone_offset_is_honoured() -> None:
    event = _one("op-ts-with-zone.json")
    assert event.op is Op.DELETE and event.before == {"EVENT": "login"}
    assert event.op_ts_ms == _ms("2024-01-02 03:04:05.500")
