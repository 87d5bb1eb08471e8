"""Where a bounded binlog micro-batch ends (#27): at the start of a transaction (a GTID event) at least
the bound's events on, at a file's end, or at the planned end; never inside a transaction."""

from __future__ import annotations

import re
from typing import Any

from ingest.mysql import binlog_bound
from ingest.mysql.binlog_bound import bounded_end, planned_end, transaction_start

FILE_START = [("Format_desc", 256), ("Gtid_list", 29), ("Binlog_checkpoint", 40)]


def _transaction(rows: int) -> list[tuple[str, int]]:
    return [("Gtid", 42), ("Annotate_rows", 50), ("Table_map", 60), *[("Write_rows_v1", 8000)] * rows, ("Xid", 31)]


def _file(*transactions: int, rotated: bool = True) -> list[tuple[Any, ...]]:
    """SHOW BINLOG EVENTS rows of one file (without the name): (Pos, Event_type, End_log_pos)."""
    events = FILE_START + [e for n in transactions for e in _transaction(n)] + ([("Rotate", 44)] if rotated else [])
    rows, pos = [], 4
    for kind, size in events:
        rows.append((pos, kind, pos + size))
        pos += size
    return rows


class FakeServer:
    """SHOW BINARY LOGS and SHOW BINLOG EVENTS IN f FROM p LIMIT s, n over fixed files."""

    def __init__(self, files: dict[str, list[tuple[Any, ...]]]) -> None:
        self.files = files
        self.queries = 0
        self.result: list[tuple[Any, ...]] = []

    def cursor(self) -> FakeServer:
        return self

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def execute(self, sql: str, args: Any = None) -> None:
        self.queries += 1
        if sql == "SHOW BINARY LOGS":
            self.result = [(name, rows[-1][2]) for name, rows in self.files.items()]
            return
        m = re.fullmatch(r"SHOW BINLOG EVENTS IN %s FROM (\d+) LIMIT (\d+), (\d+)", sql)
        assert m, sql
        at, skip, count = (int(g) for g in m.groups())
        rows = self.files[args[0]]
        starts = [r[0] for r in rows]
        assert at in starts, "FROM must name an event's start"
        i = starts.index(at) + skip
        self.result = [(args[0], p, k, 1, e, "") for p, k, e in rows[i : i + count]]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.result


def _starts(rows: list[tuple[Any, ...]]) -> list[int]:
    return [p for p, k, _e in rows if k == "Gtid"]


def test_gtid_events_open_transactions() -> None:
    assert all(map(transaction_start, ["Gtid", "Anonymous_Gtid", "Gtid_tagged_log"]))
    assert not any(map(transaction_start, ["Gtid_list", "Previous_gtids", "Xid", "Query", "Table_map", "Rotate"]))


