"""The one module that touches pypaimon's private file-store internals (pinned: pypaimon 2.1.0).

Neither pypaimon nor pypaimon-rust offers compaction or snapshot expiry, so lakecdc builds them on
pypaimon's manifest readers/writers, its commit machinery (COMPACT snapshots with conflict
detection) and its snapshot/tag managers. Everything private is reached from here only, so a
pypaimon upgrade is checked in one place; ``tests/sinks/test_compaction.py`` and
``tests/sinks/test_expire.py`` read every result back through both pypaimon and pypaimon-rust.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import structlog
from pyroaring import BitMap

from schema_evolution.arrow_types import to_arrow
from schema_evolution.types import parse_type
from sinks.compaction import deletion_vectors
from sinks.compaction.lsm import LsmFile

log = structlog.get_logger(__name__)

SEQUENCE = "_SEQUENCE_NUMBER"
KIND = "_VALUE_KIND"
# DataFileMeta.file_source: 0 = written from input (APPEND), 1 = produced by a compaction.
FILE_SOURCE_COMPACT = 1
# Retractions (-U, -D) in _VALUE_KIND, counted into a file's delete_row_count.
RETRACT_KINDS = (1, 3)

BucketKey = tuple[tuple[Any, ...], int]


def open_table(warehouse: str, catalog_options: Mapping[str, str], identifier: str) -> Any:
    """pypaimon's FileStoreTable (the catalog object, not pypaimon-rust's)."""
    from pypaimon import CatalogFactory

    return CatalogFactory.create({**catalog_options, "warehouse": warehouse}).get_table(identifier)


def latest_snapshot(table: Any) -> Any | None:
    return table.snapshot_manager().get_latest_snapshot()


def manifest_entries(table: Any, manifests: Sequence[Any]) -> list[Any]:
    """Live ADD entries of a manifest list (ADD/DELETE pairs cancelled), stats kept."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    if not manifests:
        return []
    return list(ManifestFileManager(table).read_entries_parallel(list(manifests), drop_stats=False))


def snapshot_manifests(table: Any, snapshot: Any) -> list[Any]:
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    return list(ManifestListManager(table).read_all(snapshot))


def live_files(table: Any, snapshot: Any | None = None) -> dict[BucketKey, list[Any]]:
    """The data files a snapshot reads (the latest by default), by (partition values, bucket)."""
    snapshot = snapshot if snapshot is not None else latest_snapshot(table)
    out: dict[BucketKey, list[Any]] = {}
    if snapshot is None:
        return out
    for entry in manifest_entries(table, snapshot_manifests(table, snapshot)):
        out.setdefault((tuple(entry.partition.values), int(entry.bucket)), []).append(entry.file)
    return out


def lsm_file(meta: Any) -> LsmFile:
    return LsmFile(
        name=meta.file_name,
        level=int(meta.level),
        size=int(meta.file_size),
        min_sequence=int(meta.min_sequence_number),
        max_sequence=int(meta.max_sequence_number),
    )


def bucket_directory(table: Any, partition: tuple[Any, ...], bucket: int) -> str:
    """A bucket's directory as Java and pypaimon-rust name it: partition values in Java's legacy
    text (``partition.legacy-name``, on by default: a DATE is its day number, ``d=19723``) and
    escaped as ``PartitionPathUtils`` does. pypaimon's plain ``bucket_path`` would give
    ``d=2024-01-02``, a directory no other reader looks in."""
    from pypaimon.utils.file_store_path_factory import canonical_data_file_path

    return canonical_data_file_path(table, partition, bucket, "_").rsplit("/", 1)[0]


def data_file_path(table: Any, partition: tuple[Any, ...], bucket: int, meta: Any) -> str:
    if meta.external_path:
        return str(meta.external_path)
    return f"{bucket_directory(table, partition, bucket)}/{meta.file_name}"


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


def keyed_schema(table: Any) -> KeyedSchema:
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


def read_data_file(table: Any, partition: tuple[Any, ...], bucket: int, meta: Any, schema: KeyedSchema) -> pa.Table:
    """One data file as rows of the current schema: columns matched by field id (so renames hold),
    widened to the current types, columns added since the file was written as NULL."""
    with table.file_io.new_input_stream(_parquet_path(table, partition, bucket, meta)) as stream:
        return _conform(pq.read_table(stream), _names_by_id(table, meta, schema), schema)


