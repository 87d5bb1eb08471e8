"""The snapshot phase of the MySQL source: a read task per primary-key chunk (Flink CDC's incremental
snapshot, see ``ingest.mysql.source``), and the registry of the chunks' high watermarks the driver keeps
beside the checkpoint."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

import pyarrow as pa
import structlog

from formats import mysql_values
from formats.events import DataChangeEvent, Op, SourceSchema
from ingest.mysql.binlog import binlog_rows, key_change_halves
from ingest.mysql.chunk_packs import ChunkPack, PackConnection
from ingest.mysql.client import (
    UNREACHABLE,
    MySqlSourceError,
    begin_consistent_read,
    connect,
    master_status,
    quote,
    table_definitions,
)
from ingest.mysql.key_bounds import decode_bound, encode_bound
from ingest.mysql.key_chunks import KeyInRange, key_range_test
from ingest.mysql.key_diff import ResnapshotChunkPartition, gone_keys
from ingest.mysql.key_ordinals import column_sqls, select_form
from ingest.mysql.key_tuples import range_sql
from ingest.mysql.snapshot_text import RowsByKey, read_text_rows
from ingest.mysql.spec import (
    TOPIC,
    Chunk,
    ChunkPartition,
    MySqlSourceSpec,
    Position,
    binlog_offset,
    chunk_assembler,
    values_as_text,
)
from ingest.mysql.tables import RowColumns, Tables
from ingest.pipeline.assembler import ChunkAssembler
from schema_evolution.errors import SourcePosition
from schema_evolution.mysql_ddl import apply_ddl
from schema_evolution.mysql_tables import DdlError
from sinks.state_files import state_path, write_atomically

log = structlog.get_logger(__name__)

REGISTRY_FILE = "lakecdc-mysql-snapshot.json"
TABLES_FILE = "lakecdc-mysql-tables.json"


class SnapshotRegistry:
    """The HW of every snapshot chunk whose rows were handed to a commit, kept beside the
    checkpoint (``<checkpoint>/lakecdc-mysql-snapshot.json``)."""

    def __init__(self, state_dir: str) -> None:
        self.path = state_path(state_dir) / REGISTRY_FILE

    def load(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        data: dict[str, dict[str, Any]] = json.loads(self.path.read_text())
        return data

    def record(self, batch_id: int, marks: list[str], committed: Callable[[str], bool]) -> None:
        entries = self.load()
        changed = False
        for text in marks:
            mark = json.loads(text)
            key = str(mark["chunk"])
            if key in entries and committed(mark["target"]):
                continue  # a replay: the committed rows are as of the recorded HW
            entries[key] = {**mark, "batch": batch_id}
            changed = True
        if changed:
            write_atomically(self.path, json.dumps(entries, sort_keys=True))

    def high_watermarks(self) -> list[tuple[str, int]]:
        """The HW of every chunk still compared with binlog positions."""
        return [(e["hw"][0], e["hw"][1]) for e in self.load().values() if e.get("hw") is not None]

    def retire_high_watermarks(self) -> None:
        """After a failover (``ingest.mysql.failover``) the HWs are positions of the old server, all at
        or before where the binlog resumes: they filter nothing more, and are not compared with the
        new server's positions. The chunks stay known (their tables are captured)."""
        entries = self.load()
        if any(e.get("hw") is not None for e in entries.values()):
            retired = {k: {**e, "hw": None, "old_hw": e.get("hw") or e.get("old_hw")} for k, e in entries.items()}
            write_atomically(self.path, json.dumps(retired, sort_keys=True))

    def by_table(self) -> dict[str, list[tuple[Any, Any, str, int]]]:
        """Each table's chunks (lo, hi, HW file, HW position), their bounds decoded (``key_bounds``)."""
        out: dict[str, list[tuple[Any, Any, str, int]]] = {}
        for e in self.load().values():
            if e.get("hw") is None:
                continue  # retired after a failover
            lo, hi = decode_bound(e["lo"]), decode_bound(e["hi"])
            out.setdefault(f"{e['database']}.{e['table']}", []).append((lo, hi, e["hw"][0], e["hw"][1]))
        return out


class KnownTables:
    """The tables a job has captured (``<checkpoint>/lakecdc-mysql-tables.json``): those of its first
    snapshot and those seen while it read the binlog. On a restart, a table that matches but is not
    known is newly matched (``scan.newly-added-table.enabled``) and gets a snapshot."""

    def __init__(self, state_dir: str) -> None:
        self.path = state_path(state_dir) / TABLES_FILE

    def load(self) -> set[str] | None:
        """The known tables as ``db.table``; None for a checkpoint that does not keep them."""
        if not self.path.exists():
            return None
        return set(json.loads(self.path.read_text()))

    def save(self, tables: list[tuple[str, str]]) -> None:
        write_atomically(self.path, json.dumps(sorted(f"{d}.{t}" for d, t in tables)))

    def add(self, tables: list[tuple[str, str]]) -> None:
        known = self.load() or set()
        names = {f"{d}.{t}" for d, t in tables}
        if not names <= known:
            write_atomically(self.path, json.dumps(sorted(known | names)))


