"""Talking to the MySQL / MariaDB server: connections, the server checks a CDC source needs (each
failure names the setting to change), binlog positions, table discovery and chunk planning."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog

from ingest.mysql.backoff import OUTAGE_TIMEOUT_S, UNREACHABLE, Backoff
from ingest.mysql.ssl import SslSettings
from ingest.mysql.startup import RESNAPSHOT_OPTION
from ingest.mysql.tls_context import connection_class
from schema_evolution.errors import LakeCdcError
from schema_evolution.mysql_tables import Column, TableDef

log = structlog.get_logger(__name__)
T = TypeVar("T")


class MySqlSourceError(LakeCdcError):
    """The MySQL server or a table cannot be read as configured; the message says what to change."""


@dataclass(frozen=True, slots=True)
class MySqlConnection:
    """Where the server is. The password is kept out of ``repr`` (and so out of logs)."""

    hostname: str
    port: int
    username: str
    password: str = field(repr=False, default="")
    connect_timeout: int = 30
    ssl: SslSettings = field(default_factory=SslSettings)
    max_retries: int | None = None  # connect.max-retries; without it, retries last up to connect_timeout
    outage_timeout: float = OUTAGE_TIMEOUT_S  # lakecdc.server-unavailable-timeout

    def backoff(self) -> Backoff:
        return Backoff(self.connect_timeout, self.max_retries)

    def outage_backoff(self) -> Backoff:
        """Waits for a server that was reached before and went away (a restart, a failover): up to
        ``outage_timeout`` (``lakecdc.server-unavailable-timeout``, default ``OUTAGE_TIMEOUT_S``; or
        ``connect.timeout`` if longer), whatever ``connect.max-retries`` says, which bounds only the first
        connection (a wrong host or port still fails within connect.timeout)."""
        return Backoff(max(self.connect_timeout, self.outage_timeout))

    def pymysql_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "host": self.hostname,
            "port": self.port,
            "user": self.username,
            "password": self.password,
            "connect_timeout": self.connect_timeout,
            "charset": "utf8mb4",
            "autocommit": True,
            **self.ssl.pymysql_kwargs(),
        }
        return kwargs

    def replication_settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "host": self.hostname,
            "port": self.port,
            "user": self.username,
            "passwd": self.password,
            "connect_timeout": self.connect_timeout,
            "charset": "utf8mb4",
            **self.ssl.pymysql_kwargs(),
        }
        return settings


# (host, port) this process has connected to: a server unreachable after that is away, not misconfigured.
_reached: set[tuple[str, int]] = set()


class MySqlUnreachableError(MySqlSourceError):
    """The server did not answer within the connection's retries (a wrong address, or an outage)."""


@contextmanager
def connect(conn: MySqlConnection, outage: bool = False) -> Iterator[Any]:
    """A connection, retried with backoff for up to ``connect.timeout`` while the server is
    unreachable; refused credentials fail at once. A server reached before by this process, or any
    with ``outage`` (read tasks: the job started, so the server was there), is waited for longer: it
    is restarting or failing over (``MySqlConnection.outage_backoff``)."""
    import pymysql

    away = outage or (conn.hostname, conn.port) in _reached
    backoff = conn.outage_backoff() if away else conn.backoff()
    while True:
        try:
            c = connection_class()(**conn.pymysql_kwargs())
            try:
                # Read TIMESTAMP columns in UTC: they become server-time-zone wall clock in one place
                # (formats.mysql_values), the same way for snapshot rows and binlog rows. Part of
                # connecting: a server going down right after the handshake is retried as well.
                with c.cursor() as cur:
                    cur.execute("SET time_zone = '+00:00'")
            except BaseException:
                with contextlib.suppress(Exception):
                    c.close()
                raise
            break
        except pymysql.err.OperationalError as exc:
            code = exc.args[0] if exc.args else None
            hint = _tls_hint(exc)
            if hint is not None:
                raise MySqlSourceError(
                    f"cannot connect to MySQL at {conn.hostname}:{conn.port} over TLS (ssl.mode {conn.ssl.mode}): "
                    f"{exc.args[-1]}. {hint}"
                ) from None
            if code in UNREACHABLE and not backoff.expired():
                log.warning("MySQL unreachable, retrying", host=conn.hostname, port=conn.port, wait_s=backoff.wait)
                backoff.sleep()
                continue
            if code in UNREACHABLE and away:
                raise MySqlUnreachableError(
                    f"cannot connect to MySQL at {conn.hostname}:{conn.port}: {exc.args[-1]}. The server was "
                    f"reachable before and has not answered for {backoff.seconds:.0f} s (a restart or failover "
                    "longer than that, or the network); start the job again once it is back: it resumes from its "
                    "checkpoint"
                ) from None
            # MariaDB answers a plain connection that require_secure_transport refuses with 1045.
            tls = " If the server requires TLS, set ssl.mode=required." if conn.ssl.mode == "disabled" else ""
            error = MySqlUnreachableError if code in UNREACHABLE else MySqlSourceError
            raise error(
                f"cannot connect to MySQL at {conn.hostname}:{conn.port} as '{conn.username}': {exc.args[-1]}. "
                f"Check --mysql-conf hostname, port, username and password (and connect.timeout, "
                f"connect.max-retries).{tls}"
            ) from None
    _reached.add((conn.hostname, conn.port))
    try:
        yield c
    finally:
        c.close()


