"""A binlog read whose connection is lost (a server restart) opens the binlog again at the last transaction
boundary and passes over the events it already handled: every row change once, in binlog order (#23)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pymysql
import pytest
from pymysqlreplication.event import QueryEvent, XidEvent
from pymysqlreplication.row_event import TableMapEvent, WriteRowsEvent

from ingest.mysql import binlog_stream, client
from ingest.mysql.client import MySqlConnection, MySqlUnreachableError
from ingest.mysql.spec import MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter

FILE = "b.000001"


def _event(cls: type, pos: int, **attrs: Any) -> Any:
    event: Any = object.__new__(cls)
    event.packet = SimpleNamespace(log_pos=pos)
    event.timestamp = 1
    for name, value in attrs.items():
        # RowsEvent.rows is a property over a private field
        setattr(event, "_RowsEvent__rows" if name == "rows" else name, value)
    return event


def _transaction(first: int, key: int) -> list[Any]:
    """BEGIN, a table map, a row event, COMMIT: the positions are each event's end."""
    return [
        _event(QueryEvent, first, query="BEGIN", schema=b"d"),
        _event(TableMapEvent, first + 10),
        _event(WriteRowsEvent, first + 20, schema="d", table="t", rows=[{"values": {"id": key}}]),
        _event(XidEvent, first + 30),
    ]


BINLOG = [e for i in range(4) for e in _transaction(100 + i * 100, i)]


class _Stream:
    """The binlog from ``start`` on; a connection lost after ``fail_after`` events (once per entry)."""

    def __init__(self, start: int, fail_after: int | None) -> None:
        self.log_file = FILE
        self.events = [e for e in BINLOG if e.packet.log_pos > start]
        self.fail_after = fail_after

    def __iter__(self) -> Iterator[Any]:
        for n, event in enumerate(self.events):
            if self.fail_after is not None and n == self.fail_after:
                raise pymysql.err.OperationalError(2013, "Lost connection to server during query")
            yield event

    def close(self) -> None:
        pass


def _spec() -> MySqlSourceSpec:
    conn = MySqlConnection("h", 3306, "u", "", 10)
    return MySqlSourceSpec(conn, "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")), "/s")


def _read(monkeypatch: pytest.MonkeyPatch, failures: list[int | None]) -> tuple[list[int], list[int]]:
    opened: list[int] = []
    plan = iter(failures)

    def open_stream(_spec: Any, start: tuple[str, int], _server_id: int) -> _Stream:
        opened.append(start[1])
        return _Stream(start[1], next(plan, None))

    monkeypatch.setattr(binlog_stream, "_open_stream", open_stream)
    monkeypatch.setattr(client.Backoff, "sleep", lambda self: None)
    rows = binlog_stream.binlog_rows(_spec(), (FILE, 4), (FILE, 430), 1, None)
    return [after["id"] for _op, _d, _t, _b, after, _p, _ts in rows if after is not None], opened


def test_a_lost_connection_resumes_at_the_transaction_boundary_without_duplicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # lost after the 2nd transaction's row event (event 7): again from its BEGIN's end (200), its row
    # event passed over; then lost right at the start once more
    keys, opened = _read(monkeypatch, [6, 0, None])
    assert keys == [0, 1, 2, 3]
    assert opened == [4, 200, 200]


def test_without_a_loss_the_binlog_is_opened_once(monkeypatch: pytest.MonkeyPatch) -> None:
    keys, opened = _read(monkeypatch, [None])
    assert keys == [0, 1, 2, 3] and opened == [4]


def test_a_server_that_stays_away_stops_the_read_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "OUTAGE_TIMEOUT_S", 0.0)
    monkeypatch.setattr(client.Backoff, "expired", lambda self: True)
    with pytest.raises(MySqlUnreachableError, match=r"h:3306 .* binlog b\.000001:200"):
        _read(monkeypatch, [6, 0, 0])
