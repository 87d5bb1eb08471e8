"""Compaction: plan per bucket on the driver, merge on executors, commit one COMPACT snapshot per
table. Append tables (no primary key) are planned and rewritten by ``sinks.compaction.append_compactor``.

A bucket's files are merged as the table's merge engine says (``sinks.compaction.merge_engines``): rows
sorted by (key, ``sequence.field``, sequence number), one row per key, retractions dropped only
when the output is the highest non-empty level (nothing older below could need them). Output rows
keep their original sequence numbers, so a writer that continues the bucket afterwards still orders
after them, and a level-0 file written while the compaction ran still wins over its output.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import structlog
from pyroaring import BitMap

from sinks.compaction import append_compactor, lookup_cache
from sinks.compaction import deletion_vectors as dv
from sinks.compaction.append_compactor import AppendTask
from sinks.compaction.append_picks import PartitionAges
from sinks.compaction.full_changelog import ChangelogOptions, full_changelog, lookup_changelog
from sinks.compaction.lsm import (
    CompactionOptions,
    CompactUnit,
    LsmFile,
    pick_force_up_level0,
    pick_full,
    pick_universal,
)
from sinks.compaction.merge_engines import MergeOptions, merge_sorted
from sinks.compaction.record_expiry import RecordExpiry
from sinks.row_kinds import RETRACT_KINDS
from sinks.store import commits, data_files, index, manifests, tables
from sinks.store.files import KIND, SEQUENCE, data_file_path, delete_data_files, min_value, with_level

log = structlog.get_logger(__name__)


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
    files: tuple[Any, ...]  # pypaimon DataFileMeta
    # first-row, changelog-producer=lookup: the bucket's other (older) files, looked up for the
    # keys in the unit (first-row: keys they hold keep their row; lookup: the keys' values before).
    lookup: tuple[Any, ...] = ()
    # the changelog this compaction writes: "full-compaction" (output into the top level),
    # "lookup", or "" for none
    changelog: str = ""
    max_level: int = 0
    # MOW tables: the bucket's deletion-vector index files as planned (pypaimon IndexFileMeta)
    deletion_vectors: bool = False
    vector_files: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class CompactionReport:
    table: str
    buckets: int
    files_before: int
    files_after: int
    committed: bool
    manifests_merged: int
    seconds: float
    conflict: str | None = None


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
    table: Any, task: BucketTask, meta: Any, schema: data_files.KeyedSchema, options: Mapping[str, str]
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


Task = BucketTask | AppendTask


def compact_task(task: Task) -> commits.CompactChange:
    """Run one planned task (on an executor)."""
    if isinstance(task, AppendTask):
        return append_compactor.compact_files(task)
    return compact_bucket(task)


def compact_bucket(task: BucketTask) -> commits.CompactChange:
    """Merge one bucket's unit into ``task.output_level`` (runs on an executor)."""
    table = tables.open_table(task.warehouse, task.catalog_options, task.table)
    options = table.options.options.to_map()
    expiry = RecordExpiry.from_table_options(options)
    now = int(time.time())
    files = list(task.files)
    loaded = index.read_vectors(table, task.partition, task.bucket, task.vector_files) if task.vector_files else {}
    # (a vector of a file no longer in the bucket is dropped on the way: readers refuse those)
    present = {f.file_name for f in (*files, *task.lookup)}
    vectors = {name: bitmap for name, bitmap in loaded.items() if name in present}
    only = files[0] if len(files) == 1 and not task.lookup and not task.changelog and not loaded else None
    if only is not None and expiry is not None and expiry.expired(min_value(table, only, expiry.time_field), now):
        only = None  # Java rewrites a file with expired records rather than upgrading it
    # (first-row must filter by the files looked up; a changelog needs the rows read)
    if only is not None and (not task.drop_delete or not only.delete_row_count):
        # Paimon's upgrade: a lone file holds one sorted run already; moving it up a level
        # (same file, new level) is all the merge would do.
        return commits.CompactChange(task.partition, task.bucket, [only], [with_level(only, task.output_level)])
    schema = data_files.keyed_schema(table)
    engine = MergeOptions.from_table_options(options)
    parts = [
        dv.live(data_files.read_data_file(table, task.partition, task.bucket, f, schema), vectors.get(f.file_name))
        for f in files
    ]
    if expiry is not None:
        # record-level.expire-time: expired rows are left out of what the compaction reads.
        parts = [p.filter(expiry.keep(p.column(expiry.time_field), now)) for p in parts]
    rows = pa.concat_tables(parts)
    full_log = task.changelog == "full-compaction"
    level0 = np.concatenate([np.full(p.num_rows, f.level == 0) for p, f in zip(parts, files, strict=True)])
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
    marks = task.deletion_vectors and engine.engine != "first-row" and wanted.num_rows > 0 and bool(task.lookup)
    # The bucket's other files, read once: first-row's lookup, the lookup changelog and the
    # deletion vectors need them.
    whole = (
        [_read_cached(table, task, f, schema, options) for f in task.lookup]
        if lookup_log or marks or engine.engine == "first-row"
        else []
    )
    if marks:
        # Only the wanted keys' live rows are taken from each file (its vector applied), by position.
        older = []
        for t, f in zip(whole, task.lookup, strict=True):
            found = BitMap(dv.positions(t, wanted, keys))
            old = vectors.get(f.file_name, BitMap())
            older.append(t.take(pa.array(list(found - old), pa.int64())))
            if found:
                vectors[f.file_name] = old | found
        if expiry is not None:
            older = [o.filter(expiry.keep(o.column(expiry.time_field), now)) for o in older]
    else:
        older = [dv.live(t, vectors.get(f.file_name)) for t, f in zip(whole, task.lookup, strict=True)]
    for f in files:
        vectors.pop(f.file_name, None)  # replaced files take their vectors with them

    def merge(data: pa.Table, drop_delete: bool) -> pa.Table:
        return merge_rows(
            data,
            schema.keys,
            schema.sequence_fields,
            drop_delete,
            schema.sequence_descending,
            engine,
            tuple(table.primary_keys),
        )

    merged = merge(pa.concat_tables([rows, *older]) if marks else rows, task.drop_delete and not full_log)
    changelog = None
    values = [n for n in schema.names if n not in schema.keys]
    log_options = ChangelogOptions.from_table_options(options)
    if full_log:
        from_top = np.concatenate(
            [np.full(p.num_rows, f.level == task.max_level) for p, f in zip(parts, files, strict=True)]
        )
        changelog = full_changelog(rows, from_top, merged, schema.keys, values, SEQUENCE, KIND, log_options)
        kinds = merged.column(KIND).combine_chunks()
        merged = merged.filter(pc.invert(pc.is_in(kinds, pa.array(RETRACT_KINDS, pa.int8()))))
    if lookup_log:
        # Only the keys level 0 brings can change: merging just their rows keeps the cost of each
        # commit's changelog with the commit's size rather than the bucket's (Paimon looks them up).
        new_rows = rows.filter(pa.array(level0))
        changed = new_rows.select(keys)
        upper = [_rows_of(t, wanted, schema.keys) for t in (rows.filter(pa.array(~level0)), *older)]
        before = merge(pa.concat_tables(upper), False)
        # every level-0 row has a wanted key: no join needed for them
        now = merge(pa.concat_tables([new_rows, *upper]), False)
        changelog = lookup_changelog(
            before, now, changed, schema.keys, values, KIND, log_options, engine.engine == "first-row"
        )
    if older and engine.engine == "first-row":
        merged = _without_older_keys(older, schema.keys, merged)
    target = CompactionOptions.from_table_options(options).target_file_size
    after: list[Any] = []
    logs: list[Any] = []
    try:
        for part in _split(merged, target):
            after.append(
                data_files.write_data_file(table, task.partition, task.bucket, part, task.output_level, schema)
            )
        for part in _split(changelog, target) if changelog is not None else ():
            logs.append(
                data_files.write_data_file(
                    table, task.partition, task.bucket, part, task.output_level, schema, prefix="changelog-"
                )
            )
        index_after = []
        if vectors != loaded:
            written = index.write_vectors(table, task.partition, task.bucket, vectors)
            index_after = [written] if written is not None else []
    except Exception:
        delete_data_files(table, task.partition, task.bucket, after + logs)
        raise
    index_before = list(task.vector_files) if vectors != loaded else []
    return commits.CompactChange(task.partition, task.bucket, files, after, logs, index_before, index_after)


