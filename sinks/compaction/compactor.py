"""Compaction of a table: plan per bucket on the driver, merge on executors, commit one COMPACT
snapshot per table. A primary-key table's bucket is merged by ``sinks.compaction.bucket_compaction``;
append tables (no primary key) are planned and rewritten by ``sinks.compaction.append_compactor``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from sinks.compaction import append_compactor
from sinks.compaction import deletion_vectors as dv
from sinks.compaction.append_compactor import AppendTask
from sinks.compaction.append_picks import PartitionAges
from sinks.compaction.bucket_compaction import BucketTask, compact_bucket
from sinks.compaction.full_changelog import ChangelogOptions
from sinks.compaction.lsm import (
    CompactionOptions,
    CompactUnit,
    LsmFile,
    pick_force_up_level0,
    pick_full,
    pick_universal,
)
from sinks.compaction.merge.options import MergeOptions
from sinks.compaction.record_expiry import RecordExpiry
from sinks.store import commits, index, manifests, tables
from sinks.store.files import min_value

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataFileMeta, FileStoreTable, IndexFileMeta

log = structlog.get_logger(__name__)


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


Task = BucketTask | AppendTask


def compact_task(task: Task) -> commits.CompactChange:
    """Run one planned task (on an executor)."""
    if isinstance(task, AppendTask):
        return append_compactor.compact_files(task)
    return compact_bucket(task)


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
        unit = _pick(table, metas, vector_files.get((partition, bucket), ()), pick, opts, expiry)
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


def _pick(
    table: FileStoreTable,
    metas: Sequence[DataFileMeta],
    vector_files: Sequence[IndexFileMeta],
    pick: Callable[[Sequence[LsmFile], CompactionOptions], CompactUnit | None],
    opts: CompactionOptions,
    expiry: RecordExpiry | None,
) -> CompactUnit | None:
    """The unit ``pick`` chooses among a bucket's files. A bucket that is one top-level run already:
    Java's full compaction still rewrites its files that hold expired records or have a deletion
    vector."""
    lsm = [LsmFile.of(m) for m in metas]
    if pick is not pick_full:
        return pick(lsm, opts)
    rewrite = {name for f in vector_files for name in f.dv_ranges or {}}
    if expiry is not None:
        now = int(time.time())
        rewrite |= {m.file_name for m in metas if expiry.expired(min_value(table, m, expiry.time_field), now)}
    return pick_full(lsm, opts, rewrite)


def partition_values(table: FileStoreTable, spec: Mapping[str, str]) -> tuple[Any, ...]:
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