def retrying(conn: MySqlConnection, query: Callable[[Any], T]) -> T:
    """``query(connection)``, on a new connection again when the server went away meanwhile (a
    restart, a failover): for the driver's short planning queries. A server this process reached
    before is waited for up to ``MySqlConnection.outage_backoff``, else up to ``connect.timeout``."""
    import pymysql

    backoff = conn.outage_backoff() if (conn.hostname, conn.port) in _reached else conn.backoff()
    while True:
        try:
            with connect(conn) as c:
                return query(c)
        except pymysql.err.OperationalError as exc:
            if (exc.args[0] if exc.args else None) not in UNREACHABLE or backoff.expired():
                raise
            log.warning("MySQL connection lost, retrying", host=conn.hostname, port=conn.port, wait_s=backoff.wait)
            backoff.sleep()


def _tls_hint(exc: Exception) -> str | None:
    """What to change when a connection failed because of TLS (never worth retrying)."""
    text = str(exc.args[-1] if exc.args else exc).lower()
    if "insecure transport" in text:
        return "The server requires TLS: set --mysql-conf ssl.mode=required (or verify-ca with ssl.ca)."
    if "certificate" in text or "ssl" in text or "tls" in text:
        if "verify failed" in text or "hostname" in text or "ip address mismatch" in text:
            return (
                "The server certificate did not verify: give the CA that signed it as ssl.ca, use "
                "ssl.mode=verify-ca if the certificate does not name this host, or ssl.mode=required to skip "
                "verification."
            )
        if "doesn't support" in text or "not support" in text:
            return "The server does not offer TLS: enable it there (ssl-cert, ssl-key) or set ssl.mode=preferred."
        return "Check --mysql-conf ssl.mode, ssl.ca, ssl.cert and ssl.key."
    return None


