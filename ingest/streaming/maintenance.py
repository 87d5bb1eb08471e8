"""Table maintenance inside a sync job, after each micro-batch's data commit: compaction of the
buckets that need it (Spark tasks, one per bucket, in parallel), partition expiry (at the job's
first commit of a table, then every ``partition.expiration-check-interval``), automatic tags, then
snapshot expiry.

It runs between micro-batches, so it never races the job's own writers: the next batch's
writers start after the COMPACT snapshot and read the compacted buckets' sequence numbers.
``write-only=true`` skips both, as in Paimon; ``full-compaction.delta-commits=N`` compacts every
bucket fully after every N-th data commit (N=1 keeps a table copy-on-write: one file per bucket).
Append tables get their small files merged by Paimon's append-compaction rules.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import structlog

from ingest.streaming.compaction_tasks import run_compaction
from sinks.compaction import append_compactor, compactor
from sinks.compaction.append_picks import PartitionAges
from sinks.compaction.lsm import CompactionOptions
from sinks.crash_points import crash_point
from sinks.lifecycle import auto_tags, expire, partitions
from sinks.lifecycle.auto_tags import AutoTagOptions
from sinks.lifecycle.partition_expiry import PartitionExpiryOptions
from sinks.store.commits import CompactChange, commit_compaction
from sinks.store.tables import open_table

log = structlog.get_logger(__name__)


class StreamMaintenance:
    def __init__(self, warehouse: str, catalog_options: dict[str, str], commit_user: str) -> None:
        self.warehouse = warehouse
        self.catalog_options = catalog_options
        self.commit_user = commit_user
        self.data_commits: dict[str, int] = defaultdict(int)
        self.compactions = 0
        self.expired_snapshots = 0
        self.expired_partitions = 0
        self._partition_checks: dict[str, float] = {}  # table -> monotonic time of its last check
        self._append_ages = PartitionAges()  # append tables: how long partitions' small files waited
        self._append_refused: set[str] = set()  # append tables lakecdc cannot compact (warned once)

    def after_commit(self, spark: Any, tables: Sequence[str], batch_id: int) -> None:
        """Compact and expire the tables this micro-batch wrote."""
        tasks: list[compactor.Task] = []
        active: dict[str, AutoTagOptions | None] = {}  # table -> its automatic-tag options
        expiring: list[str] = []  # tables whose partition-expiry check is due
        for table in tables:
            paimon_table = open_table(self.warehouse, self.catalog_options, table)
            options = paimon_table.options.options.to_map()
            opts = CompactionOptions.from_table_options(options)
            if opts.write_only:
                continue
            active[table] = AutoTagOptions.from_table_options(options)
            expiry = PartitionExpiryOptions.from_table_options(options)
            last = self._partition_checks.get(table)
            if expiry.expiration_ms is not None and (
                last is None or time.monotonic() - last >= expiry.check_interval_ms / 1000
            ):
                expiring.append(table)
            self.data_commits[table] += 1
            if not paimon_table.is_primary_key_table:
                # Append tables: small files merged by Paimon's rules (never a full compaction).
                why = append_compactor.unsupported(paimon_table)
                if why is None:
                    tasks += compactor.plan(
                        self.warehouse, self.catalog_options, table, full=False, ages=self._append_ages
                    )
                elif table not in self._append_refused:
                    self._append_refused.add(table)
                    log.warning("append table not compacted", table=table, why=why)
                continue
            every = opts.full_compaction_delta_commits
            full = every is not None and self.data_commits[table] % every == 0
            tasks += compactor.plan(self.warehouse, self.catalog_options, table, full=full)
        if tasks:
            started = time.monotonic()
            changes = run_compaction(spark, tasks)
            crash_point("compaction-written")
            by_table: dict[str, list[CompactChange]] = defaultdict(list)
            for task, change in zip(tasks, changes, strict=True):
                by_table[task.table].append(change)
            for table, table_changes in by_table.items():
                paimon_table = open_table(self.warehouse, self.catalog_options, table)
                # The job's commit user and the batch id, as Paimon's writers do: a replayed batch
                # finds its data commit done and simply compacts what is there now.
                result = commit_compaction(paimon_table, self.commit_user, batch_id, table_changes)
                self.compactions += result.committed
                log.info(
                    "compacted" if result.committed else "compaction dropped after a conflict",
                    table=table,
                    batch=batch_id,
                    buckets=len({(c.partition, c.bucket) for c in table_changes}),
                    files_before=sum(len(c.before) for c in table_changes),
                    files_after=sum(len(c.after) for c in table_changes),
                    manifests_merged=result.manifests_merged,
                    seconds=round(time.monotonic() - started, 3),
                )
        for table in expiring:
            self._partition_checks[table] = time.monotonic()
            self.expired_partitions += len(
                partitions.expire_partitions(self.warehouse, self.catalog_options, table).expired
            )
        for table, tag_options in active.items():
            # Automatic tags first: a tag keeps its snapshot's files through the expiry below.
            if tag_options is not None:
                auto_tags.apply(open_table(self.warehouse, self.catalog_options, table), tag_options)
            self.expired_snapshots += expire.expire_snapshots(
                self.warehouse, self.catalog_options, table
            ).expired_snapshots