def iter_data_file(
    table: Any, partition: tuple[Any, ...], bucket: int, meta: Any, schema: KeyedSchema, batch_rows: int = 65536
) -> Iterator[pa.Table]:
    """``read_data_file`` in batches of rows, so a large file is never held whole."""
    by_id = _names_by_id(table, meta, schema)
    with table.file_io.new_input_stream(_parquet_path(table, partition, bucket, meta)) as stream:
        for batch in pq.ParquetFile(stream).iter_batches(batch_size=batch_rows):
            yield _conform(pa.Table.from_batches([batch]), by_id, schema)


def _parquet_path(table: Any, partition: tuple[Any, ...], bucket: int, meta: Any) -> str:
    path = data_file_path(table, partition, bucket, meta)
    if not path.endswith(".parquet"):
        raise ValueError(
            f"cannot compact {path}: lakecdc compacts Parquet data files only; "
            f"set file.format=parquet (the default) or write-only=true"
        )
    return path


def _names_by_id(table: Any, meta: Any, schema: KeyedSchema) -> dict[int, str]:
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


def _simple_stats(stats: Sequence[ColumnStats], fields: Sequence[Any]) -> Any:
    from pypaimon.manifest.schema.simple_stats import SimpleStats
    from pypaimon.table.row.generic_row import GenericRow

    if not fields:
        return SimpleStats.empty_stats()
    return SimpleStats(
        GenericRow([s[0] for s in stats], list(fields)),
        GenericRow([s[1] for s in stats], list(fields)),
        [s[2] for s in stats],
    )


def _stats(data: pa.Table, fields: Sequence[Any]) -> Any:
    return _simple_stats(_column_stats(data, [f.name for f in fields]) if fields else [], fields)


def write_data_file(
    table: Any,
    partition: tuple[Any, ...],
    bucket: int,
    data: pa.Table,
    level: int,
    schema: KeyedSchema,
    prefix: str | None = None,
) -> Any:
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
    table: Any,
    partition: tuple[Any, ...],
    bucket: int,
    chunks: Iterable[pa.Table],
    schema: KeyedSchema,
    first_sequence: int,
    target_size: int,
) -> list[Any]:
    """An append table's compaction output: the chunks' rows in order, rolled over to a new file
    once a file reaches ``target_size`` on disk, sequence numbers counted on from
    ``first_sequence`` (Paimon's rewriter). Streams: one chunk in memory at a time. Returns the
    files' DataFileMeta (file source COMPACT); deletes what it wrote if anything fails."""
    from pypaimon.data.timestamp import Timestamp
    from pypaimon.manifest.schema.data_file_meta import DataFileMeta
    from pypaimon.manifest.schema.simple_stats import SimpleStats
    from pypaimon.table.row.generic_row import GenericRow

    options = table.options
    directory = bucket_directory(table, partition, bucket)
    table.file_io.check_or_mkdirs(directory)
    compression = options.file_compression() or "zstd"
    fields = list(table.table_schema.fields)
    metas: list[Any] = []
    written: list[str] = []
    sequence = first_sequence
    out: Any = None
    writer: pq.ParquetWriter | None = None
    name, rows, stats = "", 0, None

    def close() -> None:
        nonlocal out, writer, sequence
        assert writer is not None and out is not None and stats is not None
        writer.close()
        out.close()
        writer = out = None
        path = f"{directory}/{name}"
        metas.append(
            DataFileMeta.create(
                file_name=name,
                file_size=table.file_io.get_file_size(path),
                row_count=rows,
                min_key=GenericRow([], []),
                max_key=GenericRow([], []),
                key_stats=SimpleStats.empty_stats(),
                value_stats=_simple_stats(stats, fields),
                min_sequence_number=sequence,
                max_sequence_number=sequence + rows - 1,
                schema_id=schema.schema_id,
                level=0,
                extra_files=[],
                creation_time=Timestamp.now(),
                delete_row_count=0,
                file_source=FILE_SOURCE_COMPACT,
                value_stats_cols=None,
                external_path=None,
                first_row_id=None,
                write_cols=None,
            )
        )
        sequence += rows

    try:
        for chunk in chunks:
            if chunk.num_rows == 0:
                continue
            if writer is None:
                name = f"{options.data_file_prefix() or 'data-'}{uuid.uuid4()}-0.parquet"
                written.append(f"{directory}/{name}")
                out = table.file_io.new_output_stream(written[-1])
                writer = pq.ParquetWriter(out, schema.arrow, compression=compression)
                rows, stats = 0, None
            writer.write_table(chunk)
            rows += chunk.num_rows
            stats = _merged_stats(stats, _column_stats(chunk, schema.names))
            if out.tell() >= target_size:
                close()
        if writer is not None:
            close()
    except BaseException:
        if writer is not None:
            writer.close()
            out.close()
        for path in written:
            table.file_io.delete_quietly(path)
        raise
    return metas


