"""Executor side of a micro-batch: write a table's chunks with pypaimon-rust, return commit messages.

Exactly-once rests on three rules (shared/DESIGN.md): one writer per bucket per micro-batch
(the driver routes all chunks of a table to one task, or to one task per group of buckets that
all compute each row's bucket alike: ``bucket_routing``), rows written in source order (chunks
arrive sorted by their Kafka position), and the micro-batch id as the commit identifier.
Writers are created here, on the thread that uses them, after the driver's ALTERs, so they see
the table's current schema.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import structlog

from schema_evolution.arrow_types import to_arrow
from schema_evolution.errors import UnsupportedChange
from sinks.layout import TableLayout
from sinks.write.bucket_routing import Router, Routing
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_BEFORE, VALUE_KIND, deserialize_batch

if TYPE_CHECKING:
    from pypaimon_rust.datafusion import StreamTableWrite

log = structlog.get_logger(__name__)

COMMIT_MESSAGE_SCHEMA = pa.schema([pa.field("table", pa.string()), pa.field("message", pa.binary())])
COMMIT_MESSAGE_DDL = "table string, message binary"


@dataclass(frozen=True, slots=True)
class WriteContext:
    """Everything a write task needs, pickled once per micro-batch into the Spark closure."""

    warehouse: str
    catalog_options: Mapping[str, str]
    commit_user: str
    batch_id: int
    layouts: Mapping[str, TableLayout]
    # Tables written by several tasks, each its own buckets (``bucket_routing``); the rest by one.
    routings: Mapping[str, Routing] | None = None


def align(batch: pa.RecordBatch, layout: TableLayout, where: str) -> pa.RecordBatch:
    """Shape a chunk to the table's current schema: its columns in schema order, widened to the
    table's types, columns the chunk lacks as nulls, then ``_VALUE_KIND`` for key tables."""
    n = batch.num_rows
    names = batch.schema.names
    arrays: list[pa.Array] = []
    out_names: list[str] = []
    for name, typ in layout.fields:
        target = to_arrow(typ)
        if name in names:
            col = batch.column(names.index(name))
            if col.type != target:
                col = pc.cast(col, target)
        else:
            col = pa.nulls(n, target)
        if name in layout.primary_keys and col.null_count:
            raise UnsupportedChange(layout.identifier, None, f"primary key column '{name}' is null in {where}")
        arrays.append(col)
        out_names.append(name)
    kinds = batch.column(names.index(VALUE_KIND))
    if layout.refuses_retractions and pc.any(pc.is_in(kinds, pa.array([UPDATE_BEFORE, DELETE], kinds.type))).as_py():
        raise UnsupportedChange(
            layout.identifier,
            None,
            f"{where} has updates or deletes, but {layout.refuses_retractions} (on the table with "
            f"ALTER TABLE ... SET, or in --table-conf when the job creates it)",
        )
    if layout.has_primary_key:
        arrays.append(kinds)
        out_names.append(VALUE_KIND)
    elif not pc.all(pc.equal(kinds, INSERT)).as_py():
        raise UnsupportedChange(
            layout.identifier,
            None,
            f"{where} has updates or deletes, but the table has no primary key (an append table "
            f"takes inserts only). Give --primary-keys, or sync into a table with a primary key.",
        )
    return pa.RecordBatch.from_arrays(arrays, names=out_names)


def write_chunks(batches: Iterable[pa.RecordBatch], ctx: WriteContext) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: chunk rows in, serialized commit messages out (one row per message).

    A chunk row's ``write_group`` says which of its table's writers this task is: with a routing,
    every task reads all the table's chunks and writes the rows of its own buckets."""
    from pypaimon_rust.datafusion import PaimonCatalog

    started = time.monotonic()
    catalog = PaimonCatalog({**ctx.catalog_options, "warehouse": ctx.warehouse})
    writers: dict[str, StreamTableWrite] = {}
    routers: dict[str, Router] = {}
    rows_written: dict[str, int] = {}
    busy = 0.0  # seconds spent writing, as opposed to waiting for Spark to hand over chunks
    routings = ctx.routings or {}
    for batch in batches:
        batch_started = time.monotonic()
        # Small columns as Python values; the chunk payloads stay Arrow buffers (no copy of the data).
        small = batch.select(["table", "topic", "kafka_partition", "first_offset", "last_offset", "rows"]).to_pydict()
        groups = batch.column("write_group").to_pylist() if "write_group" in batch.schema.names else [0] * len(batch)
        payloads = batch.column("data")
        for i, (table, topic, part, first, last, rows, group) in enumerate(
            zip(
                small["table"],
                small["topic"],
                small["kafka_partition"],
                small["first_offset"],
                small["last_offset"],
                small["rows"],
                groups,
                strict=True,
            )
        ):
            data = payloads[i]
            if not rows or not data.is_valid:
                continue
            layout = ctx.layouts[table]
            where = f"the messages of topic '{topic}', partition {part}, offsets {first}..{last}"
            aligned = align(deserialize_batch(data.as_buffer()), layout, where)
            routing = routings.get(table)
            if routing is None:
                parts: Iterable[tuple[int | None, pa.RecordBatch]] = [(None, aligned)]
            else:
                router = routers.get(table)
                if router is None:
                    router = routers[table] = Router(routing)
                parts = router.split(aligned, group)
            for bucket, part_rows in parts:
                writer = writers.get(table)
                if writer is None:
                    builder = catalog.get_table(table).new_stream_write_builder().with_commit_user(ctx.commit_user)
                    writer = writers[table] = builder.new_write()
                if bucket is None:
                    writer.write_arrow(part_rows)
                else:
                    writer.write_arrow(part_rows, bucket)
                rows_written[table] = rows_written.get(table, 0) + part_rows.num_rows
        busy += time.monotonic() - batch_started
    for table, writer in writers.items():
        prepare_started = time.monotonic()
        messages = writer.prepare_commit(True, ctx.batch_id)
        writer.close()
        serialized = [m.serialize() for m in messages]
        log.debug(
            "table written",
            table=table,
            rows=rows_written[table],
            messages=len(serialized),
            seconds=round(time.monotonic() - started, 3),
            write_arrow_s=round(busy, 3),
            prepare_commit_s=round(time.monotonic() - prepare_started, 3),
        )
        yield pa.RecordBatch.from_arrays(
            [pa.array([table] * len(serialized), pa.string()), pa.array(serialized, pa.binary())],
            schema=COMMIT_MESSAGE_SCHEMA,
        )
