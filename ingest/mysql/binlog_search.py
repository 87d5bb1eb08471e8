"""Finding a binlog position by what it follows: the first transaction outside a GTID set
(``scan.startup.specific-offset.gtid-set``, a failover) or at a time (``scan.startup.mode=timestamp``),
by scanning the server's binlog files."""

from __future__ import annotations

from ingest.mysql.client import MySqlConnection, MySqlSourceError, binlog_files, binlog_scan, connect, master_status
from ingest.mysql.gtid import GtidSet


def position_after_gtids(conn: MySqlConnection, gtids: GtidSet, server_id: int) -> tuple[str, int]:
    """The binlog position where the first transaction not in ``gtids`` starts
    (``scan.startup.specific-offset.gtid-set``); the current end when the set holds them all.
    The binlog is scanned from its first file; the set must cover every transaction before the
    first one it lacks (a gap would be skipped otherwise, so it is refused)."""
    from pymysqlreplication.event import GtidEvent, MariadbGtidEvent, RotateEvent

    with connect(conn) as c:
        files = binlog_files(c)
        end = master_status(c)
    stream = binlog_scan(conn, server_id, files[0], [MariadbGtidEvent, GtidEvent, RotateEvent])
    first: tuple[str, int, str] | None = None
    try:
        for event in stream:
            if isinstance(event, RotateEvent) or event.packet.log_pos == 0:
                continue
            position = (str(stream.log_file), int(event.packet.log_pos))
            gtid = str(event.gtid)
            if first is None:
                if not gtids.contains(gtid):
                    # log_pos is where the event ends: the transaction starts one event size before.
                    first = (position[0], position[1] - int(event.packet.event_size), gtid)
            elif gtids.contains(gtid):
                raise MySqlSourceError(
                    f"scan.startup.specific-offset.gtid-set contains {gtid} but not {first[2]} before it: a set "
                    f"with gaps cannot become one binlog position; give scan.startup.specific-offset.file and .pos"
                )
    finally:
        stream.close()
    return (first[0], first[1]) if first is not None else end


def position_at(conn: MySqlConnection, timestamp_ms: int, server_id: int) -> tuple[str, int]:
    """The binlog position where the first transaction at or after ``timestamp_ms`` starts
    (``scan.startup.mode=timestamp``): the newest binlog file that starts no later than that time,
    scanned to the first transaction of that time; the current end when there is none yet."""
    from pymysqlreplication.event import GtidEvent, MariadbGtidEvent, QueryEvent, RotateEvent

    with connect(conn) as c:
        files = binlog_files(c)
        end = master_status(c)
    target_s = timestamp_ms / 1000.0

    def scan(file: str, first_only: bool) -> tuple[str, int] | None:
        stream = binlog_scan(conn, server_id, file, [MariadbGtidEvent, GtidEvent, QueryEvent, RotateEvent])
        try:
            for event in stream:
                if isinstance(event, RotateEvent) or event.packet.log_pos == 0:
                    if stream.log_file != file:
                        return None
                    continue
                if stream.log_file != file:
                    return None
                start = isinstance(event, MariadbGtidEvent | GtidEvent) or (
                    isinstance(event, QueryEvent) and str(event.query).upper() == "BEGIN"
                )
                if start:
                    if first_only:
                        return (file, int(event.timestamp))
                    if event.timestamp >= target_s:
                        # log_pos is where the event ends: the transaction starts one event size before.
                        return (file, int(event.packet.log_pos) - int(event.packet.event_size))
        finally:
            stream.close()
        return None

    chosen = files[0]
    for file in files:
        first = scan(file, first_only=True)
        if first is not None and first[1] > target_s:
            break
        chosen = file
    found = scan(chosen, first_only=False)
    return found if found is not None else end
