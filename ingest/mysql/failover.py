"""Resuming a MySQL job on another server after a failover (#23 item 4), as Flink CDC does: by the
GTID set of the transactions the job has read, not by a binlog position.

Each offset of the source holds, beside its binlog position, the identity of the server it is a
position of (``binlog_position.server_identity``) and the GTID set of every transaction before it
(``binlog_position.status_with_gtids``). When the server the job reads now has another identity (a
replica promoted, or ``hostname`` / ``port`` pointed at it), a committed offset is found again on
it: the first transaction of its binlog that is not in the saved set. That is refused, with what to
do, when it cannot be exact:

- the offset has no GTID set (GTID mode off, or a checkpoint from before lakecdc kept them): the
  positions of one server name other changes on another one;
- the snapshot is not complete, or the binlog has not yet passed every chunk's high watermark
  (those are positions of the old server, and still filter changes);
- the new server has not applied every transaction of the saved set (a replica behind: restart once
  it caught up), or has purged transactions after it.

The move is decided once and written beside the checkpoint (``lakecdc-mysql-failover.json``: from
which offset to which position, and the schema history's definitions at the old position) before
anything depends on it, then applied: the schema history starts again at the new position with those
definitions (its entries were keyed by the old server's positions), the chunks' high watermarks are
retired, the server's identity noted anew. Applying is idempotent, so a crash anywhere in between, or
Spark replaying the first batch after the failover, lands on the same position.
"""

from __future__ import annotations

import json
from typing import Any

import structlog

from ingest.mysql.binlog_position import executed_gtids, purged_gtids
from ingest.mysql.binlog_search import position_after_gtids
from ingest.mysql.client import (
    MySqlSourceError,
    binlog_files,
    lost_position,
    retrying,
)
from ingest.mysql.gtid import GtidSet
from ingest.mysql.schema_history import SERVER_FILE, SchemaHistory
from ingest.mysql.snapshot import SnapshotRegistry
from ingest.mysql.spec import MySqlSourceSpec, Position, binlog_offset
from schema_evolution.mysql_tables import TableDef
from sinks.state_files import state_path, write_atomically

log = structlog.get_logger(__name__)

FAILOVER_FILE = "lakecdc-mysql-failover.json"


def moved_server(offset: dict[str, Any], now: str) -> bool:
    """Whether ``offset`` is a position of another server than the one read now (offsets written
    before lakecdc kept the server in them are judged by ``check_binlog_position`` instead)."""
    server = offset.get("server")
    return server is not None and server != now


