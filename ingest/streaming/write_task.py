"""The write task's entry point, in a module of its own so a Python worker running it imports only
the writer (``sinks.write.writer``, pypaimon-rust), not the driver's modules: ``ingest.streaming.micro_batch`` pulls in
pypaimon's catalog and pandas, ~0.7 s of imports in every worker that writes for the first time."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pyarrow as pa

from ingest import logs
from ingest.workers.memory import release_unused_memory
from sinks.write.writer import WriteContext, write_chunks

# Test-only (tests/integration/kafka/test_task_retry.py): a marker file's path; the first write task that
# finds no file there creates it and fails after its data files are written and its commit messages sent,
# so the retried attempt's messages must be the only ones committed.
FAIL_ONCE_ENV = "LAKECDC_TEST_FAIL_WRITE_TASK_ONCE"


def write_task(batches: Iterator[pa.RecordBatch], ctx: WriteContext) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function of a micro-batch's write (Spark's Python workers never ran the CLI's
    set-up, so logging is configured here)."""
    logs.configure_once()
    yield from write_chunks(batches, ctx)
    if (marker := os.environ.get(FAIL_ONCE_ENV)) and not os.path.exists(marker):
        with contextlib.suppress(FileExistsError), open(marker, "x"):  # one attempt only, even of concurrent ones
            raise RuntimeError(f"{FAIL_ONCE_ENV}: this write task attempt fails once, after writing its files")
    release_unused_memory()
