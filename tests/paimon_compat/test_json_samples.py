"""json (plain objects) against the messages of Paimon's Kafka json tests (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from formats.json_plain import parse
from schema_evolution.errors import SourcePosition
from tests.paimon_compat.samples import SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("cdc", 3, 42), timestamp_ms=1716000000000)


JSON_FILES = sample_files("json")


def _events(path: str) -> list[DataChangeEvent]:
    out: list[DataChangeEvent] = []
    for value in sample_messages(SAMPLES / "json" / path):
        for e in parse(value, None, CTX):
            assert isinstance(e, DataChangeEvent)
            out.append(e)
    return out


@pytest.mark.parametrize("path", JSON_FILES)
def test_every_paimon_json_sample_is_one_insert_per_message(path: Path) -> None:
    messages = sample_messages(path)
    assert messages
    for value in messages:
        (event,) = parse(value, None, CTX)
        assert isinstance(event, DataChangeEvent)
        assert event.op is Op.INSERT and event.before is None and event.after
        assert (event.database, event.table) == (None, None)
        assert event.schema.type_system is TypeSystem.STRING
        assert event.schema.primary_keys == ()
        assert [n for n, _ in event.schema.fields] == list(event.after)


def test_the_samples_are_there() -> None:
    assert len(sample_paths("json")) == 3


def test_schema_evolution_rows_match_paimons_itcase() -> None:
    # KafkaJsonSyncTableActionITCase.testSchemaEvolution: a, b, event_tm, then c appears.
    first = _events("table/schemaevolution/json-data-1.txt")
    assert [e.after for e in first] == [
        {"a": "a1", "b": "b1", "event_tm": "2024-05-22 09:50:40"},
        {"a": "a2", "b": "b2", "event_tm": "2024-05-23 10:20:56"},
    ]
    assert first[0].schema.fields == (("a", None), ("b", None), ("event_tm", None))
    second = _events("table/schemaevolution/json-data-2.txt")
    assert second[0].after == {"a": "a3", "b": "b3", "event_tm": "2024-05-22 19:50:40"}
    assert second[1].after == {"a": "a4", "b": "b4", "c": "c4", "event_tm": "2024-05-23 15:20:56"}
    assert [n for n, _ in second[1].schema.fields] == ["a", "b", "c", "event_tm"]


def test_messages_with_the_same_keys_share_one_schema_object() -> None:
    a, b = _events("table/computedcolumn/json-data-1.txt")
    assert a.schema is b.schema
    c = _events("table/schemaevolution/json-data-2.txt")[1]
    assert c.schema is not a.schema
