"""json (plain objects) against captured messages in tests/data/ (Paimon's own samples: tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.events import DataChangeEvent, MessageContext
from formats.json_plain import parse
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.types import string

DATA = Path(__file__).resolve().parents[1] / "data" / "json"
CTX = MessageContext(SourcePosition("cdc", 3, 42), timestamp_ms=1716000000000)


def test_nested_values_stay_python_values_and_become_json_text() -> None:
    (event,) = parse((DATA / "nested-and-null.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.after is not None
    assert event.after["tags"] == ["x", "y"]
    assert event.after["attrs"] == {"k": "v", "n": 1}
    assert event.op_ts_ms is None  # the message has no change time; the Kafka timestamp is not one
    texts = [convert_column(n, [event.after[n]], string()).to_pylist()[0] for n, _ in event.schema.fields]
    assert texts == ["7", '["x","y"]', '{"k":"v","n":1}', None, "true", "2.5"]


def test_json_null_is_sql_null_not_the_text_null() -> None:
    (event,) = parse(b'{"id": "1", "weight": null}', None, CTX)
    assert isinstance(event, DataChangeEvent) and event.after is not None
    assert event.after["weight"] is None
