"""The binlog phase after a snapshot: a change is dropped when the snapshot chunk of its key already
holds it (its position at or before that chunk's HW). A primary-key-changing UPDATE is a DELETE of
the before-image and an INSERT of the after-image, each decided by its own key's chunk (#23: the
whole update was decided by the after-image's chunk, leaving the old key as a ghost row)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from formats.events import DataChangeEvent, Op
from ingest.mysql import binlog, tables
from ingest.mysql.binlog import BinlogReader
from ingest.mysql.client import MySqlConnection
from ingest.mysql.spec import BinlogPartition, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter

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
