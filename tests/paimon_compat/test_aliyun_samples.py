"""aliyun-json against the messages of Paimon's aliyun parser test (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.aliyun import parse
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from ingest.pipeline.chunk_builder import record_schema
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from tests.paimon_compat.samples import SAMPLES, sample_files

CTX = MessageContext(SourcePosition("cdc", 3, 42))


ALIYUN_FILES = sample_files("aliyun")


FIELDS = (("id", "BIGINT"), ("val", "DOUBLE"), ("name", "TEXT"), ("create_time", "DATETIME(3)"))


def _messages(path: Path) -> list[bytes]:
    # event-update-in-one.txt indents its message by one space, which tests.conftest.sample_messages
    # (lines starting with "{") would skip; Paimon's test trims the line first, and so does this.
    return [line.strip().encode() for line in path.read_text().splitlines() if line.strip().startswith("{")]


def _one(name: str) -> DataChangeEvent:
    (value,) = _messages(SAMPLES / "aliyun" / "table" / "event" / name)
    (event,) = parse(value, None, CTX)
    assert isinstance(event, DataChangeEvent)
    return event


@pytest.mark.parametrize("path", ALIYUN_FILES)
def test_every_paimon_aliyun_sample_parses_and_converts(path: Path) -> None:
    messages = _messages(path)
    assert len(messages) == 1
    for value in messages:
        (event,) = parse(value, None, CTX)
        assert isinstance(event, DataChangeEvent)
        assert (event.database, event.table) == ("bigdata_test", "sync_test_table")
        assert event.schema.primary_keys == ("id",)
        assert event.schema.type_system is TypeSystem.MYSQL
        assert event.schema.fields == FIELDS
        # Every value converts to its column's Paimon type (Paimon's own writer fails on the DATE).
        rs = record_schema(event.schema, "sync_test_table", frozenset())
        for image in (event.before, event.after):
            if image is not None:
                for name, typ in rs.fields:
                    convert_column(name, [image[name]], typ)


def test_types_are_paimons_except_date() -> None:
    # Paimon's MySqlTypeUtils: LONG -> BIGINT, DOUBLE -> DOUBLE, STRING -> STRING (DATE -> DATE, see below).
    rs = record_schema(_one("event-insert.txt").schema, "t", frozenset())
    assert [(n, t.sql()) for n, t in rs.fields] == [
        ("id", "BIGINT"),
        ("val", "DOUBLE"),
        ("name", "STRING"),
        ("create_time", "TIMESTAMP(3)"),
    ]


def test_insert_sample() -> None:
    e = _one("event-insert.txt")
    assert e.op is Op.INSERT and e.before is None
    # 1731661114000 ms is 2024-11-15T08:58:34Z; DataWorks' DATE is an epoch-millisecond instant.
    assert e.after == {"create_time": "2024-11-15 08:58:34.000", "id": 2, "name": "a", "val": "1.100000"}
    assert e.op_ts_ms is None  # eventTime -1: a full-load row


def test_update_in_one_message_is_an_update_with_both_images() -> None:
    e = _one("event-update-in-one.txt")
    assert e.op is Op.UPDATE
    assert e.before == {"id": 2, "val": "1.100000", "name": "a", "create_time": "2024-11-15 08:58:34.000"}
    assert e.after == {"id": 2, "val": "2.200000", "name": "a", "create_time": "2024-11-15 08:58:34.000"}
    assert e.op_ts_ms == 1731662097000


def test_delete_sample() -> None:
    e = _one("event-delete.txt")
    assert e.op is Op.DELETE and e.after is None
    assert e.before == {"id": 1, "val": "1.100000", "name": "a", "create_time": "2024-11-15 08:58:34.000"}
    assert e.op_ts_ms == 1731662085000


def test_messages_with_the_same_schema_share_one_schema_object() -> None:
    assert _one("event-insert.txt").schema is _one("event-delete.txt").schema
