"""One micro-batch, end to end (the ``foreachBatch`` callback): plan on the driver, write on
executors, commit on the driver.

    1. collect the distinct (table, record schema) pairs and DDL of the batch  [tiny, to driver]
    2. create / evolve tables so every chunk fits                              [driver, catalog]
    3. route each table's chunks to its write tasks (one, or one per bucket group for a large
       batch), in source order; tasks write with pypaimon-rust and return serialized commit
       messages                                                                [executors]
    4. commit per table with the batch id as identifier                       [driver]
    5. compact the buckets that need it and expire snapshots                    [executors, driver]
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import structlog

from ingest.pipeline.dead_letters import DeadLetterLimit
from ingest.streaming.checkpoint import CheckpointGuard
from ingest.streaming.dead_letter_table import DeadLetterTable
from ingest.streaming.maintenance import StreamMaintenance
from ingest.streaming.stopping import BatchGate
from ingest.streaming.write_task import write_task
from schema_evolution.payloads import ddl_fields
from sinks.crash_points import crash_point
from sinks.layout import RecordSchema
from sinks.table.prepare import TablePreparer
from sinks.write.bucket_routing import MIN_ROWS, plan_routings
from sinks.write.committer import Committer
from sinks.write.writer import COMMIT_MESSAGE_DDL, WriteContext

log = structlog.get_logger(__name__)

_ORDER = ["table", "topic", "kafka_partition", "first_offset", "seq"]
COMMIT_THREADS = 4  # tables committed at once after the batch's first (bench/scale.py)


@dataclass
class BatchStats:
    batches: int = 0
    events: int = 0
    rows: int = 0
    commits: int = 0
    skipped_commits: int = 0
    dead_letters: int = 0  # since the job started (--errors-tolerance all)
    per_table: dict[str, int] = field(default_factory=lambda: defaultdict(int))


# Set once on the job's session (``configure_session``, at job start), for the write step:
SESSION_CONF = {
    # Spark 4 otherwise concatenates a union of single-partition children into ONE task (the union
    # "keeps" their partitioning): every table and writer group would then be written by the same
    # task, one after the other.
    "spark.sql.unionOutputPartitioning": "false",
    # Hand write tasks a few chunks (each up to 8k rows) per Arrow batch, not a whole table's
    # (Spark's default is 10,000 records): every writer of a table then holds a few chunks at a
    # time, not all of them — ~60 MiB less per writer in the bench, no slower (A/B runs). The
    # sources' read tasks yield Arrow batches, which Spark passes on as they are.
    "spark.sql.execution.arrow.maxRecordsPerBatch": "4",
}


def configure_session(spark: Any) -> None:
    """The session settings the write step needs (they override ``--spark-conf``, as they always did)."""
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)


@dataclass
class BatchPlan:
    """What the driver planned for one micro-batch."""

    batch_id: int
    log: Any  # the logger bound to the batch
    meta: list[Any]  # one row per data chunk, in source order
    tables: list[str]  # the tables to write, in order of first appearance
    context: WriteContext  # layouts and routings, shipped to the write tasks
    collected: float  # monotonic time when the metadata was read
    dead_letters: int = 0  # rows for the dead-letter table
    rows: dict[str, int] = field(default_factory=dict)  # rows per table in this batch
    replayed: set[str] = field(default_factory=set)  # tables whose commit of this batch was already in Paimon


def write_groups(tables: list[str], rows: dict[str, int], tasks: int) -> list[list[str]]:
    """The write tasks of the tables written by one writer each: one task per table while there are
    no more tables than ``tasks``, else ``tasks`` groups balanced by rows (largest first, each to the
    least loaded group), each group's tables in the batch's order. A task per table made a
    1,000-table batch 1,000 Spark tasks, each reading every cached partition (bench/scale.py)."""
    if len(tables) <= tasks:
        return [[t] for t in tables]
    loads = [0] * tasks
    member: dict[str, int] = {}
    for table in sorted(tables, key=lambda t: -rows.get(t, 0)):
        group = loads.index(min(loads))
        member[table] = group
        loads[group] += max(rows.get(table, 0), 1)
    return [g for g in ([t for t in tables if member[t] == i] for i in range(tasks)) if g]


# A batch at least this large has its cache released with a full collection after it in local mode.
GC_MIN_ROWS = 100_000


def _release_cache(df: Any, rows: int) -> None:
    """Drop the batch's cache once every writer has read it, before the commit and maintenance.

    In local mode the driver JVM is the executor: its serial collector kept the last batch's cached
    chunks (~100 MiB in a 490k-row batch) as old-generation garbage until the next full collection,
    through the next batch's planning, writes and the first compactions, the job's peak. A full
    collection on a 256 MiB heap costs tens of ms per large batch: the 5M-row UUID snapshot peaked
    50-70 MiB lower (1,852-1,862 MiB), the 1M-message Kafka command took as long (bench/README.md).
    On a cluster the executors collect their own heaps; the driver holds no chunks."""
    df.unpersist(blocking=True)
    context = df.sparkSession.sparkContext
    if rows >= GC_MIN_ROWS and context.master.startswith("local"):
        context._jvm.java.lang.System.gc()


class MicroBatchProcessor:
    """The ``foreachBatch`` function of a sync job."""

    def __init__(
        self,
        warehouse: str,
        catalog_options: dict[str, str],
        commit_user: str,
        preparer: TablePreparer,
        on_marks: Callable[[int, list[str], Callable[[str], bool]], None] | None = None,
        parallel_write_min_rows: int = MIN_ROWS,
        guard: CheckpointGuard | None = None,
        dead_letters: DeadLetterTable | None = None,
        max_dead_letters: int | None = None,
    ) -> None:
        self.warehouse = warehouse
        self.catalog_options = catalog_options
        self.commit_user = commit_user
        self.preparer = preparer
        self.on_marks = on_marks
        self.parallel_write_min_rows = parallel_write_min_rows
        self.committer = Committer(warehouse, catalog_options, commit_user)
        self.maintenance = StreamMaintenance(warehouse, catalog_options, commit_user)
        # Leases and the checkpoint's batch ids against the commit user's (ingest.streaming.checkpoint)
        self.guard = guard
        # --errors-tolerance all: the table dead letters go to, and how many one batch may have
        self.dead_letters = dead_letters
        self.max_dead_letters = max_dead_letters
        self.stats = BatchStats()
        self.failure: BaseException | None = None
        # Called after each committed batch: (plan, durations, compactions so far); ingest.streaming.progress
        self.on_committed: Callable[[BatchPlan, dict[str, float], int], None] | None = None
        # Held while a batch is processed; closed when the job stops (ingest.streaming.stopping)
        self.gate = BatchGate()

    def __call__(self, df: Any, batch_id: int) -> None:
        try:
            with self.gate.batch(batch_id):
                self._process(df, batch_id)
        except BaseException as exc:
            self.failure = exc
            raise

    def _process(self, df: Any, batch_id: int) -> None:
        from pyspark import StorageLevel

        started = time.monotonic()
        # Deserialized: PySpark's MEMORY_AND_DISK is the *serialized* level (StorageLevel(True, True,
        # False, False)), so every chunk was Java-serialized into the cache and deserialized again by
        # each of the batch's reads (the plan's collect and every writer group): ~3-3.5 s of JVM CPU
        # and many full collections per 1M bench messages (bench/README.md).
        df = df.persist(StorageLevel.MEMORY_AND_DISK_DESER)
        try:
            plan = self._plan(df, batch_id)
            if plan is None:
                return
            messages = self._write(df, plan)
            written = time.monotonic()
            _release_cache(df, sum(plan.rows.values()))
            committed_tables = self._commit(plan, messages)
            committed = time.monotonic()
            self.maintenance.after_commit(df.sparkSession, committed_tables, batch_id)
            events, rows = self._count(plan)
            if plan.dead_letters:
                assert self.dead_letters is not None
                plan.log.warning(
                    "messages dead-lettered",
                    dead_letters=plan.dead_letters,
                    table=self.dead_letters.identifier,
                    total=self.stats.dead_letters,
                )
            plan.log.info(
                "micro-batch committed",
                tables=len(plan.tables),
                events=events,
                rows=rows,
                dead_letters=plan.dead_letters,
                seconds=round(time.monotonic() - started, 3),
                read_parse_plan_s=round(plan.collected - started, 3),
                write_s=round(written - plan.collected, 3),
                commit_s=round(committed - written, 3),
                maintenance_s=round(time.monotonic() - committed, 3),
            )
            if self.on_committed is not None:
                durations = {"seconds": time.monotonic() - started, "write_s": written - plan.collected}
                durations.update(commit_s=committed - written, maintenance_s=time.monotonic() - committed)
                self.on_committed(plan, durations, self.maintenance.compactions)
        finally:
            df.unpersist()  # (a failed batch's; a written one's cache is gone already)

    def _plan(self, df: Any, batch_id: int) -> BatchPlan | None:
        """Collect the batch's chunk metadata (never data), create or evolve its tables, keep the
        source's marks and plan the writers; None when there is nothing to write."""
        bound = log.bind(batch=batch_id)
        # One small row per chunk: the plan of the batch. Reading it computes the cached chunks; no
        # shuffle is needed for it.
        meta = df.select(*_ORDER, "last_offset", "schema", "rows", "events", "ddl", "mark").collect()
        collected = time.monotonic()
        if not meta:
            return None
        meta.sort(key=lambda r: (r["topic"], r["kafka_partition"], r["first_offset"], r["seq"]))
        schemas: list[tuple[str, RecordSchema]] = []
        seen: set[tuple[str, str]] = set()
        marks = [r["mark"] for r in meta if r["mark"] is not None]
        meta = [r for r in meta if r["mark"] is None]
        dead_letter_table = self.dead_letters.identifier if self.dead_letters is not None else None
        letters = [r for r in meta if r["table"] == dead_letter_table]
        dead_letters = sum(r["rows"] for r in letters)
        if letters:
            self._check_dead_letters(batch_id, letters, dead_letters)
        for r in meta:
            if r["table"] == dead_letter_table:
                continue  # its table is made apart from the job's table policy (DeadLetterTable)
            if r["ddl"] is not None:
                # Paimon's CDC semantics: the schema follows the types carried by data messages;
                # DDL messages are acknowledged and carry no rows.
                # (its kind and length; the statement only with --log-payloads)
                ddl = ddl_fields(r["ddl"])
                bound.info("DDL message seen; schema follows the data messages", table=r["table"], **ddl)
            elif (r["table"], r["schema"]) not in seen:
                seen.add((r["table"], r["schema"]))
                schemas.append((r["table"], RecordSchema.from_json(r["schema"])))
        layouts = self.preparer.prepare(schemas)
        tables = [t for t in dict.fromkeys(t for t, _ in schemas) if t in layouts]
        if dead_letters:
            assert self.dead_letters is not None and dead_letter_table is not None
            layouts[dead_letter_table] = self.dead_letters.layout()
            tables.append(dead_letter_table)
        if self.guard is not None:
            self.guard.before_write(batch_id, tables)  # leases, batch id vs. committed ids: refused here
        if marks and self.on_marks is not None:
            # Kept before the commit, and only for tables whose commit of this batch id is not
            # already in Paimon (a replay keeps the notes of the attempt that committed).
            self.on_marks(batch_id, marks, functools.partial(self.committer.is_committed, batch_id=batch_id))
        if not tables:
            return None
        rows_by_table: dict[str, int] = defaultdict(int)
        for r in meta:
            rows_by_table[r["table"]] += r["rows"] or 0
        routings = plan_routings(
            self.warehouse,
            self.catalog_options,
            {t: rows_by_table[t] for t in tables},
            layouts,
            df.sparkSession.sparkContext.defaultParallelism,
            self.parallel_write_min_rows,
        )
        ctx = WriteContext(self.warehouse, self.catalog_options, self.commit_user, batch_id, layouts, routings)
        return BatchPlan(batch_id, bound, meta, tables, ctx, collected, dead_letters, dict(rows_by_table))

    def _check_dead_letters(self, batch_id: int, letters: list[Any], count: int) -> None:
        """--max-dead-letters: stop before anything of the batch is written or committed."""
        limit = self.max_dead_letters
        if limit is None or count <= limit:
            return
        spans: dict[tuple[str, int], tuple[int, int]] = {}
        for r in letters:
            where = (r["topic"], r["kafka_partition"])
            first, last = spans.get(where, (r["first_offset"], r["last_offset"]))
            spans[where] = (min(first, r["first_offset"]), max(last, r["last_offset"]))
        ranges = [f"{t}:{p} offsets {a}..{b}" for (t, p), (a, b) in sorted(spans.items())[:5]]
        raise DeadLetterLimit(
            f"micro-batch {batch_id} has {count} dead letters, more than --max-dead-letters {limit} "
            f"({'; '.join(ranges)}{' ...' if len(spans) > 5 else ''}). The job stopped before committing anything "
            "of it. Check the producer and value.format; to take them all, restart with a higher --max-dead-letters "
            "(the job resumes at this micro-batch)"
        )

    def _write(self, df: Any, plan: BatchPlan) -> list[Any]:
        """Write every table's chunks on executors; the serialized commit messages."""
        from pyspark.sql import functions as F

        routings = plan.context.routings or {}
        data = df.where(F.col("rows") > 0)
        # Write tasks read the cached chunks of their table in input-partition order, which is
        # Kafka order within each partition (ranges are planned and grouped into read tasks in
        # offset order, kafka_source.group_ranges): source order
        # without a shuffle or a sort. A large table's batch gets one task per writer group, each
        # writing its own buckets (bucket_routing); the others one task. The union of these
        # single-partition plans runs as one task per child thanks to SESSION_CONF. Tables with one
        # writer each share tasks once there are more of them than cores (write_groups): a task
        # reads its tables' chunks in the same order and writes each table with its own writer.
        per_table = [
            data.where(F.col("table") == t).coalesce(1).withColumn("write_group", F.lit(group))
            for t in plan.tables
            if t in routings
            for group in range(routings[t].writers)
        ]
        single = [t for t in plan.tables if t not in routings]
        parallelism = df.sparkSession.sparkContext.defaultParallelism
        for tables in write_groups(single, plan.rows, parallelism):
            where = F.col("table") == tables[0] if len(tables) == 1 else F.col("table").isin(tables)
            per_table.append(data.where(where).coalesce(1).withColumn("write_group", F.lit(0)))
        messages: list[Any] = (
            functools.reduce(lambda a, b: a.union(b), per_table)
            .mapInArrow(functools.partial(write_task, ctx=plan.context), COMMIT_MESSAGE_DDL)
            .collect()
        )
        return messages

    def _commit(self, plan: BatchPlan, messages: list[Any]) -> list[str]:
        """Commit each table's messages with the batch id as identifier; the tables written."""
        by_table: dict[str, list[bytes]] = defaultdict(list)
        for m in messages:
            by_table[m["table"]].append(bytes(m["message"]))
        tables = [t for t in plan.tables if by_table.get(t)]
        if self.guard is not None:
            self.guard.before_commit(tables)
        crash_point("before-commit")

        def commit(table: str, first: bool) -> bool:
            if not first:
                crash_point("between-table-commits")
            if self.guard is not None:
                self.guard.before_table_commit(table)
            return self.committer.commit(table, plan.batch_id, by_table[table])

        # The first table alone, then the others on a few threads: each table's commit is atomic and
        # a replay skips the ones done (filter_and_commit), whichever of them a crash interrupted.
        # pypaimon-rust's commit leaves the GIL, so 1,000 tables commit ~1.6x faster on 4 threads.
        done = [commit(tables[0], True)] if tables else []
        if len(tables) > 1:
            with ThreadPoolExecutor(min(COMMIT_THREADS, len(tables) - 1), thread_name_prefix="commit") as pool:
                futures = [pool.submit(commit, table, False) for table in tables[1:]]
            done += [f.result() for f in futures]
        for table, committed in zip(tables, done, strict=True):
            if committed:
                self.stats.commits += 1
            else:
                self.stats.skipped_commits += 1
                plan.replayed.add(table)
                if self.guard is not None:
                    self.guard.skipped(table, plan.batch_id)
        return tables

    def _count(self, plan: BatchPlan) -> tuple[int, int]:
        """Add the batch to the job's statistics; its (events, rows)."""
        dead_letter_table = self.dead_letters.identifier if self.dead_letters is not None else None
        synced = [
            r
            for r in plan.meta
            if r["schema"] is not None and r["table"] in plan.context.layouts and r["table"] != dead_letter_table
        ]
        rows = sum(r["rows"] for r in synced)
        events = sum(r["events"] for r in synced)
        if dead_letter_table not in plan.replayed:  # a replay's letters were counted by the run that committed them
            self.stats.dead_letters += plan.dead_letters
        self.stats.batches += 1
        self.stats.rows += rows
        self.stats.events += events
        for r in synced:
            self.stats.per_table[r["table"]] += r["events"]
        return events, rows
