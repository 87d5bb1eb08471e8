"""Whether a checkpoint's binlog position can still be read on from: the server's identity, its
binlog files and where its binlog ends, against the position (``schema_history.check_binlog_position``
asks before each micro-batch)."""

from __future__ import annotations

import re
from typing import Any

from ingest.mysql.client import variables


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
