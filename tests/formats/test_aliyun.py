"""aliyun-json against the messages of Paimon's aliyun parser test, plus captured edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.aliyun import FORMAT, parse
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from ingest.pipeline.chunk_builder import record_schema
from schema_evolution.conversion import convert_column
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.mysql_types import mysql_to_paimon
from tests.conftest import SAMPLES
from tests.formats.malformed import assert_malformed

DATA = Path(__file__).resolve().parents[1] / "data" / "aliyun"
CTX = MessageContext(SourcePosition("cdc", 3, 42))

ALIYUN_FILES = sorted((SAMPLES / "aliyun").rglob("*.txt"))
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


@pytest.mark.parametrize("path", ALIYUN_FILES, ids=lambda p: str(p.relative_to(SAMPLES / "aliyun")))
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


def _edge(name: str) -> list[object]:
    return list(parse((DATA / name).read_bytes(), None, CTX))


def test_update_before_message_retracts_the_before_image() -> None:
    (e,) = _edge("update-before.json")
    assert isinstance(e, DataChangeEvent) and e.op is Op.DELETE and e.after is None
    assert e.before is not None and e.before["val"] == "1.100000"


def test_update_after_without_before_is_an_upsert_of_the_after_image() -> None:
    (e,) = _edge("update-after-only.json")
    assert isinstance(e, DataChangeEvent) and e.op is Op.INSERT and e.before is None
    assert e.after is not None and e.after["val"] == "2.200000"


def test_heartbeat_changes_no_row() -> None:
    assert _edge("heartbeat.json") == []


def test_ddl_messages_become_schema_change_events() -> None:
    (flag,) = _edge("ddl-root-flag.json")
    assert isinstance(flag, SchemaChangeEvent) and flag.table == "sync_test_table" and flag.ddl == ""
    (stmt,) = _edge("ddl-statement.json")
    assert isinstance(stmt, SchemaChangeEvent)
    assert (stmt.database, stmt.table) == ("bigdata_test", "sync_test_table")
    assert stmt.ddl == "ALTER TABLE sync_test_table ADD COLUMN v2 INT"
    assert stmt.op_ts_ms == 1731662097000


def test_bytes_are_decoded_and_mysql_type_names_keep_their_meaning() -> None:
    (e,) = _edge("all-types.json")
    assert isinstance(e, DataChangeEvent) and e.after is not None
    assert e.schema.fields == (
        ("id", "BIGINT"),
        ("flag", "BOOLEAN"),
        ("bin", "LONGBLOB"),
        ("price", "decimal(10,2)"),
        ("born", "DATETIME(3)"),
    )
    assert e.after == {
        "id": 9,
        "flag": True,
        "bin": b"\x00\x01\xff",
        "price": "12.30",
        "born": "1969-12-31 00:00:00.000",
    }
    assert [mysql_to_paimon(t).sql() for _, t in e.schema.fields] == [
        "BIGINT",
        "BOOLEAN",
        "BYTES",
        "DECIMAL(10, 2)",
        "TIMESTAMP(3)",
    ]
    rs = record_schema(e.schema, "item", frozenset())
    got = [convert_column(n, [e.after[n]], t).to_pylist()[0] for n, t in rs.fields]
    assert got[:3] == [9, True, b"\x00\x01\xff"]
    assert str(got[3]) == "12.30"


@pytest.mark.parametrize(
    ("file", "reason"),
    [
        ("not-json.txt", "not valid JSON"),
        ("unknown-op.json", "unknown payload 'op' 'UPSERT'"),
        ("insert-without-after.json", "field 'payload.after' is missing or not an object"),
        ("missing-payload.json", "field 'payload' is missing or null"),
        ("missing-schema.json", "field 'schema' is missing or null"),
        ("column-without-type.json", "every entry of 'schema.dataColumn' needs a string 'name' and 'type'"),
        ("bad-base64.json", "BYTES value 'not base64!' is not Base64 text"),
        ("null-primary-key.json", "'schema.primaryKey' contains null"),
    ],
)
def test_malformed_messages_name_their_position_and_reason(file: str, reason: str) -> None:
    assert_malformed(parse, FORMAT, (DATA / "malformed" / file).read_bytes(), CTX, reason)


def test_null_value_is_malformed() -> None:
    with pytest.raises(MalformedMessage, match="no value"):
        parse(None, None, CTX)
