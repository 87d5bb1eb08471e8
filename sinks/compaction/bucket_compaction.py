"""One bucket's compaction of a primary-key table, run on an executor (planned by
``sinks.compaction.compactor``).

A bucket's files are merged as the table's merge engine says (``sinks.compaction.merge``): rows
sorted by (key, ``sequence.field``, sequence number), one row per key, retractions dropped only
when the output is the highest non-empty level (nothing older below could need them). Output rows
keep their original sequence numbers, so a writer that continues the bucket afterwards still orders
after them, and a level-0 file written while the compaction ran still wins over its output.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from sinks.compaction import deletion_vectors as dv
from sinks.compaction import lookup_cache, sorted_runs
from sinks.compaction.full_changelog import ChangelogOptions, full_changelog, lookup_changelog
from sinks.compaction.lsm import CompactionOptions
from sinks.compaction.merge.options import MergeOptions
from sinks.compaction.merge.rows import merge_sorted
from sinks.compaction.record_expiry import RecordExpiry
from sinks.row_kinds import RETRACT_KINDS
from sinks.store import commits, data_files, index, tables
from sinks.store.files import KIND, SEQUENCE, data_file_path, delete_data_files, min_value, with_level

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataFileMeta, FileStoreTable, IndexFileMeta


@dataclass(frozen=True, slots=True)
class BucketTask:
    """One bucket's compaction, small and picklable: it travels to an executor."""

    warehouse: str
    catalog_options: Mapping[str, str]
    table: str
    partition: tuple[Any, ...]
    bucket: int
    output_level: int
    drop_delete: bool
    files: tuple[DataFileMeta, ...]
    # first-row, changelog-producer=lookup: the bucket's other (older) files, looked up for the
    # keys in the unit (first-row: keys they hold keep their row; lookup: the keys' values before).
    lookup: tuple[DataFileMeta, ...] = ()
    # the changelog this compaction writes: "full-compaction" (output into the top level),
    # "lookup", or "" for none
    changelog: str = ""
    max_level: int = 0
    # MOW tables: the bucket's deletion-vector index files as planned
    deletion_vectors: bool = False
    vector_files: tuple[IndexFileMeta, ...] = ()


def merge_rows(
    data: pa.Table,
    keys: Sequence[str],
    sequence_fields: Sequence[str],
    drop_delete: bool,
    sequence_descending: bool = False,
    engine: MergeOptions | None = None,
    primary_keys: Sequence[str] = (),
) -> pa.Table:
    """One row per key, sorted by key, merged by ``engine`` (deduplicate when None) over the rows
    in (sequence.field, sequence number) order — the lowest sequence.field last with
    ``sequence_descending``; retractions removed when ``drop_delete``."""
    if data.num_rows == 0:
        return data
    direction = "descending" if sequence_descending else "ascending"
    order = [(k, "ascending") for k in keys] + [(f, direction) for f in sequence_fields]
    order.append((SEQUENCE, "ascending"))
    # Java orders null sequence.field values first in either sort order (a null never wins);
    # keys are never null.
    data = data.take(pc.sort_indices(data, sort_keys=order, null_placement="at_start"))
    merged = merge_sorted(data, keys, engine or MergeOptions(), SEQUENCE, KIND, primary_keys, sequence_fields)
    if not drop_delete:
        return merged
    kinds = merged.column(KIND).combine_chunks()
    return merged.filter(pc.invert(pc.is_in(kinds, pa.array(RETRACT_KINDS, pa.int8()))))


def _without_older_keys(older: Sequence[pa.Table], keys: Sequence[str], merged: pa.Table) -> pa.Table:
    """first-row: drop merged rows whose key an older file of the bucket holds (Paimon's lookup
    compaction). Readers of first-row tables read the levels above 0 without merging them, so
    a key must live in one of them only, with its first row."""
    keys = list(keys)
    mine = merged.select(keys)
    # Probe the older files with the unit's keys (small) rather than collecting all of theirs.
    seen = pa.concat_tables([_rows_of(t.select(keys), mine, keys) for t in older]).group_by(keys).aggregate([])
    kept = merged.join(seen, keys, join_type="left anti")
    return kept.take(pc.sort_indices(kept, sort_keys=[(k, "ascending") for k in keys])).select(merged.column_names)