def test_each_end_is_a_transaction_start_about_the_bound_on_and_the_last_is_the_planned_end() -> None:
    f1 = _file(*[1] * 50, 300, *[1] * 50, rotated=False)
    server = FakeServer({"b.1": f1})
    starts = _starts(f1)
    latest = ("b.1", f1[-1][2])
    big = (starts[50], starts[51])  # the 300-row transaction
    for bound in (1, 5, 7, 12, 100, 10_000):
        at, ends = ("b.1", starts[0]), []
        while at != latest:
            end = bounded_end(server, at, latest, bound)
            assert end[1] > at[1] and (end == latest or end[1] in starts)
            assert not big[0] < end[1] < big[1]  # never inside the multi-row transaction
            ends.append(end)
            at = end
        # about ``bound`` events a batch: 5 per one-row transaction
        assert len(ends) >= min(101 * 5 // bound, 101) // 2
    assert bounded_end(server, ("b.1", starts[0]), latest, 1) == ("b.1", starts[1])  # at least one transaction


def test_a_file_end_ends_the_batch_and_the_next_starts_at_4() -> None:
    f1, f2 = _file(1, 1, 1), _file(1, 1, rotated=False)
    server = FakeServer({"b.1": f1, "b.2": f2})
    latest = ("b.2", f2[-1][2])
    assert bounded_end(server, ("b.1", _starts(f1)[2]), latest, 3) == ("b.2", 4)
    assert bounded_end(server, ("b.2", 4), latest, 3) == ("b.2", _starts(f2)[0])
    assert bounded_end(server, ("b.2", _starts(f2)[0]), latest, 3) == ("b.2", _starts(f2)[1])
    assert bounded_end(server, ("b.2", _starts(f2)[1]), latest, 3) == latest


def test_never_past_the_planned_end_though_the_file_grew() -> None:
    f1 = _file(*[1] * 20, rotated=False)
    server = FakeServer({"b.1": f1})
    starts = _starts(f1)
    latest = ("b.1", starts[3])  # AvailableNow's end: the server wrote on since
    assert bounded_end(server, ("b.1", starts[0]), latest, 5) == ("b.1", starts[1])
    assert bounded_end(server, ("b.1", starts[2]), latest, 5) == latest
    assert bounded_end(server, ("b.1", starts[0]), latest, 1_000) == latest


def test_a_transaction_longer_than_a_page_is_read_past(monkeypatch: Any) -> None:
    monkeypatch.setattr(binlog_bound, "PAGE", 4)
    f1 = _file(1, 40, 1, rotated=False)
    server = FakeServer({"b.1": f1})
    starts = _starts(f1)
    assert bounded_end(server, ("b.1", starts[1]), ("b.1", f1[-1][2]), 2) == ("b.1", starts[2])


def test_a_server_that_does_not_list_its_events_leaves_the_batch_unbounded() -> None:
    from pymysql.err import OperationalError

    class Refusing(FakeServer):
        def execute(self, sql: str, args: Any = None) -> None:
            raise OperationalError(1220, "Error when executing command SHOW BINLOG EVENTS: Wrong offset or I/O error")

    latest = ("b.1", 999)
    assert planned_end(Refusing({}), ("b.1", 5), latest, 10) == latest


def _batches(server: FakeServer, start: tuple[str, int], latest: tuple[str, int], **bound: int) -> list[int]:
    """The bytes of each bounded batch from ``start`` to ``latest`` in one file."""
    at, sizes = start, []
    while at != latest:
        end = bounded_end(server, at, latest, **bound)
        assert end[1] > at[1]
        sizes.append(end[1] - at[1])
        at = end
    return sizes


def test_a_backlog_of_large_row_events_is_bounded_by_bytes_too() -> None:
    """Transactions of 8,000-byte rows events: 500k events would be the whole file; the byte bound
    ends each batch at the first transaction start past about ``max_bytes``."""
    f1 = _file(*[10] * 200, rotated=False)  # 200 transactions of ~80 KB, ~16 MB
    server = FakeServer({"b.1": f1})
    starts = _starts(f1)
    latest = ("b.1", f1[-1][2])
    sizes = _batches(server, ("b.1", starts[0]), latest, max_events=500_000, max_bytes=1_000_000)
    transaction = starts[1] - starts[0]
    assert 14 <= len(sizes) <= 18
    assert all(s <= 1_000_000 + transaction for s in sizes[:-1])
    assert _batches(server, ("b.1", starts[0]), latest, max_events=500_000, max_bytes=0) == [latest[1] - starts[0]]
    # the event bound still applies when it comes first
    assert len(_batches(server, ("b.1", starts[0]), latest, max_events=130, max_bytes=1_000_000)) > 18


def test_the_byte_bound_holds_when_events_grow_after_the_sample(monkeypatch: Any) -> None:
    """Small transactions first, then large ones: the average of the first events would let a batch run
    far past the bound; the check of where the n-th event lies narrows it."""
    monkeypatch.setattr(binlog_bound, "SAMPLE", 16)
    f1 = _file(*[0] * 40, *[10] * 100, rotated=False)
    server = FakeServer({"b.1": f1})
    starts = _starts(f1)
    latest = ("b.1", f1[-1][2])
    sizes = _batches(server, ("b.1", starts[0]), latest, max_events=500_000, max_bytes=500_000)
    assert max(sizes) <= 2 * 500_000 + (starts[-1] - starts[-2])
    assert len(sizes) >= 8