def delete_data_files(table: Any, partition: tuple[Any, ...], bucket: int, metas: Iterable[Any]) -> None:
    for meta in metas:
        table.file_io.delete_quietly(data_file_path(table, partition, bucket, meta))


def vector_index_files(table: Any, snapshot: Any | None) -> dict[BucketKey, list[Any]]:
    """A snapshot's deletion-vector index files (pypaimon IndexFileMeta), by (partition, bucket)."""
    out: dict[BucketKey, list[Any]] = {}
    if snapshot is None or not snapshot.index_manifest:
        return out
    from pypaimon.manifest.index_manifest_file import IndexManifestFile

    for entry in IndexManifestFile(table).read(snapshot.index_manifest):
        if entry.index_file.index_type == deletion_vectors.INDEX_TYPE:
            out.setdefault((tuple(entry.partition.values), int(entry.bucket)), []).append(entry.index_file)
    return out


def read_vectors(table: Any, partition: tuple[Any, ...], bucket: int, index_files: Sequence[Any]) -> dict[str, BitMap]:
    """The deletion vectors of a bucket's data files, from its index files."""
    vectors: dict[str, BitMap] = {}
    for meta in index_files:
        path = table.path_factory().bucket_index_path(partition, bucket, meta, table.file_io)
        with table.file_io.new_input_stream(path) as stream:
            content = stream.read()
        for name, r in (meta.dv_ranges or {}).items():
            where = deletion_vectors.VectorRange(name, int(r.offset), int(r.length), int(r.cardinality or 0))
            vectors[name] = vectors.get(name, BitMap()) | deletion_vectors.decode(content, where, path)
    return vectors


def write_vectors(table: Any, partition: tuple[Any, ...], bucket: int, vectors: Mapping[str, BitMap]) -> Any | None:
    """A new index file holding a bucket's deletion vectors (None when none is left)."""
    from pypaimon.index.deletion_vector_meta import DeletionVectorMeta
    from pypaimon.index.index_file_meta import IndexFileMeta

    content, ranges = deletion_vectors.encode(vectors)
    if not ranges:
        return None
    meta = IndexFileMeta(
        index_type=deletion_vectors.INDEX_TYPE,
        file_name=f"index-{uuid.uuid4()}-0",
        file_size=len(content),
        row_count=len(ranges),
        dv_ranges={r.data_file: DeletionVectorMeta(r.data_file, r.offset, r.length, r.cardinality) for r in ranges},
    )
    path = table.path_factory().bucket_index_path(partition, bucket, meta)
    with table.file_io.new_output_stream(path) as stream:
        stream.write(content)
    return meta


def delete_index_files(table: Any, partition: tuple[Any, ...], bucket: int, metas: Iterable[Any]) -> None:
    for meta in metas:
        table.file_io.delete_quietly(table.path_factory().bucket_index_path(partition, bucket, meta))


@dataclass(slots=True)
class CompactChange:
    """One bucket's compaction result: the files it replaces and the files replacing them."""

    partition: tuple[Any, ...]
    bucket: int
    before: list[Any]
    after: list[Any]
    changelog: list[Any] = field(default_factory=list)
    # MOW tables: the bucket's deletion-vector index files this compaction replaces, and the one
    # replacing them (none when no vector is left)
    index_before: list[Any] = field(default_factory=list)
    index_after: list[Any] = field(default_factory=list)


