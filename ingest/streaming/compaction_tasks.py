"""A sync job's compaction tasks on the executors: one Spark task per planned bucket.

They run as a ``mapInArrow`` over ``spark.range``, the way the micro-batch's writers run, rather than
as an RDD ``map``: Spark keeps one pool of Python workers per kind of runner, so an RDD job forked
two more workers per core that then sat idle, each holding a merge's worth of memory, while the
next micro-batch read and wrote in the others (a 5M-row snapshot: 2.4 GiB peak, where one pool
held it to about 1.7 GiB; bench/README.md)."""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from ingest import logs
from ingest.workers.memory import compaction_pool, release_unused_memory
from sinks.compaction import compactor
from sinks.store.commits import CompactChange

_SCHEMA = pa.schema([pa.field("task", pa.int64()), pa.field("change", pa.binary())])


def compact_tasks(batches: Iterator[pa.RecordBatch], tasks: Sequence[compactor.Task]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: run the tasks whose indexes come in; one row (index, pickled change) each."""
    logs.configure_once()
    try:
        with compaction_pool():
            for batch in batches:
                for index in batch.column(0).to_pylist():
                    change = compactor.compact_task(tasks[index])
                    yield pa.RecordBatch.from_arrays(
                        [pa.array([index], pa.int64()), pa.array([pickle.dumps(change)], pa.binary())], schema=_SCHEMA
                    )
    finally:
        # The worker's next task may be a reader's: hand back what the merge freed.
        release_unused_memory()


def run_compaction(spark: Any, tasks: Sequence[compactor.Task]) -> list[CompactChange]:
    """Every task's change, in the tasks' order; only file metadata travels back to the driver."""
    n = len(tasks)
    rows = spark.range(0, n, 1, n).mapInArrow(
        functools.partial(compact_tasks, tasks=tuple(tasks)), "task long, change binary"
    )
    changes: dict[int, CompactChange] = {int(r["task"]): pickle.loads(r["change"]) for r in rows.collect()}
    return [changes[i] for i in range(n)]
