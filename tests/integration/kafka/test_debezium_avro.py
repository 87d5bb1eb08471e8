"""debezium-avro end to end: Debezium change events serialized by confluent-kafka's real AvroSerializer
(Kafka Connect's topic-name subjects) against the in-suite Schema Registry, through the broker and Spark
into Paimon tables, read back with pypaimon-rust and pypaimon. Several topics with different schemas
through one topic-pattern (Paimon #7859), a schema change across registered versions, table sync, a
SIGKILL mid-stream and restart, and a registry that is down."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from confluent_kafka import SerializingProducer
from confluent_kafka.schema_registry.avro import AvroSerializer

from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import run
from tests.conftest import ROOT
from tests.formats.debezium_avro_streams import AvroWriter, envelope, key_schema, row, value_schema
from tests.paimon_read import paimon_schema, read_pypaimon, read_rust
from tests.support.schema_registry import FakeSchemaRegistry

TABLES = ("items", "users")


@pytest.fixture(scope="module")
def registry() -> Iterator[FakeSchemaRegistry]:
    with FakeSchemaRegistry() as r:
        yield r


Message = tuple[str, str, int, str, dict[str, Any] | None, dict[str, Any] | None, int]  # topic, table, id, op, ...


def _stream(prefix: str, seed: int, steps: int) -> tuple[list[Message], dict[str, dict[int, dict[str, Any]]]]:
    """Changes over two tables, each on its own topic (``<prefix>_<table>``); items moves to its second
    schema version (a column added) half way, users is on version 2 from the start. Returns the messages
    and each table's live rows (id -> name, note) at the end."""
    rng = random.Random(seed)
    live: dict[str, dict[int, dict[str, Any]]] = {t: {} for t in TABLES}
    messages: list[Message] = []
    for step in range(steps):
        table = rng.choice(TABLES)
        version = 2 if table == "users" or step >= steps // 2 else 1
        ident = rng.randrange(60)
        rows = live[table]
        after = row(ident, version)[0]
        after["name"] = f"{table}-{ident}-{step}"
        if ident not in rows:
            messages.append((f"{prefix}_{table}", table, ident, "c", None, after, version))
            rows[ident] = after
        elif rng.random() < 0.25:
            before = rows.pop(ident)
            before = {**before, "note": before.get("note")} if version == 2 else before
            messages.append((f"{prefix}_{table}", table, ident, "d", before, None, version))
        else:
            before = rows[ident]
            before = {**before, "note": before.get("note")} if version == 2 else before
            messages.append((f"{prefix}_{table}", table, ident, "u", before, after, version))
            rows[ident] = after
    return messages, live


def _produce_serializing(kafka: LocalKafka, registry: FakeSchemaRegistry, messages: list[Message]) -> None:
    """Through confluent-kafka's SerializingProducer with AvroSerializers, one record per batch (the test
    broker reports partition ends by batch)."""
    writer = AvroWriter(registry.url)
    producers: dict[tuple[str, int], SerializingProducer] = {}
    for topic, table, ident, op, before, after, version in messages:
        producer = producers.get((table, version))
        if producer is None:
            producer = producers[(table, version)] = SerializingProducer(
                {
                    "bootstrap.servers": kafka.bootstrap,
                    "batch.num.messages": 1,
                    "acks": "all",
                    "key.serializer": AvroSerializer(writer.client, _json(key_schema(table))),
                    "value.serializer": AvroSerializer(writer.client, _json(value_schema(table, version))),
                }
            )
        producer.produce(topic, key={"id": ident}, value=envelope(table, op, before, after), partition=0)
        producer.flush()


def _json(schema: dict[str, Any]) -> str:
    return json.dumps(schema)


def _avro_bytes(registry: FakeSchemaRegistry, messages: list[Message]) -> dict[str, list[tuple[bytes, bytes]]]:
    writer = AvroWriter(registry.url)
    out: dict[str, list[tuple[bytes, bytes]]] = {}
    for topic, table, ident, op, before, after, version in messages:
        value = writer.value(topic, table, op, before, after, version)
        out.setdefault(topic, []).append((writer.key(topic, table, ident), value))
    return out


def _settings(
    warehouse: str, kafka: LocalKafka, registry: FakeSchemaRegistry, pattern: str, **extra: Any
) -> SyncSettings:
    values: dict[str, Any] = {
        "action": "kafka-sync-database",
        "warehouse": warehouse,
        "database": "ods",
        "kafka_conf": {
            "properties.bootstrap.servers": kafka.bootstrap,
            "topic-pattern": pattern,
            "value.format": "debezium-avro",
            "schema.registry.url": registry.url,
        },
        "available_now": True,
        "max_offsets_per_trigger": 150,
    }
    return SyncSettings(**(values | extra))


