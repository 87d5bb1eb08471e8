"""Reading the binlog between two positions (``binlog_rows``): the captured tables' row changes in binlog
order, their DDL and table maps to callbacks.

A server that restarts (or fails over) while a range is read is waited for (``OUTAGE_TIMEOUT_S``,
ingest.mysql.client): the binlog is opened again at the last transaction boundary read, and the events
already handed on are passed over, so every row change comes out once, in binlog order (#23). A binlog
task's catalogue connection is opened again the same way (``CatalogueConnection``)."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

import structlog

from formats.events import Op
from ingest.mysql.binlog_rows import RowImages, row_images
from ingest.mysql.client import (
    UNREACHABLE,
    Backoff,
    MySqlConnection,
    MySqlSourceError,
    MySqlUnreachableError,
    connect,
    lost_position,
)
from ingest.mysql.spec import MySqlSourceSpec, Position, binlog_offset

log = structlog.get_logger(__name__)

BinlogRow = tuple[Op, str, str, dict[str, Any] | None, dict[str, Any] | None, Position, int]


def _open_stream(spec: MySqlSourceSpec, start: Position, server_id: int) -> Any:
    from pymysqlreplication import BinLogStreamReader

    return BinLogStreamReader(
        connection_settings=spec.connection.replication_settings(),
        server_id=server_id,
        resume_stream=True,
        log_file=start[0],
        log_pos=start[1],
        blocking=False,
        # is_mariadb=True makes mysql-replication stream by GTID from the start of the binlog and
        # ignore log_file/log_pos; MariaDB serves the file/position dump (and its events decode) without it.
        is_mariadb=False,
        # Never drop an event silently (mysql-replication's default drops what it cannot decode).
        filter_non_implemented_events=False,
        # A table map is parsed once per table id, not once per transaction (~1 ms each: most of the CPU
        # of small transactions). A table id names one table definition until a DDL or a server restart
        # (the server assigns ids per opened definition, from a counter reset on restart): the maps are
        # dropped at every DDL and every binlog file (``_events``; a restart starts a new file).
        freeze_schema=True,
    )


def binlog_rows(
    spec: MySqlSourceSpec,
    start: Position,
    end: Position,
    server_id: int,
    only: set[str] | None,
    on_ddl: Callable[[str, str | None, int, Position], None] | None = None,
    on_table_map: Callable[[Any, Position], None] | None = None,
    rows_after: Position | None = None,
) -> Iterator[BinlogRow]:
    """Row changes of the captured tables between two binlog positions, in binlog order. A lost
    connection is opened again at the last transaction boundary (a table map is read again before its
    rows), passing over the events already handled, for up to the connection's outage backoff.

    With ``rows_after`` (a sub-range of a split micro-batch, ``binlog_bound.split_range``), the rows of
    row events ending at or before it are not decoded (mysql-replication parses a row event's rows only
    when asked): ``start`` is then the start of their transaction, read for its table maps."""
    from pymysqlreplication.event import QueryEvent, XidEvent

    end_offset = binlog_offset(end)
    skip_rows_to = -1 if rows_after is None else binlog_offset(rows_after)
    # (where to open the binlog again: a transaction boundary at or before the next event, the offset of
    # the last event handled, whether ``end`` was reached)
    state: list[Any] = [start, -1, False]
    backoff: Backoff | None = None
    early_ends = 0  # the stream ended before ``end`` with the server there: a dropped dump, or a purge
    while True:
        stream = _open_stream(spec, state[0], server_id)
        try:
            for event, position in _events(stream, state, end_offset):
                backoff, early_ends = None, 0  # reading again: a later loss gets the whole wait again
                if binlog_offset(position) > skip_rows_to or not _rows_event(event):
                    yield from _event_rows(spec, event, position, only, on_ddl, on_table_map)
                state[1] = binlog_offset(position)
                if isinstance(event, QueryEvent | XidEvent):
                    state[0] = position
                if isinstance(event, QueryEvent) and not transaction_control(event.query):
                    stream.table_map.clear()  # (a DDL: its table's next map is parsed again)
                if state[1] >= end_offset:
                    state[2] = True
                    break
            if state[2] or early_ends >= 2:
                break
            early_ends += 1
            raise ConnectionError("the binlog stream ended early")
        except Exception as exc:  # pymysql's error 1236: the server cannot send the binlog from there
            if exc.args and exc.args[0] == 1236:
                where = f"{state[0][0]}:{state[0][1]}"
                raise lost_position(f"the server cannot send the binlog from {where} ({exc.args[-1]})") from None
            if not _connection_lost(exc):
                raise
            backoff = backoff or spec.connection.outage_backoff()
            if backoff.expired():
                raise _server_away(spec.connection, state[0], backoff, exc) from None
            log.warning(
                "binlog connection lost; reading again from the last transaction boundary",
                host=spec.connection.hostname,
                port=spec.connection.port,
                at=f"{state[0][0]}:{state[0][1]}",
                wait_s=backoff.wait,
                error=str(exc),
            )
            backoff.sleep()
        finally:
            with contextlib.suppress(Exception):
                stream.close()
    if not state[2]:
        raise MySqlSourceError(
            f"the binlog ended before position {end[0]}:{end[1]}; was it purged? The job must start over "
            f"with a new checkpoint (scan.startup.mode=initial)"
        )


def _events(stream: Any, state: list[Any], end_offset: int) -> Iterator[tuple[Any, Position]]:
    """The stream's events up to ``end_offset`` that were not handled before (``state[1]``)."""
    from pymysqlreplication.event import RotateEvent

    for event in stream:
        log_pos = int(event.packet.log_pos)
        position: Position = (str(stream.log_file), log_pos)
        if isinstance(event, RotateEvent):
            # mysql-replication keeps its table maps over a rotation written with no timestamp (the
            # first event of a file after a crash); table ids are reused after a restart
            stream.table_map.clear()
            continue
        if log_pos == 0:
            continue
        offset = binlog_offset(position)
        if offset > end_offset:
            state[2] = True
            return
        if offset <= state[1]:
            continue  # handled before the connection was lost (read again for its table map)
        yield event, position


