"""Whether a checkpoint's binlog position can still be read on from: the server's identity, its
binlog files and where its binlog ends, against the position (``schema_history.check_binlog_position``
asks before each micro-batch); and each binlog file's creation time, which tells a file that RESET
MASTER made anew (and which has since grown past the position) from the file the position was in."""

from __future__ import annotations

import re
from typing import Any

import structlog

from ingest.mysql.client import MySqlConnection, binlog_scan, variables

log = structlog.get_logger(__name__)


def server_identity(c: Any) -> str:
    """Which server's binlog this is: MySQL's server_uuid, MariaDB's server_id (it has no UUID)."""
    found = variables(c, "server_uuid", "server_id")
    uuid = found.get("server_uuid")
    return f"server_uuid {uuid}" if uuid else f"server_id {found.get('server_id', '?')}"


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
