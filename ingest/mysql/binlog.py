"""The binlog phase of the MySQL source: row changes of the captured tables between two binlog
positions (``ingest.mysql.binlog_stream``, which survives a server restart), followed through DDL, as
chunk rows (``BinlogReader``)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import structlog

from formats.events import DataChangeEvent, Op
from ingest.mysql.binlog_stream import CatalogueConnection, binlog_rows, transaction_control
from ingest.mysql.client import (
    MySqlSourceError,
    variables,
)
from ingest.mysql.key_chunks import KeyInRange, key_range_test
from ingest.mysql.schema_history import follow_ddl, history_mark, unfollowed_ddl
from ingest.mysql.spec import (
    BINLOG_PARTITION,
    TOPIC,
    BinlogPartition,
    MySqlSourceSpec,
    Position,
    binlog_offset,
    chunk_assembler,
)
from ingest.mysql.tables import RowColumns, Tables
from ingest.pipeline.dead_letters import SKIPPED_BY_OPERATOR, rows_json
from schema_evolution.errors import BinlogPosition, MalformedMessage, SourcePosition
from schema_evolution.mysql_tables import Changes, DdlError

log = structlog.get_logger(__name__)


def key_change_halves(
    op: Op, before: dict[str, Any] | None, after: dict[str, Any] | None, keys: list[str]
) -> list[tuple[Op, dict[str, Any] | None, dict[str, Any] | None]]:
    """A row change as (op, before, after) parts that each touch one key: an UPDATE that changes
    the primary key is a DELETE of its before-image and an INSERT of its after-image (as Debezium
    and Flink CDC treat it), since the two keys may lie in different snapshot chunks; any other
    change is itself."""
    if op is Op.UPDATE and before is not None and after is not None and any(before[k] != after[k] for k in keys):
        return [(Op.DELETE, before, None), (Op.INSERT, None, after)]
    return [(op, before, after)]


_DDL_TABLE = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?:ALTER|CREATE|DROP|RENAME|TRUNCATE)\s+(?:TABLE\s+)?(?:IF\s+(?:NOT\s+)?EXISTS\s+)?"
    r"(?:`?(\w+)`?\.)?`?(\w+)`?",
    re.IGNORECASE | re.DOTALL,
)
_CREATE_OR_ALTER = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(?:CREATE|ALTER)\s+TABLE", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class BinlogSubPartition(BinlogPartition):
    """One read task's part of a micro-batch's binlog range split over several tasks
    (``binlog_bound.split_range``): ``start`` is where its dump opens (a transaction's start) and the
    rows of row events ending at or before ``rows_after`` (inside that transaction) belong to the task
    before it. The batch's offsets stay its whole range."""

    rows_after: Position | None = None
    # Its binlog dump's replica id after the job's server-id (MariaDB drops the older of two dumps of one
    # id): 0 for the first sub-range, then the ids snapshot chunks use (never read at the same time).
    server_id_offset: int = 0


def read_binlog(spec: MySqlSourceSpec, part: BinlogPartition) -> Iterator[pa.RecordBatch]:
    with contextlib.ExitStack() as stack:
        reader = BinlogReader(spec, part, CatalogueConnection(spec.connection, stack))
        yield from reader.read()
    yield from reader.finish()


class BinlogReader:
    """Reads one binlog range (a ``BinlogPartition``) into chunk rows, in binlog order.

    Row values are named and typed by the job's schema history (its definitions as of the range's
    start come inside the partition, kept current by the DDL in the range) or, without one, by the
    server's catalogue; a table's schema is declared to the driver as soon as a DDL creates or changes
    it. The history's changes go back to the driver as marks (``history_mark``), which it records
    before the batch's commit: the read task never opens the job's state folder. Changes a snapshot
    chunk already holds (at or before its HW) are dropped (the two halves of a key change each by its
    own key's chunk); rows of tables without a primary key stop the reader or are skipped, as
    configured.
    """

    def __init__(self, spec: MySqlSourceSpec, part: BinlogPartition, connection: Any) -> None:
        self.spec = spec
        self.part = part
        self.assembler = chunk_assembler(spec, BINLOG_PARTITION)
        self.rows = 0
        self.skipped: set[str] = set()
        # binlog file names by their index (binlog_offset's high bits), for dead letters and errors;
        # the row changes of events skipped by --skip-offsets
        self._files: dict[int, str] = {}
        self._skipped: dict[Position, list[dict[str, Any]]] = {}
        self._db_re, self._table_re = re.compile(spec.database_regex), re.compile(spec.table_regex)
        self.definitions = None if part.definitions is None else dict(part.definitions)
        # the history's changes at each DDL's offset, handed to the driver as marks at the end
        self._history: dict[int, tuple[Position, Changes]] = {}
        # With FULL row metadata the rows name their columns and the history gives their types;
        # where it cannot follow a DDL, the server's current definition serves, as without one.
        metadata = variables(connection, "binlog_row_metadata").get("binlog_row_metadata", "")
        self.full = metadata.upper() == "FULL"
        self.tables = Tables(spec, connection, self.definitions)
        self.connection = connection
        # per snapshotted table: how a key is placed among its chunks' ranges (string keys by
        # collation) and the offset of its last chunk's HW
        self._in_range: dict[str, tuple[KeyInRange, int]] = {}

    def captured(self, database: str, table: str) -> bool:
        return bool(self._db_re.fullmatch(database) and self._table_re.fullmatch(table))

    def _followed(self, database: str) -> bool:
        return self._db_re.fullmatch(database) is not None

    def _routed(self, database: str, table: str) -> bool:
        return self.captured(database, table) and self.spec.parse.router.route(database, table) is not None

    def read(self) -> Iterator[pa.RecordBatch]:
        """The range's row changes, a batch every 4096 rows (the last one comes from ``finish``)."""
        try:
            yield from self._read()
        except MalformedMessage as exc:
            raise self._at_binlog_position(exc) from None

    def _at_binlog_position(self, exc: MalformedMessage) -> MalformedMessage:
        """The error naming the row event's binlog file and position instead of the chunk offset."""
        at = exc.position
        if at is None or type(at) is not SourcePosition or at.partition != BINLOG_PARTITION:
            return exc
        file, _, pos = self._dead_letter_position(at.offset)
        return MalformedMessage(exc.format, BinlogPosition(file, 0, pos), exc.reason)

    def _read(self) -> Iterator[pa.RecordBatch]:
        namer = RowColumns(self.definitions, self.captured, self.forget if self.full else None)
        # a sub-range of a split batch skips the rows before its own (``BinlogSubPartition``)
        sub = {"rows_after": self.part.rows_after} if isinstance(self.part, BinlogSubPartition) else {}
        server_id = self.spec.server_id + (
            self.part.server_id_offset if isinstance(self.part, BinlogSubPartition) else 0
        )
        changes = binlog_rows(self.spec, self.part.start, self.part.end, server_id, None, self.on_ddl, namer, **sub)
        tolerant = self.spec.parse.dead_letter_table is not None
        skips = {(file, pos) for file, _, pos in self.spec.parse.skip_offsets}
        if tolerant:
            self.assembler.position_of = self._dead_letter_position
        for op, database, table, before, after, position, ts in changes:
            if skips and position in skips:
                self._skip(op, database, table, before, after, position)
                continue
            events = self._events(op, database, table, before, after, position, ts)
            if not events:
                continue
            where = SourcePosition(TOPIC, BINLOG_PARTITION, binlog_offset(position))
            self._files[where.offset >> 32] = position[0]  # to name a bad row's file (dead letter, error)
            if tolerant:
                change = {"op": op.name, "table": f"{database}.{table}", "before": before, "after": after}
                self.assembler.add_events_tolerant(events, where, ts, change)
            else:
                self.assembler.add_events(events, where, ts)
            self.rows += 1
            if self.rows % 4096 == 0:
                batch = self.assembler.take()
                if batch is not None:
                    yield batch

    def _dead_letter_position(self, offset: int) -> tuple[str, int, int]:
        """A binlog dead letter's (topic, partition, offset): the binlog file, 0, the row event's position."""
        return self._files.get(offset >> 32, "?"), 0, offset & 0xFFFFFFFF

    def _skip(
        self,
        op: Op,
        database: str,
        table: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        position: Position,
    ) -> None:
        """A row of an event the operator skipped (--skip-offsets file:position): logged once per
        event, and kept for its dead letter (with --errors-tolerance all)."""
        if not self.captured(database, table):
            return
        rows = self._skipped.setdefault(position, [])
        if not rows:
            log.warning("binlog row event skipped (--skip-offsets)", position=f"{position[0]}:{position[1]}",
                        table=f"{database}.{table}")  # fmt: skip
        rows.append({"op": op.name, "table": f"{database}.{table}", "before": before, "after": after})

    def finish(self) -> Iterator[pa.RecordBatch]:
        try:
            yield from self._finish()
        except MalformedMessage as exc:
            raise self._at_binlog_position(exc) from None

    def _finish(self) -> Iterator[pa.RecordBatch]:
        for offset, (position, changes) in sorted(self._history.items()):
            self.assembler.mark(history_mark(offset, position, changes))
        if self.spec.parse.dead_letter_table is not None:
            for (file, pos), rows in self._skipped.items():
                self.assembler.dead_letter(
                    binlog_offset((file, pos)), None, rows_json(rows), SKIPPED_BY_OPERATOR, rows[0]["table"],
                    position=(file, 0, pos),
                )  # fmt: skip
        batch = self.assembler.finish()
        if batch is not None:
            yield batch
        log.info(
            "binlog read", start=list(self.part.start), end=list(self.part.end), rows=self.rows, ddl=len(self._history)
        )

    def _events(
        self,
        op: Op,
        database: str,
        table: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        position: Position,
        ts: int,
    ) -> list[DataChangeEvent]:
        """The row change as the events to emit: none when its snapshot chunk holds it. A key change
        is a DELETE and an INSERT, each dropped when its own key's chunk holds it (#23)."""
        keys = self._keys(database, table)
        if keys is None:
            return []
        events = []
        for half, old, new in key_change_halves(op, before, after, keys):
            image = new if new is not None else old
            assert image is not None
            if self._in_snapshot(database, table, keys, image, position):
                continue
            columns = tuple(image)
            schema = self.tables.schema(database, table, columns)
            normalized = self.tables.normalizer(database, table, columns)
            old_row = None if old is None else normalized(old)
            new_row = None if new is None else normalized(new)
            events.append(DataChangeEvent(half, database, table, schema, old_row, new_row, ts))
        return events

    def _keys(self, database: str, table: str) -> list[str] | None:
        """The table's primary key (or --primary-keys); None when its rows are skipped."""
        keys = self.tables.keys(database, table) or list(self.spec.parse.primary_keys)
        if keys:
            return keys
        if self.spec.require_primary_key:
            raise MySqlSourceError(
                "Source tables of MySQL table synchronization job cannot contain table which doesn't have primary "
                f"keys.\nThey are: {database}.{table}\n(give --primary-keys, or exclude it)"
            )
        if f"{database}.{table}" not in self.skipped:
            self.skipped.add(f"{database}.{table}")
            log.warning("rows of a table without primary key skipped", table=f"{database}.{table}")
        return None

    def _in_snapshot(
        self, database: str, table: str, keys: list[str], image: dict[str, Any], position: Position
    ) -> bool:
        """Whether the snapshot chunk of the row's key already holds this change (read as of a HW at
        or after it)."""
        name = f"{database}.{table}"
        ranges = self.part.snapshot.get(name)
        if not ranges:
            return False
        if name not in self._in_range:
            bounds = [(lo, hi) for lo, hi, _f, _p in ranges]
            last_hw = max(binlog_offset((f, p)) for _lo, _hi, f, p in ranges)
            types = self.tables.types(database, table)  # (YEAR, BIT, ENUM, FLOAT keys: by number, key_ordinals)
            in_range = key_range_test(self.connection, database, table, keys, bounds, types)
            self._in_range[name] = (in_range, last_hw)
        in_range, last_hw = self._in_range[name]
        if binlog_offset(position) > last_hw:
            return False  # after every chunk's HW: no chunk holds it, whatever its key
        # chunks split on the first key column, or on the whole key (``key_chunks.plan_chunks``)
        key = tuple(image[k] for k in keys)
        hw = next(((f, p) for lo, hi, f, p in ranges if key[0] is None or in_range(key, lo, hi)), None)
        return hw is not None and binlog_offset(position) <= binlog_offset(hw)

    def forget(self, name: str, position: Position, why: str) -> None:
        """The schema history gives up on a table (FULL row metadata): the server's definition serves."""
        assert self.definitions is not None
        self.definitions.pop(name, None)
        self.tables.invalidate(name)
        self._record(position, {name: None})
        log.warning("schema history gave up on a table; its definition is read from the server", table=name,
                    why=why)  # fmt: skip

    def declare(self, database: str, table: str, ts: int, position: Position) -> None:
        """The table's schema goes to the driver at once, as Paimon applies a DDL: a table created
        while the job runs exists before its first row (Paimon's combined mode), an added column
        before the next row. Tables without a primary key are skipped."""
        try:
            columns = list(self.tables.types(database, table).items())
            keys = self.tables.keys(database, table)
        except Exception:  # dropped again since: nothing to declare
            return
        if columns and (keys or self.spec.parse.primary_keys):
            schema = self.tables.source_schema(database, table)
            event = DataChangeEvent(Op.INSERT, database, table, schema, None, {}, ts)
            self.assembler.declare(event, SourcePosition(TOPIC, BINLOG_PARTITION, binlog_offset(position)))

    def _record(self, position: Position, changes: Changes) -> None:
        """A change of the history at ``position``, for the driver to record (a later change at the same
        position adds to it)."""
        self._history.setdefault(binlog_offset(position), (position, {}))[1].update(changes)

    def on_ddl(self, text: str, default_db: str | None, ts: int, position: Position) -> None:
        if self.definitions is not None:
            changed = self._follow_ddl(text, default_db, position)
        else:
            changed = self._ddl_without_history(text, default_db)
        for name in changed:
            database, table = name.split(".", 1)
            self.tables.invalidate(name)
            if self.captured(database, table):
                self.declare(database, table, ts, position)

    def _follow_ddl(self, text: str, default_db: str | None, position: Position) -> list[str]:
        """Applies a DDL to the schema history; the tables it created or changed."""
        assert self.definitions is not None
        changed: list[str] = []
        try:
            changes = follow_ddl(
                self.definitions, text, default_db, position, self._followed, self._routed, self.spec.skip_ddl
            )
        except DdlError as exc:
            match = _DDL_TABLE.match(text)
            if not self.full or match is None:
                raise unfollowed_ddl(position, text, exc) from None
            name = f"{match.group(1) or default_db}.{match.group(2)}"
            self.forget(name, position, str(exc))
            changes = {}
            changed = [name]
        changes = {n: d for n, d in changes.items() if self._db_re.fullmatch(n.split(".", 1)[0])}
        if changes:
            for n, d in changes.items():
                if d is None:
                    self.definitions.pop(n, None)
                else:
                    self.definitions[n] = d
            self._record(position, changes)
            changed += [n for n, d in changes.items() if d is not None]
        return changed

    def _ddl_without_history(self, text: str, default_db: str | None) -> list[str]:
        """Without a history the server's catalogue serves: a created or altered table is declared
        again, any other DDL's table read again at its next row."""
        match = _DDL_TABLE.match(text)
        if match is None or (match.group(1) or default_db) is None:
            return []
        name = f"{match.group(1) or default_db}.{match.group(2)}"
        if _CREATE_OR_ALTER.match(text):
            return [name]
        self.tables.invalidate(name)
        return []


def ddl_between(spec: MySqlSourceSpec, start: Position, end: Position) -> bool:
    """Whether a statement that may change a table definition lies between two positions."""
    found: list[str] = []

    def on_query(text: str, _db: str | None, _ts: int, _position: Position) -> None:
        if not transaction_control(text):
            found.append(text)

    for _ in binlog_rows(spec, start, end, spec.server_id, set(), on_query):
        pass
    return bool(found)