def _read_cached(
    table: FileStoreTable,
    task: BucketTask,
    meta: DataFileMeta,
    schema: data_files.KeyedSchema,
    options: Mapping[str, str],
) -> pa.Table:
    """An upper-level file the compaction looks keys up in, through the worker's file cache."""
    path = data_file_path(table, task.partition, task.bucket, meta)
    return lookup_cache.FILES.get(
        (path, schema.schema_id),
        lambda: data_files.read_data_file(table, task.partition, task.bucket, meta, schema),
        lookup_cache.budget(options),
    )


def _rows_of(data: pa.Table, wanted: pa.Table, keys: Sequence[str]) -> pa.Table:
    """The rows of ``data`` whose key is in ``wanted`` (distinct keys), in no particular order."""
    if data.num_rows == 0 or wanted.num_rows == 0:
        return data.slice(0, 0)
    # (a join drops not-null flags from the schema; the rows are the same)
    return data.join(wanted, list(keys), join_type="left semi").select(data.column_names).cast(data.schema)


def _split(data: pa.Table, target_bytes: int) -> list[pa.Table]:
    if data.num_rows == 0:
        return []
    per_row = max(1, data.nbytes // data.num_rows)
    rows = max(1, target_bytes // per_row)
    return [data.slice(i, rows) for i in range(0, data.num_rows, rows)]


def compact_bucket(task: BucketTask) -> commits.CompactChange:
    """Merge one bucket's unit into ``task.output_level`` (runs on an executor): Paimon's upgrade
    of a lone file, or read the unit (and the files it looks keys up in), merge, produce the
    changelog, write."""
    table = tables.open_table(task.warehouse, task.catalog_options, task.table)
    options = table.options.options.to_map()
    expiry = RecordExpiry.from_table_options(options)
    now = int(time.time())
    loaded = index.read_vectors(table, task.partition, task.bucket, task.vector_files) if task.vector_files else {}
    upgraded = _upgrade(table, task, expiry, now, bool(loaded))
    if upgraded is not None:
        return upgraded
    # (a vector of a file no longer in the bucket is dropped on the way: readers refuse those)
    present = {f.file_name for f in (*task.files, *task.lookup)}
    vectors = {name: bitmap for name, bitmap in loaded.items() if name in present}
    schema = data_files.keyed_schema(table)
    run = _Run(task, table, options, schema, MergeOptions.from_table_options(options), expiry, now, loaded, vectors)
    if not (task.lookup or task.changelog or task.deletion_vectors or loaded):
        return _merge_streaming(run)
    parts = []
    for f in task.files:
        data = data_files.read_data_file(table, task.partition, task.bucket, f, schema)
        parts.append(run.fresh(dv.live(data, vectors.get(f.file_name))))
    rows = pa.concat_tables(parts)
    level0 = np.concatenate([np.full(p.num_rows, f.level == 0) for p, f in zip(parts, task.files, strict=True)])
    lookup_log = task.changelog == "lookup" and bool(level0.any())
    keys = list(schema.keys)
    wanted = (
        rows.filter(pa.array(level0)).select(keys).group_by(keys).aggregate([])
        if lookup_log or task.deletion_vectors
        else rows.select(keys).slice(0, 0)
    )
    # MOW: the older rows of the keys level 0 brings, in the files above the output, are marked
    # deleted and merged into the output (under sequence.field or ignore-delete the older row can
    # be the one that stays); first-row keeps the older row and drops the new one instead.
    marks = task.deletion_vectors and run.engine.engine != "first-row" and wanted.num_rows > 0 and bool(task.lookup)
    older = _older_rows(run, wanted, marks, lookup_log)
    for f in task.files:
        vectors.pop(f.file_name, None)  # replaced files take their vectors with them
    full_log = task.changelog == "full-compaction"
    merged = run.merge(pa.concat_tables([rows, *older]) if marks else rows, task.drop_delete and not full_log)
    merged, changelog = _changelog(run, parts, rows, level0, wanted, older, merged, lookup_log)
    if older and run.engine.engine == "first-row":
        merged = _without_older_keys(older, schema.keys, merged)
    return _write(run, merged, changelog)


# Rows read of each sorted run at a time by the streaming merge: with 10 columns ~10 MB a run. Rows
# of ~1 KB made that 32 MB a run, and a bucket of 10 level-0 files held ~320 MB in the worker (a
# binlog backlog's compactions; bench/README.md, *Binlog backlog*): a run's buffer also stops at
# STREAM_BATCH_BYTES, read in files' batches of STREAM_READ_ROWS. (Merging five 200k-row runs of 10
# narrow columns: 0.20-0.21 s of CPU read in batches of 8,192 rows or of 32,768.)
STREAM_BATCH_ROWS = 32768
STREAM_BATCH_BYTES = 8 << 20
STREAM_READ_ROWS = 8192


def _merge_streaming(run: _Run) -> commits.CompactChange:
    """The unit merged slice by slice and written as it goes (``sinks.compaction.sorted_runs``):
    for the units that need no other rows of the bucket, no changelog and no deletion vectors,
    which is every unit of a table with the default options. Memory stays near one batch a run,
    where reading the unit whole held up to a dynamic bucket's 2M rows."""
    task, table, schema = run.task, run.table, run.schema

    read = min(STREAM_READ_ROWS, STREAM_BATCH_ROWS)

    def batches(files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        for f in files:
            for batch in data_files.iter_data_file(table, task.partition, task.bucket, f, schema, read):
                yield run.fresh(batch)

    slices = sorted_runs.merged_slices(
        [batches(r) for r in sorted_runs.sorted_runs(task.files)],
        schema.keys,
        lambda rows: run.merge(rows, task.drop_delete),
        STREAM_BATCH_ROWS,
        STREAM_BATCH_BYTES,
    )
    target = CompactionOptions.from_table_options(run.options).target_file_size
    after = data_files.write_keyed_files(table, task.partition, task.bucket, slices, task.output_level, schema, target)
    return commits.CompactChange(task.partition, task.bucket, list(task.files), after)


@dataclass(slots=True)
class _Run:
    """One bucket compaction, on the executor: what it read once and the vectors it changes."""

    task: BucketTask
    table: FileStoreTable
    options: Mapping[str, str]
    schema: data_files.KeyedSchema
    engine: MergeOptions
    expiry: RecordExpiry | None
    now: int
    loaded: dict[str, BitMap]  # the bucket's deletion vectors as read
    vectors: dict[str, BitMap]  # the bucket's deletion vectors as this compaction leaves them

    def merge(self, data: pa.Table, drop_delete: bool) -> pa.Table:
        schema = self.schema
        return merge_rows(
            data,
            schema.keys,
            schema.sequence_fields,
            drop_delete,
            schema.sequence_descending,
            self.engine,
            tuple(self.table.primary_keys),
        )

    def fresh(self, data: pa.Table) -> pa.Table:
        """record-level.expire-time: expired rows are left out of what the compaction reads."""
        if self.expiry is None:
            return data
        return data.filter(self.expiry.keep(data.column(self.expiry.time_field), self.now))


def _upgrade(
    table: FileStoreTable, task: BucketTask, expiry: RecordExpiry | None, now: int, vectors: bool
) -> commits.CompactChange | None:
    """Paimon's upgrade: a lone file holds one sorted run already; moving it up a level (same
    file, new level) is all the merge would do. None when the unit must be merged."""
    files = task.files
    only = files[0] if len(files) == 1 and not task.lookup and not task.changelog and not vectors else None
    if only is not None and expiry is not None and expiry.expired(min_value(table, only, expiry.time_field), now):
        only = None  # Java rewrites a file with expired records rather than upgrading it
    # (first-row must filter by the files looked up; a changelog needs the rows read)
    if only is not None and (not task.drop_delete or not only.delete_row_count):
        return commits.CompactChange(task.partition, task.bucket, [only], [with_level(only, task.output_level)])
    return None


def _older_rows(run: _Run, wanted: pa.Table, marks: bool, lookup_log: bool) -> list[pa.Table]:
    """The live rows of the bucket's other files (read once: first-row's lookup, the lookup
    changelog and the deletion vectors need them); with ``marks`` only the ``wanted`` keys' rows,
    which are marked deleted in the files' vectors."""
    task = run.task
    whole = (
        [_read_cached(run.table, task, f, run.schema, run.options) for f in task.lookup]
        if lookup_log or marks or run.engine.engine == "first-row"
        else []
    )
    if not marks:
        return [dv.live(t, run.vectors.get(f.file_name)) for t, f in zip(whole, task.lookup, strict=True)]
    # Only the wanted keys' live rows are taken from each file (its vector applied), by position.
    older = []
    for t, f in zip(whole, task.lookup, strict=True):
        found = BitMap(dv.positions(t, wanted, list(run.schema.keys)))
        old = run.vectors.get(f.file_name, BitMap())
        older.append(t.take(pa.array(list(found - old), pa.int64())))
        if found:
            run.vectors[f.file_name] = old | found
    return [run.fresh(o) for o in older]


def _changelog(
    run: _Run,
    parts: Sequence[pa.Table],
    rows: pa.Table,
    level0: np.ndarray,
    wanted: pa.Table,
    older: Sequence[pa.Table],
    merged: pa.Table,
    lookup_log: bool,
) -> tuple[pa.Table, pa.Table | None]:
    """The changelog this compaction produces (None for none), and ``merged`` without the
    retractions a full-compaction changelog needed."""
    task, schema = run.task, run.schema
    changelog = None
    values = [n for n in schema.names if n not in schema.keys]
    log_options = ChangelogOptions.from_table_options(run.options)
    if task.changelog == "full-compaction":
        from_top = np.concatenate(
            [np.full(p.num_rows, f.level == task.max_level) for p, f in zip(parts, task.files, strict=True)]
        )
        changelog = full_changelog(rows, from_top, merged, schema.keys, values, KIND, log_options)
        kinds = merged.column(KIND).combine_chunks()
        merged = merged.filter(pc.invert(pc.is_in(kinds, pa.array(RETRACT_KINDS, pa.int8()))))
    if lookup_log:
        # Only the keys level 0 brings can change: merging just their rows keeps the cost of each
        # commit's changelog with the commit's size rather than the bucket's (Paimon looks them up).
        new_rows = rows.filter(pa.array(level0))
        changed = new_rows.select(list(schema.keys))
        upper = [_rows_of(t, wanted, schema.keys) for t in (rows.filter(pa.array(~level0)), *older)]
        before = run.merge(pa.concat_tables(upper), False)
        # every level-0 row has a wanted key: no join needed for them
        after = run.merge(pa.concat_tables([new_rows, *upper]), False)
        changelog = lookup_changelog(
            before, after, changed, schema.keys, values, KIND, log_options, run.engine.engine == "first-row"
        )
    return merged, changelog


def _write(run: _Run, merged: pa.Table, changelog: pa.Table | None) -> commits.CompactChange:
    """Write the merged rows, the changelog and the bucket's changed deletion vectors; what was
    written is deleted again if any of it fails."""
    task, table = run.task, run.table
    target = CompactionOptions.from_table_options(run.options).target_file_size
    after: list[DataFileMeta] = []
    logs: list[DataFileMeta] = []
    try:
        for part in _split(merged, target):
            after.append(
                data_files.write_data_file(table, task.partition, task.bucket, part, task.output_level, run.schema)
            )
        for part in _split(changelog, target) if changelog is not None else ():
            logs.append(
                data_files.write_data_file(
                    table, task.partition, task.bucket, part, task.output_level, run.schema, prefix="changelog-"
                )
            )
        index_after = []
        if run.vectors != run.loaded:
            written = index.write_vectors(table, task.partition, task.bucket, run.vectors)
            index_after = [written] if written is not None else []
    except Exception:
        delete_data_files(table, task.partition, task.bucket, after + logs)
        raise
    index_before = list(task.vector_files) if run.vectors != run.loaded else []
    return commits.CompactChange(task.partition, task.bucket, list(task.files), after, logs, index_before, index_after)
