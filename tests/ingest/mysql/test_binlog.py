"""The binlog phase after a snapshot: a change is dropped when the snapshot chunk of its key already
holds it (its position at or before that chunk's HW). A primary-key-changing UPDATE is a DELETE of
the before-image and an INSERT of the after-image, each decided by its own key's chunk (#23: the
whole update was decided by the after-image's chunk, leaving the old key as a ghost row)."""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from formats.events import DataChangeEvent, Op
from ingest.mysql import binlog, tables
from ingest.mysql.binlog import BinlogReader
from ingest.mysql.client import MySqlConnection
from ingest.mysql.schema_history import history_mark
from ingest.mysql.spec import BinlogPartition, MySqlSourceSpec, binlog_offset
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution.mysql_tables import Column, TableDef

# Two chunks of d.t: [.., 100) read early (HW at 300), [100, ..) read late (HW at 700).
SNAPSHOT = {"d.t": [(None, 100, "b.000001", 300), (100, None, "b.000001", 700)]}


class _Assembler:
    def __init__(self) -> None:
        self.events: list[DataChangeEvent] = []

    def add_events(self, events: list[DataChangeEvent], _position: Any, _ts: int = 0) -> None:
        self.events.extend(events)

    def take(self) -> None:
        return None


def _emitted(
    monkeypatch: pytest.MonkeyPatch,
    changes: Sequence[tuple[Op, dict[str, Any] | None, dict[str, Any] | None, int]],
    keys: tuple[str, ...] = ("id",),
    snapshot: dict[str, list[tuple[int | None, int | None, str, int]]] | None = None,
) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """What the binlog phase emits for ``changes`` (op, before, after, position in b.000001)."""
    columns = [("id", "int"), ("k2", "int"), ("v", "varchar(10)")]
    monkeypatch.setattr(tables, "table_columns", lambda _c, _d, _t: (columns, list(keys)))
    monkeypatch.setattr(tables, "table_comments", lambda _c, _d, _t: ({}, None))
    monkeypatch.setattr(binlog, "variables", lambda _c, _name: {"binlog_row_metadata": "FULL"})

    def binlog_rows(*_: Any, **__: Any) -> Iterator[Any]:
        for op, before, after, pos in changes:
            yield op, "d", "t", before, after, ("b.000001", pos), 0

    monkeypatch.setattr(binlog, "binlog_rows", binlog_rows)
    spec = MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "", 10), "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")), "/s"
    )
    part = BinlogPartition(("b.000001", 4), ("b.000001", 2000), SNAPSHOT if snapshot is None else snapshot)
    reader = BinlogReader(spec, part, object())
    assembler = _Assembler()
    reader.assembler = assembler  # type: ignore[assignment]
    list(reader.read())
    # (values come out as the text the row normalizer makes of them)
    return [
        (e.op.name, None if e.before is None else _typed(e.before), None if e.after is None else _typed(e.after))
        for e in assembler.events
    ]


def _typed(image: Any) -> dict[str, Any]:
    return {c: v if c == "v" else int(v) for c, v in image.items()}


def _row(key: int, v: str = "x", k2: int = 0) -> dict[str, Any]:
    return {"id": key, "k2": k2, "v": v}


def test_key_moved_from_a_read_chunk_to_one_read_later_deletes_the_old_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # At 500: after the early chunk's HW (it holds 5), at or before the late chunk's (it holds 100005).
    emitted = _emitted(monkeypatch, [(Op.UPDATE, _row(5, "a"), _row(100005, "a"), 500)])
    assert emitted == [("DELETE", _row(5, "a"), None)]


def test_key_moved_from_a_chunk_read_later_to_a_read_one_inserts_the_new_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # The late chunk never saw 200; the early one was read before -200 existed.
    emitted = _emitted(monkeypatch, [(Op.UPDATE, _row(200, "b"), _row(-200, "b"), 500)])
    assert emitted == [("INSERT", None, _row(-200, "b"))]


