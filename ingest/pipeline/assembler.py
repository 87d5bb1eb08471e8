"""Kafka messages to chunk rows: parse, route, type-map, and cut into chunks (executor side).

Runs inside the Kafka source's ``read()``, so messages are parsed where they are fetched and
only chunks (a few large binary values) cross into the JVM.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import structlog

from formats import FORMATS, Parser
from formats.bulk import BulkDecoder, Lane, PlainRows
from formats.events import DataChangeEvent, MessageContext, SchemaChangeEvent, SourceSchema
from ingest.pipeline.chunk_builder import KIND_CODES, ChunkBuilder, MetadataSpec, chunk_limit, record_schema
from ingest.pipeline.dead_letters import (
    DEAD_LETTER_SCHEMA_JSON,
    SKIPPED_BY_OPERATOR,
    DeadLetter,
    dead_letter_batch,
    message_errors,
    rows_json,
)
from ingest.pipeline.parse_spec import ParseSpec
from schema_evolution.computed import ComputedColumn
from schema_evolution.computed_specs import parse_computed_columns, resolve_case_insensitively
from schema_evolution.conversion import ConversionNotes
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.identifiers import UnsafeNameError
from schema_evolution.mysql_types import UnsupportedSourceType
from schema_evolution.payloads import enable_previews
from schema_evolution.type_mapping import parse_type_mapping
from sinks.layout import RecordSchema
from sinks.write.chunk_format import CHUNK_SCHEMA, VALUE_KIND, serialize_batch

log = structlog.get_logger(__name__)


@dataclass
class ChunkAssembler:
    """Assembles the messages of one Kafka partition range into chunk rows, in offset order."""

    spec: ParseSpec
    topic: str
    partition: int
    notes: ConversionNotes = field(default_factory=ConversionNotes)
    # the parser, where the source built it (debezium-avro's, around a schema registry client)
    parser: Parser | None = None

    def __post_init__(self) -> None:
        enable_previews(self.spec.log_payloads)  # this worker's error texts, as the job asks
        # No entry: a source that parses its rows itself (the MySQL binlog) and calls add_events only.
        entry = FORMATS.get(self.spec.format.lower())
        self._parse: Parser | None = self.parser or (entry.parse if entry is not None else None)
        self._modes = parse_type_mapping(self.spec.type_mapping)
        self._builders: dict[str, ChunkBuilder] = {}
        self._route = self.spec.router.route
        self._database_sync = self.spec.router.table is None
        self._chunk_rows = self.spec.chunk_rows
        self._computed = parse_computed_columns(self.spec.computed_columns)
        self._metadata = (
            MetadataSpec(self.spec.metadata_columns, self.spec.metadata_prefix, self.spec.metadata_not_null)
            if self.spec.metadata_columns
            else None
        )
        # Bulk rows carry no metadata and no computed columns.
        self._bulk: BulkDecoder | None = (
            entry.bulk_decoder()
            if entry is not None
            and entry.bulk_decoder is not None
            and self.spec.bulk_path
            and not self._computed
            and self._metadata is None
            else None
        )
        # The bulk path's lane into the chunk its last message went to (``formats.bulk.Lane``),
        # while that chunk is open.
        self._lane: Lane | None = None
        self._lane_builder: ChunkBuilder | None = None
        self._ready: list[dict[str, Any]] = []
        self._seq = 0
        # per (source schema, source table): the chunk schema as built, with the computed columns
        # it was built with, and as the driver sees it (lower-case names in a case-insensitive catalog)
        self._record_schemas: dict[
            tuple[SourceSchema, str], tuple[RecordSchema, list[ComputedColumn], RecordSchema]
        ] = {}
        self._targets: dict[int, RecordSchema] = {}
        # Tolerant mode only (``add_tolerant``): the raw key and value of the messages whose rows are
        # in open chunks, by offset in offset order (a value that fails to convert is found when its
        # chunk is flushed, and its dead letter carries its bytes); the dead letters not yet handed
        # out, and the offsets dead-lettered so far.
        self._tolerant = self.spec.dead_letter_table is not None
        # (a source that parses itself, MySQL, keeps its row changes here instead: ``add_events_tolerant``)
        self._raw: OrderedDict[int, tuple[bytes | None, bytes | list[Any] | None]] = OrderedDict()
        self._letters: list[DeadLetter] = []
        self._lettered: set[int] = set()
        # The (topic, partition, offset) a dead letter names for an offset of this assembler, where
        # that is not (self.topic, self.partition, offset): a MySQL binlog file and position.
        self.position_of: Callable[[int], tuple[str, int, int]] | None = None

    def add(
        self, value: bytes | None, key: bytes | None, offset: int, timestamp_ms: int | None, ts_type: int = 0
    ) -> None:
        lane = self._lane
        if lane is not None and value is not None:
            taken = lane.take(value, offset)
            if taken:
                builder = self._lane_builder
                assert builder is not None
                builder.events += taken
                if len(builder.kinds) >= builder.limit:
                    self._flush(builder.table)
                return
        bulk = self._bulk
        if bulk is not None and value is not None:
            plain = bulk.decode(value)
            if plain is not None and (plain.table is not None or not self._database_sync):
                self._add_plain(plain, offset)
                return
        position = SourcePosition(self.topic, self.partition, offset)
        parse = self._parse
        if parse is None:
            known = ", ".join(sorted(FORMATS))
            raise ValueError(f"'{self.spec.format}' is not a message format (known formats: {known})")
        events = parse(value, key, MessageContext(position, timestamp_ms))
        self.add_events(events, position, timestamp_ms, ts_type)
        if bulk is not None:
            for event in events:
                if type(event) is DataChangeEvent:
                    # the table's next messages can take the bulk path
                    bulk.learn(event.schema)
                    break

    def add_tolerant(
        self, value: bytes | None, key: bytes | None, offset: int, timestamp_ms: int | None, ts_type: int = 0
    ) -> None:
        """``add`` for ``--errors-tolerance all``: a message that cannot be parsed or routed becomes a
        dead letter (one whose values do not convert does when its chunk is flushed), and the
        others go on."""
        raw = self._raw
        raw[offset] = (key, value)
        try:
            self.add(value, key, offset, timestamp_ms, ts_type)
        except message_errors() as exc:
            if getattr(exc, "chunk_wide", False):
                raise  # about a whole chunk, not this message (_to_batch_tolerant)
            raw.pop(offset, None)
            self._drop_open(offset)
            self.dead_letter(offset, key, value, exc)
            return
        if offset in self._lettered:
            # a flush in the middle of the message dead-lettered it: none of its rows stay
            self._drop_open(offset)

    def add_events_tolerant(
        self,
        events: list[DataChangeEvent],
        position: SourcePosition,
        timestamp_ms: int | None,
        row: Any,
    ) -> None:
        """``add_events`` for ``--errors-tolerance all`` (sources that parse themselves): ``row`` is
        the source's row change, kept as the dead letter's value (JSON) while its rows are in an open
        chunk; row changes at one position (a binlog row event) are one dead letter."""
        offset = position.offset
        entry = self._raw.get(offset)
        if entry is None or not isinstance(entry[1], list):
            self._raw[offset] = (None, [row])
        else:
            entry[1].append(row)
        try:
            self.add_events(events, position, timestamp_ms)
        except message_errors() as exc:
            if getattr(exc, "chunk_wide", False):
                raise
            self._drop_open(offset)
            _, rows = self._raw.pop(offset, (None, None))
            value = rows_json(rows) if isinstance(rows, list) else rows
            table = f"{events[0].database}.{events[0].table}" if events else None
            self.dead_letter(offset, None, value, exc, table)
            return
        if offset in self._lettered:
            self._drop_open(offset)

    def skip(self, value: bytes | None, key: bytes | None, offset: int) -> None:
        """A message the operator skipped (``--skip-offsets``): a dead letter in tolerant mode, else
        only logged (by the caller)."""
        if self._tolerant:
            self.dead_letter(offset, key, value, SKIPPED_BY_OPERATOR)

    def dead_letter(
        self,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        error: BaseException | str,
        source_table: str | None = None,
        position: tuple[str, int, int] | None = None,
    ) -> None:
        """Record the message at ``offset`` as a dead letter (once); ``position`` is the
        (topic, partition, offset) the dead-letter row names, where it is not this partition's."""
        if offset in self._lettered:
            return
        self._lettered.add(offset)
        if position is None and self.position_of is not None:
            position = self.position_of(offset)
        topic, partition, at = position if position is not None else (self.topic, self.partition, offset)
        self._letters.append(DeadLetter.of(topic, partition, at, self.spec.format, error, key, value, source_table))

    def _drop_open(self, offset: int) -> None:
        """Remove a dead-lettered message's rows from the open chunks."""
        for builder in self._builders.values():
            if builder.offsets and builder.offsets[-1] >= offset:
                builder.drop_offset(offset)

    def _add_plain(self, plain: PlainRows, offset: int) -> None:
        """``add_events`` for the rows of a message the bulk decoder took (same chunks)."""
        if not plain.after:
            return
        try:
            target = self._route(plain.database, plain.table)
        except UnsafeNameError as exc:  # (routing knows no position)
            raise exc.at(SourcePosition(self.topic, self.partition, offset), self.spec.format) from None
        if target is None:
            return
        builder = self._builders.get(target)
        if builder is None or (builder.source is not plain.source and builder.source != plain.source):
            if builder is not None:
                self._flush(target)
            position = SourcePosition(self.topic, self.partition, offset)
            builder = self._open(target, plain.source, plain.database, plain.table, position)
        assert self._bulk is not None
        lane = self._bulk.lane(plain, builder.rows, builder.kinds, builder.offsets, KIND_CODES)
        builder.events += lane.add(plain.op, plain.after, plain.before, offset)
        self._lane, self._lane_builder = lane, builder
        if len(builder.kinds) >= builder.limit:
            self._flush(target)

    def add_events(
        self,
        events: Iterable[DataChangeEvent | SchemaChangeEvent],
        position: SourcePosition,
        timestamp_ms: int | None = None,
        ts_type: int = 0,
    ) -> None:
        """Route parsed events into their tables' open chunks (sources that parse themselves, such
        as the MySQL binlog, call this directly)."""
        offset = position.offset
        route = self._route
        builders = self._builders
        for event in events:
            if event.table is None and self._database_sync:
                raise MalformedMessage(
                    self.spec.format,
                    position,
                    "the message names no source table, so kafka-sync-database cannot route it "
                    "(use kafka-sync-table to sync such a topic into one table; Paimon: Cannot synchronize record "
                    f"when database name or table name is unknown. Invalid record is: the message at {position})",
                )
            try:
                target = route(event.database, event.table)
            except UnsafeNameError as exc:  # (routing knows no position)
                raise exc.at(position, self.spec.format) from None
            if target is None:
                continue
            if type(event) is not DataChangeEvent:
                assert isinstance(event, SchemaChangeEvent)
                self._ddl(target, event.ddl, offset)
                continue
            builder = builders.get(target)
            if builder is None or (builder.source is not event.schema and builder.source != event.schema):
                builder = self._reopen(target, event, position)
            builder.add(event, offset, timestamp_ms, ts_type)
            if len(builder.kinds) >= builder.limit:
                self._flush(target)

    def add_inserts(self, event: DataChangeEvent, rows: list[Any], position: SourcePosition) -> None:
        """``add_events`` of an INSERT of each of ``rows`` (tuples in ``event.schema``'s column order)
        into ``event``'s table, with no event object per row: a snapshot chunk read as text."""
        target = self._route(event.database, event.table)
        done = 0
        while target is not None and done < len(rows):
            builder = self._builders.get(target)
            if builder is None or (builder.source is not event.schema and builder.source != event.schema):
                builder = self._reopen(target, event, position)
            room = builder.limit - len(builder.kinds)
            builder.add_inserts(event, rows[done : done + room], position.offset)
            done += room
            if len(builder.kinds) >= builder.limit:
                self._flush(target)

    def _reopen(self, target: str, event: DataChangeEvent, position: SourcePosition) -> ChunkBuilder:
        """A new chunk of ``target`` for ``event``'s source schema, the open one flushed first."""
        if target in self._builders:
            self._flush(target)
        return self._open(target, event.schema, event.database, event.table, position)

    def declare(self, event: DataChangeEvent, position: SourcePosition) -> None:
        """A chunk row that carries only a table's record schema (no rows), so the driver creates
        or evolves the table even when the source table has no rows yet."""
        target = self._route(event.database, event.table)
        if target is None:
            return
        builder = self._reopen(target, event, position)
        del self._builders[target]
        schema = self._target_schema(builder)
        self._ready.append(self._row(target, position.offset, position.offset, schema.to_json(), 0, None, None, 0))

    def mark(self, note: str) -> None:
        """A progress note for the driver to keep with this micro-batch's commit (no rows)."""
        for target in list(self._builders):
            self._flush(target)
        row = self._row("", 0, 0, None, 0, None, None, 0)
        row["mark"] = note
        self._ready.append(row)

    def take(self) -> pa.RecordBatch | None:
        """Chunk rows completed so far, as one Arrow batch (None when there are none)."""
        if self._letters:
            self._hand_out_letters()
        if not self._ready:
            return None
        rows, self._ready = self._ready, []
        return pa.RecordBatch.from_pylist(rows, schema=CHUNK_SCHEMA)

    def finish(self) -> pa.RecordBatch | None:
        for target in list(self._builders):
            self._flush(target)
        return self.take()

    def _hand_out_letters(self) -> None:
        """The pending dead letters as one chunk row of the dead-letter table."""
        letters, self._letters = self._letters, []
        table = self.spec.dead_letter_table
        assert table is not None
        batch = dead_letter_batch(letters)
        offsets = [d.offset for d in letters]
        self._ready.append(
            self._row(
                table,
                min(offsets),
                max(offsets),
                DEAD_LETTER_SCHEMA_JSON,
                len(letters),
                serialize_batch(batch),
                None,
                0,  # dead letters are no synced change events; the driver counts them apart
            )
        )

    def _open(
        self,
        target: str,
        source: SourceSchema,
        database: str | None,
        table: str | None,
        position: SourcePosition | None,
    ) -> ChunkBuilder:
        source_table = f"{database}.{table}"
        if target == self.spec.dead_letter_table:
            raise MalformedMessage(
                self.spec.format,
                position,
                f"table '{source_table}' is routed into the dead-letter table '{target}', which only dead "
                "letters go to (choose another --dead-letter-table, or exclude the table)",
            )
        key = (source, source_table)
        known = self._record_schemas.get(key)
        if known is None:
            computed = self._computed
            if not self.spec.case_sensitive and computed:
                computed = resolve_case_insensitively(computed, [name for name, _ in source.fields])
            try:
                schema = record_schema(source, source_table, self._modes, self._metadata, computed)
                target_schema = schema if self.spec.case_sensitive else schema.lowercased(target)
            except (UnsupportedSourceType, ValueError) as exc:
                raise MalformedMessage(self.spec.format, position, f"table '{source_table}': {exc}") from None
            known = self._record_schemas[key] = (schema, computed, target_schema)
        schema, computed, target_schema = known
        self._targets[id(schema)] = target_schema
        builder = ChunkBuilder(
            target,
            source,
            schema,
            self.spec.format,
            self.topic,
            self.partition,
            metadata=self._metadata,
            computed=computed,
            limit=chunk_limit(self._chunk_rows, len(schema.fields)),
        )
        self._builders[target] = builder
        return builder

    def _target_schema(self, builder: ChunkBuilder) -> RecordSchema:
        """The schema the driver gets for a builder's chunks (lower-case names where the catalog is
        case-insensitive; the builder keeps the source's names to read its rows by)."""
        return self._targets.get(id(builder.schema), builder.schema)

    def _flush(self, target: str) -> None:
        builder = self._builders.pop(target)
        if builder is self._lane_builder:
            self._lane = self._lane_builder = None
        if self._tolerant:
            tolerated = self._to_batch_tolerant(builder)
            if tolerated is None:
                return
            batch = tolerated
        elif not len(builder):
            return
        else:
            batch = builder.to_batch(self.notes)
        schema = self._target_schema(builder)
        if schema is not builder.schema:
            batch = batch.rename_columns([*(n for n, _ in schema.fields), VALUE_KIND])
        self._ready.append(
            self._row(
                target,
                builder.offsets[0],
                builder.offsets[-1],
                schema.to_json(),
                batch.num_rows,
                serialize_batch(batch),
                None,
                builder.events,
            )
        )

    def _to_batch_tolerant(self, builder: ChunkBuilder) -> pa.RecordBatch | None:
        """``to_batch`` where each message whose values do not convert becomes a dead letter and
        leaves the chunk; the rest of the chunk is converted again (None when no row is left)."""
        offsets = builder.offsets
        while True:
            if offsets and offsets[-1] in self._lettered:
                builder.drop_offset(offsets[-1])  # the message being added was dead-lettered meanwhile
            if not len(builder):
                batch = None
                break
            try:
                batch = builder.to_batch(self.notes)
                break
            except MalformedMessage as exc:
                at = exc.position
                if at is None or not builder.drop_offset(at.offset):
                    # not one message's (a computed column over the chunk): stop as without tolerance
                    exc.chunk_wide = True  # type: ignore[attr-defined]
                    raise
                key, raw = self._raw.get(at.offset, (None, None))
                value = rows_json(raw) if isinstance(raw, list) else raw
                self.dead_letter(at.offset, key, value, exc, builder.schema.source_table)
        self._forget_raw()
        return batch

    def _forget_raw(self) -> None:
        """Drop the raw bytes of messages older than every open chunk's first row."""
        raw = self._raw
        low = min((b.offsets[0] for b in self._builders.values() if b.offsets), default=None)
        while raw:
            first = next(iter(raw))
            if low is not None and first >= low:
                break
            raw.popitem(last=False)

    def _ddl(self, target: str, ddl: str, offset: int) -> None:
        # A DDL statement closes the table's open chunk, so rows before and after it never share one.
        if target in self._builders:
            self._flush(target)
        self._ready.append(self._row(target, offset, offset, None, 0, None, ddl, 0))

    def _row(
        self,
        table: str,
        first: int,
        last: int,
        schema: str | None,
        rows: int,
        data: bytes | None,
        ddl: str | None,
        events: int,
    ) -> dict[str, Any]:
        self._seq += 1
        return {
            "table": table,
            "topic": self.topic,
            "kafka_partition": self.partition,
            "first_offset": first,
            "last_offset": last,
            "seq": self._seq,
            "schema": schema,
            "rows": rows,
            "events": events,
            "data": data,
            "ddl": ddl,
        }
