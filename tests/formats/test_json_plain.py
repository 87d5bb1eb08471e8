"""json (plain objects) against captured messages in tests/data/ (Paimon's own samples: tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from formats.json_plain import parse
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.types import string
from tests.conftest import sample_messages

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


def test_rows_are_inserts_and_a_new_key_is_a_new_schema() -> None:
    events = [e for v in sample_messages(DATA / "rows.txt") for e in parse(v, None, CTX)]
    assert all(isinstance(e, DataChangeEvent) for e in events)
    first, second, wider = events
    for e in events:
        assert isinstance(e, DataChangeEvent)
        assert e.op is Op.INSERT and e.before is None
        assert (e.database, e.table) == (None, None)
        assert e.schema.type_system is TypeSystem.STRING and e.schema.primary_keys == ()
    assert isinstance(first, DataChangeEvent) and isinstance(second, DataChangeEvent)
    assert isinstance(wider, DataChangeEvent)
    assert first.after == {"sensor": "s-1", "reading": "21.5", "at": "2024-04-01 12:00:00"}
    assert first.schema.fields == (("sensor", None), ("reading", None), ("at", None))
    assert first.schema is second.schema
    assert wider.after == {"sensor": "s-1", "reading": "21.7", "unit": "C", "at": "2024-04-01 12:01:00"}
    assert [n for n, _ in wider.schema.fields] == ["sensor", "reading", "unit", "at"]
