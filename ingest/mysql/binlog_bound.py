"""Where a bounded binlog micro-batch ends (``--max-offsets-per-trigger`` in the binlog phase, #27): about
that many binlog events after its start, at the next transaction boundary, never past the end the
driver read (the server's position, or the one Trigger.AvailableNow captured).

Found on the server, without streaming the backlog into Python: ``SHOW BINLOG EVENTS IN f FROM start
LIMIT n, k`` has the server pass over the first ``n`` events and list the next ``k`` (MySQL and MariaDB
spell it, and its columns Log_name, Pos, Event_type, Server_id, End_log_pos, Info, the same way). The
batch ends where the next transaction begins: at the start of a GTID event (MySQL's ``Gtid``,
``Anonymous_Gtid`` and tagged GTID events, MariaDB's ``Gtid``; every transaction and every DDL opens with
one), never inside a transaction, so its read task ends after an XID or a DDL / COMMIT query event, and
the next one starts with the next transaction's table maps. A binlog file's end is a boundary too: the
next file from position 4. So a batch never reaches over a file's end (a rotation ends a batch).

The end is planned once by ``latestOffset`` and stored by Spark in the offset log before the batch runs:
a replayed batch reads the same range.
"""

from __future__ import annotations

from typing import Any

import structlog

from ingest.mysql.client import UNREACHABLE, query
from ingest.mysql.spec import Position

log = structlog.get_logger(__name__)

# Events listed per look-up while the next transaction's start is looked for after the n-th event.
PAGE = 256


def transaction_start(event_type: str) -> bool:
    """Whether a binlog event of this SHOW BINLOG EVENTS type opens a transaction (or a DDL): a GTID
    event. MariaDB's ``Gtid_list`` (the GTID state at a file's start) does not."""
    return event_type == "Anonymous_Gtid" or (event_type.startswith("Gtid") and event_type != "Gtid_list")


def planned_end(c: Any, start: Position, latest: Position, max_events: int) -> Position:
    """``bounded_end``, or ``latest`` when the server does not list its binlog events (the privilege
    missing, a start that is not an event's start): the bound shapes micro-batches only, it never
    stops the job. A lost connection is raised (the planning query is tried again on a new one)."""
    from pymysql.err import MySQLError

    try:
        return bounded_end(c, start, latest, max_events)
    except MySQLError as exc:
        if exc.args and exc.args[0] in UNREACHABLE:
            raise
        log.warning("binlog micro-batch not bounded: SHOW BINLOG EVENTS failed", start=list(start), error=str(exc))
        return latest


def bounded_end(c: Any, start: Position, latest: Position, max_events: int) -> Position:
    """The end of the micro-batch that starts at ``start`` (a transaction boundary): the start of the
    first transaction at least ``max_events`` events after it, the end of ``start``'s binlog file (the
    next file from position 4) when the file ends before that, or ``latest`` when that comes first."""
    file, pos = start
    if file == latest[0]:
        return _in_file(c, file, pos, latest[1], max_events) or latest
    files = [str(r[0]) for r in query(c, "SHOW BINARY LOGS")]
    if file not in files or files.index(file) + 1 >= len(files):
        return latest  # the file is gone or the last one: the range as it was planned before (checked elsewhere)
    return _in_file(c, file, pos, None, max_events) or (files[files.index(file) + 1], 4)


def _in_file(c: Any, file: str, pos: int, until: int | None, max_events: int) -> Position | None:
    """The start of the first transaction of ``file`` at least ``max_events`` events after ``pos`` and
    before ``until`` (None: the file's end); None when there is none."""
    skip = max(1, max_events)
    at = pos
    while True:
        rows = _events(c, file, at, skip, PAGE)
        for _log, event_pos, event_type, _server, _end, _info in rows:
            if until is not None and int(event_pos) >= until:
                return None
            if transaction_start(str(event_type)):
                return file, int(event_pos)
        if len(rows) < PAGE:
            return None  # the file ends within this page (a rotation: the next file starts the next batch)
        at, skip = int(rows[-1][4]), 0  # the event after the page's last one


def _events(c: Any, file: str, at: int, skip: int, count: int) -> list[tuple[Any, ...]]:
    return query(c, f"SHOW BINLOG EVENTS IN %s FROM {int(at)} LIMIT {int(skip)}, {int(count)}", (file,))