class _ChunkChanged(Exception):
    """The chunk's table changed while the chunk was read: read it again."""


ChunkRows = tuple[RowsByKey, dict[str, str], Position, SourceSchema]


def _read_rows(
    cur: Any, sql: str, args: list[Any], fetch_size: int | None, columns: tuple[str, ...], keys: list[str]
) -> RowsByKey:
    """The SELECT's rows by key, as pymysql decodes them."""
    rows: RowsByKey = {}
    cur.execute(sql, args)
    while fetched := (cur.fetchmany(fetch_size) if fetch_size else cur.fetchall()):
        for values in fetched:
            row = dict(zip(columns, values, strict=True))
            rows[tuple(row[k] for k in keys)] = row
    return rows


def _read_chunk_rows(
    spec: MySqlSourceSpec,
    part: ChunkPartition,
    text: tuple[dt.tzinfo, bool] | None = None,
    shared: PackConnection | None = None,
) -> ChunkRows:
    """The chunk's rows as of its HW: (rows by key, column types, HW, schema). With ``text`` (the
    server time zone, and --type-mapping to-string), the rows are read as text and come normalized
    (``ingest.mysql.snapshot_text``), the binlog's changes between LW and HW too. ``shared``: the
    connection of the chunk's pack (``chunk_packs``), else one of its own."""
    import pymysql.cursors

    chunk = part.chunk
    name = f"{chunk.database}.{chunk.table}"
    with connect(spec.connection) if shared is None else shared.use() as c:
        tables = Tables(spec, c)
        types = tables.types(chunk.database, chunk.table)
        keys = tables.keys(chunk.database, chunk.table) or list(spec.parse.primary_keys)
        columns = tuple(types)
        schema = tables.source_schema(chunk.database, chunk.table)
        if keys != schema.primary_keys:
            schema = replace(schema, primary_keys=tuple(keys))
        # LW: the position the SELECT's read view is consistent with where the server says (MariaDB);
        # else SHOW MASTER STATUS before the read view opens, as Flink CDC does (see
        # ``begin_consistent_read`` for the change that position can miss).
        low = master_status(c)
        low = begin_consistent_read(c) or low
        # (bounds on the first key column, or tuples of the whole key: ``key_tuples``)
        condition, args = range_sql([quote(k) for k in keys], chunk.lo, chunk.hi, column_sqls(types, keys))
        where = f" WHERE {condition}" if condition else ""
        select = ", ".join(_selected(quote(col), types[col]) for col in columns)
        sql = f"SELECT {select} FROM {quote(chunk.database)}.{quote(chunk.table)}{where}"
        # With scan.snapshot.fetch.size the server streams the chunk, that many rows at a time
        # (unbuffered); without it the chunk comes in one buffered fetch (faster, see the spec).
        cur = c.cursor(pymysql.cursors.SSCursor if spec.fetch_size else pymysql.cursors.Cursor)
        try:
            if text is not None:
                rows = read_text_rows(c, cur, sql, args, spec.fetch_size, types, columns, keys, *text)
            else:
                rows = _read_rows(cur, sql, args, spec.fetch_size, columns, keys)
        finally:
            # Closing drains the rest of the result: on a lost connection that fails too (pymysql
            # raises AttributeError), and the first error is the one to handle.
            with contextlib.suppress(Exception):
                cur.close()
        c.commit()  # ends the read-only snapshot transaction
        # scan.incremental.snapshot.backfill.skip: no LW..HW binlog read. The chunk's HW is its LW, so
        # the binlog phase re-applies every change after LW (at least once; it converges by key).
        high = low if spec.skip_backfill else master_status(c)
        if high != low:
            # Changes committed while the SELECT ran: apply those of this range, so the chunk is
            # exactly the table's rows as of HW.
            namer = None
            on_ddl = None
            if part.history:
                definitions = table_definitions(c, re.escape(chunk.database), (chunk.database, chunk.table))
                namer = RowColumns(definitions, lambda d, t: f"{d}.{t}" == name)

                def on_ddl(text: str, default_db: str | None, _ts: int, position: Position) -> None:
                    try:
                        changed = apply_ddl(definitions, text, default_db)
                    except DdlError:
                        changed = {name: None}
                    if name in changed:
                        raise _ChunkChanged(f"binlog {position[0]}:{position[1]}: {text[:200]}")

            changes = binlog_rows(
                spec, low, high, spec.server_id + 1 + part.index % spec.server_id_range, {name}, on_ddl, namer
            )
            normalize = mysql_values.RowNormalizer(types, *text) if text is not None else None
            in_range = key_range_test(c, chunk.database, chunk.table, keys, [(chunk.lo, chunk.hi)], types)
            backfill(rows, ((op, before, after) for op, _db, _t, before, after, _pos, _ts in changes), chunk, keys,
                     columns, normalize, in_range, tuple(select_form(types.get(k, "")) for k in keys))  # fmt: skip
    return rows, types, high, schema


