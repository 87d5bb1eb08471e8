"""Warming Spark's Python workers at job start: the imports happen in the workers that later run
the job's tasks, never in the driver."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ingest.workers.warmup import start_warming, warm_workers

# A standard-library module that nothing in lakecdc or its dependencies imports (not colorsys:
# rich imports it, and structlog imports rich when it is installed, as import-linter brings it).
_PROBE = "wave"


def _loaded(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"pid": [os.getpid()], "loaded": [_PROBE in sys.modules]})


def test_warming_imports_modules_in_the_workers_that_run_later_tasks(spark: Any) -> None:
    assert _PROBE not in sys.modules  # the driver never imports it
    warmed = warm_workers(spark, [_PROBE, "ingest.streaming.write_task"])
    assert warmed and os.getpid() not in warmed
    assert _PROBE not in sys.modules
    tasks = 4 * spark.sparkContext.defaultParallelism
    probes = spark.range(0, tasks, 1, tasks).mapInArrow(_loaded, "pid long, loaded boolean").collect()
    # Workers are reused: later tasks run in the warmed workers, which have the module (other idle
    # workers of the session, if any, do not).
    assert any(r["pid"] in warmed for r in probes)
    assert all(r["loaded"] == (r["pid"] in warmed) for r in probes)


def test_warming_in_the_background_never_fails_the_job(spark: Any) -> None:
    thread = start_warming(spark, ["lakecdc_no_such_module"])
    assert thread is not None
    thread.join(timeout=120)
    assert not thread.is_alive()  # the import error was logged and swallowed
    assert start_warming(spark, ["lakecdc_no_such_module"]) is None  # once per Spark application
