"""A new snapshot of the captured tables when the checkpoint's binlog position is gone (#23 item 4,
``--mysql-conf scan.snapshot.when-needed=true``; Debezium's ``snapshot.mode=when_needed``).

Without the option a position that cannot be read on (purged, RESET MASTER, a file created anew, a
failover without a GTID way back: ``binlog_position.position_problem`` and ``recreated_problem``,
``failover.Failover.resume``) stops the job. With it the job takes the incremental snapshot again from
the server's position now, P, then reads the binlog from P as after a first snapshot:

- every captured table is split into chunks again; a chunk's rows are exact as of its high watermark,
  and the binlog after P applies only what follows each chunk's HW (``ingest.mysql.source``);
- a chunk also reads the keys the Paimon table holds in its range and deletes those its rows do not
  have (``key_diff``): rows deleted while the binlog was lost are deleted in Paimon too. Chunks of a
  table cover every key (the first unbounded below, the last above, each ending where the next
  begins: ``covers``), or the table is read as one chunk.

The decision is written beside the checkpoint (``lakecdc-mysql-resnapshot.json``: from which offset,
why, the new position, server and GTID set, the chunks, how to read each table's keys, and the table
definitions at P) before anything depends on it, then applied (each step idempotent, as
``failover.Failover`` does): the schema history starts again at P, the old chunks' high watermarks are
retired (positions of a binlog that is gone), the server's binlog files are noted anew. A crash
anywhere, or Spark replaying the first batch after it, finds the decision again by the committed
offset and lands on the same chunks and position.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from ingest.mysql.client import MySqlSourceError
from ingest.mysql.key_diff import KeyScan
from ingest.mysql.schema_history import SERVER_FILE, SchemaHistory
from ingest.mysql.snapshot import KnownTables, SnapshotRegistry
from ingest.mysql.spec import MySqlSourceSpec
from ingest.mysql.startup import RESNAPSHOT_OPTION
from schema_evolution.mysql_tables import TableDef
from schema_evolution.types import PaimonType, Root
from sinks.state_files import state_path, write_atomically

log = structlog.get_logger(__name__)

RESNAPSHOT_FILE = "lakecdc-mysql-resnapshot.json"

_INTEGER_ROOTS = (Root.TINYINT, Root.SMALLINT, Root.INT, Root.BIGINT)
_TEXT_ROOTS = (Root.CHAR, Root.VARCHAR)
_MYSQL_INTEGER = re.compile(r"^(tinyint|smallint|mediumint|int|integer|bigint)\b", re.IGNORECASE)
_MYSQL_TEXT = re.compile(r"^(char|varchar|tinytext|text|mediumtext|longtext|enum)\b", re.IGNORECASE)


def offset_key(offset: Mapping[str, Any]) -> dict[str, Any]:
    """What names a committed offset's binlog position: server, position, GTID set."""
    return {"server": offset.get("server"), "binlog": list(offset["binlog"]), "gtids": offset.get("gtids")}


def covers(ranges: Sequence[tuple[int | None, int | None]]) -> bool:
    """Whether a table's chunk ranges [lo, hi) cover every key once: the first open below, the last
    open above, each beginning where the one before ends."""
    if not ranges:
        return False
    if any(not isinstance(b, int | None) for pair in ranges for b in pair):
        return False  # (a composite key's tuple bounds: Paimon's keys are read by one column's range)
    ordered = sorted(ranges, key=lambda r: (r[0] is not None, r[0] or 0))
    if ordered[0][0] is not None or ordered[-1][1] is not None:
        return False
    return all(a[1] is not None and a[1] == b[0] for a, b in itertools.pairwise(ordered))


def key_scan(
    warehouse: str,
    table: str,
    paimon_keys: Sequence[str],
    paimon_types: Mapping[str, PaimonType],
    source_columns: Sequence[tuple[str, str]],
    split_column: str,
) -> KeyScan:
    """How a re-snapshot compares ``table``'s (Paimon) keys with the rows of its source table (columns
    and MySQL types, the chunks split on ``split_column``); raises when they cannot be compared
    exactly (a key that is a computed column or has no source column, a key type whose stored value
    is not the source's)."""
    types = {name: mysql_type for name, mysql_type in source_columns}
    folded: dict[str, list[str]] = {}
    for name in types:
        folded.setdefault(name.casefold(), []).append(name)

    def source_of(stored: str) -> str | None:
        if stored in types:
            return stored
        same = folded.get(stored.casefold(), [])
        return same[0] if len(same) == 1 else None

    columns, as_text = [], []
    split: str | None = None
    for key in paimon_keys:
        found = source_of(key)
        if found is None:
            raise _cannot(table, f"its primary-key column {key} is not a column of the source table")
        column = found
        root, mysql_type = paimon_types[key].root, types[column]
        if root in _INTEGER_ROOTS and _MYSQL_INTEGER.match(mysql_type):
            text = False
            if column == split_column:
                split = key
        elif root in _TEXT_ROOTS and _MYSQL_INTEGER.match(mysql_type):
            text = True
        elif root in _TEXT_ROOTS and _MYSQL_TEXT.match(mysql_type):
            text = False
        else:
            raise _cannot(
                table,
                f"its primary-key column {key} is {paimon_types[key].sql()} from MySQL {mysql_type}; a re-snapshot "
                f"compares integer and string keys only",
            )
        columns.append(column)
        as_text.append(text)
    values = tuple((stored, source) for stored in paimon_types if (source := source_of(stored)) is not None)
    return KeyScan(warehouse, table, tuple(paimon_keys), tuple(columns), tuple(as_text), split, values)