class _MergingManifestList:
    """Stands in for pypaimon's ManifestListManager inside one COMPACT commit: when the table's
    manifest list has grown past ``manifest.merge-min-count``, the new snapshot's base list is
    the live entries rewritten into a few manifests (Paimon's full manifest compaction), so
    commit and planning time stay flat over a long stream. Conflict detection keeps reading
    through the real manager (pypaimon hands it to its scanner at construction)."""

    def __init__(self, inner: Any, table: Any, min_count: int, target_size: int) -> None:
        self.inner = inner
        self.table = table
        self.min_count = min_count
        self.target_size = target_size
        self.merged = 0

    def write(self, name: str, metas: list[Any]) -> Any:
        return self.inner.write(name, metas)

    def read_all(self, snapshot: Any) -> list[Any]:
        metas = list(self.inner.read_all(snapshot))
        if len(metas) < self.min_count:
            return metas
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager

        entries = manifest_entries(self.table, metas)
        merged = ManifestFileManager(self.table).rolling_write(entries, self.target_size, f"manifest-{uuid.uuid4()}")
        self.merged = len(metas)
        return list(merged)


def _manifest_merge_min_count(table: Any) -> int:
    text = table.options.options.to_map().get("manifest.merge-min-count", "30")
    return max(2, int(text))


@dataclass(frozen=True, slots=True)
class CompactCommit:
    committed: bool
    manifests_merged: int = 0
    conflict: str | None = None


def commit_compaction(table: Any, commit_user: str, identifier: int, changes: Sequence[CompactChange]) -> CompactCommit:
    """Commit compaction results as one COMPACT snapshot, with Paimon's conflict detection: a
    compaction whose input files another commit removed meanwhile is given up (its output
    deleted) rather than committed over newer data."""
    from pypaimon.manifest.index_manifest_entry import IndexManifestEntry
    from pypaimon.manifest.schema.manifest_entry import ManifestEntry
    from pypaimon.table.row.generic_row import GenericRow
    from pypaimon.write.file_store_commit import FileStoreCommit

    commit = FileStoreCommit(table.new_snapshot_commit(), table, commit_user)
    merging = _MergingManifestList(
        commit.manifest_list_manager, table, _manifest_merge_min_count(table), commit.manifest_target_size
    )
    commit.manifest_list_manager = merging
    entries: list[Any] = []
    changelog: list[Any] = []
    index_deletes: list[Any] = []
    index_adds: list[Any] = []
    for change in changes:
        partition = GenericRow(list(change.partition), table.partition_keys_fields)
        index_deletes += [IndexManifestEntry(1, partition, change.bucket, f) for f in change.index_before]
        index_adds += [IndexManifestEntry(0, partition, change.bucket, f) for f in change.index_after]
        total = table.total_buckets
        entries += [ManifestEntry(kind=1, partition=partition, bucket=change.bucket, total_buckets=total, file=f)
                    for f in change.before]  # fmt: skip
        entries += [ManifestEntry(kind=0, partition=partition, bucket=change.bucket, total_buckets=total, file=f)
                    for f in change.after]  # fmt: skip
        changelog += [
            ManifestEntry(kind=0, partition=partition, bucket=change.bucket, total_buckets=total, file=f)
            for f in change.changelog
        ]
    vectors_read = {
        (c.partition, c.bucket): {f.file_name for f in c.index_before}
        for c in changes
        if c.index_after or c.index_before
    }

    def plan(snapshot: Any) -> list[Any]:
        # pypaimon detects removed data files only: a compaction that rewrote a bucket's
        # deletion vectors from an index file another commit has replaced since would drop
        # that commit's deletions, so it is a lost race too.
        if vectors_read:
            now = vector_index_files(table, snapshot)
            for key, names in vectors_read.items():
                if {f.file_name for f in now.get(key, [])} != names:
                    raise RuntimeError(
                        f"File deletion conflicts detected: the deletion vectors of bucket {key[1]} of partition "
                        f"{key[0]} changed since the compaction read them"
                    )
        return entries

    try:
        commit._try_commit(
            commit_kind="COMPACT",
            commit_identifier=identifier,
            commit_entries_plan=plan,
            changelog_entries=changelog,
            detect_conflicts=True,
            allow_rollback=False,
            index_deletes=index_deletes or None,
            index_adds=index_adds or None,
        )
    except RuntimeError as e:
        # Only a detected conflict is certain not to have committed; after any other failure the
        # snapshot may exist, so the output files stay (remove-orphan-files clears them if not).
        if "conflicts detected" not in str(e):
            raise
        for change in changes:
            delete_data_files(table, change.partition, change.bucket, change.after + change.changelog)
            delete_index_files(table, change.partition, change.bucket, change.index_after)
        return CompactCommit(False, conflict=str(e))
    finally:
        commit.close()
    return CompactCommit(True, merging.merged)


