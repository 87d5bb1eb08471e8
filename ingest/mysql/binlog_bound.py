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

A batch is bounded by bytes of binlog too (``MAX_BATCH_BYTES``): a rows event holds up to 8 KiB of row
images, several rows each, so 500k events of a backlog of wide rows were ~1 GiB of binlog a batch and
the job peaked at 3.5 GiB (bench/README.md, *Binlog backlog*). The events that fit are estimated from
the average event size at the batch's start, checked by listing the event that many on, and narrowed
when that one lies much further than the bound.

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
# Binlog bytes a bounded micro-batch reads at most, about (its last transaction is read whole).
MAX_BATCH_BYTES = 128 << 20
# Events listed at a batch's start to learn their average size.
SAMPLE = 1024


def transaction_start(event_type: str) -> bool:
    """Whether a binlog event of this SHOW BINLOG EVENTS type opens a transaction (or a DDL): a GTID
    event. MariaDB's ``Gtid_list`` (the GTID state at a file's start) does not."""
    return event_type == "Anonymous_Gtid" or (event_type.startswith("Gtid") and event_type != "Gtid_list")


def planned_end(
    c: Any, start: Position, latest: Position, max_events: int, max_bytes: int = MAX_BATCH_BYTES
) -> Position:
    """``bounded_end``, or ``latest`` when the server does not list its binlog events (the privilege
    missing, a start that is not an event's start): the bound shapes micro-batches only, it never
    stops the job. A lost connection is raised (the planning query is tried again on a new one)."""
    from pymysql.err import MySQLError

    try:
        return bounded_end(c, start, latest, max_events, max_bytes)
    except MySQLError as exc:
        if exc.args and exc.args[0] in UNREACHABLE:
            raise
        log.warning("binlog micro-batch not bounded: SHOW BINLOG EVENTS failed", start=list(start), error=str(exc))
        return latest


def bounded_end(
    c: Any, start: Position, latest: Position, max_events: int, max_bytes: int = MAX_BATCH_BYTES
) -> Position:
    """The end of the micro-batch that starts at ``start`` (a transaction boundary): the start of the
    first transaction at least ``max_events`` events after it, or about ``max_bytes`` bytes after it
    when fewer events come first; the end of ``start``'s binlog file (the next file from position 4)
    when the file ends before that, or ``latest`` when that comes first."""
    file, pos = start
    if file == latest[0]:
        events = _events_within(c, file, pos, latest[1] - pos, max_events, max_bytes)
        return _in_file(c, file, pos, latest[1], events) or latest
    files = [(str(r[0]), int(r[1])) for r in query(c, "SHOW BINARY LOGS")]
    names = [name for name, _size in files]
    i = names.index(file) if file in names else -1
    if i < 0 or i + 1 >= len(names):
        return latest  # the file is gone or the last one: the range as it was planned before (checked elsewhere)
    events = _events_within(c, file, pos, files[i][1] - pos, max_events, max_bytes)
    return _in_file(c, file, pos, None, events) or (names[i + 1], 4)


def _events_within(c: Any, file: str, pos: int, remaining: int, max_events: int, max_bytes: int) -> int:
    """How many events from ``pos`` make about ``max_bytes`` bytes, at most ``max_events``: all of them
    when the ``remaining`` bytes to the range's end are within the bound."""
    if max_bytes <= 0 or remaining <= max_bytes:
        return max_events
    sample = _events(c, file, pos, 0, SAMPLE)
    if not sample:
        return max_events
    average = max(1.0, (int(sample[-1][4]) - pos) / len(sample))
    events = min(max_events, max(1, int(max_bytes / average)))
    # The sample's events may be smaller than the later ones: where does the n-th lie? Past the range's
    # end (fewer events than that in it), or much further than the bound: fewer events.
    for _ in range(6):
        if events == 1:
            break
        probe = _events(c, file, pos, events - 1, 1)
        if not probe:
            events //= 2
        elif int(probe[0][1]) - pos > 2 * max_bytes:
            events = max(1, int(events * max_bytes / (int(probe[0][1]) - pos)))
        else:
            break
    return events


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


# ----- splitting one micro-batch's range over several read tasks (#27) -------------------------------------

# A sub-range holds at least this many bytes of events: a read task opens its own binlog dump and
# catalogue connection (tens of ms), so a small range stays one task.
MIN_SPLIT_BYTES = 256 * 1024
# Events listed per SHOW BINLOG EVENTS while a range is split; a range of more events is not split.
SPLIT_PAGE = 20_000
MAX_SPLIT_EVENTS = 2_000_000
_NOT_DDL = ("BEGIN", "COMMIT", "ROLLBACK")


