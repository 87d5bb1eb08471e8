"""Warm Spark's Python workers while the job starts, instead of in its first micro-batch.

A Python worker is forked on first use and imports the modules of the task it runs (the source's
reader, pyarrow, pypaimon-rust): ~0.5 s per worker, paid by every core at the start of the first
micro-batch, on top of the JVM's own first-use costs. The driver spends its first seconds in Spark's
start-up and the stream's planning with the cores half idle, so one small job started beside them,
with a task per core, moves that cost out of the first batch (measured on 2 cores: the first
micro-batch of the bench command ~1.6 s shorter, the start-up of a job with nothing to read no
longer). Workers are reused between tasks (``spark.python.worker.reuse``, on by default), so the
imports stay done.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import structlog

log = structlog.get_logger(__name__)

_PID_SCHEMA = pa.schema([pa.field("pid", pa.int64())])


def warm_worker(batches: Iterator[pa.RecordBatch], modules: Sequence[str]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: import ``modules`` in this worker; one row with the worker's pid."""
    for name in modules:
        importlib.import_module(name)
    for _ in batches:
        pass
    yield pa.RecordBatch.from_arrays([pa.array([os.getpid()], pa.int64())], schema=_PID_SCHEMA)


def warm_workers(spark: Any, modules: Sequence[str]) -> set[int]:
    """Run one task per core that imports ``modules``; the pids of the workers it warmed."""
    cores = max(spark.sparkContext.defaultParallelism, 1)
    rows = spark.range(0, cores, 1, cores).mapInArrow(
        functools.partial(warm_worker, modules=tuple(modules)), "pid long"
    )
    return {r["pid"] for r in rows.collect()}


# (Spark application id, modules) already warmed: workers outlive a job, so a session that runs
# several jobs (tests, notebooks) warms them once.
_warmed: set[tuple[str, tuple[str, ...]]] = set()


def start_warming(spark: Any, modules: Sequence[str]) -> threading.Thread | None:
    """``warm_workers`` on a daemon thread: best effort, never delays or fails the job; None when
    this Spark application's workers were warmed with these modules already."""
    key = (str(spark.sparkContext.applicationId), tuple(modules))
    if key in _warmed:
        return None
    _warmed.add(key)

    def run() -> None:
        started = time.monotonic()
        try:
            pids = warm_workers(spark, modules)
        except Exception as exc:  # an optimisation only: the first micro-batch imports them anyway
            log.debug("python workers not warmed", error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
        log.debug("python workers warmed", workers=len(pids), seconds=round(time.monotonic() - started, 3))

    thread = threading.Thread(target=run, name="lakecdc-warm-workers", daemon=True)
    thread.start()
    return thread