def test_key_change_after_both_chunks_is_a_delete_then_an_insert(monkeypatch: pytest.MonkeyPatch) -> None:
    emitted = _emitted(monkeypatch, [(Op.UPDATE, _row(5, "a"), _row(100005, "a"), 800)])
    assert emitted == [("DELETE", _row(5, "a"), None), ("INSERT", None, _row(100005, "a"))]
    # Without any snapshot (no chunk holds anything) the same: the change is never an update of one key.
    emitted = _emitted(monkeypatch, [(Op.UPDATE, _row(5, "a"), _row(100005, "a"), 200)], snapshot={})
    assert emitted == [("DELETE", _row(5, "a"), None), ("INSERT", None, _row(100005, "a"))]


def test_key_change_both_chunks_hold_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _emitted(monkeypatch, [(Op.UPDATE, _row(5, "a"), _row(100005, "a"), 250)]) == []


def test_key_preserving_update_stays_one_update(monkeypatch: pytest.MonkeyPatch) -> None:
    changes = [
        (Op.UPDATE, _row(5, "a"), _row(5, "b"), 250),  # the early chunk holds it
        (Op.UPDATE, _row(5, "b"), _row(5, "c"), 500),
        (Op.UPDATE, _row(150, "a"), _row(150, "b"), 500),  # the late chunk holds it
        (Op.INSERT, None, _row(7), 500),
        (Op.DELETE, _row(160), None, 800),
    ]
    assert _emitted(monkeypatch, changes) == [
        ("UPDATE", _row(5, "b"), _row(5, "c")),
        ("INSERT", None, _row(7)),
        ("DELETE", _row(160), None),
    ]


def test_multi_column_key_change_is_a_delete_then_an_insert(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot: dict[str, list[tuple[int | None, int | None, str, int]]] = {"d.t": [(None, None, "b.000001", 300)]}
    changes = [
        (Op.UPDATE, _row(5, "a", k2=1), _row(5, "a", k2=2), 250),  # the one chunk holds it
        (Op.UPDATE, _row(5, "a", k2=2), _row(5, "a", k2=3), 500),
        (Op.UPDATE, _row(5, "a", k2=3), _row(5, "b", k2=3), 500),
    ]
    assert _emitted(monkeypatch, changes, keys=("id", "k2"), snapshot=snapshot) == [
        ("DELETE", _row(5, "a", k2=2), None),
        ("INSERT", None, _row(5, "a", k2=3)),
        ("UPDATE", _row(5, "a", k2=3), _row(5, "b", k2=3)),
    ]


def test_a_ddl_the_read_task_follows_goes_back_as_a_mark_and_nothing_is_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Without FULL row metadata the history names the rows: the read task gets its definitions with
    # the partition and returns the change a DDL makes as a mark; it never opens the state folder.
    monkeypatch.setattr(binlog, "variables", lambda _c, _name: {"binlog_row_metadata": "NO_LOG"})
    at = ("b.000001", 100)

    def binlog_rows(spec: Any, start: Any, end: Any, sid: Any, only: Any, on_ddl: Any, namer: Any) -> Iterator[Any]:
        yield Op.INSERT, "d", "t", None, {"id": 1, "v": "a"}, ("b.000001", 50), 0
        on_ddl("ALTER TABLE t ADD COLUMN w INT", "d", 0, at)
        assert namer.tables["d.t"].names() == ["id", "v", "w"]  # the next row is named by the new definition
        yield Op.INSERT, "d", "t", None, {"id": 2, "v": "b", "w": 7}, ("b.000001", 150), 0

    monkeypatch.setattr(binlog, "binlog_rows", binlog_rows)
    state = tmp_path / "state"  # the driver's, absent where the task runs
    spec = MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "", 10), "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")), str(state)
    )
    table = TableDef((Column("id", "int", False), Column("v", "varchar(10)")), ("id",))
    part = BinlogPartition(("b.000001", 4), ("b.000001", 2000), {}, {"d.t": table})
    reader = BinlogReader(spec, part, object())
    batches = [*reader.read(), *reader.finish()]
    marks = [m for b in batches for m in b.column("mark").to_pylist() if m is not None]
    wider = TableDef((*table.columns, Column("w", "int")), ("id",))
    assert marks == [history_mark(binlog_offset(at), at, {"d.t": wider})]
    assert sum(r or 0 for b in batches for r in b.column("rows").to_pylist()) == 2
    assert part.definitions == {"d.t": table}  # the partition is not changed (a retried task reads it again)
    assert not state.exists()
    assert pickle.loads(pickle.dumps(part)) == part
