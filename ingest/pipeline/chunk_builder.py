"""Change events to Arrow "chunks": the unit of data between parsing and writing.

A chunk holds consecutive rows of one target table that share one record schema, in source
order, as an Arrow IPC payload with a ``_VALUE_KIND`` column. Spark moves chunks as single rows
(``CHUNK_SCHEMA``), so the JVM sees a few large binary values instead of millions of small rows,
and the driver can read all schemas of a micro-batch without touching the data.

This module is the one place where an event's ``Op`` becomes Paimon row kinds: an update is a
-U (before image) / +U (after image) pair, the truer changelog for downstream readers.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import pyarrow as pa

from formats.bulk import KindCodes
from formats.events import DataChangeEvent, Op, SourceSchema, TypeSystem
from schema_evolution.arrow_types import to_arrow
from schema_evolution.computed import ComputedColumn
from schema_evolution.conversion import ConversionNotes, ValueConversionError, convert_column
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.mysql_types import UnsupportedSourceType, mysql_to_paimon
from schema_evolution.type_mapping import TypeMappingMode
from schema_evolution.types import PaimonType, bigint, int_, parse_type, string, timestamp_ltz
from sinks.layout import RecordSchema
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, VALUE_KIND

# what canal-json's bulk path appends to a builder's ``kinds``
KIND_CODES = KindCodes(INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)

# Rows per chunk. A chunk's values are Python objects until it is converted to Arrow, and
# converting 8k rows at a time (their strings still in the CPU caches) instead of 32k read the
# bench's 1M messages with ~1 s less worker CPU, ~7% faster micro-batches and ~80 MiB less
# memory at the peak (3 alternating runs each, bench/README.md).
DEFAULT_CHUNK_ROWS = 8192
# ... and at most about this many values (rows x columns) a chunk: 8,192 rows of a 1,000-column table
# (~40 KB canal-json messages) were ~8M Python objects in a read task (bench/README.md, "Kafka, wide
# messages"). 2^18: 8,192 rows of up to 32 columns.
CHUNK_MAX_VALUES = 1 << 18


def chunk_limit(rows: int, columns: int) -> int:
    """Rows a chunk of ``columns`` columns takes before it is flushed: ``rows``, fewer for wide tables."""
    return max(1, min(rows, CHUNK_MAX_VALUES // max(1, columns)))


# Metadata columns (``--metadata-column``): Kafka's facts about the message and the message's own.
METADATA_TYPES: dict[str, PaimonType] = {
    "topic": string(),
    "partition": int_(),
    "offset": bigint(),
    "timestamp": timestamp_ltz(3),
    "timestamp_type": string(),
    "database_name": string(),
    "table_name": string(),
    "op_ts": timestamp_ltz(3),
}
TIMESTAMP_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}


@dataclass(frozen=True)
class MetadataSpec:
    """Which metadata columns to add, under which names (``prefix`` + name)."""

    columns: tuple[str, ...] = ()
    prefix: str = ""
    # Paimon's MySQL action declares its metadata columns NOT NULL (a binlog row always has them);
    # Kafka formats may lack a database or table name, so there they stay nullable.
    not_null: bool = False

    def fields(self) -> tuple[tuple[str, PaimonType], ...]:
        return tuple((self.prefix + c, METADATA_TYPES[c].with_nullable(not self.not_null)) for c in self.columns)


def record_schema(
    source: SourceSchema,
    source_table: str,
    modes: frozenset[TypeMappingMode],
    metadata: MetadataSpec | None = None,
    computed: Sequence[ComputedColumn] = (),
) -> RecordSchema:
    """Map a message's source schema to Paimon types (raises ``UnsupportedSourceType``). The keys are
    the source's own: ``--primary-keys`` is applied where tables are made (``sinks.table.prepare``), which
    falls back to these when a table lacks a given key (database sync, as Paimon)."""
    if not source.fields:  # ({} as a row, an empty mysqlType: no table has no column)
        raise ValueError("the message names no columns")
    fields: list[tuple[str, PaimonType]] = []
    for name, source_type in source.fields:
        if source_type is None or source.type_system is TypeSystem.STRING:
            fields.append((name, string()))
        elif source.type_system is TypeSystem.MYSQL:
            fields.append((name, mysql_to_paimon(source_type, modes)))
        elif TypeMappingMode.TO_STRING in modes:
            fields.append((name, string()))
        else:
            fields.append((name, parse_type(source_type)))
    types = dict(fields)
    for column in computed:
        input_type = None
        if column.source is not None:
            input_type = types.get(column.source)
            if input_type is not None and column.source in source.primary_keys:
                # A source key column is NOT NULL, and truncate() keeps its input's type as is.
                input_type = input_type.with_nullable(False)
            if input_type is None:
                raise UnsupportedSourceType(
                    f"computed column '{column.name}={column.expression}' reads column '{column.source}', "
                    f"which '{source_table}' does not have (columns: {', '.join(types)})"
                )
        try:
            types[column.name] = column.result_type(input_type)
        except ValueError as exc:
            raise UnsupportedSourceType(str(exc)) from None
        fields.append((column.name, types[column.name]))
    if metadata is not None:
        fields.extend(metadata.fields())
    names = {n for n, _ in fields}
    comments = tuple((n, c) for n, c in source.comments if n in names)
    return RecordSchema(tuple(fields), source.primary_keys, source_table, comments, source.table_comment)


@dataclass
class ChunkBuilder:
    """Accumulates one target table's rows of one source schema until flushed."""

    table: str
    source: SourceSchema
    schema: RecordSchema
    fmt: str
    topic: str
    partition: int
    rows: list[Any] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    events: int = 0
    metadata: MetadataSpec | None = None
    computed: Sequence[ComputedColumn] = ()
    # Kafka timestamp per row image (``now()`` of computed columns is fixed per message with it,
    # so a replayed micro-batch writes the same values)
    timestamps: list[int | None] = field(default_factory=list)
    # per row image, when metadata columns are asked for: (timestamp_ms, timestamp_type, event)
    meta_rows: list[tuple[int | None, int, DataChangeEvent]] = field(default_factory=list)
    # rows given as dicts (``add``); the others are tuples in source column order (canal-json's
    # bulk path appends those, ``formats.bulk.Lane``)
    dict_rows: int = 0
    limit: int = DEFAULT_CHUNK_ROWS  # rows before a flush (``chunk_limit``)

    def add(self, event: DataChangeEvent, offset: int, timestamp_ms: int | None = None, ts_type: int = 0) -> None:
        self.events += 1
        if self.computed:
            self.timestamps.append(timestamp_ms)
            if event.op is Op.UPDATE:
                self.timestamps.append(timestamp_ms)
        if self.metadata is not None:
            meta = (timestamp_ms, ts_type, event)
            self.meta_rows.append(meta)
            if event.op is Op.UPDATE:
                self.meta_rows.append(meta)
        op = event.op
        self.dict_rows += 1
        if op is Op.INSERT:
            self.rows.append(event.after)
            self.kinds.append(INSERT)
            self.offsets.append(offset)
        elif op is Op.UPDATE:
            self.rows.append(event.before)
            self.rows.append(event.after)
            self.dict_rows += 1
            self.kinds.append(UPDATE_BEFORE)
            self.kinds.append(UPDATE_AFTER)
            self.offsets.append(offset)
            self.offsets.append(offset)
        else:
            self.rows.append(event.before)
            self.kinds.append(DELETE)
            self.offsets.append(offset)

    def add_inserts(self, event: DataChangeEvent, rows: Sequence[tuple[Any, ...]], offset: int) -> None:
        """``add`` of an INSERT of each of ``rows`` (tuples in source column order, as the bulk path's)
        as if ``event`` carried it: the rows share its table, op_ts and metadata (a snapshot chunk)."""
        n = len(rows)
        self.events += n
        if self.computed:
            self.timestamps.extend([None] * n)
        if self.metadata is not None:
            self.meta_rows.extend([(None, 0, event)] * n)
        self.rows.extend(rows)
        self.kinds.extend([INSERT] * n)
        self.offsets.extend([offset] * n)

    def __len__(self) -> int:
        return len(self.kinds)

    def drop_offset(self, offset: int) -> bool:
        """Remove the rows of the message at ``offset`` (a dead letter); whether it had any. A
        chunk's offsets never decrease, so a message's rows are one slice."""
        offsets = self.offsets
        lo, hi = bisect_left(offsets, offset), bisect_right(offsets, offset)
        if lo == hi:
            return False
        self.dict_rows -= sum(1 for row in self.rows[lo:hi] if type(row) is not tuple)
        # a change is one row image, an update two (-U/+U): count the changes by their last image
        self.events -= sum(1 for kind in self.kinds[lo:hi] if kind != UPDATE_BEFORE)
        # in place: a bulk lane appends to these very lists
        del self.rows[lo:hi], self.kinds[lo:hi], offsets[lo:hi]
        if self.timestamps:
            del self.timestamps[lo:hi]
        if self.meta_rows:
            del self.meta_rows[lo:hi]
        return True

    def _computed_columns(self, arrays: list[pa.Array], names: list[str]) -> None:
        types = dict(self.schema.fields)
        now = pa.array([0 if t is None else t for t in self.timestamps], pa.int64())
        for column in self.computed:
            source = arrays[names.index(column.source)] if column.source is not None else None
            input_type = types.get(column.source) if column.source is not None else None
            try:
                arrays.append(column.evaluate(source, input_type, len(self.kinds), now))
            except ValueError as exc:
                where = (
                    f"topic '{self.topic}', partition {self.partition}, offsets {self.offsets[0]}..{self.offsets[-1]}"
                )
                raise MalformedMessage(self.fmt, None, f"{where}: table '{self.schema.source_table}': {exc}") from None
            names.append(column.name)

    def _metadata_column(self, column: str) -> pa.Array:
        typ = METADATA_TYPES[column]
        values = _metadata_values(self, column)
        if column in ("timestamp", "op_ts"):  # epoch milliseconds
            return pa.array(values, pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
        return pa.array(values, to_arrow(typ))

    def to_batch(self, notes: ConversionNotes) -> pa.RecordBatch:
        """The rows as typed Arrow columns plus ``_VALUE_KIND``, or ``MalformedMessage`` naming
        the offset of the first value that does not convert."""
        source_types = dict(self.source.fields)
        arrays: list[pa.Array] = []
        names: list[str] = []
        data_fields = self.schema.fields
        if self.metadata is not None and self.metadata.columns:
            data_fields = data_fields[: -len(self.metadata.columns)]
        if self.computed:
            data_fields = data_fields[: -len(self.computed)]
        columns = _columns(self.rows, [name for name, _ in data_fields], self.dict_rows)
        for (name, typ), values in zip(data_fields, columns, strict=True):
            try:
                arrays.append(convert_column(name, values, typ, source_types.get(name), notes))
            except ValueConversionError as exc:
                position = SourcePosition(self.topic, self.partition, self.offsets[exc.row])
                raise MalformedMessage(self.fmt, position, f"table '{self.schema.source_table}': {exc}") from None
            names.append(name)
        if self.computed:
            self._computed_columns(arrays, names)
        if self.metadata is not None:
            for column in self.metadata.columns:
                arrays.append(self._metadata_column(column))
                names.append(self.metadata.prefix + column)
        arrays.append(pa.array(self.kinds, pa.int8()))
        names.append(VALUE_KIND)
        return pa.RecordBatch.from_arrays(arrays, names=names)


def _metadata_values(builder: ChunkBuilder, column: str) -> list[Any]:
    n = len(builder.kinds)
    if column == "topic":
        return [builder.topic] * n
    if column == "partition":
        return [builder.partition] * n
    if column == "offset":
        return list(builder.offsets)
    if column == "timestamp":
        return [ts for ts, _, _ in builder.meta_rows]
    if column == "timestamp_type":
        return [TIMESTAMP_TYPES.get(t, str(t)) for _, t, _ in builder.meta_rows]
    if column == "database_name":
        return [e.database for _, _, e in builder.meta_rows]
    if column == "table_name":
        return [e.table for _, _, e in builder.meta_rows]
    if column == "op_ts":
        return [e.op_ts_ms for _, _, e in builder.meta_rows]
    raise ValueError(f"unknown metadata column '{column}'")


def _columns(rows: list[Any], names: list[str], dict_rows: int) -> list[Sequence[Any]]:
    """Rows to columns. Tuples (the bulk path's rows) are in column order already; dicts (events'
    images) nearly always have every column, so take them all at once with a C-level getter and
    transpose, falling back to ``get`` when one lacks a key."""
    if not rows:
        return [[] for _ in names]
    if dict_rows:
        if len(names) == 1:
            name = names[0]
            return [[row[0] if type(row) is tuple else row.get(name) for row in rows]]
        get = itemgetter(*names)
        try:
            if dict_rows == len(rows):
                rows = list(map(get, rows))
            else:
                rows = [row if type(row) is tuple else get(row) for row in rows]
        except KeyError:
            rows = [row if type(row) is tuple else tuple(row.get(n) for n in names) for row in rows]
    return list(zip(*rows, strict=True))
