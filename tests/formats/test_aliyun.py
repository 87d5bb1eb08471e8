"""aliyun-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.aliyun import parse
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent
from ingest.pipeline.chunk_builder import record_schema
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.mysql_types import mysql_to_paimon

DATA = Path(__file__).resolve().parents[1] / "data" / "aliyun"
CTX = MessageContext(SourcePosition("cdc", 3, 42))


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