def _selected(column: str, column_type: str) -> str:
    """A column of the chunk's SELECT: a FLOAT as ``column * 1e0`` (a double, exact: the text protocol
    sends a FLOAT with six significant digits, 1.23457 for a stored 1.2345678, another float than the
    binlog's; ``formats.mysql_values`` writes both as the same text)."""
    if column_type.strip().lower().startswith("float"):
        return f"{column} * 1e0 AS {column}"
    return column


def backfill(
    rows: RowsByKey,
    changes: Iterable[tuple[Op, dict[str, Any] | None, dict[str, Any] | None]],
    chunk: Chunk,
    keys: list[str],
    columns: tuple[str, ...],
    normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    in_range: KeyInRange | None = None,
    forms: tuple[Callable[[Any], Any] | None, ...] = (),
) -> None:
    """Applies the chunk's table's binlog changes between LW and HW to the rows its SELECT read.

    Each image is checked against the chunk by its own key (the first key column's value, or the
    whole key where the bounds are tuples: ``key_tuples``): a before-image in range removes its key,
    an after-image in range (not a delete) puts its row. A key-changing UPDATE is so a delete of the
    old key where that one lies and an insert of the new key where that one lies (#23), as in
    Debezium and Flink CDC. ``normalize``: the rows are normalized tuples in ``columns`` order (a
    SELECT read as text), and so are those put. ``in_range``: how a key tuple is placed in the chunk
    (string bounds in their collation, ``key_chunks.key_range_test``). ``forms``: for each key column,
    how its binlog value becomes the SELECT's (``key_ordinals.select_form``: BINARY(n) values lack
    the trailing 0x00 bytes the SELECT's keys have; YEAR 0000, BIT and SET keys), or None."""
    convert = any(forms)

    def key_of(image: dict[str, Any]) -> tuple[Any, ...]:
        if not convert:
            return tuple(image[k] for k in keys)
        return tuple(image[k] if f is None else f(image[k]) for k, f in zip(keys, forms, strict=True))

    for op, before, after in changes:
        for half, old, new in key_change_halves(op, before, after, keys):
            if old is not None and chunk.contains(key_of(old), in_range):
                rows.pop(key_of(old), None)
            if half is not Op.DELETE and new is not None and chunk.contains(key_of(new), in_range):
                row = {col: new.get(col) for col in columns}
                if normalize is None:
                    rows[key_of(new)] = row
                else:
                    normalized = normalize(row)
                    rows[key_of(new)] = tuple([normalized.get(col) for col in columns])


def _read_chunk_rows_again(
    spec: MySqlSourceSpec, part: ChunkPartition, text: tuple[dt.tzinfo, bool] | None, shared: PackConnection | None
) -> ChunkRows:
    """``_read_chunk_rows``, read again after a lost connection or a DDL of the table (up to three)."""
    import pymysql

    name = f"{part.chunk.database}.{part.chunk.table}"
    # Nothing is handed on before the chunk is complete, so a chunk whose connection dropped (a
    # server restart, a failover) or whose table was altered meanwhile is simply read again.
    backoff, changes = spec.connection.backoff(), 0
    while True:
        try:
            return _read_chunk_rows(spec, part, text, shared)
        except _ChunkChanged as exc:
            changes += 1
            if changes > 3:
                raise MySqlSourceError(
                    f"table {name} kept changing while its snapshot chunk was read ({exc})"
                ) from None
            log.warning("table changed while its snapshot chunk was read; reading it again", table=name, ddl=str(exc))
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            # 1927: the connection was killed, 1317: the query interrupted (KILL, a failover)
            if code not in (*UNREACHABLE, 1927, 1317) and not isinstance(exc, pymysql.err.InterfaceError):
                raise
            if backoff.expired():
                raise MySqlSourceError(
                    f"lost the connection to MySQL while reading a snapshot chunk of {name} and could not get it back "
                    f"within connect.timeout / connect.max-retries ({exc}); the job can be restarted from its "
                    f"checkpoint"
                ) from None
            log.warning(
                "connection lost while reading a snapshot chunk; reading it again", table=name, wait_s=backoff.wait
            )
            backoff.sleep()