def query(c: Any, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
    with c.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def variables(c: Any, *names: str) -> dict[str, str]:
    rows = query(c, "SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ",".join(["%s"] * len(names)) + ")", names)
    return {str(k).lower(): str(v) for k, v in rows}


def is_mariadb(c: Any) -> bool:
    return "mariadb" in str(query(c, "SELECT VERSION()")[0][0]).lower()


def check_server(c: Any) -> bool:
    """The settings a binlog CDC source needs; each missing one is named with its fix. True when
    row events name their columns (``binlog_row_metadata=FULL``); otherwise the reader keeps a
    schema history."""
    v = variables(
        c, "log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata", "log_bin_compress", "version"
    )
    if v.get("log_bin", "OFF").upper() != "ON":
        raise MySqlSourceError("the binary log is off: start the server with log-bin (and server-id) to read changes")
    if v.get("binlog_format", "").upper() != "ROW":
        raise MySqlSourceError(
            f"binlog_format is {v.get('binlog_format')}: set binlog_format=ROW (SET GLOBAL binlog_format='ROW', "
            f"and in the server's configuration)"
        )
    if v.get("binlog_row_image", "FULL").upper() != "FULL":
        raise MySqlSourceError(
            f"binlog_row_image is {v.get('binlog_row_image')}: set binlog_row_image=FULL so updates carry whole rows"
        )
    if v.get("log_bin_compress", "OFF").upper() == "ON":
        raise MySqlSourceError(
            "log_bin_compress=ON: compressed binlog events cannot be decoded by lakecdc; set log_bin_compress=OFF"
        )
    try:
        master_status(c)
    except MySqlSourceError:
        raise
    except Exception as exc:
        raise MySqlSourceError(
            f"cannot read the binlog position ({exc}): grant the user REPLICATION CLIENT and REPLICATION SLAVE "
            f"(GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'user'@'host')"
        ) from None
    return v.get("binlog_row_metadata", "").upper() == "FULL"


def table_definitions(c: Any, database_regex: str, only: tuple[str, str] | None = None) -> dict[str, TableDef]:
    """Every base table of the databases ``database_regex`` fully matches (or just the table
    ``only`` names), as information_schema defines it now: the start of a schema history."""
    db_re = re.compile(database_regex)
    where, args = ("AND c.TABLE_SCHEMA = %s AND c.TABLE_NAME = %s", only) if only else ("", None)
    rows = query(
        c,
        "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE, c.CHARACTER_SET_NAME, "
        "c.COLUMN_COMMENT "
        "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
        "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME AND t.TABLE_TYPE = 'BASE TABLE' "
        f"WHERE c.TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') {where} "
        "ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION",
        args,
    )
    keys = query(
        c,
        "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE c "
        f"WHERE c.CONSTRAINT_NAME = 'PRIMARY' {where} ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION",
        args,
    )
    charsets = query(
        c,
        "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, a.CHARACTER_SET_NAME, c.TABLE_COMMENT FROM information_schema.TABLES c "
        "JOIN information_schema.COLLATION_CHARACTER_SET_APPLICABILITY a ON a.COLLATION_NAME = c.TABLE_COLLATION "
        f"WHERE 1 = 1 {where}",
        args,
    )
    columns: dict[str, list[Column]] = {}
    for database, table, name, typ, nullable, charset, comment in rows:
        if db_re.fullmatch(str(database)):
            columns.setdefault(f"{database}.{table}", []).append(
                Column(
                    str(name),
                    str(typ),
                    str(nullable).upper() == "YES",
                    None if charset is None else str(charset),
                    str(comment) if comment else None,
                )
            )
    primary: dict[str, list[str]] = {}
    for database, table, name in keys:
        primary.setdefault(f"{database}.{table}", []).append(str(name))
    defaults = {f"{d}.{t}": (str(cs), str(tc or "")) for d, t, cs, tc in charsets}
    return {
        n: TableDef(tuple(cols), tuple(primary.get(n, ())), *defaults.get(n, (None, None)))
        for n, cols in columns.items()
    }


def table_comments(c: Any, database: str, table: str) -> tuple[dict[str, str], str | None]:
    """A table's column comments (non-empty ones) and its comment."""
    columns = query(
        c,
        "SELECT COLUMN_NAME, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
        "AND TABLE_NAME = %s AND COLUMN_COMMENT <> ''",
        (database, table),
    )
    comment = query(
        c,
        "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
        (database, table),
    )
    return {str(n): str(t) for n, t in columns}, str(comment[0][0] or "") if comment else None


# MySQL 8.4 removed SHOW MASTER STATUS (error 1064, a syntax error) in favour of SHOW BINARY LOG STATUS,
# which MySQL before 8.2 and MariaDB do not know; both answer with the same columns.
_STATUS_QUERIES = ("SHOW MASTER STATUS", "SHOW BINARY LOG STATUS")
_SYNTAX_ERROR = 1064


def binlog_status(c: Any) -> list[tuple[Any, ...]]:
    """SHOW MASTER STATUS's rows (File, Position, ..., and on MySQL Executed_Gtid_Set), asked in the
    spelling the server knows."""
    import pymysql

    for sql in _STATUS_QUERIES[:-1]:
        try:
            return query(c, sql)
        except pymysql.err.ProgrammingError as exc:
            if not exc.args or exc.args[0] != _SYNTAX_ERROR:
                raise
    return query(c, _STATUS_QUERIES[-1])


def begin_consistent_read(c: Any) -> tuple[str, int] | None:
    """Opens a REPEATABLE READ transaction WITH CONSISTENT SNAPSHOT on ``c``; the binlog position its
    read view is exactly consistent with, where the server tells it (MariaDB and Percona Server:
    ``Binlog_snapshot_file``/``_position``), else None.

    Why: a transaction is written to the binlog before its storage-engine commit makes it visible.
    A position read with SHOW MASTER STATUS just before a SELECT can so include a change the SELECT
    does not see yet, and a snapshot chunk back-filled from that position lost the change (#23: seen
    under load; ``tests/integration/mysql/test_chunk_consistency.py`` catches it within seconds)."""
    # REPEATABLE READ for this transaction only: under READ COMMITTED each statement would get its
    # own read view and the snapshot's position would say nothing of the SELECT.
    query(c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    query(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
    status = {str(name).lower(): value for name, value in query(c, "SHOW STATUS LIKE 'binlog_snapshot_%'")}
    file, position = status.get("binlog_snapshot_file"), status.get("binlog_snapshot_position")
    if not file or position is None:
        return None
    return str(file), int(position)


def master_status(c: Any) -> tuple[str, int]:
    """The binlog position after the last written event (where the next one will start)."""
    import pymysql

    try:
        rows = binlog_status(c)
    except pymysql.err.OperationalError as exc:
        if exc.args and exc.args[0] in (1227, 1045):  # access denied: the privilege is missing
            raise MySqlSourceError(
                f"cannot read the binlog position ({exc.args[-1]}): grant the user REPLICATION CLIENT and "
                f"REPLICATION SLAVE (GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'user'@'host')"
            ) from None
        raise
    if not rows or not rows[0][0]:
        raise MySqlSourceError("SHOW MASTER STATUS returned nothing: the binary log is off (start with log-bin)")
    return str(rows[0][0]), int(rows[0][1])


def binlog_files(c: Any) -> list[str]:
    return [str(r[0]) for r in query(c, "SHOW BINARY LOGS")]


class LostPositionError(MySqlSourceError):
    """A checkpoint's binlog position that cannot be read on (``problem`` says why)."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


def lost_position(problem: str) -> MySqlSourceError:
    """lakecdc's stop when a checkpoint's binlog position cannot be read on, with what to do."""
    return LostPositionError(
        f"cannot read the binlog on: {problem}. The changes since the checkpoint cannot be read exactly, so the "
        f"job stops rather than skip or repeat them. Start the job from a new checkpoint (--checkpoint, "
        f"scan.startup.mode=initial: a new snapshot of the captured tables); keep binlogs long enough "
        f"(binlog_expire_logs_seconds / expire_logs_days) that a stopped job's position is not purged, or let "
        f"the job re-snapshot the captured tables itself: --mysql-conf {RESNAPSHOT_OPTION}=true",
        problem,
    )


def captured_tables(c: Any, database_regex: str, table_regex: str) -> list[tuple[str, str]]:
    """Base tables whose database and name fully match the regular expressions."""
    db_re, table_re = re.compile(database_regex), re.compile(table_regex)
    rows = query(
        c,
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' "
        "AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') "
        "ORDER BY TABLE_SCHEMA, TABLE_NAME",
    )
    return [(str(d), str(t)) for d, t in rows if db_re.fullmatch(str(d)) and table_re.fullmatch(str(t))]


def table_columns(c: Any, database: str, table: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(column name, MySQL column type) in table order, and the primary key columns in key order.

    A NOT NULL column's type ends in " NOT NULL": Paimon's MySQL action keeps such columns NOT NULL.
    """
    rows = query(
        c,
        "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
        (database, table),
    )
    keys = query(
        c,
        "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
        "AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION",
        (database, table),
    )
    columns = [(str(n), str(t) + (" NOT NULL" if str(nullable).upper() == "NO" else "")) for n, t, nullable in rows]
    return columns, [str(k[0]) for k in keys]


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def binlog_scan(conn: MySqlConnection, server_id: int, file: str, events: list[type]) -> Any:
    """A non-blocking reader of ``events`` from the start of binlog ``file`` to the binlog's end as it
    is now (for look-ups: a GTID's position, a time's position, a file's creation time)."""
    from pymysqlreplication import BinLogStreamReader

    return BinLogStreamReader(
        connection_settings=conn.replication_settings(),
        server_id=server_id,
        resume_stream=True,
        log_file=file,
        log_pos=4,
        blocking=False,
        only_events=events,
    )