def needs_level0_lifted(options: Mapping[str, str]) -> bool:
    """first-row tables: readers skip level 0, so new files show only once compaction lifts them."""
    return str(options.get("merge-engine", "deduplicate")).strip().lower() == "first-row"


def plan(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    *,
    full: bool,
    partitions: Sequence[Mapping[str, str]] = (),
    ages: PartitionAges | None = None,
) -> list[Task]:
    """One task per bucket that needs compaction (universal rules, or everything when ``full``);
    append tables as ``append_compactor.plan`` says (``ages``: a streaming job's partition ages).

    Tables with ``deletion-vectors.enabled=true`` (MOW) and ``merge-engine=first-row`` tables lift
    level 0 at every call (Paimon's ``ForceUpLevel0Compaction``): their readers skip level 0. MOW
    readers do not merge the levels above it either, so the older versions of the lifted keys are
    marked in deletion vectors (``sinks.compaction.deletion_vectors``)."""
    table = tables.open_table(warehouse, catalog_options, identifier)
    options = table.options.options.to_map()
    wanted = [partition_values(table, p) for p in partitions]
    if not table.is_primary_key_table:
        return list(
            append_compactor.plan(table, identifier, warehouse, catalog_options, full=full, wanted=wanted, ages=ages)
        )
    mow = dv.enabled(options)
    try:
        engine = MergeOptions.from_table_options(options)
    except ValueError as exc:
        raise ValueError(f"table {identifier}: {exc}") from None
    opts = CompactionOptions.from_table_options(options)
    expiry = RecordExpiry.from_table_options(options)
    producer = ChangelogOptions.from_table_options(options).producer
    # Readers of first-row tables skip level 0; lookup produces each commit's changelog: both lift
    # level 0 at every compaction, as Paimon's ForceUpLevel0Compaction does.
    # MOW tables too: their readers skip level 0 and merge nothing, so the compaction after each
    # commit lifts level 0 and marks the older versions it replaces in deletion vectors.
    lifts = engine.engine == "first-row" or producer == "lookup" or mow
    pick = pick_full if full else pick_force_up_level0 if lifts else pick_universal
    snapshot = tables.latest_snapshot(table)
    vector_files = index.vector_index_files(table, snapshot) if mow else {}
    tasks: list[Task] = []
    for (partition, bucket), metas in sorted(manifests.live_files(table, snapshot).items(), key=lambda kv: repr(kv[0])):
        if wanted and partition not in wanted:
            continue
        lsm = [LsmFile.of(m) for m in metas]
        if pick is pick_full:
            # A bucket that is one top-level run already: Java's full compaction still rewrites its
            # files that hold expired records or have a deletion vector.
            rewrite = {name for f in vector_files.get((partition, bucket), ()) for name in f.dv_ranges or {}}
            if expiry is not None:
                now = int(time.time())
                rewrite |= {m.file_name for m in metas if expiry.expired(min_value(table, m, expiry.time_field), now)}
            unit: CompactUnit | None = pick_full(lsm, opts, rewrite)
        else:
            unit = pick(lsm, opts)
        if unit is None:
            continue
        names = {f.name for f in unit.files}
        chosen = tuple(m for m in metas if m.file_name in names)
        lookup = tuple(m for m in metas if m.file_name not in names) if lifts else ()
        changelog = (
            "lookup"
            if producer == "lookup"
            else "full-compaction"
            if producer == "full-compaction" and unit.output_level == opts.max_level
            else ""
        )
        tasks.append(
            BucketTask(
                warehouse,
                dict(catalog_options),
                identifier,
                partition,
                bucket,
                unit.output_level,
                # MOW: retractions go wherever the output goes, as the older versions they
                # retract are marked deleted (Paimon's dropDelete with a DV maintainer)
                unit.drop_delete or (mow and unit.output_level != 0),
                chosen,
                lookup,
                changelog,
                opts.max_level,
                mow,
                tuple(vector_files.get((partition, bucket), ())),
            )
        )
    return tasks


