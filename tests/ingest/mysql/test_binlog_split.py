"""Splitting one binlog micro-batch's range over several read tasks (#27): sub-ranges of about equal
bytes, at transaction starts or, inside one big transaction, at row events; never at or
after the first DDL; each row event decoded by exactly one task, in binlog order."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from ingest.mysql import binlog_bound
from ingest.mysql.binlog_bound import range_events, rows_event, split_range
from tests.ingest.mysql.test_binlog_bound import FakeServer

Event = tuple[int, str, int, str]


def _events(*items: tuple[str, int, str]) -> list[Event]:
    out, pos = [], 1000
    for kind, size, info in items:
        out.append((pos, kind, pos + size, info))
        pos += size
    return out


def _txn(rows: int, size: int = 8000) -> list[tuple[str, int, str]]:
    return (
        [("Gtid", 42, "BEGIN GTID 0-1-1"), ("Annotate_rows", 50, "UPDATE t SET ..."), ("Table_map", 60, "")]
        + [("Update_rows_v1", size, "")] * rows
        + [("Xid", 31, "COMMIT /* xid=1 */")]
    )


def _ddl(text: str = "use `shop`; ALTER TABLE t ADD COLUMN c INT") -> list[tuple[str, int, str]]:
    return [("Gtid", 42, "GTID 0-1-9"), ("Query", 120, text)]


def _decoded(events: list[Event], subs: list[tuple[int, int | None, int]]) -> list[int]:
    """The row events each read task decodes, as ``binlog_rows`` reads its sub-range: the events
    ending after ``open_at`` up to ``end``, rows only of those ending after ``rows_after``."""
    out = []
    for open_at, after, end in subs:
        assert any(e[0] == open_at for e in events), "a dump opens at an event's start"
        for pos, kind, end_pos, _info in events:
            if open_at < end_pos <= end and rows_event(kind) and (after is None or end_pos > after):
                out.append(pos)
    return out


def _check(events: list[Event], subs: list[tuple[int, int | None, int]]) -> None:
    start, end = events[0][0], events[-1][2]
    assert subs[0][0] == start and subs[0][1] is None and subs[-1][2] == end
    for (_o, _a, e), (o, a, _e) in itertools.pairwise(subs):
        assert e == (o if a is None else a), "sub-ranges are contiguous"
    # every row event decoded once, in binlog order
    assert _decoded(events, subs) == [e[0] for e in events if rows_event(e[1])]


def test_row_event_types() -> None:
    for kind in ("Write_rows", "Update_rows_v1", "Delete_rows_v2", "Write_rows_v1"):
        assert rows_event(kind)
    for kind in ("Table_map", "Annotate_rows", "Query", "Xid", "Gtid"):
        assert not rows_event(kind)


def test_many_small_transactions_split_at_transaction_starts_into_even_parts() -> None:
    events = _events(*[e for _ in range(400) for e in _txn(1)])
    for tasks in (2, 3, 4):
        subs = split_range(events, events[0][0], events[-1][2], tasks)
        assert len(subs) == tasks
        _check(events, subs)
        assert all(a is None for _o, a, _e in subs)  # whole transactions: no rows skipped
        kinds = {e[0]: e[1] for e in events}
        assert all(kinds[o] == "Gtid" for o, _a, _e in subs)
        counts = [len(_decoded(events, [s])) for s in subs]
        assert max(counts) - min(counts) <= 2


def test_one_big_statement_is_split_inside_its_transaction_at_row_events() -> None:
    events = _events(*_txn(300))
    subs = split_range(events, events[0][0], events[-1][2], 2)
    assert len(subs) == 2
    _check(events, subs)
    (_o1, _a1, e1), (o2, a2, _e2) = subs
    assert o2 == events[0][0] and a2 == e1, "the second task opens at the transaction's start for its table map"
    assert abs(len(_decoded(events, [subs[0]])) - 150) <= 1


def test_mixed_transactions_and_more_tasks() -> None:
    events = _events(*_txn(3), *_txn(250), *[e for _ in range(30) for e in _txn(2)], *_txn(100))
    for tasks in (2, 3, 5, 8):
        subs = split_range(events, events[0][0], events[-1][2], tasks)
        assert 2 <= len(subs) <= tasks
        _check(events, subs)


def test_nothing_is_split_at_or_after_the_first_ddl() -> None:
    ddl = _ddl()
    events = _events(*[e for _ in range(100) for e in _txn(1)], *ddl, *[e for _ in range(300) for e in _txn(1)])
    ddl_txn = next(e[0] for e in events if e[1] == "Query") - 42  # the DDL's GTID event
    subs = split_range(events, events[0][0], events[-1][2], 4)
    _check(events, subs)
    assert len(subs) >= 2
    assert all(o <= ddl_txn for o, _a, _e in subs) and all(e <= ddl_txn for _o, _a, e in subs[:-1])
    # a DDL first: one task
    events = _events(*ddl, *[e for _ in range(300) for e in _txn(1)])
    assert split_range(events, events[0][0], events[-1][2], 4) == [(events[0][0], None, events[-1][2])]


def test_begin_commit_and_xa_queries_are_not_ddl() -> None:
    queries = [("Query", 30, q) for q in ("BEGIN", "COMMIT", "use `shop`; ROLLBACK", "XA END X'01'", "xa commit 1")]
    events = _events(*[e for _ in range(200) for e in (_txn(1)[:1] + queries[:1] + _txn(1)[2:] + queries[1:])])
    assert len(split_range(events, events[0][0], events[-1][2], 2)) == 2


def test_small_ranges_and_one_task_are_not_split() -> None:
    events = _events(*[e for _ in range(20) for e in _txn(1)])  # 164 kB
    whole = [(events[0][0], None, events[-1][2])]
    assert split_range(events, events[0][0], events[-1][2], 2) == whole
    assert split_range(events, events[0][0], events[-1][2], 2, min_bytes=50_000) != whole
    big = _events(*_txn(300))
    assert split_range(big, big[0][0], big[-1][2], 1) == [(big[0][0], None, big[-1][2])]
    assert split_range([], 4, 4, 2) == [(4, None, 4)]


def test_range_events_lists_up_to_the_end_in_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binlog_bound, "SPLIT_PAGE", 7)
    events = _events(*[e for _ in range(10) for e in _txn(2)])
    server = FakeServer({"b.1": [(p, k, e) for p, k, e, _i in events]})
    end = events[30][0]
    listed = range_events(server, "b.1", events[0][0], end)
    assert listed is not None and [e[0] for e in listed] == [e[0] for e in events[:30]]
    monkeypatch.setattr(binlog_bound, "MAX_SPLIT_EVENTS", 10)
    assert range_events(server, "b.1", events[0][0], end) is None


def test_a_server_that_does_not_list_its_events_leaves_the_range_whole() -> None:
    from pymysql.err import OperationalError

    class Refusing(FakeServer):
        def execute(self, sql: str, args: object = None) -> None:
            raise OperationalError(1227, "Access denied; you need the REPLICATION SLAVE privilege")

    assert range_events(Refusing({}), "b.1", 4, 999) is None


def test_a_sub_range_inside_a_transaction_decodes_only_its_row_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """The read task opens at the transaction's start (its table map is read) and never asks the rows of
    the row events before ``rows_after`` (mysql-replication would decode them then)."""
    from pymysqlreplication.event import QueryEvent, XidEvent
    from pymysqlreplication.row_event import TableMapEvent, WriteRowsEvent

    from ingest.mysql import binlog_stream
    from tests.ingest.mysql.test_binlog_resume import FILE, _event, _spec

    undecoded = [_event(WriteRowsEvent, p, schema="d", table="t") for p in (130, 140)]  # .rows would raise
    binlog = [
        _event(QueryEvent, 110, query="BEGIN", schema=b"d"),
        _event(TableMapEvent, 120),
        *undecoded,
        *[_event(WriteRowsEvent, 140 + 10 * k, schema="d", table="t", rows=[{"values": {"id": k}}]) for k in (1, 2)],
        _event(XidEvent, 170),
    ]
    maps: list[int] = []

    class Stream:
        log_file = FILE

        def __init__(self, start: int) -> None:
            self.events = [e for e in binlog if e.packet.log_pos > start]

        def __iter__(self) -> Any:
            return iter(self.events)

        def close(self) -> None:
            pass

    monkeypatch.setattr(binlog_stream, "_open_stream", lambda _spec, start, _sid: Stream(start[1]))
    rows = binlog_stream.binlog_rows(
        _spec(), (FILE, 100), (FILE, 160), 1, None, None, lambda _e, p: maps.append(p[1]), (FILE, 140)
    )
    assert [(r[4], r[5][1]) for r in rows] == [({"id": 1}, 150), ({"id": 2}, 160)]
    assert maps == [120]
    with pytest.raises(AttributeError):
        _ = undecoded[0].rows