def _add_tolerant(
    assembler: ChunkAssembler, index: int, position: SourcePosition, events: list[DataChangeEvent], rows: list[Any]
) -> Iterator[pa.RecordBatch]:
    """--errors-tolerance all: each row at its own offset after the chunk's (its high watermark), so
    that a row whose values do not convert is one dead letter ('snapshot', chunk index, row index)
    and the chunk's other rows go through."""
    base = position.offset
    assembler.position_of = lambda offset: ("snapshot", index, offset - base)
    for i, (event, row) in enumerate(zip(events, rows, strict=True)):
        where = SourcePosition(position.topic, position.partition, base + i)
        change = {"op": "READ", "table": f"{event.database}.{event.table}", "after": row}
        assembler.add_events_tolerant([event], where, None, change)
        if (i + 1) % 4096 == 0:
            batch = assembler.take()
            if batch is not None:
                yield batch


def read_pack(spec: MySqlSourceSpec, pack: ChunkPack) -> Iterator[pa.RecordBatch]:
    """The chunk rows of a pack's chunks, read in turn on one connection (``chunk_packs``)."""
    with PackConnection(spec.connection) as shared:
        for part in pack.parts:
            yield from read_chunk(spec, part, shared=shared)


def read_chunk(
    spec: MySqlSourceSpec, part: ChunkPartition, as_text: bool = True, shared: PackConnection | None = None
) -> Iterator[pa.RecordBatch]:
    """The chunk's chunk rows. ``as_text``: its SELECT is read as the server's text where it can be
    (``ingest.mysql.snapshot_text``; not where the rows themselves are handed on: a re-snapshot
    compares its keys with Paimon's, and dead letters carry the values). ``shared``: its pack's
    connection."""
    chunk = part.chunk
    zone = mysql_values.server_zone(spec.server_time_zone)
    to_string = values_as_text(spec)
    name = f"{chunk.database}.{chunk.table}"
    # A re-snapshot (``ingest.mysql.resnapshot``): the keys Paimon holds in the chunk's range that the
    # source no longer has are deleted, before the chunk's rows (``key_diff``).
    scan = part.scan if isinstance(part, ResnapshotChunkPartition) else None
    text = (zone, to_string) if as_text and scan is None and spec.parse.dead_letter_table is None else None
    rows, types, high, schema = _read_chunk_rows_again(spec, part, text, shared)
    assembler = chunk_assembler(spec, part.index)
    position = SourcePosition(TOPIC, part.index, binlog_offset(high))
    db, tb = chunk.database, chunk.table
    # (op_ts of snapshot rows is 0, as in Paimon)
    template = DataChangeEvent(Op.INSERT, db, tb, schema, None, {}, 0)
    events: list[DataChangeEvent] = []
    if text is None:  # rows read with pymysql's decoders, as dicts
        # Snapshot rows come from a UTC session: TIMESTAMPs are UTC, made server-zone here.
        normalized = mysql_values.RowNormalizer(types, zone, True, to_string)
        events = [DataChangeEvent(Op.INSERT, db, tb, schema, None, normalized(row), 0) for row in rows.values()]
    gone = gone_keys(scan, chunk, rows) if scan is not None else []
    if gone:
        # the stored values, as they are (no UTC shift of TIMESTAMPs: they were shifted when written)
        stored = mysql_values.RowNormalizer(types, zone, False, to_string)
        deleted = (DataChangeEvent(Op.DELETE, db, tb, schema, stored(b), None, 0) for b in gone)
        events = [*deleted, *events]
        log.info("re-snapshot chunk deletes keys gone from the source", table=name, chunk=part.index, keys=len(gone))
    # The table's schema even when this chunk (or the whole table) has no rows: Paimon creates the
    # table at start-up from the source schema.
    assembler.declare(template, position)
    if spec.parse.dead_letter_table is not None:
        yield from _add_tolerant(assembler, part.index, position, events, [*gone, *rows.values()])
    else:
        # read as text: normalized tuples in the table's column order, with no event per row
        items: list[Any] = events if text is None else list(rows.values())
        for start in range(0, len(items), 4096):
            if text is None:
                assembler.add_events(items[start : start + 4096], position)
            else:
                assembler.add_inserts(template, items[start : start + 4096], position)
            batch = assembler.take()
            if batch is not None:
                yield batch
    target = spec.parse.router.route(chunk.database, chunk.table) or name
    assembler.mark(
        json.dumps(
            {
                "chunk": part.index,
                "database": chunk.database,
                "table": chunk.table,
                "target": target,
                "lo": encode_bound(chunk.lo),
                "hi": encode_bound(chunk.hi),
                "hw": list(high),
                "rows": len(rows),
                **({"deleted": len(gone)} if scan is not None else {}),
            }
        )
    )
    batch = assembler.finish()
    if batch is not None:
        yield batch
    log.info("snapshot chunk read", table=name, chunk=part.index, rows=len(rows), hw=list(high))