def rows_event(event_type: str) -> bool:
    """Whether a SHOW BINLOG EVENTS type is a row event (Write/Update/Delete_rows, v1 or v2)."""
    return event_type.endswith(("_rows", "_rows_v1", "_rows_v2")) and not event_type.startswith("Annotate")


def _ddl(event_type: str, info: str) -> bool:
    """A Query event other than BEGIN / COMMIT / ROLLBACK / XA: it may change a table definition."""
    if event_type != "Query":
        return False
    text = info.split(";", 1)[-1].strip().upper() if info.lower().startswith("use ") else info.strip().upper()
    return text not in _NOT_DDL and not text.startswith("XA ")


def split_range(
    events: list[tuple[int, str, int, str]], start: int, end: int, tasks: int, min_bytes: int = MIN_SPLIT_BYTES
) -> list[tuple[int, int | None, int]]:
    """One binlog range of one file, ``start`` to ``end``, as up to ``tasks`` sub-ranges of about equal
    bytes, each ``(open_at, rows_after, end)``: its read task opens the dump at ``open_at`` (a
    transaction's start, so it sees the transaction's table maps) and decodes the rows of the row events
    that end after ``rows_after`` (None: all of them) and at or before ``end``.

    ``events`` are the range's events as SHOW BINLOG EVENTS lists them, ``(pos, type, end_log_pos,
    info)``, the first at ``start`` (a transaction boundary). A sub-range starts at a transaction's start
    or, inside a transaction (one big statement), at a row event. Nothing is split at or after the
    first DDL's transaction: the driver knows the table definitions as of the range's start only, so
    the last sub-range reads from before it to the end. The whole range, one sub-range, when it holds
    less than ``min_bytes`` per sub-range."""
    whole: list[tuple[int, int | None, int]] = [(start, None, end)]
    if tasks < 2 or not events:
        return whole
    cut = len(events)  # the splittable part: up to the start of the first DDL's transaction
    for i, (_pos, event_type, _end, info) in enumerate(events):
        if _ddl(event_type, info):
            cut = next((j for j in range(i, -1, -1) if transaction_start(events[j][1])), 0)
            break
    # an event's bytes (a small transaction's GTID, table map and XID cost as much to decode as its rows)
    weights = [e[2] - e[0] for e in events[:cut]]
    parts = min(tasks, sum(weights) // max(1, min_bytes))
    if parts < 2:
        return whole
    target = sum(weights) / parts
    cuts: list[tuple[int, int | None]] = []  # (open_at, rows_after) of each sub-range after the first
    acc, txn_at = 0, start
    for i in range(cut):
        pos, event_type = events[i][0], events[i][1]
        if transaction_start(event_type):
            txn_at = pos
        if i > 0 and len(cuts) < parts - 1 and acc >= target * (len(cuts) + 1):
            if transaction_start(event_type):
                cuts.append((pos, None))
            elif rows_event(event_type):
                cuts.append((txn_at, pos))
        acc += weights[i]
    out: list[tuple[int, int | None, int]] = []
    open_at, rows_after = start, None
    for next_open, next_rows in cuts:
        out.append((open_at, rows_after, next_open if next_rows is None else next_rows))
        open_at, rows_after = next_open, next_rows
    out.append((open_at, rows_after, end))
    return out


def range_events(c: Any, file: str, start: int, end: int) -> list[tuple[int, str, int, str]] | None:
    """The events of ``file`` from ``start`` to ``end`` as ``(pos, type, end_log_pos, info)``; None when
    there are more than ``MAX_SPLIT_EVENTS`` or the server does not list them (the privilege missing):
    the range is then read by one task. A lost connection is raised (tried again on a new one)."""
    from pymysql.err import MySQLError

    try:
        return _range_events(c, file, start, end)
    except MySQLError as exc:
        if exc.args and exc.args[0] in UNREACHABLE:
            raise
        log.warning("binlog range not split: SHOW BINLOG EVENTS failed", file=file, start=start, error=str(exc))
        return None


def _range_events(c: Any, file: str, start: int, end: int) -> list[tuple[int, str, int, str]] | None:
    events: list[tuple[int, str, int, str]] = []
    at = start
    while True:
        rows = _events(c, file, at, 0, SPLIT_PAGE)
        for _log, pos, event_type, _server, end_pos, info in rows:
            if int(pos) >= end:
                return events
            events.append((int(pos), str(event_type), int(end_pos), str(info or "")))
        if len(rows) < SPLIT_PAGE:
            return events
        if len(events) >= MAX_SPLIT_EVENTS:
            return None
        at = int(rows[-1][4])
