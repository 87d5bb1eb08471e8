"""``lakecdc-mysql``: a PySpark streaming data source reading MySQL / MariaDB directly — an initial
snapshot read in parallel by Spark tasks, then the binlog — with offsets in the Spark checkpoint.

The snapshot follows Flink CDC's incremental snapshot algorithm, without a global lock:

1. At the start the driver notes the binlog position P0 and splits each table into primary-key
   chunks (``key_chunks.plan_chunks``; bounds in JSON, ``key_bounds``).
2. A chunk task notes the position LW, SELECTs its key range, notes HW, then reads the binlog
   from LW to HW and applies that table's changes in its range to what it read: the chunk is then
   exactly the table's rows in that range *as of HW*. It reports HW as a mark.
3. The driver keeps every chunk's HW beside the checkpoint, before committing the micro-batch
   (and never overwrites the HW of a chunk whose rows are already committed).
4. The binlog phase starts at P0; a row change at position p of a key in chunk c is emitted only
   when p > HW(c). Nothing is lost or emitted twice, and the table ends equal to the source.

An UPDATE that changes the primary key touches two keys, possibly in two chunks read at different
times: in both the back-fill (2) and the binlog phase (4) it is a DELETE of the before-image and an
INSERT of the after-image, each checked against its own key's chunk (as Debezium and Flink CDC do;
``binlog.key_change_halves``). A key moved out of a chunk read before the move is so deleted, and
one moved into a chunk read after it is not inserted twice. Chunks split on the first key column,
so that column's value of each image names its chunk. With
``scan.incremental.snapshot.backfill.skip`` a chunk's HW is its LW: the binlog phase applies every
change after it, both halves included (at least once, converging by key).

Offsets: ``{"chunks": [[db, table, lo, hi], ...], "done": n, "binlog": [file, pos], "server": identity,
"gtids": set}`` — chunks (planned once) and how many are read, where the binlog phase starts or
resumes, the server that position is one of, and the GTID set of every transaction before it (null
without GTIDs). After a failover to another server a committed position is found again there by its
GTID set (``ingest.mysql.failover``).

Under --max-offsets-per-trigger a snapshot micro-batch takes the chunks whose estimated rows fit the
bound (``snapshot_batches``), and a binlog micro-batch ends at the transaction boundary about that
many binlog events on (``binlog_bound``); both are planned here only, and Spark stores the offset
before the batch runs, so a replay reads the same chunks and the same binlog range.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import structlog
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from ingest import logs
from ingest.mysql.binlog import BinlogSubPartition, ddl_between, read_binlog
from ingest.mysql.binlog_bound import planned_end, range_events, split_range
from ingest.mysql.binlog_position import gtids_at, server_identity, status_with_gtids
from ingest.mysql.binlog_search import position_after_gtids, position_at
from ingest.mysql.chunk_packs import ChunkPack, chunk_partitions, pack_chunks
from ingest.mysql.client import (
    LostPositionError,
    MySqlSourceError,
    captured_tables,
    check_server,
    connect,
    is_mariadb,
    master_status,
    query,
    retrying,
    table_columns,
    table_definitions,
)
from ingest.mysql.failover import Failover, moved_server
from ingest.mysql.gtid import GtidSet
from ingest.mysql.key_chunks import offset_chunks
from ingest.mysql.resnapshot import Resnapshot
from ingest.mysql.schema_history import SchemaHistory, check_binlog_position
from ingest.mysql.snapshot import KnownTables, SnapshotRegistry, read_chunk, read_pack
from ingest.mysql.snapshot_batches import batch_end, chunk_rows, table_row_estimates
from ingest.mysql.spec import BinlogPartition, ChunkPartition, MySqlSourceSpec, Position, binlog_offset
from ingest.mysql.startup import SNAPSHOT_MODES, StartupMode
from ingest.pipeline.gc_pause import GcPaused
from ingest.source import stop_file, stopping
from ingest.workers.memory import release_unused_memory
from schema_evolution.mysql_tables import TableDef
from sinks.crash_points import crash_point
from sinks.write.chunk_format import CHUNK_DDL

log = structlog.get_logger(__name__)

# The source option naming how many read tasks a binlog micro-batch is split over (the job's parallelism).
BINLOG_TASKS_OPTION = "lakecdc.binlog.tasks"


class MySqlCdcDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "lakecdc-mysql"

    def schema(self) -> str:
        return CHUNK_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        logs.configure_once()
        spec = MySqlSourceSpec.from_json(self.options["lakecdc.spec"], self.options.get("mysql.password", ""))
        max_rows = int(self.options.get("lakecdc.maxrows", "0") or 0)
        binlog_tasks = int(self.options.get(BINLOG_TASKS_OPTION, "1") or 1)
        return MySqlStreamReader(spec, max_rows, binlog_tasks, stop_file(self.options))


class MySqlStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(
        self, spec: MySqlSourceSpec, max_rows: int, binlog_tasks: int = 1, stop_file: str | None = None
    ) -> None:
        self.spec = spec
        self.stop_file = stop_file  # the job's stop file (ingest.source.stopping)
        self.max_rows = max_rows
        self.binlog_tasks = binlog_tasks  # read tasks a binlog micro-batch's range is split over
        self._available_now: dict[str, Any] | None = None
        self._initial: dict[str, Any] | None = None
        self._restart_checked = False  # newly matched tables are looked for once, on a restart
        self._fingerprinted: set[str] = set()  # binlog files whose creation time this run checked
        self._latest: dict[str, Any] | None = None  # the server's binlog end and when it was read
        self._server: str | None = None  # the identity of the server, as latestOffset last read it
        self._failover = Failover(spec)
        self._resnapshot = Resnapshot(spec)
        self._table_rows: dict[str, int | None] = {}  # "db.table" -> estimated rows, to plan snapshot batches

    # ----- driver side -----------------------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:
        # Spark may ask twice; the chunk plan and P0 must not differ between the answers.
        if self._initial is None:
            self._initial = self._plan_initial()
            self._restart_checked = True
        return self._initial

    def _plan_initial(self) -> dict[str, Any]:
        spec = self.spec
        snapshot = spec.startup_mode in SNAPSHOT_MODES
        with connect(spec.connection) as c:
            full_metadata = check_server(c)
            position = master_status(c)
            if not full_metadata or spec.startup_mode in (StartupMode.LATEST_OFFSET, *SNAPSHOT_MODES):
                position = self._start_history(c, full_metadata)
            chunks: list[list[Any]] = []
            if snapshot:
                tables = self._routed_tables(c)
                chunks = self._plan_chunks(c, tables)
                KnownTables(spec.state_dir).save(tables)
                table_sync = spec.parse.router.table is not None
                if not chunks and table_sync:
                    raise MySqlSourceError(
                        f"No table satisfies the given database name and table name. (No table matches "
                        f"database-name '{spec.database_regex}' and table-name '{spec.table_regex}' (full matches).)"
                    )
                if not table_sync and not captured_tables(c, spec.database_regex, ".*"):
                    # Paimon's message for mysql-sync-database.
                    raise MySqlSourceError(
                        f"No tables found in MySQL database {spec.database_regex}, or MySQL database does not exist."
                    )
            elif spec.startup_mode == StartupMode.EARLIEST_OFFSET:
                files = query(c, "SHOW BINARY LOGS")
                position = (str(files[0][0]), 4)
            elif spec.startup_mode == StartupMode.SPECIFIC_OFFSET and spec.specific_gtids:
                position = position_after_gtids(spec.connection, GtidSet.parse(spec.specific_gtids), spec.server_id)
            elif spec.startup_mode == StartupMode.SPECIFIC_OFFSET:
                assert spec.specific_position is not None
                position = spec.specific_position
            elif spec.startup_mode == StartupMode.TIMESTAMP:
                assert spec.startup_timestamp_ms is not None
                position = position_at(spec.connection, spec.startup_timestamp_ms, spec.server_id)
            server, gtids = server_identity(c), gtids_at(c, position)
        log.info("mysql source start", mode=spec.startup_mode, chunks=len(chunks), binlog=list(position), gtids=gtids)
        return {"chunks": chunks, "done": 0, "binlog": list(position), "server": server, "gtids": gtids}

    def _routed_tables(self, c: Any) -> list[tuple[str, str]]:
        """The tables the job captures now: matched by database-name / table-name and routed
        (not excluded by --including-tables / --excluding-tables)."""
        router = self.spec.parse.router
        tables = captured_tables(c, self.spec.database_regex, self.spec.table_regex)
        return [(d, t) for d, t in tables if router.route(d, t) is not None]

    def _plan_chunks(self, c: Any, tables: list[tuple[str, str]], whole_key: bool = True) -> list[list[Any]]:
        """The snapshot chunks of ``tables``; tables without a primary key are skipped, or refused
        (mysql-sync-table without --primary-keys: Paimon's message, naming them all). ``whole_key``: composite
        keys split on the whole key (else on the first column: a re-snapshot's ``key_diff`` needs that)."""
        spec = self.spec
        chunks: list[list[Any]] = []
        without_key = []
        for database, table in tables:
            columns, keys = table_columns(c, database, table)
            if not keys and not spec.parse.primary_keys:
                without_key.append(f"{database}.{table}")
                continue
            types = dict(columns)
            split_keys = keys or list(spec.parse.primary_keys)
            key_types = [types.get(k, "") for k in split_keys]  # (whole: only the table's own key has an index)
            whole = whole_key and bool(keys)
            bounds = offset_chunks(c, database, table, split_keys, key_types, spec.chunk_size, whole, len(columns))
            chunks += [[database, table, lo, hi] for lo, hi in bounds]
        if without_key and spec.require_primary_key:
            raise MySqlSourceError(
                "Source tables of MySQL table synchronization job cannot contain table which doesn't have primary "
                f"keys.\nThey are: {', '.join(without_key)}\n(give --primary-keys, or exclude them)"
            )
        for name in without_key:
            log.warning("table without primary key skipped", table=name)
        return chunks

    def _add_newly_matched(self, start: dict[str, Any]) -> dict[str, Any]:
        """On a restart (``scan.newly-added-table.enabled``, initial mode): the tables that match
        now but were never captured get snapshot chunks after the offset's own, read before the binlog
        goes on (their binlog changes up to each chunk's HW are then dropped, as for any chunk).
        Known are the tables of the first plan, of the chunk registry and of the offset, and those
        seen while the binlog ran (created meanwhile, so read from their first binlog row)."""
        spec = self.spec
        if spec.startup_mode != StartupMode.INITIAL or not spec.newly_added_tables:
            return start
        known_tables = KnownTables(spec.state_dir)
        known = known_tables.load()
        with connect(spec.connection) as c:
            tables = self._routed_tables(c)
            if known is None:  # a checkpoint from before the list was kept: nothing can be told new
                known_tables.save(tables)
                return start
            registry = SnapshotRegistry(spec.state_dir).load()
            known |= {f"{e['database']}.{e['table']}" for e in registry.values()}
            known |= {f"{d}.{t}" for d, t, _lo, _hi in start["chunks"]}
            new = [(d, t) for d, t in tables if f"{d}.{t}" not in known]
            if not new:
                return start
            chunks = self._plan_chunks(c, new)
        base = start.get("base", 0) if start["chunks"] else 1 + max((int(k) for k in registry), default=-1)
        log.info("newly matched tables get a snapshot", tables=[f"{d}.{t}" for d, t in new], chunks=len(chunks))
        return {**start, "chunks": start["chunks"] + chunks, "base": base}

    def _start_history(self, c: Any, full_metadata: bool) -> Position:
        """The table definitions at the start position: the first entry of the schema history
        that names (without ``binlog_row_metadata=FULL``) and types the binlog's row values.
        Only the current definitions can be read, so the start must be now (initial,
        latest-offset), and no DDL may fall between the position and the definitions: read
        again until none did."""
        spec = self.spec
        if spec.startup_mode not in (StartupMode.LATEST_OFFSET, *SNAPSHOT_MODES):
            assert not full_metadata
            raise MySqlSourceError(
                f"scan.startup.mode={spec.startup_mode} needs binlog_row_metadata=FULL on the server: without it "
                f"column names come from a schema history that starts now (use initial or latest-offset)"
            )
        before, tables = self._definitions_now(c)
        SchemaHistory(spec.state_dir).start(before, tables)
        log.info("schema history started", tables=len(tables), row_metadata_full=full_metadata)
        return before

    def _definitions_now(self, c: Any) -> tuple[Position, dict[str, TableDef]]:
        """The binlog position now and the table definitions at it: read again until no DDL fell
        between the position and the definitions."""
        spec = self.spec
        for _ in range(10):
            before = master_status(c)
            tables = table_definitions(c, spec.database_regex)
            after = master_status(c)
            if before == after or not ddl_between(spec, before, after):
                return before, tables
        raise MySqlSourceError("DDL kept running while the table definitions were read; start the job again")

    def _resnapshot_if_needed(self, start: dict[str, Any], now: str) -> dict[str, Any]:
        """``scan.snapshot.when-needed``: ``start`` when its binlog position can be read on, else the
        offset of a new snapshot of the captured tables (decided once, ``ingest.mysql.resnapshot``)."""
        marker = self._resnapshot.marker_for(start)
        if marker is None:
            try:
                here = self._failover.resume(start, now) if moved_server(start, now) else tuple(start["binlog"])
                check_binlog_position(
                    self.spec.connection, self.spec.state_dir, here, self.spec.server_id, self._fingerprinted
                )
                return start
            except LostPositionError as exc:
                marker = self._plan_resnapshot(start, exc.problem)
        self._resnapshot.apply(marker)
        return self._resnapshot.offset(marker)

    def _plan_resnapshot(self, start: dict[str, Any], problem: str) -> dict[str, Any]:
        """Decides a new snapshot of the captured tables from the server's position now."""
        spec = self.spec
        with connect(spec.connection) as c:
            check_server(c)
            position, definitions = self._definitions_now(c)
            tables = self._routed_tables(c)
            chunks = self._plan_chunks(c, tables, whole_key=False)
            columns, split_keys = {}, {}
            for database, table in tables:
                table_cols, keys = table_columns(c, database, table)
                keys = keys or list(spec.parse.primary_keys)
                if keys:
                    columns[f"{database}.{table}"] = table_cols
                    split_keys[f"{database}.{table}"] = keys[0]
            to = {"server": server_identity(c), "binlog": list(position), "gtids": gtids_at(c, position)}
        history = definitions if SchemaHistory(spec.state_dir).exists() else None
        return self._resnapshot.decide(start, problem, to, history, chunks, columns, split_keys)

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_rows) if self.max_rows > 0 else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        position, gtids = retrying(self.spec.connection, status_with_gtids)
        self._available_now = {"binlog": list(position), "gtids": gtids}
        self._latest = {"binlog": list(position), "read_at_ms": int(time.time() * 1000)}

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        if stopping(self.stop_file):
            return start  # the job is stopping: no new batch after the one in flight
        now = self._server = retrying(self.spec.connection, server_identity)
        spec = self.spec
        binlog_phase = spec.startup_mode != StartupMode.SNAPSHOT and start["done"] >= len(start["chunks"])
        if spec.resnapshot_when_needed and binlog_phase:
            start = self._resnapshot_if_needed(start, now)
        # After a failover the committed position is found again on this server by its GTID set (or
        # the job stops, saying why); newly matched tables wait for the first offset of this server.
        resumed = self._failover.resume(start, now) if moved_server(start, now) else None
        if not self._restart_checked and resumed is None:
            self._restart_checked = True
            start = self._add_newly_matched(start)
        chunks = start["chunks"]
        if start["done"] < len(chunks):  # (the tables' estimated rows go to the progress reports too)
            rows, end = self._chunk_rows(chunks, start["done"]), len(chunks)
            self._latest = {**(self._latest or {}), "table_rows": {t: n for t, n in self._table_rows.items() if n}}
            if isinstance(limit, ReadMaxRows) and limit.max_rows > 0:
                end = batch_end(rows, start["done"], limit.max_rows)
            return {**start, "done": end}
        if self.spec.startup_mode == StartupMode.SNAPSHOT:
            return start  # the snapshot only: nothing follows it
        gtids: str | None
        if self._available_now is not None:
            latest: Position = tuple(self._available_now["binlog"])
            gtids = self._available_now["gtids"]
            if self._tracks_tables():
                KnownTables(self.spec.state_dir).add(retrying(self.spec.connection, self._routed_tables))
        elif self._tracks_tables():
            (latest, gtids), tables = retrying(
                self.spec.connection, lambda c: (status_with_gtids(c), self._routed_tables(c))
            )
            KnownTables(self.spec.state_dir).add(tables)
        else:
            latest, gtids = retrying(self.spec.connection, status_with_gtids)
        if self._available_now is None:
            self._latest = {"binlog": list(latest), "read_at_ms": int(time.time() * 1000)}
        here: Position = resumed or tuple(start["binlog"])
        check_binlog_position(self.spec.connection, self.spec.state_dir, here, self.spec.server_id, self._fingerprinted)
        if binlog_offset(latest) <= binlog_offset(here):
            return start
        until, gtids = self._binlog_end(here, latest, gtids, limit)
        # The snapshot is complete: its chunks live on in the registry, not in every offset.
        if chunks:
            crash_point("snapshot-to-binlog")
        return {"chunks": [], "done": 0, "binlog": list(until), "server": now, "gtids": gtids}

    def _binlog_end(
        self, here: Position, latest: Position, gtids: str | None, limit: ReadLimit
    ) -> tuple[Position, str | None]:
        """Where the binlog micro-batch from ``here`` ends, and the GTID set before it: ``latest``, or
        under --max-offsets-per-trigger the transaction boundary about that many binlog events on, or
        about ``binlog_bound.MAX_BATCH_BYTES`` of binlog on when that comes first (``binlog_bound``).
        MySQL tells the GTID set of its binlog's end only, which a failover needs: with GTIDs on, its
        micro-batches are not bounded (MariaDB tells it for any boundary)."""
        if not isinstance(limit, ReadMaxRows) or limit.max_rows <= 0:
            return latest, gtids
        max_events = limit.max_rows

        def plan(c: Any) -> tuple[Position, str | None]:
            if gtids is not None and not is_mariadb(c):
                return latest, gtids
            end = planned_end(c, here, latest, max_events)
            if binlog_offset(end) >= binlog_offset(latest):
                return latest, gtids
            before = None if gtids is None else gtids_at(c, end)
            if gtids is not None and before is None:
                return latest, gtids  # the boundary's GTID set not known: not bounded
            log.info("binlog micro-batch bounded", start=list(here), end=list(end), latest=list(latest))
            return end, before

        return retrying(self.spec.connection, plan)

    def _chunk_rows(self, chunks: list[list[Any]], done: int) -> list[int]:
        """Each chunk's estimated rows (``snapshot_batches``); the row estimates of the tables still to
        read and not yet known are read in one query, and kept for the next batches."""
        missing = {(d, t) for d, t, _lo, _hi in chunks[done:] if f"{d}.{t}" not in self._table_rows}
        if missing:
            found = retrying(self.spec.connection, lambda c: table_row_estimates(c, sorted(missing)))
            self._table_rows.update(found)
            # a table not found (gone meanwhile) is asked once, and counts chunk_size rows per chunk
            self._table_rows.update({f"{d}.{t}": None for d, t in missing if f"{d}.{t}" not in found})
        return chunk_rows(chunks, self._table_rows, self.spec.chunk_size)

    def _tracks_tables(self) -> bool:
        """Whether tables appearing while the job runs are noted (not newly matched at the next restart)."""
        return self.spec.newly_added_tables and self.spec.startup_mode == StartupMode.INITIAL

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """The server's binlog end as ``latestOffset`` last read it and when (``read_at_ms``), or during a
        snapshot the tables' estimated rows: Spark's progress reports carry it (``ingest.streaming.progress``)."""
        return self._latest

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        parts: list[InputPartition] = []
        schema_history = SchemaHistory(self.spec.state_dir)
        history = schema_history.exists()
        # the first batch of a re-snapshot: its chunks are all new, its binlog starts at theirs
        marker = self._resnapshot.marker_for(start)
        if end["chunks"]:
            base, scans = end.get("base", 0), end.get("resnapshot")
            first = 0 if marker is not None else start["done"]
            chunks = chunk_partitions(end["chunks"][first : end["done"]], base + first, history, scans)
            # small chunks (whole small tables) share read tasks (``chunk_packs``)
            rows = self._chunk_rows(end["chunks"], first)[first : end["done"]]
            parts += pack_chunks(chunks, rows, self.spec.chunk_size, self.binlog_tasks)
        if marker is not None:
            start = self._resnapshot.offset(marker)
        if end["binlog"] != start["binlog"] or end.get("server") != start.get("server"):
            first, last = self._positions(start, end)
            if binlog_offset(last) > binlog_offset(first):
                snapshot = SnapshotRegistry(self.spec.state_dir).by_table()
                # The definitions as of the range's start travel with the read task, which never opens
                # the state folder (executors may not see it; the DDL it follows comes back as marks).
                definitions = schema_history.as_of(binlog_offset(first)) if history else None
                if parts:  # snapshot chunks in the batch too: the range is one task, as before
                    parts.append(BinlogPartition(first, last, snapshot, definitions))
                else:
                    parts += self._binlog_parts(first, last, snapshot, definitions)
        return parts

    def _binlog_parts(
        self,
        first: Position,
        last: Position,
        snapshot: dict[str, list[tuple[Any, Any, str, int]]],
        definitions: dict[str, TableDef] | None,
    ) -> list[InputPartition]:
        """The binlog range's read tasks, in binlog order: the range split over ``binlog_tasks`` where it
        lies in one file (``binlog_bound.split_range``; the split is planned from the server's event
        list, so a replayed batch gets the same one), else one task. Each task's chunks keep their binlog
        offsets, and the write tasks read the read tasks' chunks in this order: the changes of every key
        keep their binlog order."""
        whole: list[InputPartition] = [BinlogPartition(first, last, snapshot, definitions)]
        if self.binlog_tasks < 2 or first[0] != last[0]:
            return whole
        events = retrying(self.spec.connection, lambda c: range_events(c, first[0], first[1], last[1]))
        if events is None:
            return whole
        # each task's dump has its own replica id: at most one per id of the job's server-id range
        subs = split_range(events, first[1], last[1], min(self.binlog_tasks, self.spec.server_id_range + 1))
        if len(subs) < 2:
            return whole
        log.info("binlog micro-batch split", start=list(first), end=list(last), tasks=len(subs))
        file = first[0]
        return [
            BinlogSubPartition(
                (file, at),
                (file, end),
                snapshot,
                definitions,
                None if after is None else (file, after),
                i,  # its replica id after the job's (``server_id_offset``)
            )
            for i, (at, after, end) in enumerate(subs)
        ]

    def _positions(self, start: dict[str, Any], end: dict[str, Any]) -> tuple[Position, Position]:
        """The batch's binlog range on the server read now: offsets of another server (a failover;
        a batch planned before it and replayed after a restart) are found again by their GTID sets."""
        first: Position = tuple(start["binlog"])
        last: Position = tuple(end["binlog"])
        if start.get("server") is None and end.get("server") is None:
            return first, last  # a checkpoint from before offsets named their server
        now = self._server or retrying(self.spec.connection, server_identity)
        if moved_server(start, now):
            first = self._failover.resume(start, now)
        if moved_server(end, now):
            last = self._failover.end(end, now)
        return first, last

    def commit(self, end: dict[str, Any]) -> None:
        pass

    # ----- executor side ---------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        logs.configure_once()
        with GcPaused():
            if isinstance(partition, ChunkPartition):
                yield from read_chunk(self.spec, partition)
            elif isinstance(partition, ChunkPack):
                yield from read_pack(self.spec, partition)
            else:
                assert isinstance(partition, BinlogPartition)
                yield from read_binlog(self.spec, partition)
        release_unused_memory()
