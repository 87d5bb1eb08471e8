"""debezium-bson against Paimon's samples (read in place) and the expectations of Paimon's
``DebeziumBsonRecordParserTest`` (insert, update, delete with and without a pre-image, and every BSON type
of ``event-bson.txt`` against ``event-json.txt``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.debezium_bson import document_row, parse
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from schema_evolution.errors import SourcePosition
from tests.paimon_compat.samples import FOUND, REASON, SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("topic", 0, 0))
EVENT = "debezium-bson/table/event"

pytestmark = pytest.mark.skipif(not FOUND, reason=REASON)

KEY_EVENT = {"_id": "67ab25755c0d5ac87eb8c632"}
BEFORE_EVENT = {
    "_id": "67ab25755c0d5ac87eb8c632",
    "created_at": "1736207571013",
    "created_by": "peter",
    "tags": '["pending"]',
    "updated_at": "1739455297970",
}
AFTER_EVENT = BEFORE_EVENT | {"tags": '["succeed"]', "updated_at": "1739455397970"}


def _records(name: str) -> list[tuple[bytes, bytes]]:
    """(key, value) pairs: the sample files alternate a key line and a value line."""
    lines = sample_messages(SAMPLES / EVENT / name)
    assert lines and len(lines) % 2 == 0
    return list(zip(lines[::2], lines[1::2], strict=True))


def _parse(key: bytes, value: bytes) -> list[DataChangeEvent]:
    events = parse(value, key, CTX)
    for e in events:
        assert isinstance(e, DataChangeEvent)
        assert (e.database, e.table) == ("bigdata_test", "sync_test_table")
        assert e.schema.primary_keys == ("_id",) and e.schema.type_system is TypeSystem.STRING
        assert e.op_ts_ms is not None and e.op_ts_ms > 0
    return events  # type: ignore[return-value]


def test_the_samples_are_there() -> None:
    assert [p.name for p in sample_paths("debezium-bson")] == [
        "event-bson.txt",
        "event-delete.txt",
        "event-insert.txt",
        "event-json.txt",
        "event-update.txt",
    ]


def test_extract_insert_record() -> None:
    for key, value in _records("event-insert.txt"):
        (event,) = _parse(key, value)
        assert event.op is Op.INSERT and event.after == BEFORE_EVENT


def test_extract_update_record() -> None:
    records = _records("event-update.txt")
    assert len(records) == 2
    for key, value in records:
        removed, added = _parse(key, value)
        assert removed.op is Op.DELETE and added.op is Op.INSERT
        has_before = json.loads(value)["before"] is not None
        assert removed.before == (BEFORE_EVENT if has_before else KEY_EVENT)
        assert added.after == AFTER_EVENT


def test_extract_delete_record() -> None:
    records = _records("event-delete.txt")
    assert len(records) == 3  # key {"$oid"}, key as a plain string, and with a pre-image
    for key, value in records:
        (event,) = _parse(key, value)
        assert event.op is Op.DELETE
        has_before = json.loads(value)["before"] is not None
        assert event.before == (BEFORE_EVENT if has_before else KEY_EVENT)


def test_bson_convert_json() -> None:
    # DebeziumBsonRecordParserTest.bsonConvertJsonTest: each document of event-bson.txt, read as the text of
    # a debezium-bson document, gives the column texts of the same line of event-json.txt.
    documents = sample_messages(SAMPLES / EVENT / "event-bson.txt")
    expected = sample_messages(SAMPLES / EVENT / "event-json.txt")
    assert len(documents) == len(expected) == 2
    for document, want in zip(documents, expected, strict=True):
        row = document_row(document.decode())
        for name, value in json.loads(want).items():
            assert row.get(name) == value, name


@pytest.mark.parametrize("path", sample_files("debezium-bson"))
def test_every_sample_message_parses(path: Path) -> None:
    for line in sample_messages(path):
        if b'"op"' in line:
            assert parse(line, b'{"id": "\\"x\\""}', CTX)
