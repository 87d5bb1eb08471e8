"""The write task's entry point, in a module of its own so a Python worker running it imports only
the writer (``sinks.write.writer``, pypaimon-rust), not the driver's modules: ``ingest.streaming.micro_batch`` pulls in
pypaimon's catalog and pandas, ~0.7 s of imports in every worker that writes for the first time."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from ingest import logs
from ingest.workers.memory import keep_pandas_out, release_unused_memory
from sinks.write.writer import WriteContext, write_chunks


def write_task(batches: Iterator[pa.RecordBatch], ctx: WriteContext) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function of a micro-batch's write (Spark's Python workers never ran the CLI's
    set-up, so logging is configured here)."""
    logs.configure_once()
    keep_pandas_out()
    yield from write_chunks(batches, ctx)
    release_unused_memory()
