"""kafka-sync-database / kafka-sync-table end to end: real Spark, real broker, real Paimon files.

Outcomes only: final table contents (through both pypaimon-rust and pypaimon), the changelog
(every change exactly once, in order per key), snapshots; never internals. A kafka-sync-database job
SIGKILLed mid-stream and restarted is test_dead_letters.py's first test (the same checks, with poison
messages among 100,000 changes).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from deploy.canal_stream import CanalStream, generate, partition_by_key, typed
from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.conftest import ROOT, sample_messages
from tests.paimon_read import read_changelog, read_pypaimon, read_rust


def _settings(
    warehouse: str, kafka: LocalKafka, topic: str, value_format: str = "canal-json", **extra: Any
) -> SyncSettings:
    values: dict[str, Any] = {
        "action": "kafka-sync-database",
        "warehouse": warehouse,
        "database": "ods",
        "kafka_conf": {
            "properties.bootstrap.servers": kafka.bootstrap,
            "topic": topic,
            "value.format": value_format,
        },
        "available_now": True,
        "max_offsets_per_trigger": 400,
    }
    values.update(extra)
    return SyncSettings(**values)


def _assert_table_matches(warehouse: str, stream: CanalStream, table: str) -> None:
    expected = sorted((typed(r) for r in stream.expected[table].values()), key=lambda r: r["id"])
    assert read_rust(warehouse, f"ods.{table}") == expected
    assert read_pypaimon(warehouse, f"ods.{table}") == expected
    # The changelog holds every change exactly once, in source order per key.
    got: dict[int, list[tuple[str, str, int]]] = defaultdict(list)
    for kind, key, name, qty in read_changelog(warehouse, f"ods.{table}", ("id", "name", "qty")):
        got[key].append((kind, name, qty))
    want: dict[int, list[tuple[str, str, int]]] = defaultdict(list)
    for kind, row in stream.changes[table]:
        want[int(row["id"])].append((kind, row["name"], int(row["qty"])))
    assert dict(got) == dict(want)


@pytest.mark.parametrize("parallel_write_min_rows", [50_000, 0], ids=["one-writer", "writer-per-core"])
def test_database_sync_gives_exact_tables_and_changelog_then_continues(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, parallel_write_min_rows: int
) -> None:
    """Several micro-batches, then more on the same checkpoint; written by one task per table, or
    (writer-per-core) by one task per core, each writing its own buckets of each table."""
    kafka.create_topic(topic_name, 3)
    full = generate(keys=120, updates=6, seed=1)
    first = full.prefix(len(full.messages) * 3 // 5)
    kafka.produce(topic_name, first.messages, partition_by_key(3))

    result = run(
        _settings(
            warehouse, kafka, topic_name, max_offsets_per_trigger=250, parallel_write_min_rows=parallel_write_min_rows
        )
    )
    assert result.stats.batches >= 4  # several micro-batches, keys updated across them
    assert result.stats.events == len(first.messages)
    for table in ("orders", "customers"):
        _assert_table_matches(warehouse, first, table)

    # New changes on the same checkpoint: only they are read, and keys keep evolving correctly.
    tail = full.messages[len(first.messages) :]
    kafka.produce(topic_name, tail, partition_by_key(3))
    result = run(_settings(warehouse, kafka, topic_name, parallel_write_min_rows=parallel_write_min_rows))
    assert result.stats.events == len(tail)
    for table in ("orders", "customers"):
        _assert_table_matches(warehouse, full, table)
    buckets = {p.name for p in (Path(warehouse) / "ods.db" / "orders").glob("bucket-*")}
    assert len(buckets) == (2 if parallel_write_min_rows == 0 else 1)  # local[2]: two writers


def test_table_sync_adds_a_column_from_canal_messages(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    steps = ROOT / "tests" / "data" / "canal" / "evolution" / "steps"
    messages = [m for f in ("step-1.txt", "step-2.txt") for m in sample_messages(steps / f)]
    kafka.produce(topic_name, [(None, m) for m in messages])
    settings = _settings(
        warehouse,
        kafka,
        topic_name,
        action="kafka-sync-table",
        table="schema_evolution",
        partition_keys=("shard",),
        primary_keys=("shard", "id"),
        max_offsets_per_trigger=3,
    )
    run(settings)
    # A column added by DDL between micro-batches; an update, a two-row insert and a delete after it.
    rows = read_rust(warehouse, "ods.schema_evolution")
    assert sorted((r["shard"], r["id"], r["name"], r["qty"]) for r in rows) == [
        (1, 1, "bolt", None),
        (1, 2, "washer", None),
        (1, 6, "rod", 60),
        (2, 3, "gear", None),
        (2, 4, "cog", 40),
    ]
    from pypaimon import CatalogFactory

    schema = CatalogFactory.create({"warehouse": warehouse}).get_table("ods.schema_evolution").table_schema
    assert [(f.name, str(f.type)) for f in schema.fields] == [
        ("shard", "INT NOT NULL"),
        ("id", "INT NOT NULL"),
        ("name", "VARCHAR(10)"),
        ("qty", "INT"),
    ]


def test_malformed_message_stops_the_job_at_its_offset_and_is_never_skipped(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    stream = generate(tables=("orders",), keys=100, updates=1, seed=3)
    good = stream.messages
    bad = b'{"data":[{"id":"1"}], "type": INSERT'  # cut off: not JSON
    kafka.produce(topic_name, [*good[:150], (None, bad), *good[150:]])
    settings = _settings(warehouse, kafka, topic_name, max_offsets_per_trigger=100)
    for _ in range(2):  # a restart fails at the same message: nothing after it is committed or skipped
        with pytest.raises(JobFailed) as info:
            run(settings)
        message = str(info.value)
        assert f"topic '{topic_name}', partition 0, offset 150" in message
        assert "not valid JSON" in message
        # Batch 0 (offsets 0..99) was committed; the batch holding offset 150 was not.
        rows = read_rust(warehouse, "ods.orders")
        assert len(rows) == 100


def test_a_backlog_of_large_messages_is_read_in_micro_batches_bounded_by_bytes(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message budget (default 500,000) would take the whole backlog in one micro-batch; a bound
    of ~200 messages' bytes (sampled from the topic) reads it in several, each committed, and the
    tables and changelog are exact."""
    kafka.create_topic(topic_name, 3)
    stream = generate(keys=120, updates=4, seed=3)
    kafka.produce(topic_name, stream.messages, partition_by_key(3))
    size = sum(len(v) for _k, v in stream.messages) // len(stream.messages)
    monkeypatch.setenv("LAKECDC_KAFKA_BATCH_BYTES", str(200 * size))
    result = run(_settings(warehouse, kafka, topic_name, max_offsets_per_trigger=500_000))
    assert result.stats.events == len(stream.messages)
    assert result.stats.batches >= len(stream.messages) // 200 - 1, (result.stats.batches, len(stream.messages))
    for table in ("orders", "customers"):
        _assert_table_matches(warehouse, stream, table)
