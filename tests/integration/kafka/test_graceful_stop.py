"""SIGTERM and SIGINT stop a running job after its in-flight micro-batch commits (ingest.streaming.stopping):
exit 0 within the bound, the checkpoint's last batch is the tables' last commit identifier (nothing to
replay), no file that no snapshot names, and after a restart the tables are exact."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka
from sinks.lifecycle.orphans import remove_orphan_files
from tests.chaos.harness import LOAD_FLAKE
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches

# The bounded stop; generous, for a loaded machine (the job's own bound is LAKECDC_STOP_TIMEOUT).
STOP_BOUND_S = 120
TABLES = ("orders", "customers")


def _argv(
    warehouse: str, kafka: LocalKafka, topic: str, *extra: str, per_trigger: int = 500, interval: str = "1s"
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ingest",
        "kafka-sync-database",
        *("--warehouse", warehouse, "--database", "ods"),
        *("--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}"),
        *("--kafka-conf", f"topic={topic}", "--kafka-conf", "value.format=canal-json"),
        *("--max-offsets-per-trigger", str(per_trigger), "--trigger-interval", interval),
        # Local mode that retries a failed task (a Python worker too slow to connect back on a loaded machine)
        *("--spark-conf", "spark.master=local[2,4]"),
        *extra,
    ]


def _run_and_signal(
    argv: list[str], env: dict[str, str], log_path: Path, warehouse: str, signum: signal.Signals
) -> tuple[int | None, float]:
    """Start the job, signal it once two batches are committed, and wait: (exit code, seconds from
    the signal to the exit), or (None, 0) when the job failed to start for the machine's load."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            # Running, and at least two batches committed: the signal comes mid-stream.
            deadline = time.monotonic() + 300
            while max((len(_identifiers(warehouse, t)) for t in TABLES), default=0) < 2:
                if proc.poll() is not None:
                    return None, 0.0
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                time.sleep(0.2)
            proc.send_signal(signum)
            signalled = time.monotonic()
            code = proc.wait(timeout=STOP_BOUND_S)
            return code, time.monotonic() - signalled
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _batch_ids(directory: Path) -> list[int]:
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit()) if directory.is_dir() else []


def _identifiers(warehouse: str, table: str) -> list[int]:
    snapshots = Path(warehouse) / "ods.db" / table / "snapshot"
    if not snapshots.is_dir():
        return []
    return sorted(
        json.loads(p.read_text())["commitIdentifier"] for p in snapshots.glob("snapshot-*") if p.name[9:].isdigit()
    )


# SIGTERM on a job keeping up with a steady stream; SIGINT on a job far behind its source (a backlog
# of ~28 batches read back to back, with no moment between triggers): it must stop after the batch
# in flight, not run its backlog out (ingest.source.stopping).
@pytest.mark.parametrize(
    ("signum", "lagging"), [(signal.SIGTERM, False), (signal.SIGINT, True)], ids=["SIGTERM", "SIGINT-lagging"]
)
def test_a_stop_signal_ends_the_job_after_its_batch_commits(
    kafka: LocalKafka, tmp_path: Path, topic_name: str, signum: signal.Signals, lagging: bool
) -> None:
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=200, updates=6, seed=5)
    messages, route = stream.messages, partition_by_key(2)
    per_trigger = 100 if lagging else 500
    # A steady stream: the first part at once, the rest in small steps while the job runs; or, lagging,
    # everything before the job starts.
    head = len(messages) if lagging else len(messages) // 4
    kafka.produce(topic_name, messages[:head], route)
    done_producing = threading.Event()

    def produce_rest() -> None:
        for i in range(head, len(messages), 20):
            kafka.produce(topic_name, messages[i : i + 20], route)
            time.sleep(0.1)
        done_producing.set()

    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_STOP_TIMEOUT": "90 s"}
    producer = threading.Thread(target=produce_rest, daemon=True)
    producer.start()
    for attempt in range(3):
        log_path = tmp_path / f"job-{attempt}.log"
        # lagging: batches back to back (no trigger interval to wait for between them)
        argv = _argv(warehouse, kafka, topic_name, per_trigger=per_trigger, interval="0 s" if lagging else "1s")
        code, stopped_in = _run_and_signal(argv, env, log_path, warehouse, signum)
        if code is not None:
            break
        # A Python worker too slow to connect back on a loaded machine (tests/chaos/harness.py): start again.
        assert LOAD_FLAKE in log_path.read_text(), log_path.read_text()[-3000:]
    text = log_path.read_text()
    assert code == 0, text[-3000:]
    assert stopped_in < STOP_BOUND_S
    assert "stop requested" in text and "stopped between micro-batches" in text, text[-3000:]

    spark_dir = next((Path(warehouse) / "_lakecdc" / "checkpoints").iterdir()) / "spark"
    commits, offsets = _batch_ids(spark_dir / "commits"), _batch_ids(spark_dir / "offsets")
    assert commits, text[-3000:]
    # Nothing to replay: the last planned batch is the last committed one, and it is the last
    # identifier Paimon committed (each table's last commit is at most it).
    assert offsets[-1] == commits[-1]
    if lagging:  # stopped with most of the backlog unread: fewer batches than the backlog needs
        assert len(commits) < len(messages) // per_trigger // 2, (commits, text[-3000:])
    last = {t: _identifiers(warehouse, t)[-1] for t in TABLES if _identifiers(warehouse, t)}
    assert max(last.values()) == commits[-1], (last, commits[-1])
    # No file that no snapshot names (a cut-off in the future: every unreferenced file counts).
    for table in last:
        report = remove_orphan_files(
            warehouse, {}, f"ods.{table}", older_than_ms=int(time.time() * 1000) + 60_000, dry_run=True
        )
        assert report.orphans == (), report.orphans

    # Restarted on the same checkpoint once the source is complete: exact tables, exact changelog.
    assert done_producing.wait(120)
    again = subprocess.run(
        [*_argv(warehouse, kafka, topic_name, per_trigger=500), "--available-now"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 replayed commits skipped" in again.stdout, again.stdout
    for table in TABLES:
        _assert_table_matches(warehouse, stream, table)