def with_level(meta: Any, level: int) -> Any:
    return replace(meta, level=level)


# --- long-lived changelogs (Paimon's decoupled changelog: changelog/changelog-<id>) ---------------


def _changelog_dir(table: Any) -> str:
    return f"{table.table_path.rstrip('/')}/changelog"


def long_lived_changelog_ids(table: Any) -> list[int]:
    """Ids of the changelogs kept beyond their snapshots, ascending (listed: Java's hints are only
    hints)."""
    out = []
    for status in table.file_io.list_status(_changelog_dir(table)):
        name = str(status.path).rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("changelog-") and name[len("changelog-") :].isdigit():
            out.append(int(name[len("changelog-") :]))
    return sorted(out)


def long_lived_changelog_path(table: Any, changelog_id: int) -> str:
    return f"{_changelog_dir(table)}/changelog-{changelog_id}"


def read_long_lived_changelog(table: Any, changelog_id: int) -> Any | None:
    """The changelog (a pypaimon Snapshot) of ``changelog_id``, or None when it is gone."""
    from pypaimon.changelog.changelog import Changelog

    try:
        return Changelog.try_from_path(table.file_io, long_lived_changelog_path(table, changelog_id))
    except FileNotFoundError:
        return None


def write_long_lived_changelog(table: Any, snapshot: Any) -> None:
    """Keep an expiring snapshot's metadata as ``changelog/changelog-<id>`` (Java's Changelog)."""
    from pypaimon.changelog.changelog import Changelog
    from pypaimon.common.json_util import JSON

    # The same JSON as a snapshot file (pypaimon's ChangelogManager.commit_changelog calls a
    # to_json its Changelog lacks).
    text = JSON.to_json(Changelog.from_snapshot(snapshot), indent=2)
    table.file_io.overwrite_file_utf8(long_lived_changelog_path(table, snapshot.id), text)


def set_changelog_hint(table: Any, which: str, changelog_id: int) -> None:
    """Write the changelog directory's EARLIEST or LATEST hint, as Java's ChangelogManager."""
    table.file_io.overwrite_file_utf8(f"{_changelog_dir(table)}/{which}", str(changelog_id))


def remove_changelog_hints(table: Any) -> None:
    for which in ("EARLIEST", "LATEST"):
        table.file_io.delete_quietly(f"{_changelog_dir(table)}/{which}")


def min_value(table: Any, meta: Any, field_name: str) -> Any | None:
    """The minimum of a current column in a data file's value statistics (None: unknown). The
    column is found by field id in the schema the file was written with, so renames hold."""
    current = table.table_schema
    field_id = next((int(f.id) for f in current.fields if f.name == field_name), None)
    if field_id is None or meta.value_stats is None:
        return None
    schema = current if int(meta.schema_id) == int(current.id) else table.schema_manager.get_schema(int(meta.schema_id))
    name = next((f.name for f in schema.fields if int(f.id) == field_id), None)
    names = list(meta.value_stats_cols) if meta.value_stats_cols else [f.name for f in schema.fields]
    if name is None or name not in names:
        return None
    try:
        return meta.value_stats.min_values.get_field(names.index(name))
    except (IndexError, ValueError, TypeError):
        return None