def _assert_table(warehouse: str, table: str, expected: dict[int, dict[str, Any]], target: str | None = None) -> None:
    name = f"ods.{target or table}"
    for rows in (read_rust(warehouse, name), read_pypaimon(warehouse, name)):
        got = {r["id"]: (r["name"], r.get("note")) for r in rows}
        assert got == {i: (r["name"], r.get("note")) for i, r in expected.items()}, name
        for r in rows:  # the logical types, as the debezium-json envelope gives them
            assert r["price"] == Decimal("-12345.67") and r["vsd"] == "12.345"
            assert r["day"] == date(2022, 1, 8) and r["cday"] == date(2022, 1, 9)
            assert r["ts6"] == datetime(2023, 11, 14, 22, 13, 20, 123456)
            nanos = pd.Timestamp(r["ts9"])  # TIMESTAMP(9): all nine digits written
            assert nanos.floor("us").to_pydatetime() == datetime(2023, 11, 14, 22, 13, 20, 123456)
            assert nanos.nanosecond in (789, 0)  # 0: a reader that returns datetime (microseconds)
            assert r["tsz"] == datetime(2023, 11, 14, 20, 13, 20, 500000)
            assert r["raw"] == b"\x00\xffab" and r["bits"] == b"\x0f\x01"
            assert r["geo"] == '{"coordinates":[1,2],"type":"Point","srid":4326}'
    schema = dict(paimon_schema(warehouse, name))
    assert schema["price"] == "DECIMAL(10, 2)" and schema["ts9"] == "TIMESTAMP(9)" and schema["t6"] == "TIME(0)"
    assert schema["id"].startswith("INT") and "NOT NULL" in schema["id"]
    assert "note" in schema  # the second registered version's column, added to the table


def test_database_sync_of_several_topics_with_different_schemas(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, registry: FakeSchemaRegistry
) -> None:
    messages, live = _stream(topic_name, seed=26, steps=400)
    for table in TABLES:
        kafka.create_topic(f"{topic_name}_{table}", 1)
    _produce_serializing(kafka, registry, messages)
    result = run(_settings(warehouse, kafka, registry, f"{topic_name}_.*"))
    assert result.stats.batches >= 2
    for table in TABLES:
        _assert_table(warehouse, table, live[table])
    # each schema id was fetched once by each process that read it, never per message
    assert registry.id_requests < 40


def test_table_sync_and_schema_change_across_versions(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, registry: FakeSchemaRegistry
) -> None:
    messages, live = _stream(topic_name, seed=7, steps=300)
    items = [m for m in messages if m[1] == "items"]
    kafka.create_topic(f"{topic_name}_items", 1)
    kafka.produce(f"{topic_name}_items", _avro_bytes(registry, items)[f"{topic_name}_items"])
    run(_settings(warehouse, kafka, registry, f"{topic_name}_items", action="kafka-sync-table", table="items_copy"))
    _assert_table(warehouse, "items", live["items"], target="items_copy")


def test_registry_failing_mid_stream_is_retried_and_the_job_goes_on(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    """The second schema version arrives while the registry answers 503 for it: the read task retries
    with backoff until it answers, and the table is exact. (A registry of its own: the Python workers
    cache schemas per registry URL for as long as they live.)"""
    with FakeSchemaRegistry() as registry:
        messages, live = _stream(topic_name, seed=5, steps=200)
        topic = f"{topic_name}_items"
        items = [m for m in messages if m[1] == "items"]
        records = _avro_bytes(registry, items)[topic]
        kafka.create_topic(topic, 1)
        kafka.produce(topic, records)
        second = max(int.from_bytes(value[1:5], "big") for _, value in records)  # version 2's, registered last
        registry.failures[second] = 3
        run(_settings(warehouse, kafka, registry, topic))
        _assert_table(warehouse, "items", live["items"])
        assert registry.failures[second] == 0 and registry.id_requests >= 4 + 2


def _argv(warehouse: str, kafka: LocalKafka, pattern: str, url: str) -> list[str]:
    return [
        sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", warehouse, "--database", "ods",
        "--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}",
        "--kafka_conf", f"topic-pattern={pattern}", "--kafka_conf", "value.format=debezium-avro",
        "--kafka_conf", f"schema.registry.url={url}",
        "--max-offsets-per-trigger", "800", "--available-now", "--spark-conf", "spark.master=local[2]",
    ]  # fmt: skip


def test_registry_down_at_start_is_retried_then_stops_naming_registry_and_position(
    kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    with FakeSchemaRegistry() as registry:
        messages, _ = _stream(topic_name, seed=3, steps=20)
        kafka.create_topic(f"{topic_name}_items", 1)
        items = [m for m in messages if m[1] == "items"]
        kafka.produce(f"{topic_name}_items", _avro_bytes(registry, items)[f"{topic_name}_items"])
        registry.down()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_SCHEMA_REGISTRY_RETRY_SECONDS": "3"}
        argv = _argv(str(tmp_path / "warehouse"), kafka, f"{topic_name}_items", registry.url)
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"the Schema Registry at {registry.url} could not be reached" in output, output[-3000:]
    assert f"topic '{topic_name}_items', partition 0, offset 0" in output
    assert "Schema Registry unreachable, retrying" in output  # retried with backoff first
    assert "SchemaRegistryUnavailable" in output


@pytest.mark.timeout(900)
def test_sigkill_mid_stream_and_restart_is_exact(
    kafka: LocalKafka, tmp_path: Path, topic_name: str, registry: FakeSchemaRegistry
) -> None:
    warehouse = str(tmp_path / "warehouse")
    messages, live = _stream(topic_name, seed=11, steps=6000)
    for topic, records in _avro_bytes(registry, messages).items():
        kafka.create_topic(topic, 1)
        kafka.produce(topic, records)
    argv = _argv(warehouse, kafka, f"{topic_name}_.*", registry.url)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log_path = tmp_path / "first-run.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
    snapshots = Path(warehouse) / "ods.db" / "items" / "snapshot"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(snapshots.glob("snapshot-*"))) < 3:
        assert proc.poll() is None, log_path.read_text()[-3000:]
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and Python workers, mid-stream
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for table in TABLES:
        _assert_table(warehouse, table, live[table])
