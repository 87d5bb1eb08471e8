"""aliyun-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

from formats.aliyun import parse
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from ingest.pipeline.chunk_builder import record_schema
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.mysql_types import mysql_to_paimon
from tests.conftest import sample_messages

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


def _rows() -> list[DataChangeEvent]:
    out = [e for v in sample_messages(DATA / "insert-update-delete.txt") for e in parse(v, None, CTX)]
    assert all(isinstance(e, DataChangeEvent) for e in out)
    return out  # type: ignore[return-value]


def test_types_are_paimons_except_date() -> None:
    # Paimon's MySqlTypeUtils: LONG -> BIGINT, DOUBLE -> DOUBLE, STRING -> STRING; DATE -> TIMESTAMP(3) here
    event = _rows()[0]
    assert event.schema.fields == (("uid", "BIGINT"), ("score", "DOUBLE"), ("nick", "TEXT"), ("seen", "DATETIME(3)"))
    assert event.schema.type_system is TypeSystem.MYSQL
    rs = record_schema(event.schema, "t", frozenset())
    assert [(n, t.sql()) for n, t in rs.fields] == [
        ("uid", "BIGINT"),
        ("score", "DOUBLE"),
        ("nick", "STRING"),
        ("seen", "TIMESTAMP(3)"),
    ]


def test_insert() -> None:
    e = _rows()[0]
    assert e.op is Op.INSERT and e.before is None
    assert (e.database, e.table) == ("games", "players")
    assert e.schema.primary_keys == ("uid",)
    # 1717200000000 ms is 2024-06-01T00:00:00Z; DataWorks' DATE is an epoch-millisecond instant.
    assert e.after == {"uid": 41, "score": "10.500000", "nick": "kite", "seen": "2024-06-01 00:00:00.000"}
    assert e.op_ts_ms == 1717200001000


def test_update_in_one_message_is_an_update_with_both_images() -> None:
    e = _rows()[1]
    assert e.op is Op.UPDATE
    assert e.before == {"uid": 41, "score": "10.500000", "nick": "kite", "seen": "2024-06-01 00:00:00.000"}
    assert e.after == {"uid": 41, "score": "12.250000", "nick": "kite", "seen": "2024-06-02 00:00:00.000"}
    assert e.op_ts_ms == 1717286401000


def test_delete_and_every_value_converts() -> None:
    rows = _rows()
    e = rows[2]
    assert e.op is Op.DELETE and e.after is None
    assert e.before == {"uid": 41, "score": "12.250000", "nick": "kite", "seen": "2024-06-02 00:00:00.000"}
    assert rows[0].schema is e.schema  # messages with the same schema share one schema object
    rs = record_schema(e.schema, "players", frozenset())
    for event in rows:
        for image in (event.before, event.after):
            if image is not None:
                for name, typ in rs.fields:
                    convert_column(name, [image[name]], typ)