class Failover:
    def __init__(self, spec: MySqlSourceSpec) -> None:
        self.spec = spec
        self.state = state_path(spec.state_dir)
        self.path = self.state / FAILOVER_FILE
        self._ends: dict[tuple[str, str], Position] = {}

    def resume(self, start: dict[str, Any], now: str) -> Position:
        """Where the committed offset ``start``, a position of another server, goes on on the server
        with identity ``now``; raises lakecdc's error when that cannot be exact."""
        key = {"server": start.get("server"), "binlog": list(start["binlog"]), "gtids": start.get("gtids")}
        marker = json.loads(self.path.read_text()) if self.path.exists() else None
        if marker is not None and marker["from"] == key and marker["to"]["server"] == now:
            self._apply(marker)
            return str(marker["to"]["binlog"][0]), int(marker["to"]["binlog"][1])
        old, position = str(key["server"]), (str(start["binlog"][0]), int(start["binlog"][1]))
        where = f"{position[0]}:{position[1]}"
        changed = f"the checkpoint's binlog position {where} is one of the server with {old}, this server has {now}"
        if key["gtids"] is None:
            raise lost_position(
                f"{changed} (a failover to another server?): its positions name other changes, and the checkpoint "
                f"holds no GTID set to find the position again (GTID mode is off on the server, or the checkpoint "
                f"was written before lakecdc kept GTID sets)"
            )
        if start["done"] < len(start["chunks"]):
            raise lost_position(
                f"{changed}: the server changed while the snapshot was read ({start['done']} of "
                f"{len(start['chunks'])} chunks), and the chunks' high watermarks are positions of the old server"
            )
        marks = SnapshotRegistry(self.spec.state_dir).high_watermarks()
        ahead = [hw for hw in marks if binlog_offset(hw) > binlog_offset(position)]
        if ahead:
            last = max(ahead, key=binlog_offset)
            raise lost_position(
                f"{changed}: the server changed before the binlog passed the snapshot's high watermarks (up to "
                f"{last[0]}:{last[1]} of the old server), which tell which changes the snapshot holds"
            )
        saved = GtidSet.of(str(key["gtids"]))
        moved = self._after(saved, str(key["gtids"]), changed, now)
        history = SchemaHistory(self.spec.state_dir)
        tables = None
        if history.exists():
            tables = {n: d.to_json() for n, d in sorted(history.as_of(binlog_offset(position)).items())}
        marker = {"from": key, "to": {"server": now, "binlog": list(moved)}, "tables": tables}
        write_atomically(self.path, json.dumps(marker, sort_keys=True))
        self._apply(marker)
        log.warning(
            "the MySQL server changed (a failover): the binlog goes on by the checkpoint's GTID set",
            old_server=old, new_server=now, old_position=list(position), gtids=key["gtids"], resumed=list(moved),
        )  # fmt: skip
        return moved

    def end(self, end: dict[str, Any], now: str) -> Position:
        """Where a planned but uncommitted offset ``end`` of another server lies on this one (Spark
        replays the batch after a restart): after the same transactions."""
        gtids = end.get("gtids")
        where = f"{end['binlog'][0]}:{end['binlog'][1]}"
        changed = (
            f"the binlog position {where} planned for a micro-batch is one of the server with {end.get('server')}, "
            f"this server has {now}"
        )
        if gtids is None:
            raise lost_position(f"{changed}, and the offset holds no GTID set to find it again")
        cached = self._ends.get((now, str(gtids)))
        if cached is None:
            cached = self._ends[(now, str(gtids))] = self._after(GtidSet.of(str(gtids)), str(gtids), changed, now)
        return cached

    def _after(self, saved: GtidSet, text: str, changed: str, now: str) -> Position:
        """The position of the first transaction not in ``saved`` on this server, checked exact."""
        connection = self.spec.connection

        def look(c: Any) -> tuple[GtidSet | None, GtidSet | None]:
            return executed_gtids(c), purged_gtids(c, binlog_files(c))

        executed, purged = retrying(connection, look)
        if executed is None:
            raise lost_position(f"{changed}, which keeps no GTIDs (gtid_mode is off)")
        if not executed.covers(saved):
            raise MySqlSourceError(
                f"{changed} (a failover?), which has not applied every transaction the job already read there "
                f"(GTID set {text}): a replica that is behind. Restart the job once it has caught up; if those "
                f"transactions are lost with the old server, start from a new checkpoint"
            )
        if purged is None or not saved.covers(purged):
            raise lost_position(
                f"{changed} (a failover?), whose binlog no longer holds every transaction after the checkpoint's "
                f"GTID set {text} (purged)"
            )
        try:
            return position_after_gtids(connection, saved, self.spec.server_id)
        except MySqlSourceError as exc:
            raise lost_position(f"{changed}: the GTID set {text} names no position here ({exc})") from None

    def _apply(self, marker: dict[str, Any]) -> None:
        """Makes the checkpoint's side files those of the new server (each step idempotent)."""
        to: Position = (str(marker["to"]["binlog"][0]), int(marker["to"]["binlog"][1]))
        if marker["tables"] is not None:
            tables = {n: TableDef.from_json(d) for n, d in marker["tables"].items()}
            SchemaHistory(self.spec.state_dir).restart_at(to, tables)
        SnapshotRegistry(self.spec.state_dir).retire_high_watermarks()
        server_file = self.state / SERVER_FILE
        kept = json.loads(server_file.read_text()) if server_file.exists() else {}
        if kept.get("server") != marker["to"]["server"]:
            write_atomically(server_file, json.dumps({"server": marker["to"]["server"], "files": {}}))