def transaction_control(query: str | bytes) -> bool:
    """Whether a binlog statement only opens or ends a transaction (BEGIN, COMMIT, ROLLBACK)."""
    text = query.decode("utf-8", "replace") if isinstance(query, bytes) else query
    return text.strip().upper() in ("BEGIN", "COMMIT", "ROLLBACK")


def _rows_event(event: Any) -> bool:
    from pymysqlreplication.row_event import RowsEvent

    return isinstance(event, RowsEvent)


def _connection_lost(exc: BaseException) -> bool:
    import pymysql

    if isinstance(exc, pymysql.err.OperationalError):
        return (exc.args[0] if exc.args else None) in UNREACHABLE
    return isinstance(exc, pymysql.err.InterfaceError | ConnectionError | EOFError)


def _server_away(conn: MySqlConnection, at: Position, backoff: Backoff, exc: BaseException) -> MySqlUnreachableError:
    return MySqlUnreachableError(
        f"lost the binlog connection to MySQL at {conn.hostname}:{conn.port} and could not get it back within "
        f"{backoff.seconds:.0f} s ({exc}); the job stops at binlog {at[0]}:{at[1]}, nothing of the range "
        "committed: start it again once the server is back, it resumes from its checkpoint"
    )


def _event_rows(
    spec: MySqlSourceSpec,
    event: Any,
    position: Position,
    only: set[str] | None,
    on_ddl: Callable[[str, str | None, int, Position], None] | None,
    on_table_map: Callable[[Any, Position], None] | None,
) -> Iterator[BinlogRow]:
    """One binlog event's row changes of the captured tables; its DDL and table map to the callbacks."""
    from pymysqlreplication.event import QueryEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, TableMapEvent, UpdateRowsEvent, WriteRowsEvent

    if isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
        database, table = str(event.schema), str(event.table)
        if not (_matches(spec.database_regex, database) and _matches(spec.table_regex, table)):
            return
        if only is not None and f"{database}.{table}" not in only:
            return
        ts = int(event.timestamp) * 1000
        yield from _image_rows(event, row_images(event), database, table, position, ts)
    elif isinstance(event, TableMapEvent) and on_table_map is not None:
        on_table_map(event, position)
    elif isinstance(event, QueryEvent) and on_ddl is not None:
        text = event.query if isinstance(event.query, str) else event.query.decode("utf-8", "replace")
        schema = event.schema.decode() if isinstance(event.schema, bytes) else event.schema
        on_ddl(text, schema or None, int(event.timestamp) * 1000, position)
    elif type(event).__name__ == "NotImplementedEvent":
        raise MySqlSourceError(
            f"binlog event at {position[0]}:{position[1]} cannot be decoded (a compressed binlog?); "
            f"set log_bin_compress=OFF (MariaDB) or binlog_transaction_compression=OFF (MySQL)"
        )


def _image_rows(
    event: Any, images: RowImages, database: str, table: str, position: Position, ts: int
) -> Iterator[BinlogRow]:
    from pymysqlreplication.row_event import UpdateRowsEvent, WriteRowsEvent

    if isinstance(event, WriteRowsEvent):
        for (after,) in images:
            yield Op.INSERT, database, table, None, after, position, ts
    elif isinstance(event, UpdateRowsEvent):
        for before, after in images:
            yield Op.UPDATE, database, table, before, after, position, ts
    else:
        for (before,) in images:
            yield Op.DELETE, database, table, before, None, position, ts


@functools.lru_cache(maxsize=64)
def _pattern(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def _matches(regex: str, name: str) -> bool:
    return _pattern(regex).fullmatch(name) is not None


class CatalogueConnection:
    """A binlog task's connection for the server's catalogue (variables, table definitions), opened
    again when the server restarted meanwhile (as ``ingest.mysql.client.connect`` opens it: the session
    time zone set), waiting for the server as a read task does."""

    def __init__(self, conn: MySqlConnection, stack: contextlib.ExitStack) -> None:
        self._conn, self._stack = conn, stack
        self._c = stack.enter_context(connect(conn, outage=True))

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        try:
            self._c.ping(reconnect=False)
        except Exception as exc:
            log.warning("MySQL catalogue connection lost; connecting again", error=str(exc))
            self._c = self._stack.enter_context(connect(self._conn, outage=True))
        return self._c.cursor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._c, name)