def _cannot(table: str, why: str) -> MySqlSourceError:
    return MySqlSourceError(
        f"{RESNAPSHOT_OPTION}: the Paimon table {table} cannot be re-snapshotted exactly ({why}); start the job "
        f"from a new checkpoint, or into a new table"
    )


class Resnapshot:
    def __init__(self, spec: MySqlSourceSpec) -> None:
        self.spec = spec
        self.state = state_path(spec.state_dir)
        self.path = self.state / RESNAPSHOT_FILE

    def marker_for(self, start: Mapping[str, Any]) -> dict[str, Any] | None:
        """The decision taken for the committed offset ``start`` (None: none was)."""
        if not self.path.exists():
            return None
        marker: dict[str, Any] = json.loads(self.path.read_text())
        return marker if marker["from"] == offset_key(start) else None

    def decide(
        self,
        start: Mapping[str, Any],
        problem: str,
        to: Mapping[str, Any],
        definitions: Mapping[str, TableDef] | None,
        chunks: list[list[Any]],
        columns: Mapping[str, list[tuple[str, str]]],
        split_keys: Mapping[str, str],
    ) -> dict[str, Any]:
        """Writes the decision to re-snapshot from ``to`` (server, binlog, gtids) instead of ``start``:
        the chunks (a table whose keys cannot be read by range becomes one), how each table's Paimon
        keys are read, the definitions the schema history starts again with."""
        scans = self._key_scans(columns, split_keys)
        by_table: dict[str, list[list[Any]]] = {}
        for chunk in chunks:
            by_table.setdefault(f"{chunk[0]}.{chunk[1]}", []).append(chunk)
        planned: list[list[Any]] = []
        for name, table_chunks in by_table.items():
            scan = scans.get(name)
            ranges = [(lo, hi) for _d, _t, lo, hi in table_chunks]
            if scan is not None and (scan["split"] is None or not covers(ranges)) and len(table_chunks) > 1:
                database, table = name.split(".", 1)
                planned.append([database, table, None, None])  # one chunk: every key compared
                scan["split"] = None
            else:
                planned.extend(table_chunks)
        registry = SnapshotRegistry(self.spec.state_dir).load()
        marker = {
            "from": offset_key(start),
            "problem": problem,
            "to": {"server": to["server"], "binlog": list(to["binlog"]), "gtids": to["gtids"]},
            "tables": None if definitions is None else {n: d.to_json() for n, d in sorted(definitions.items())},
            "chunks": planned,
            "base": 1 + max((int(k) for k in registry), default=-1),
            "scans": scans,
        }
        write_atomically(self.path, json.dumps(marker, sort_keys=True))
        where = start["binlog"]
        log.warning(
            f"the checkpoint's binlog position is gone: re-snapshotting the captured tables ({RESNAPSHOT_OPTION})",
            lost=f"{where[0]}:{where[1]}", problem=problem, tables=sorted(by_table), chunks=len(planned),
            resumed=list(to["binlog"]),
        )  # fmt: skip
        return marker

    def _key_scans(
        self, columns: Mapping[str, list[tuple[str, str]]], split_keys: Mapping[str, str]
    ) -> dict[str, dict[str, Any]]:
        """How each source table's Paimon table's keys are read (tables not in Paimon yet: none)."""
        from sinks.table.catalog import Catalog

        spec = self.spec
        if not spec.warehouse:
            raise MySqlSourceError(f"{RESNAPSHOT_OPTION}: the job's warehouse is not known")
        catalog = Catalog(spec.warehouse)
        scans: dict[str, dict[str, Any]] = {}
        targets: dict[str, str] = {}
        for name, source_columns in columns.items():
            database, table = name.split(".", 1)
            target = spec.parse.router.route(database, table) or name
            if target in targets:
                # a chunk compares the Paimon table's keys with one source table's rows only
                raise _cannot(target, f"the source tables {targets[target]} and {name} both write to it")
            targets[target] = name
            layout = catalog.load_layout(target)
            if layout is None:
                continue
            if not layout.primary_keys:
                raise _cannot(target, "it has no primary key")
            if layout.refuses_retractions is not None:
                raise _cannot(target, f"its merge engine takes no deletes: {layout.refuses_retractions}")
            scan = key_scan(
                spec.warehouse, target, layout.primary_keys, layout.field_types(), source_columns, split_keys[name]
            )
            scans[name] = scan.to_json()
        return scans

    def apply(self, marker: Mapping[str, Any]) -> None:
        """Makes the checkpoint's side files those of the new snapshot (each step idempotent)."""
        to = marker["to"]
        position = (str(to["binlog"][0]), int(to["binlog"][1]))
        if marker["tables"] is not None:
            tables = {n: TableDef.from_json(d) for n, d in marker["tables"].items()}
            SchemaHistory(self.spec.state_dir).restart_at(position, tables)
        SnapshotRegistry(self.spec.state_dir).retire_high_watermarks()
        KnownTables(self.spec.state_dir).add([(d, t) for d, t, _lo, _hi in marker["chunks"]])
        server_file = self.state / SERVER_FILE
        fresh = {"server": to["server"], "files": {}}
        kept = json.loads(server_file.read_text()) if server_file.exists() else {}
        if kept != fresh:  # the creation times noted were of the lost binlog's files
            write_atomically(server_file, json.dumps(fresh))

    @staticmethod
    def offset(marker: Mapping[str, Any]) -> dict[str, Any]:
        """The offset the re-snapshot starts from: its chunks, none read, the binlog at the new position."""
        to = marker["to"]
        return {
            "chunks": marker["chunks"],
            "done": 0,
            "binlog": list(to["binlog"]),
            "server": to["server"],
            "gtids": to["gtids"],
            "base": marker["base"],
            "resnapshot": marker["scans"],
        }
