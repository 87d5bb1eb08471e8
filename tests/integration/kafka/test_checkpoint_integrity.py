"""A checkpoint and its commit user belong together, and one job at a time uses a checkpoint or
writes a table (#23 items 3 and 5): real Spark, real broker, real Paimon files.

- <checkpoint>/spark deleted, or restored from an older backup, beside a commit user with later
  commits: refused naming checkpoint, table and batch, nothing committed; a new --checkpoint is exact.
- A second job on a running job's checkpoint, or on its tables through another checkpoint: refused
  naming the holder. A crashed job's leases: expired ones (another host) are taken over after their
  expiry, a killed process's on this host at once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deploy.canal_stream import CanalStream, generate, partition_by_key, typed
from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import COMMIT_USER_FILE, JobFailed, run
from sinks.write.lease import LEASE_FILE, LeaseRecord, Owner
from tests.conftest import ROOT
from tests.paimon_read import read_rust

TABLES = ("orders", "customers")


def _settings(warehouse: str, kafka: LocalKafka, topic: str, checkpoint: Path, **extra: Any) -> SyncSettings:
    values: dict[str, Any] = {
        "action": "kafka-sync-database",
        "warehouse": warehouse,
        "checkpoint": str(checkpoint),
        "database": "ods",
        "kafka_conf": {"properties.bootstrap.servers": kafka.bootstrap, "topic": topic, "value.format": "canal-json"},
        "available_now": True,
        "max_offsets_per_trigger": 300,
    }
    values.update(extra)
    return SyncSettings(**values)


def _assert_exact(warehouse: str, stream: CanalStream) -> None:
    for table in TABLES:
        expected = sorted((typed(r) for r in stream.expected[table].values()), key=lambda r: r["id"])
        assert read_rust(warehouse, f"ods.{table}") == expected


def _snapshots(warehouse: str) -> dict[str, int]:
    return {t: len(list((Path(warehouse) / "ods.db" / t / "snapshot").glob("snapshot-*"))) for t in TABLES}


@pytest.mark.parametrize(
    "damage", ["deleted", "restored-from-an-older-backup", "commit-user-copied-to-a-new-checkpoint"]
)
def test_a_spark_checkpoint_behind_its_commit_user_is_refused_and_a_new_checkpoint_is_exact(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, tmp_path: Path, damage: str
) -> None:
    kafka.create_topic(topic_name, 2)
    full = generate(keys=100, updates=6, seed=11)
    thirds = [len(full.messages) * i // 3 for i in (1, 2, 3)]
    checkpoint = tmp_path / "ck"
    spark_dir = checkpoint / "spark"
    kafka.produce(topic_name, full.messages[: thirds[0]], partition_by_key(2))
    assert run(_settings(warehouse, kafka, topic_name, checkpoint)).stats.batches >= 2
    backup = tmp_path / "spark-backup"
    shutil.copytree(spark_dir, backup)
    kafka.produce(topic_name, full.messages[thirds[0] : thirds[1]], partition_by_key(2))
    assert run(_settings(warehouse, kafka, topic_name, checkpoint)).stats.batches >= 2
    _assert_exact(warehouse, full.prefix(thirds[1]))

    if damage == "commit-user-copied-to-a-new-checkpoint":
        # Known only when the first batch is planned (no list of tables beside it): refused before writing.
        (tmp_path / "ck-copy").mkdir()
        shutil.copy(checkpoint / COMMIT_USER_FILE, tmp_path / "ck-copy" / COMMIT_USER_FILE)
        checkpoint, spark_dir = tmp_path / "ck-copy", tmp_path / "ck-copy" / "spark"
    else:
        shutil.rmtree(spark_dir)
    if damage == "restored-from-an-older-backup":
        shutil.copytree(backup, spark_dir)
    kafka.produce(topic_name, full.messages[thirds[1] :], partition_by_key(2))
    before = _snapshots(warehouse)
    with pytest.raises(JobFailed) as info:
        run(_settings(warehouse, kafka, topic_name, checkpoint))
    message = str(info.value)
    user = (checkpoint / COMMIT_USER_FILE).read_text()
    assert message.startswith(f"CheckpointMismatch: checkpoint {checkpoint}: its Spark checkpoint ({spark_dir}) ")
    assert ("has batches up to" if damage.startswith("restored") else "has no batches (new or deleted)") in message
    assert f"but its commit user {user} already committed batch " in message
    assert "to table ods.orders" in message or "to table ods.customers" in message
    assert "Restore the Spark checkpoint" in message and "new --checkpoint" in message
    assert _snapshots(warehouse) == before  # refused before anything was committed
    _assert_exact(warehouse, full.prefix(thirds[1]))

    # A new checkpoint is a new commit user: it reads the topic from the start again, exactly.
    result = run(_settings(warehouse, kafka, topic_name, tmp_path / "ck2"))
    assert result.stats.events == len(full.messages) and result.stats.skipped_commits == 0
    _assert_exact(warehouse, full)


def _argv(warehouse: str, kafka: LocalKafka, topic: str, checkpoint: Path) -> list[str]:
    argv = [sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--checkpoint", str(checkpoint), "--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}"]
    argv += ["--kafka_conf", f"topic={topic}", "--kafka_conf", "value.format=canal-json"]
    return [*argv, "--trigger-interval", "1 s", "--spark-conf", "spark.master=local[1]"]


def test_a_second_job_on_a_running_jobs_checkpoint_or_tables_is_refused_naming_the_holder(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, tmp_path: Path
) -> None:
    kafka.create_topic(topic_name, 1)
    stream = generate(keys=60, updates=3, seed=12)
    kafka.produce(topic_name, stream.messages)
    checkpoint = tmp_path / "ck"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log_path = tmp_path / "first.log"
    with open(log_path, "wb") as log:
        first = subprocess.Popen(
            _argv(warehouse, kafka, topic_name, checkpoint), cwd=ROOT, env=env, stdout=log, stderr=log,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and min(_snapshots(warehouse).values(), default=0) == 0:
            assert first.poll() is None, log_path.read_text()[-3000:]
            time.sleep(0.3)
        _assert_exact(warehouse, stream)
        job = f"job 'kafka-sync-database-ods-all' (checkpoint {checkpoint})"
        holder = f"{job} (host {socket.gethostname()}, pid {first.pid})"

        # (b) the same checkpoint: refused at start, before Spark reads anything
        with pytest.raises(JobFailed) as info:
            run(_settings(warehouse, kafka, topic_name, checkpoint))
        assert str(info.value).startswith(f"LeaseHeld: checkpoint {checkpoint} is in use by another job: {holder}")
        assert "lease expires in" in str(info.value)

        # (c) another checkpoint on its tables: a table sync is refused at start; a database sync
        # at its first batch, before it writes.
        before = _snapshots(warehouse)
        table_sync = _settings(
            warehouse, kafka, topic_name, tmp_path / "ck-t", action="kafka-sync-table", table="orders"
        )
        with pytest.raises(JobFailed) as info:
            run(table_sync)
        assert str(info.value).startswith(f"LeaseHeld: table ods.orders is in use by another job: {holder}")
        with pytest.raises(JobFailed) as info:
            run(_settings(warehouse, kafka, topic_name, tmp_path / "ck-d"))
        refused = re.search(
            r"LeaseHeld: table ods\.(orders|customers) is in use by another job: (.*?), last",
            message := str(info.value),
        )
        assert refused is not None and refused.group(2) == holder, message
        assert _snapshots(warehouse) == before  # nothing committed by the refused jobs
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # a crash: its leases stay behind
        first.wait()
    assert (checkpoint / LEASE_FILE).exists()

    # The killed job's process is gone: on this host its leases are taken over at once.
    tail = generate(keys=60, updates=5, seed=12)
    kafka.produce(topic_name, tail.messages[len(stream.messages) :])
    result = run(_settings(warehouse, kafka, topic_name, checkpoint))
    assert result.stats.events == len(tail.messages) - len(stream.messages)
    _assert_exact(warehouse, tail)
    assert not (checkpoint / LEASE_FILE).exists()  # released at the end
    assert not list(Path(warehouse).glob(f"ods.db/*/{LEASE_FILE}"))


def test_a_crashed_jobs_lease_is_taken_over_after_it_expires(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, tmp_path: Path
) -> None:
    kafka.create_topic(topic_name, 1)
    stream = generate(keys=40, updates=2, seed=13)
    kafka.produce(topic_name, stream.messages)
    checkpoint = tmp_path / "ck"
    now = time.time()
    crashed = Owner("t-crashed", "job 'crashed' (checkpoint elsewhere)", "another-host", 4242, "pid:[1]", "1")
    checkpoint.mkdir()
    lease = checkpoint / LEASE_FILE
    lease.write_text(LeaseRecord(crashed, now - 57, now + 3).to_json())  # heartbeat 57 s ago, 3 s left
    with pytest.raises(JobFailed) as info:
        run(_settings(warehouse, kafka, topic_name, checkpoint))
    assert "job 'crashed' (checkpoint elsewhere) (host another-host, pid 4242), last heartbeat 57 s ago" in str(
        info.value
    )
    time.sleep(max(0.0, now + 3.2 - time.time()))
    result = run(_settings(warehouse, kafka, topic_name, checkpoint))
    assert result.stats.events == len(stream.messages)
    _assert_exact(warehouse, stream)
    assert not lease.exists()
    json.loads((checkpoint / "lakecdc-tables.json").read_text())  # the tables it wrote are remembered
