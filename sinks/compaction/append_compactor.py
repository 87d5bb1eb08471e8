"""Compaction of append tables (no primary key): plan on the driver with Paimon's rules
(``sinks.compaction.append_picks``), rewrite on executors, commit as the same COMPACT snapshot as
primary-key compaction (``sinks.store.commits.commit_compaction``, with its conflict detection).

Append files need no merging to read right, so a task only concatenates its files — in write
order, streaming batch by batch — into files of about ``target-file-size``. Nothing is dropped or
reordered within a bucket; a streaming reader of the table sees no change (COMPACT snapshots are
not read as new data).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sinks.compaction.append_picks import (
    AppendCompactionOptions,
    AppendFile,
    PartitionAges,
    pack_unaware,
    pick_bucketed,
    pick_bucketed_full,
)
from sinks.store import commits, data_files, manifests, tables

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataFileMeta, FileStoreTable


@dataclass(frozen=True, slots=True)
class AppendTask:
    """Files of one bucket to rewrite as one, small and picklable: it travels to an executor."""

    warehouse: str
    catalog_options: Mapping[str, str]
    table: str
    partition: tuple[Any, ...]
    bucket: int
    files: tuple[DataFileMeta, ...]  # in write order


class NotCompactable(ValueError):
    """An append table lakecdc cannot compact (a database-wide compaction skips it)."""


def _write_order(meta: DataFileMeta) -> tuple[int, ...]:
    # pypaimon-rust starts every writer's sequence numbers at 0 in an append table, so files
    # written by different commits tie on it; their creation time orders them then.
    return (int(meta.min_sequence_number), int(meta.creation_time.get_millisecond()))


def unsupported(table: FileStoreTable) -> str | None:
    """Why lakecdc cannot compact this append table, or None."""
    options = table.options.options.to_map()
    for option in ("row-tracking.enabled", "data-evolution.enabled"):
        if str(options.get(option, "false")).strip().lower() == "true":
            return f"{option}=true (rewriting files would have to keep their row ids)"
    snapshot = tables.latest_snapshot(table)
    if snapshot is not None and snapshot.index_manifest:
        return "the table has index files (deletion vectors written elsewhere), which compaction would have to rewrite"
    return None


def plan(
    table: FileStoreTable,
    identifier: str,
    warehouse: str,
    catalog_options: Mapping[str, str],
    *,
    full: bool,
    wanted: Sequence[tuple[Any, ...]] = (),
    ages: PartitionAges | None = None,
) -> list[AppendTask]:
    """The append compactions due now: per fixed bucket one window of consecutive small files
    (``full``: everything after its leading large files), per partition of a bucket-unaware table
    bins of small files packed by size. ``ages`` (a streaming job's) lets a partition's leftover
    small files merge once it has waited, as Paimon's coordinator does; ``full`` does so at once."""
    why = unsupported(table)
    if why is not None:
        raise NotCompactable(f"table {identifier}: lakecdc does not compact this append table: {why}")
    opts = AppendCompactionOptions.from_table_options(table.options.options.to_map())
    unaware = int(table.total_buckets) == -1
    tasks: list[AppendTask] = []
    for (partition, bucket), metas in sorted(manifests.live_files(table).items(), key=lambda kv: repr(kv[0])):
        if wanted and partition not in wanted:
            continue
        by_name = {m.file_name: m for m in metas}
        files = [AppendFile(m.file_name, int(m.file_size), _write_order(m)) for m in metas]
        if unaware:
            small = [f.name for f in files if f.size < opts.compaction_file_size]
            key = (identifier, partition, bucket)
            waited = full or (ages is not None and ages.waited(key, small))
            picks = pack_unaware(files, opts, waited=waited)
            if ages is not None and not full:
                ages.planned(key, bool(picks))
        else:
            pick = pick_bucketed_full(files, opts) if full else pick_bucketed(files, opts)
            picks = [pick] if len(pick) > 1 else []
        for pick in picks:
            chosen = tuple(by_name[f.name] for f in sorted(pick, key=lambda f: f.order))
            tasks.append(AppendTask(warehouse, dict(catalog_options), identifier, partition, bucket, chosen))
    return tasks


def compact_files(task: AppendTask) -> commits.CompactChange:
    """Rewrite one task's files as few (runs on an executor)."""
    table = tables.open_table(task.warehouse, task.catalog_options, task.table)
    schema = data_files.keyed_schema(table)
    opts = AppendCompactionOptions.from_table_options(table.options.options.to_map())

    def chunks() -> Iterator[pa.Table]:
        for meta in task.files:
            yield from data_files.iter_data_file(table, task.partition, task.bucket, meta, schema)

    first = int(task.files[0].min_sequence_number)
    after = data_files.write_append_files(
        table, task.partition, task.bucket, chunks(), schema, first, opts.target_file_size
    )
    return commits.CompactChange(task.partition, task.bucket, list(task.files), after)
