"""json (plain objects) against the messages of Paimon's Kafka json tests, plus captured edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from formats.json_plain import FORMAT, parse
from schema_evolution.conversion import convert_column
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.types import string
from tests.conftest import SAMPLES, sample_messages
from tests.formats.malformed import assert_malformed

DATA = Path(__file__).resolve().parents[1] / "data" / "json"
CTX = MessageContext(SourcePosition("cdc", 3, 42), timestamp_ms=1716000000000)

JSON_FILES = sorted((SAMPLES / "json").rglob("*.txt"))


def _events(path: str) -> list[DataChangeEvent]:
    out: list[DataChangeEvent] = []
    for value in sample_messages(SAMPLES / "json" / path):
        for e in parse(value, None, CTX):
            assert isinstance(e, DataChangeEvent)
            out.append(e)
    return out


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: str(p.relative_to(SAMPLES / "json")))
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
    assert len(JSON_FILES) == 3


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


@pytest.mark.parametrize(
    ("file", "reason"),
    [
        ("not-json.txt", "not valid JSON"),
        ("array-root.json", "expected a JSON object, got list"),
        ("scalar-root.json", "expected a JSON object, got str"),
    ],
)
def test_malformed_messages_name_their_position_and_reason(file: str, reason: str) -> None:
    assert_malformed(parse, FORMAT, (DATA / "malformed" / file).read_bytes(), CTX, reason)


def test_tombstone_is_malformed() -> None:
    with pytest.raises(MalformedMessage, match="no value"):
        parse(None, b"key", CTX)
