"""Data files as compaction reads and writes them: rows of the table's current schema (columns
matched by field id, so renames hold), and Parquet files with the metadata (``DataFileMeta``) and
statistics Java's writer would give them."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schema_evolution.arrow_types import to_arrow
from schema_evolution.types import parse_type
from sinks.row_kinds import RETRACT_KINDS
from sinks.store.files import FILE_SOURCE_COMPACT, KIND, SEQUENCE, bucket_directory, data_file_path

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataField, DataFileMeta, FileStoreTable, SimpleStats


@dataclass(frozen=True, slots=True)
class KeyedSchema:
    """The current schema of a table as compaction reads and writes it."""

    schema_id: int
    field_ids: tuple[int, ...]
    names: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    keys: tuple[str, ...]  # trimmed primary keys (partition keys left out), in key order
    sequence_fields: tuple[str, ...]
    # sequence.field.sort-order=descending: the lowest sequence.field value wins
    sequence_descending: bool = False
    # an append table (no primary key): its files hold the columns only, no sequence or row kind
    append: bool = False

    @property
    def arrow(self) -> pa.Schema:
        fields = [] if self.append else [pa.field(SEQUENCE, pa.int64(), nullable=False),
                                         pa.field(KIND, pa.int8(), nullable=False)]  # fmt: skip
        for fid, name, typ in zip(self.field_ids, self.names, self.types, strict=True):
            fields.append(pa.field(name, typ, nullable=name not in self.keys, metadata={"PARQUET:field_id": str(fid)}))
        return pa.schema(fields)


def keyed_schema(table: FileStoreTable) -> KeyedSchema:
    schema = table.table_schema
    return KeyedSchema(
        schema_id=int(schema.id),
        field_ids=tuple(int(f.id) for f in schema.fields),
        names=tuple(f.name for f in schema.fields),
        types=tuple(to_arrow(parse_type(str(f.type))) for f in schema.fields),
        keys=tuple(table.trimmed_primary_keys),
        sequence_fields=tuple(table.options.sequence_field() or ()),
        sequence_descending=str(table.options.options.to_map().get("sequence.field.sort-order", "ascending"))
        .strip()
        .lower()
        == "descending",
        append=not table.is_primary_key_table,
    )


def read_data_file(
    table: FileStoreTable, partition: tuple[Any, ...], bucket: int, meta: DataFileMeta, schema: KeyedSchema
) -> pa.Table:
    """One data file as rows of the current schema: columns matched by field id (so renames hold),
    widened to the current types, columns added since the file was written as NULL."""
    with table.file_io.new_input_stream(_parquet_path(table, partition, bucket, meta)) as stream:
        return _conform(pq.read_table(stream), _names_by_id(table, meta, schema), schema)


def iter_data_file(
    table: FileStoreTable,
    partition: tuple[Any, ...],
    bucket: int,
    meta: DataFileMeta,
    schema: KeyedSchema,
    batch_rows: int = 65536,
) -> Iterator[pa.Table]:
    """``read_data_file`` in batches of rows, so a large file is never held whole."""
    by_id = _names_by_id(table, meta, schema)
    with table.file_io.new_input_stream(_parquet_path(table, partition, bucket, meta)) as stream:
        for batch in pq.ParquetFile(stream).iter_batches(batch_size=batch_rows):
            yield _conform(pa.Table.from_batches([batch]), by_id, schema)


def _parquet_path(table: FileStoreTable, partition: tuple[Any, ...], bucket: int, meta: DataFileMeta) -> str:
    path = data_file_path(table, partition, bucket, meta)
    if not path.endswith(".parquet"):
        raise ValueError(
            f"cannot compact {path}: lakecdc compacts Parquet data files only; "
            f"set file.format=parquet (the default) or write-only=true"
        )
    return path


def _names_by_id(table: FileStoreTable, meta: DataFileMeta, schema: KeyedSchema) -> dict[int, str]:
    """Field id -> column name in the schema ``meta`` was written with."""
    if int(meta.schema_id) == schema.schema_id:
        return dict(zip(schema.field_ids, schema.names, strict=True))
    old = table.schema_manager.get_schema(int(meta.schema_id))
    return {int(f.id): f.name for f in old.fields}


def _conform(raw: pa.Table, by_id: Mapping[int, str], schema: KeyedSchema) -> pa.Table:
    columns = [] if schema.append else [raw.column(SEQUENCE).cast(pa.int64()), raw.column(KIND).cast(pa.int8())]
    for fid, typ in zip(schema.field_ids, schema.types, strict=True):
        name = by_id.get(fid)
        if name is not None and name in raw.column_names:
            col = raw.column(name)
            columns.append(col if col.type == typ else pc.cast(col, typ))
        else:
            columns.append(pa.nulls(raw.num_rows, typ))
    return pa.Table.from_arrays(columns, schema=schema.arrow)


ColumnStats = tuple[Any, Any, int]  # min, max, null count


def _column_stats(data: pa.Table, names: Sequence[str]) -> list[ColumnStats]:
    from pypaimon.write.writer.data_writer import DataWriter

    stats = [DataWriter._get_column_stats(data, n) for n in names]
    return [(s["min_values"], s["max_values"], s["null_counts"]) for s in stats]


def _merged_stats(a: list[ColumnStats] | None, b: list[ColumnStats]) -> list[ColumnStats]:
    """Stats of two chunks of one file, from each chunk's (a None bound: no value to compare)."""
    if a is None:
        return b

    def pick(x: Any, y: Any, f: Any) -> Any:
        return y if x is None else x if y is None else f(x, y)

    return [(pick(a1, b1, min), pick(a2, b2, max), a3 + b3) for (a1, a2, a3), (b1, b2, b3) in zip(a, b, strict=True)]


