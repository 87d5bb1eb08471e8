"""A snapshot chunk's back-fill: the binlog between its LW and HW applied to the rows its SELECT read,
so the chunk holds exactly the table's rows in its key range as of HW. A primary-key-changing
UPDATE is the delete of its before-image and the insert of its after-image, each applied only where
its own key falls in the chunk (#23: a key moved out of a chunk read before the move left a ghost)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from formats.events import Op
from ingest.mysql import snapshot, tables
from ingest.mysql.client import MySqlConnection
from ingest.mysql.snapshot import _read_chunk_rows
from ingest.mysql.spec import Chunk, ChunkPartition, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter

LW, HW = ("b.000001", 100), ("b.000001", 900)


class _Cursor:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def execute(self, sql: str, args: list[Any]) -> None:
        lo, hi = [*args, None, None][:2] if "<" in sql and ">=" in sql else (None, None)
        if lo is not None:
            self.rows = [r for r in self.rows if lo <= r[0] < hi]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self.rows = self.rows, []
        return rows

    def close(self) -> None:
        pass


class _Connection:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def cursor(self, _cls: Any = None) -> _Cursor:
        return _Cursor(list(self.rows))

    def commit(self) -> None:
        pass


def _spec(**extra: Any) -> MySqlSourceSpec:
    return MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "", 10), "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")), "/s",
        **extra,
    )  # fmt: skip


def _chunk_rows(
    monkeypatch: pytest.MonkeyPatch,
    selected: list[tuple[Any, ...]],
    changes: Sequence[tuple[Op, dict[str, Any] | None, dict[str, Any] | None]],
    chunk: Chunk,
    keys: tuple[str, ...] = ("id",),
    **spec: Any,
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The chunk's rows: ``selected`` read by its SELECT (filtered to the range), then ``changes``
    (op, before, after) found in the binlog between LW and HW."""
    columns = [("id", "int"), ("k2", "int"), ("v", "varchar(10)")]
    monkeypatch.setattr(tables, "table_columns", lambda _c, _d, _t: (columns, list(keys)))
    monkeypatch.setattr(tables, "table_comments", lambda _c, _d, _t: ({}, None))
    monkeypatch.setattr(snapshot, "connect", lambda _conn: _Connection(selected))
    marks = iter([LW, HW])
    monkeypatch.setattr(snapshot, "master_status", lambda _c: next(marks))
    monkeypatch.setattr(snapshot, "begin_consistent_read", lambda _c: None)  # MySQL: no snapshot position

    def binlog_rows(_spec: Any, start: Any, end: Any, *_: Any) -> Iterator[Any]:
        assert (start, end) == (LW, HW)
        for i, (op, before, after) in enumerate(changes):
            yield op, "d", "t", before, after, ("b.000001", 200 + i), 0

    monkeypatch.setattr(snapshot, "binlog_rows", binlog_rows)
    rows, _types, high, _schema = _read_chunk_rows(_spec(**spec), ChunkPartition(0, chunk))
    assert high == (LW if spec.get("skip_backfill") else HW)
    return rows


def _row(key: int, v: str = "x", k2: int = 0) -> dict[str, Any]:
    return {"id": key, "k2": k2, "v": v}


def test_key_moved_out_of_the_chunk_is_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SELECT saw 5; the key then moved to 105, another chunk's: this chunk no longer holds 5.
    rows = _chunk_rows(
        monkeypatch, [(5, 0, "a"), (6, 0, "b")], [(Op.UPDATE, _row(5, "a"), _row(105, "a"))], Chunk("d", "t", 0, 100)
    )
    assert list(rows) == [(6,)]


def test_key_moved_into_the_chunk_is_inserted(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _chunk_rows(monkeypatch, [(6, 0, "b")], [(Op.UPDATE, _row(105, "a"), _row(5, "a"))], Chunk("d", "t", 0, 100))
    assert rows == {(5,): _row(5, "a"), (6,): _row(6, "b")}


def test_key_moved_within_the_chunk_and_unrelated_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    changes = [
        (Op.UPDATE, _row(5, "a"), _row(7, "a")),  # within the chunk
        (Op.UPDATE, _row(6, "b"), _row(6, "c")),  # the key kept
        (Op.UPDATE, _row(150, "z"), _row(160, "z")),  # wholly another chunk's
        (Op.INSERT, None, _row(170)),
        (Op.DELETE, _row(180), None),
        (Op.INSERT, None, _row(8, "new")),
        (Op.DELETE, _row(9), None),
    ]
    rows = _chunk_rows(monkeypatch, [(5, 0, "a"), (6, 0, "b"), (9, 0, "d")], changes, Chunk("d", "t", 0, 100))
    assert rows == {(7,): _row(7, "a"), (6,): _row(6, "c"), (8,): _row(8, "new")}


def test_open_ended_chunks_check_each_image(monkeypatch: pytest.MonkeyPatch) -> None:
    # The last chunk (open above) receives a key moved up out of the first one, and loses one moved down.
    changes = [(Op.UPDATE, _row(5, "a"), _row(100005, "a")), (Op.UPDATE, _row(200, "b"), _row(-200, "b"))]
    rows = _chunk_rows(monkeypatch, [(200, 0, "b"), (300, 0, "c")], changes, Chunk("d", "t", 100, None))
    assert rows == {(100005,): _row(100005, "a"), (300,): _row(300, "c")}
    first = _chunk_rows(monkeypatch, [(5, 0, "a")], changes, Chunk("d", "t", None, 100))
    assert first == {(-200,): _row(-200, "b")}


def test_multi_column_key_change_replaces_the_old_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # A composite key is one chunk: the row under its old key goes, the new key comes.
    changes = [(Op.UPDATE, _row(5, "a", k2=1), _row(5, "a", k2=2))]
    rows = _chunk_rows(monkeypatch, [(5, 1, "a")], changes, Chunk("d", "t", None, None), keys=("id", "k2"))
    assert rows == {(5, 2): _row(5, "a", k2=2)}


def test_backfill_skip_reads_no_binlog(monkeypatch: pytest.MonkeyPatch) -> None:
    # scan.incremental.snapshot.backfill.skip: HW is LW; the binlog phase applies every change after it.
    rows = _chunk_rows(
        monkeypatch, [(5, 0, "a")], [(Op.UPDATE, _row(5, "a"), _row(105, "a"))], Chunk("d", "t", 0, 100),
        skip_backfill=True,
    )  # fmt: skip
    assert list(rows) == [(5,)]