def partition_values(table: Any, spec: Mapping[str, str]) -> tuple[Any, ...]:
    """A ``--partition k=v`` spec as the table's typed partition values, in key order."""
    import datetime as dt
    from decimal import Decimal

    keys = list(table.partition_keys)
    if sorted(spec) != sorted(keys):
        raise ValueError(f"--partition must name every partition key of the table: {', '.join(keys) or '(none)'}")
    values: list[Any] = []
    for f in table.partition_keys_fields:
        text = spec[f.name]
        typ = str(f.type).upper()
        try:
            if typ.startswith(("TINYINT", "SMALLINT", "INT", "BIGINT")):
                values.append(int(text))
            elif typ.startswith("DECIMAL"):
                values.append(Decimal(text))
            elif typ.startswith(("FLOAT", "DOUBLE")):
                values.append(float(text))
            elif typ.startswith("BOOLEAN"):
                values.append(text.strip().lower() == "true")
            elif typ.startswith("DATE"):
                values.append(dt.date.fromisoformat(text))
            else:
                values.append(text)
        except (ValueError, ArithmeticError):  # decimal.InvalidOperation is an ArithmeticError
            raise ValueError(f"--partition {f.name}={text} is not a value of type {typ}") from None
    return tuple(values)


Runner = Callable[[Sequence[Task]], list[commits.CompactChange]]


