"""Compaction of primary-key tables: plan per bucket on the driver, merge on executors, commit one
COMPACT snapshot per table.

A bucket's files are merged in Arrow: rows sorted by (key, ``sequence.field``, sequence number),
the last row per key kept (deduplicate), retractions dropped only when the output is the highest
non-empty level (nothing older below could need them). Output rows keep their original sequence
numbers, so a writer that continues the bucket afterwards still orders after them, and a level-0
file written while the compaction ran still wins over its output.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import structlog

from sinks import paimon_store as store
from sinks.lsm import CompactionOptions, CompactUnit, pick_full, pick_universal

log = structlog.get_logger(__name__)

# Merge engines whose merge is "one row per key, chosen by order" and so done here in Arrow.
MERGEABLE_ENGINES = ("deduplicate",)


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


def merge_engine(options: Mapping[str, str]) -> str:
    return str(options.get("merge-engine", "deduplicate")).strip().lower()


def merge_rows(
    data: pa.Table,
    keys: Sequence[str],
    sequence_fields: Sequence[str],
    drop_delete: bool,
    sequence_descending: bool = False,
) -> pa.Table:
    """Deduplicate: the row with the highest (sequence.field, sequence number) per key — the lowest
    sequence.field with ``sequence_descending`` — sorted by key; retractions removed when ``drop_delete``."""
    if data.num_rows == 0:
        return data
    direction = "descending" if sequence_descending else "ascending"
    order = [(k, "ascending") for k in keys] + [(f, direction) for f in sequence_fields]
    order.append((store.SEQUENCE, "ascending"))
    # Java orders null sequence.field values first in either sort order (a null never wins);
    # keys are never null.
    data = data.take(pc.sort_indices(data, sort_keys=order, null_placement="at_start"))
    n = data.num_rows
    last = pa.array([True])
    if n > 1:
        change: pa.Array | None = None
        for k in keys:
            col = data.column(k).combine_chunks()
            differs = pc.not_equal(col.slice(0, n - 1), col.slice(1))
            change = differs if change is None else pc.or_(change, differs)
        assert change is not None
        last = pa.concat_arrays([change, pa.array([True])])
    mask = last
    if drop_delete:
        kinds = data.column(store.KIND).combine_chunks()
        mask = pc.and_(mask, pc.invert(pc.is_in(kinds, pa.array(store.RETRACT_KINDS, pa.int8()))))
    return data.filter(mask)


def _split(data: pa.Table, target_bytes: int) -> list[pa.Table]:
    if data.num_rows == 0:
        return []
    per_row = max(1, data.nbytes // data.num_rows)
    rows = max(1, target_bytes // per_row)
    return [data.slice(i, rows) for i in range(0, data.num_rows, rows)]


def compact_bucket(task: BucketTask) -> store.CompactChange:
    """Merge one bucket's unit into ``task.output_level`` (runs on an executor)."""
    table = store.open_table(task.warehouse, task.catalog_options, task.table)
    files = list(task.files)
    only = files[0] if len(files) == 1 else None
    if only is not None and (not task.drop_delete or not only.delete_row_count):
        # Paimon's upgrade: a lone file holds one sorted run already; moving it up a level
        # (same file, new level) is all the merge would do.
        return store.CompactChange(task.partition, task.bucket, [only], [store.with_level(only, task.output_level)])
    schema = store.keyed_schema(table)
    parts = [store.read_data_file(table, task.partition, task.bucket, f, schema) for f in files]
    merged = merge_rows(
        pa.concat_tables(parts), schema.keys, schema.sequence_fields, task.drop_delete, schema.sequence_descending
    )
    target = CompactionOptions.from_table_options(table.options.options.to_map()).target_file_size
    after: list[Any] = []
    try:
        for part in _split(merged, target):
            after.append(store.write_data_file(table, task.partition, task.bucket, part, task.output_level, schema))
    except Exception:
        store.delete_data_files(table, task.partition, task.bucket, after)
        raise
    return store.CompactChange(task.partition, task.bucket, files, after)


def deletion_vectors(options: Mapping[str, str]) -> bool:
    return str(options.get("deletion-vectors.enabled", "false")).strip().lower() == "true"


def plan(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    *,
    full: bool,
    partitions: Sequence[Mapping[str, str]] = (),
) -> list[BucketTask]:
    """One task per bucket that needs compaction (universal rules, or everything when ``full``).

    Tables with ``deletion-vectors.enabled=true`` (MOW) always compact fully: their readers skip
    level 0 and read the other levels without merging, so every bucket must be one sorted run
    above level 0 — lakecdc writes no deletion vectors, so a partial compaction would show a key
    twice."""
    table = store.open_table(warehouse, catalog_options, identifier)
    options = table.options.options.to_map()
    full = full or deletion_vectors(options)
    engine = merge_engine(options)
    if not table.is_primary_key_table:
        raise ValueError(f"table {identifier} has no primary key; lakecdc compacts primary-key tables only")
    if engine not in MERGEABLE_ENGINES:
        engines = ", ".join(MERGEABLE_ENGINES)
        raise ValueError(f"table {identifier} uses merge-engine={engine}; lakecdc compacts {engines} tables only")
    opts = CompactionOptions.from_table_options(options)
    wanted = [partition_values(table, p) for p in partitions]
    tasks: list[BucketTask] = []
    for (partition, bucket), metas in sorted(store.live_files(table).items(), key=lambda kv: repr(kv[0])):
        if wanted and partition not in wanted:
            continue
        lsm = [store.lsm_file(m) for m in metas]
        unit: CompactUnit | None = pick_full(lsm, opts) if full else pick_universal(lsm, opts)
        if unit is None:
            continue
        names = {f.name for f in unit.files}
        chosen = tuple(m for m in metas if m.file_name in names)
        tasks.append(
            BucketTask(
                warehouse,
                dict(catalog_options),
                identifier,
                partition,
                bucket,
                unit.output_level,
                unit.drop_delete,
                chosen,
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


Runner = Callable[[Sequence[BucketTask]], list[store.CompactChange]]


def run_locally(tasks: Sequence[BucketTask]) -> list[store.CompactChange]:
    return [compact_bucket(t) for t in tasks]


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
    table = store.open_table(warehouse, catalog_options, identifier)
    result = store.commit_compaction(table, commit_user, commit_identifier, changes)
    report = CompactionReport(
        table=identifier,
        buckets=len(changes),
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