def _simple_stats(stats: Sequence[ColumnStats], fields: Sequence[DataField]) -> SimpleStats:
    from pypaimon.manifest.schema.simple_stats import SimpleStats
    from pypaimon.table.row.generic_row import GenericRow

    if not fields:
        return SimpleStats.empty_stats()
    return SimpleStats(
        GenericRow([s[0] for s in stats], list(fields)),
        GenericRow([s[1] for s in stats], list(fields)),
        [s[2] for s in stats],
    )


def _stats(data: pa.Table, fields: Sequence[DataField]) -> SimpleStats:
    return _simple_stats(_column_stats(data, [f.name for f in fields]) if fields else [], fields)


def write_data_file(
    table: FileStoreTable,
    partition: tuple[Any, ...],
    bucket: int,
    data: pa.Table,
    level: int,
    schema: KeyedSchema,
    prefix: str | None = None,
) -> DataFileMeta:
    """Write rows (sorted by key, original sequence numbers; unique per key unless a changelog) as
    one data file of ``level`` and return its DataFileMeta: exact delete_row_count, file source
    COMPACT. ``prefix="changelog-"`` makes a changelog file (same format, as Paimon's)."""
    from pypaimon.data.timestamp import Timestamp
    from pypaimon.manifest.schema.data_file_meta import DataFileMeta
    from pypaimon.table.row.generic_row import GenericRow

    options = table.options
    name = f"{prefix or options.data_file_prefix() or 'data-'}{uuid.uuid4()}-0.parquet"
    directory = bucket_directory(table, partition, bucket)
    path = f"{directory}/{name}"
    table.file_io.check_or_mkdirs(directory)
    compression = options.file_compression() or "zstd"
    with table.file_io.new_output_stream(path) as out:
        pq.write_table(data, out, compression=compression)
    key_fields = list(table.trimmed_primary_keys_fields)
    keys = data.select(list(schema.keys))
    first = [c[0].as_py() for c in keys.columns]
    last = [c[-1].as_py() for c in keys.columns]
    values = data.select(list(schema.names))
    kinds = data.column(KIND)
    retractions = int(pc.sum(pc.is_in(kinds, pa.array(RETRACT_KINDS, pa.int8()))).as_py() or 0)
    sequences = data.column(SEQUENCE)
    return DataFileMeta.create(
        file_name=name,
        file_size=table.file_io.get_file_size(path),
        row_count=data.num_rows,
        min_key=GenericRow(first, key_fields),
        max_key=GenericRow(last, key_fields),
        key_stats=_stats(keys, key_fields),
        value_stats=_stats(values, list(table.table_schema.fields)),
        min_sequence_number=int(pc.min(sequences).as_py()),
        max_sequence_number=int(pc.max(sequences).as_py()),
        schema_id=schema.schema_id,
        level=level,
        extra_files=[],
        creation_time=Timestamp.now(),
        delete_row_count=retractions,
        file_source=FILE_SOURCE_COMPACT,
        value_stats_cols=None,
        external_path=None,
        first_row_id=None,
        write_cols=None,
    )


def write_append_files(
    table: FileStoreTable,
    partition: tuple[Any, ...],
    bucket: int,
    chunks: Iterable[pa.Table],
    schema: KeyedSchema,
    first_sequence: int,
    target_size: int,
) -> list[DataFileMeta]:
    """An append table's compaction output: the chunks' rows in order, rolled over to a new file
    once a file reaches ``target_size`` on disk, sequence numbers counted on from
    ``first_sequence`` (Paimon's rewriter). Streams: one chunk in memory at a time. Returns the
    files' DataFileMeta (file source COMPACT); deletes what it wrote if anything fails."""
    return _write_rolling(_RollingFiles(table, partition, bucket, schema, 0, first_sequence), chunks, target_size)


def write_keyed_files(
    table: FileStoreTable,
    partition: tuple[Any, ...],
    bucket: int,
    chunks: Iterable[pa.Table],
    level: int,
    schema: KeyedSchema,
    target_size: int,
) -> list[DataFileMeta]:
    """A primary-key bucket's compaction output as ``write_data_file`` writes it (rows keep their
    sequence numbers; key bounds and stats of each file), from chunks in key order, rolled over
    to a new file once a file reaches ``target_size`` on disk. Streams: one chunk in memory at a
    time. Deletes what it wrote if anything fails."""
    return _write_rolling(_RollingFiles(table, partition, bucket, schema, level), chunks, target_size)


