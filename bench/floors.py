"""The comparison runs of the benchmark, in one plain Python process each (no Spark):

- ``floor``: what this machine can do at best with the same libraries — confluent-kafka consumes
  every partition, lakecdc's own parser turns messages into Arrow chunks, pypaimon-rust writes them
  (with row kinds) into the table lakecdc would make (``changelog-producer=input``, so the changelog
  is written too) and commits once per ``commit_every`` messages.
- ``naive``: the loop a user would write by hand — consume, ``json.loads``, build rows, write the
  after-images with pypaimon's writer and commit per poll batch (updates become upserts, deletes
  are applied through a visible row-kind column as pypaimon requires).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pyarrow as pa

from ingest.kafka.source import READER_DEFAULTS
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.partition_stream import assemble
from ingest.pipeline.routing import TableRouter
from schema_evolution.arrow_types import to_arrow
from sinks.layout import RecordSchema
from sinks.table.catalog import Catalog
from sinks.table.options import DEFAULT_PK_OPTIONS
from sinks.write.chunk_format import deserialize_batch
from sinks.write.writer import align


def _consume_all(bootstrap: str, topic: str, partitions: int, total: int, batch: int = 10_000) -> Any:
    from confluent_kafka import Consumer, TopicPartition

    # The floor reads as lakecdc's readers do: a 16 MiB prefetch queue (librdkafka's 64 MiB default
    # made this loop ~17% slower: 1M messages in 14.1-14.5 s instead of 11.9-12.1 s), with a short
    # queue backoff (the default 1 s stalls a full small queue).
    props = {
        **READER_DEFAULTS,
        "bootstrap.servers": bootstrap,
        "group.id": "bench-floor",
        "enable.auto.commit": False,
    }
    consumer = Consumer(props)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    try:
        while seen < total:
            msgs = consumer.consume(num_messages=batch, timeout=1.0)
            msgs = [m for m in msgs if m.error() is None]
            seen += len(msgs)
            if msgs:
                yield msgs
    finally:
        consumer.close()


def floor(bootstrap: str, topic: str, partitions: int, total: int, warehouse: str, commit_every: int) -> float:
    """Seconds to consume, parse, write and commit ``total`` messages in one process."""
    from pypaimon_rust.datafusion import PaimonCatalog

    spec = ParseSpec("canal-json", TableRouter(database="bench", table="orders"))
    catalog = Catalog(warehouse)
    started = time.monotonic()
    builder: Any = None
    writer: Any = None
    layout: Any = None
    pending = 0
    batch_id = 0
    for msgs in _consume_all(bootstrap, topic, partitions, total):
        for chunks in assemble(spec, topic, 0, ((m.value(), m.key(), m.offset(), None, 0) for m in msgs)):
            for row in chunks.to_pylist():
                if builder is None:
                    record = RecordSchema.from_json(row["schema"])
                    # The table lakecdc makes: with its changelog (input), which the writer writes
                    # beside the data (~0.6 s per 500k messages here).
                    options = dict(DEFAULT_PK_OPTIONS)
                    layout = catalog.create_table("bench.orders", record.fields, record.primary_keys, (), options)
                    table = PaimonCatalog({"warehouse": warehouse}).get_table("bench.orders")
                    builder = table.new_stream_write_builder().with_commit_user("bench-floor")
                if writer is None:
                    writer = builder.new_write()
                writer.write_arrow(align(deserialize_batch(row["data"]), layout, "bench"))
        pending += len(msgs)
        if pending >= commit_every:
            builder.new_commit().filter_and_commit({batch_id: writer.prepare_commit(True, batch_id)})
            writer, pending, batch_id = None, 0, batch_id + 1
    if writer is not None:
        builder.new_commit().filter_and_commit({batch_id: writer.prepare_commit(True, batch_id)})
    return time.monotonic() - started


def naive(bootstrap: str, topic: str, partitions: int, total: int, warehouse: str) -> float:
    """Seconds for the hand-written loop over ``total`` messages."""
    from pypaimon import CatalogFactory, Schema

    from bench.workload import MYSQL_TYPES
    from schema_evolution.mysql_types import mysql_to_paimon

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("bench", True)
    types = {n: to_arrow(mysql_to_paimon(t)) for n, t in MYSQL_TYPES.items()}
    fields = [pa.field(n, t, nullable=n != "id") for n, t in types.items()] + [pa.field("_rowkind", pa.string())]
    schema = pa.schema(fields)
    catalog.create_table(
        "bench.naive",
        Schema.from_pyarrow_schema(schema, primary_keys=["id"], options={"rowkind.field": "_rowkind"}),
        True,
    )
    table = catalog.get_table("bench.naive")
    started = time.monotonic()
    for msgs in _consume_all(bootstrap, topic, partitions, total):
        rows: list[dict[str, Any]] = []
        for m in msgs:
            doc = json.loads(m.value())
            kind = {"INSERT": "+I", "UPDATE": "+U", "DELETE": "-D"}[doc["type"]]
            for r in doc["data"]:
                rows.append({**r, "_rowkind": kind})
        cols = {n: pa.array([r.get(n) for r in rows], pa.string()).cast(t) for n, t in types.items()}
        cols["_rowkind"] = pa.array([r["_rowkind"] for r in rows])
        wb = table.new_batch_write_builder()
        writer = wb.new_write()
        writer.write_arrow(pa.Table.from_pydict(cols, schema=schema))
        wb.new_commit().commit(writer.prepare_commit())
        writer.close()
    return time.monotonic() - started