def run_locally(tasks: Sequence[Task]) -> list[commits.CompactChange]:
    return [compact_task(t) for t in tasks]


def compact(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    commit_user: str,
    commit_identifier: int,
    *,
    full: bool = False,
    partitions: Sequence[Mapping[str, str]] = (),
    runner: Runner = run_locally,
) -> CompactionReport:
    """Plan, merge (through ``runner``: in process, or Spark tasks) and commit one table."""
    started = time.monotonic()
    tasks = plan(warehouse, catalog_options, identifier, full=full, partitions=partitions)
    if not tasks:
        return CompactionReport(identifier, 0, 0, 0, False, 0, time.monotonic() - started)
    changes = runner(tasks)
    table = tables.open_table(warehouse, catalog_options, identifier)
    result = commits.commit_compaction(table, commit_user, commit_identifier, changes)
    report = CompactionReport(
        table=identifier,
        buckets=len({(c.partition, c.bucket) for c in changes}),
        files_before=sum(len(c.before) for c in changes),
        files_after=sum(len(c.after) for c in changes),
        committed=result.committed,
        manifests_merged=result.manifests_merged,
        seconds=time.monotonic() - started,
        conflict=result.conflict,
    )
    if result.committed:
        log.info(
            "compacted",
            table=identifier,
            buckets=report.buckets,
            files_before=report.files_before,
            files_after=report.files_after,
            manifests_merged=report.manifests_merged,
            seconds=round(report.seconds, 3),
        )
    else:
        log.warning("compaction lost a race with another commit and was dropped", table=identifier, why=result.conflict)
    return report


def changed_tables(reports: Iterable[CompactionReport]) -> list[str]:
    return [r.table for r in reports if r.committed]
