"""Whether a checkpoint's binlog position can still be read on from: the server's identity, its
binlog files and where its binlog ends, against the position (``schema_history.check_binlog_position``
asks before each micro-batch); and each binlog file's creation time, which tells a file that RESET
MASTER made anew (and which has since grown past the position) from the file the position was in."""

from __future__ import annotations

import re
from typing import Any

import structlog

from ingest.mysql.client import (
    MySqlConnection,
    binlog_scan,
    binlog_status,
    is_mariadb,
    master_status,
    query,
    variables,
)
from ingest.mysql.gtid import GtidSet

log = structlog.get_logger(__name__)


def server_identity(c: Any) -> str:
    """Which server's binlog this is: MySQL's server_uuid, MariaDB's server_id (it has no UUID)."""
    found = variables(c, "server_uuid", "server_id")
    uuid = found.get("server_uuid")
    return f"server_uuid {uuid}" if uuid else f"server_id {found.get('server_id', '?')}"


def status_with_gtids(c: Any) -> tuple[tuple[str, int], str | None]:
    """The binlog position after the last written event and the GTID set of every transaction
    before it (None: the server keeps no GTIDs, or they moved on meanwhile). With the set, the
    position can be found again on another server that has the same transactions (a failover to
    a replica)."""
    position = master_status(c)
    if is_mariadb(c):
        # The last GTID of each domain at this position: read between two equal positions (a commit
        # meanwhile moves the position), as BINLOG_GTID_POS would scan the binlog file to it.
        for _ in range(5):
            text = variables(c, "gtid_binlog_pos").get("gtid_binlog_pos", "")
            after = master_status(c)
            if after == position:
                return position, text
            position = after
        return position, _binlog_gtid_pos(c, position)
    # MySQL: Executed_Gtid_Set of SHOW MASTER STATUS, when GTID mode is on and nothing was written since
    if variables(c, "gtid_mode").get("gtid_mode", "OFF").upper() != "ON":
        return position, None
    rows = binlog_status(c)
    if not rows or len(rows[0]) < 5 or (str(rows[0][0]), int(rows[0][1])) != position:
        return position, None
    return position, str(rows[0][4] or "").replace("\n", "")


def gtids_at(c: Any, position: tuple[str, int]) -> str | None:
    """The GTID set of every transaction before binlog ``position`` (a transaction boundary), or
    None when it cannot be known: MariaDB computes it for any position (BINLOG_GTID_POS); MySQL's
    is known only for its current end."""
    if is_mariadb(c):
        return _binlog_gtid_pos(c, position)
    now, gtids = status_with_gtids(c)
    return gtids if now == tuple(position) else None


def _binlog_gtid_pos(c: Any, position: tuple[str, int]) -> str | None:
    from pymysql.err import MySQLError

    try:
        rows = query(c, "SELECT BINLOG_GTID_POS(%s, %s)", (position[0], int(position[1])))
    except MySQLError as exc:
        log.warning("GTID position of a binlog position not read", binlog=list(position), error=str(exc))
        return None
    # NULL: not a transaction boundary of an existing file; '' the empty set (nothing before it)
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def executed_gtids(c: Any) -> GtidSet | None:
    """Every transaction this server's binlog holds or held (MariaDB's gtid_binlog_pos, MySQL's
    gtid_executed); None without GTIDs."""
    if is_mariadb(c):
        return GtidSet.of(variables(c, "gtid_binlog_pos").get("gtid_binlog_pos", ""))
    found = variables(c, "gtid_mode", "gtid_executed")
    if found.get("gtid_mode", "OFF").upper() != "ON":
        return None
    return GtidSet.of(found.get("gtid_executed", ""))


def purged_gtids(c: Any, files: list[str]) -> GtidSet | None:
    """The transactions before this server's oldest binlog file (purged, or from before its binlog
    began): MariaDB's GTID position at the start of the first file, MySQL's gtid_purged."""
    if is_mariadb(c):
        text = _binlog_gtid_pos(c, (files[0], 4)) if files else None
        return None if text is None else GtidSet.of(text)
    found = variables(c, "gtid_mode", "gtid_purged")
    if found.get("gtid_mode", "OFF").upper() != "ON":
        return None
    return GtidSet.of(found.get("gtid_purged", ""))


def _file_number(name: str) -> int:
    match = re.search(r"(\d+)$", name)
    return int(match.group(1)) if match else 0


def position_problem(
    position: tuple[str, int],
    latest: tuple[str, int],
    files: list[str],
    identity_then: str | None,
    identity_now: str,
) -> str | None:
    """Why the binlog cannot be read on from a checkpoint's ``position`` (None: it can): the server
    is another one (a failover), the position's file was purged, or the binlog went backwards
    (RESET MASTER, another server) so the position names other changes or none yet."""
    where = f"{position[0]}:{position[1]}"
    if identity_then is not None and identity_then != identity_now:
        return (
            f"the checkpoint's binlog position {where} is one of the server with {identity_then}, this server "
            f"has {identity_now} (a failover to another server?): its positions name other changes"
        )
    if files and position[0] not in files:
        if _file_number(position[0]) < _file_number(files[0]):
            return f"the binlog file of the checkpoint's position {where} was purged; the earliest left is {files[0]}"
        return (
            f"the binlog file of the checkpoint's position {where} does not exist, the newest is {files[-1]}: the "
            f"binlog was reset (RESET MASTER) or this is another server"
        )
    if (_file_number(latest[0]), latest[1]) < (_file_number(position[0]), position[1]):
        return (
            f"the server's binlog ends at {latest[0]}:{latest[1]}, before the checkpoint's position {where}: the "
            f"binlog was reset (RESET MASTER) or this is another server"
        )
    return None


def file_created(connection: MySqlConnection, server_id: int, file: str) -> int | None:
    """When the server created binlog ``file``: the timestamp of the format description event that
    opens it (seconds; None when the file cannot be read). RESET MASTER, or another server, makes a
    file of the same name with a new one. Read over the replication protocol with the job's own
    server id, so only while the job's binlog reader is not running (between micro-batches)."""
    from pymysql.err import MySQLError
    from pymysqlreplication.event import FormatDescriptionEvent

    stream = binlog_scan(connection, server_id, file, [FormatDescriptionEvent])
    try:
        for event in stream:
            # the server's artificial events (log_pos 0, when a dump starts) carry no time of the file
            if isinstance(event, FormatDescriptionEvent) and event.timestamp:
                return int(event.timestamp)
            if stream.log_file != file:
                return None
    except (MySQLError, OSError) as exc:
        # an unreadable file is judged by position_problem and the reader; the check is skipped
        log.warning("binlog file's creation time not read", file=file, error=str(exc))
        return None
    finally:
        stream.close()
    return None


def recreated_problem(position: tuple[str, int], created_then: int | None, created_now: int | None) -> str | None:
    """Why the checkpoint's ``position`` names other changes although its file exists and reaches
    past it: the file was created again (RESET MASTER while the job was stopped, then new writes)."""
    if created_then is None or created_now is None or created_then == created_now:
        return None
    return (
        f"the binlog file {position[0]} was created anew since the job read it (its first event is from unix "
        f"time {created_now}, the checkpoint's from {created_then}): the binlog was reset (RESET MASTER) and has "
        f"grown past the checkpoint's position {position[0]}:{position[1]}, which now names other changes"
    )