def _write_rolling(files: _RollingFiles, chunks: Iterable[pa.Table], target_size: int) -> list[DataFileMeta]:
    try:
        for chunk in chunks:
            if chunk.num_rows == 0:
                continue
            files.write(chunk)
            if files.size() >= target_size:
                files.close()
        files.close()
    except BaseException:
        files.abort()
        raise
    return files.metas


class _RollingFiles:
    """The files a streaming compaction writes, one open at a time: an append table's (sequence
    numbers counted on from ``first_sequence``) or, with ``first_sequence`` None, a primary-key
    bucket's (rows carry their sequence numbers and row kinds; files have key bounds)."""

    def __init__(
        self,
        table: FileStoreTable,
        partition: tuple[Any, ...],
        bucket: int,
        schema: KeyedSchema,
        level: int,
        first_sequence: int | None = None,
    ) -> None:
        self.table = table
        self.directory = bucket_directory(table, partition, bucket)
        table.file_io.check_or_mkdirs(self.directory)
        self.schema = schema
        self.level = level
        self.compression = table.options.file_compression() or "zstd"
        self.fields = list(table.table_schema.fields)
        self.key_fields = [] if schema.append else list(table.trimmed_primary_keys_fields)
        self.metas: list[DataFileMeta] = []
        self.written: list[str] = []
        self.sequence = first_sequence
        self.out: Any = None
        self.writer: pq.ParquetWriter | None = None
        self.name = ""
        self.rows = 0
        self.stats: list[ColumnStats] | None = None
        self.key_stats: list[ColumnStats] | None = None
        self.first_key: list[Any] = []
        self.last_key: list[Any] = []
        self.retractions = 0
        self.sequences: tuple[int, int] | None = None

    def write(self, chunk: pa.Table) -> None:
        if chunk.schema != self.schema.arrow:
            chunk = chunk.cast(self.schema.arrow)  # (a merge can drop not-null flags; the rows are the same)
        if self.writer is None:
            self.name = f"{self.table.options.data_file_prefix() or 'data-'}{uuid.uuid4()}-0.parquet"
            self.written.append(f"{self.directory}/{self.name}")
            self.out = self.table.file_io.new_output_stream(self.written[-1])
            self.writer = pq.ParquetWriter(self.out, self.schema.arrow, compression=self.compression)
            self.rows, self.stats, self.key_stats, self.retractions, self.sequences = 0, None, None, 0, None
        self.writer.write_table(chunk)
        self.rows += chunk.num_rows
        self.stats = _merged_stats(self.stats, _column_stats(chunk, self.schema.names))
        if self.key_fields:
            keys = [f.name for f in self.key_fields]
            if self.key_stats is None:
                self.first_key = [chunk.column(k)[0].as_py() for k in keys]
            self.last_key = [chunk.column(k)[-1].as_py() for k in keys]
            self.key_stats = _merged_stats(self.key_stats, _column_stats(chunk, keys))
            kinds = chunk.column(KIND)
            self.retractions += int(pc.sum(pc.is_in(kinds, pa.array(RETRACT_KINDS, pa.int8()))).as_py() or 0)
            low, high = pc.min_max(chunk.column(SEQUENCE)).values()
            seen = (int(low.as_py()), int(high.as_py()))
            self.sequences = (
                seen if self.sequences is None else (min(self.sequences[0], seen[0]), max(self.sequences[1], seen[1]))
            )

    def size(self) -> int:
        """Bytes written to the open file."""
        return int(self.out.tell())

    def close(self) -> None:
        """Close the open file (if any) and record its DataFileMeta."""
        from pypaimon.data.timestamp import Timestamp
        from pypaimon.manifest.schema.data_file_meta import DataFileMeta
        from pypaimon.table.row.generic_row import GenericRow

        if self.writer is None:
            return
        assert self.out is not None and self.stats is not None
        self.writer.close()
        self.out.close()
        self.writer = self.out = None
        if self.sequence is not None:  # an append table: sequence numbers counted on
            sequences = (self.sequence, self.sequence + self.rows - 1)
            self.sequence += self.rows
        else:
            assert self.sequences is not None
            sequences = self.sequences
        self.metas.append(
            DataFileMeta.create(
                file_name=self.name,
                file_size=self.table.file_io.get_file_size(f"{self.directory}/{self.name}"),
                row_count=self.rows,
                min_key=GenericRow(self.first_key, self.key_fields),
                max_key=GenericRow(self.last_key, self.key_fields),
                key_stats=_simple_stats(self.key_stats or [], self.key_fields),
                value_stats=_simple_stats(self.stats, self.fields),
                min_sequence_number=sequences[0],
                max_sequence_number=sequences[1],
                schema_id=self.schema.schema_id,
                level=self.level,
                extra_files=[],
                creation_time=Timestamp.now(),
                delete_row_count=self.retractions,
                file_source=FILE_SOURCE_COMPACT,
                value_stats_cols=None,
                external_path=None,
                first_row_id=None,
                write_cols=None,
            )
        )

    def abort(self) -> None:
        """Close the open file and delete every file written."""
        if self.writer is not None:
            self.writer.close()
            self.out.close()
        for path in self.written:
            self.table.file_io.delete_quietly(path)
