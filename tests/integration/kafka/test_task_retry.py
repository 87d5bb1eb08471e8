"""lakecdc's own local master retries a failed task (``local[*,4]``, ingest/spark_conf.py), and a retried
write task is still exactly-once (#23): one write task attempt fails after its data files are written and
its commit messages sent (the test-only hook ``LAKECDC_TEST_FAIL_WRITE_TASK_ONCE``,
ingest/streaming/write_task.py). The job, started from the CLI with no master of its own, ends with exit 0;
every table and its changelog hold each change exactly once; the failed attempt's files are the only ones
no snapshot names, and ``remove-orphan-files`` removes exactly them. Under plain ``local[2]`` the same
failure fails the job."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka
from ingest.streaming.write_task import FAIL_ONCE_ENV
from sinks.lifecycle.orphans import remove_orphan_files
from tests.chaos.harness import LOAD_FLAKE
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches

TABLES = ("orders", "customers")


def _argv(warehouse: str, kafka: LocalKafka, topic: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ingest",
        "kafka-sync-database",
        *("--warehouse", warehouse, "--database", "ods"),
        *("--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}"),
        *("--kafka-conf", f"topic={topic}", "--kafka-conf", "value.format=canal-json"),
        *("--max-offsets-per-trigger", "400", "--available-now"),
        *extra,
    ]


def _run(argv: list[str], env: dict[str, str], log_path: Path) -> subprocess.CompletedProcess[str]:
    for _ in range(3):
        Path(env[FAIL_ONCE_ENV]).unlink(missing_ok=True)  # a run the machine's load broke: inject again
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
        log_path.write_text(done.stdout + done.stderr)
        if LOAD_FLAKE not in done.stdout + done.stderr:
            return done
    return done


def _orphans(warehouse: str, table: str) -> tuple[str, ...]:
    future = int(time.time() * 1000) + 60_000  # every unreferenced file counts
    return remove_orphan_files(warehouse, {}, f"ods.{table}", older_than_ms=future, dry_run=True).orphans


def test_a_failed_write_task_is_retried_and_committed_once(kafka: LocalKafka, tmp_path: Path, topic_name: str) -> None:
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=150, updates=5, seed=31)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    warehouse = str(tmp_path / "warehouse")
    env = {k: v for k, v in os.environ.items() if k != "LAKECDC_SPARK_MASTER"}
    env |= {"PYTHONPATH": str(ROOT)}

    # Plain local mode (one attempt per task): the injected failure fails the job, as before.
    marker = tmp_path / "failed-once"
    plain = _run(
        _argv(str(tmp_path / "plain"), kafka, topic_name, "--spark-conf", "spark.master=local[2]"),
        {**env, FAIL_ONCE_ENV: str(marker)},
        tmp_path / "plain.log",
    )
    assert marker.exists() and plain.returncode != 0, plain.stderr[-3000:]

    # lakecdc's default master: the attempt is retried, the job succeeds, every change once.
    marker = tmp_path / "failed-once-default"
    done = _run(_argv(warehouse, kafka, topic_name), {**env, FAIL_ONCE_ENV: str(marker)}, tmp_path / "job.log")
    assert done.returncode == 0, done.stderr[-3000:]
    assert marker.exists(), "no write task attempt failed"
    for table in TABLES:
        _assert_table_matches(warehouse, stream, table)
    orphans = [f for t in TABLES for f in _orphans(warehouse, t)]
    assert orphans, "the failed attempt's data files were committed, or never written"
    # the attempt's data, changelog and index files only: no snapshot or manifest
    assert all(("/bucket-" in f or "/index/" in f) and "/manifest/" not in f for f in orphans), orphans
    for table in TABLES:
        remove_orphan_files(warehouse, {}, f"ods.{table}", older_than_ms=int(time.time() * 1000) + 60_000)
        assert _orphans(warehouse, table) == ()
        _assert_table_matches(warehouse, stream, table)
