"""SIGTERM and SIGINT stop a running job after its in-flight micro-batch commits (ingest.streaming.stopping):
exit 0 within the bound, the checkpoint's last batch is the tables' last commit identifier (nothing to
replay), no file that no snapshot names, and after a restart the tables are exact.

One stream, one checkpoint, three runs (each run a Spark start-up; the two signals used to have two runs
each): SIGTERM on a job keeping up with a steady stream; then SIGINT on the same job restarted far behind
(the rest of the stream as a backlog), which is also the restart after the SIGTERM (nothing replayed); then
an --available-now restart after the SIGINT (nothing replayed, exact tables and changelog)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

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
    argv: list[str],
    env: dict[str, str],
    log_path: Path,
    warehouse: str,
    signum: signal.Signals,
    on_first_commit: Callable[[], None] = lambda: None,
) -> tuple[int | None, float, int]:
    """Start the job, signal it once it has committed two batches of its own, and wait: (exit code,
    seconds from the signal to the exit, the checkpoint's batch count when it started), or (None, 0, _)
    when the job failed to start for the machine's load."""
    before = len(_commits(warehouse))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            # Running, and at least two batches of this run committed: the signal comes mid-stream.
            deadline = time.monotonic() + 300
            started = False
            while len(_commits(warehouse)) < before + 2:
                if proc.poll() is not None:
                    return None, 0.0, before
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                if not started and len(_commits(warehouse)) > before:
                    started = True
                    on_first_commit()
                time.sleep(0.1)
            proc.send_signal(signum)
            signalled = time.monotonic()
            code = proc.wait(timeout=STOP_BOUND_S)
            return code, time.monotonic() - signalled, before
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _stop(argv: list[str], env: dict[str, str], tmp_path: Path, warehouse: str, signum: signal.Signals,
          name: str, on_first_commit: Callable[[], None] = lambda: None) -> tuple[str, int, bool]:  # fmt: skip
    """One run signalled mid-stream, checked for a clean stop: (its log, the batches before it, whether
    a run failed for the machine's load before it)."""
    for attempt in range(3):
        log_path = tmp_path / f"{name}-{attempt}.log"
        code, stopped_in, before = _run_and_signal(argv, env, log_path, warehouse, signum, on_first_commit)
        if code is not None:
            break
        # A Python worker too slow to connect back on a loaded machine (tests/chaos/harness.py): start again.
        assert LOAD_FLAKE in log_path.read_text(), log_path.read_text()[-3000:]
    text = log_path.read_text()
    assert code == 0, text[-3000:]
    assert stopped_in < STOP_BOUND_S
    assert f"signal={signum.name}" in text, text[-3000:]
    assert "stop requested" in text and "stopped between micro-batches" in text, text[-3000:]
    assert "stopped on a signal after its last micro-batch committed" in text, text[-3000:]

    spark_dir = _spark_dir(warehouse)
    commits, offsets = _batch_ids(spark_dir / "commits"), _batch_ids(spark_dir / "offsets")
    assert len(commits) >= before + 2, text[-3000:]
    # Nothing to replay: the last planned batch is the last committed one, and it is the last
    # identifier Paimon committed (each table's last commit is at most it).
    assert offsets[-1] == commits[-1]
    last = {t: _identifiers(warehouse, t)[-1] for t in TABLES if _identifiers(warehouse, t)}
    assert max(last.values()) == commits[-1], (last, commits[-1])
    # No file that no snapshot names (a cut-off in the future: every unreferenced file counts).
    for table in last:
        report = remove_orphan_files(
            warehouse, {}, f"ods.{table}", older_than_ms=int(time.time() * 1000) + 60_000, dry_run=True
        )
        assert report.orphans == (), report.orphans
    return text, before, attempt > 0


def _spark_dir(warehouse: str) -> Path:
    return next((Path(warehouse) / "_lakecdc" / "checkpoints").iterdir()) / "spark"


def _commits(warehouse: str) -> list[int]:
    checkpoints = Path(warehouse) / "_lakecdc" / "checkpoints"
    return _batch_ids(_spark_dir(warehouse) / "commits") if checkpoints.is_dir() and any(checkpoints.iterdir()) else []


def _batch_ids(directory: Path) -> list[int]:
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit()) if directory.is_dir() else []


def _identifiers(warehouse: str, table: str) -> list[int]:
    snapshots = Path(warehouse) / "ods.db" / table / "snapshot"
    if not snapshots.is_dir():
        return []
    return sorted(
        json.loads(p.read_text())["commitIdentifier"] for p in snapshots.glob("snapshot-*") if p.name[9:].isdigit()
    )


def test_sigterm_and_sigint_each_end_the_job_after_its_batch_commits(
    kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=200, updates=6, seed=5)
    messages, route = stream.messages, partition_by_key(2)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_STOP_TIMEOUT": "90 s"}

    # SIGTERM on a job keeping up with a steady stream: an eighth at once, the next eighth in small steps
    # from its first commit on, while it runs with a trigger interval.
    head, steady = len(messages) // 8, len(messages) // 4
    kafka.produce(topic_name, messages[:head], route)
    done_producing = threading.Event()

    def produce_steadily() -> None:
        for i in range(head, steady, 20):
            kafka.produce(topic_name, messages[i : min(i + 20, steady)], route)
            time.sleep(0.2)
        done_producing.set()

    producer = threading.Thread(target=produce_steadily, daemon=True)

    def start_producing() -> None:
        if producer.ident is None:
            producer.start()

    _stop(_argv(warehouse, kafka, topic_name), env, tmp_path, warehouse, signal.SIGTERM, "sigterm", start_producing)
    start_producing()
    assert done_producing.wait(120)

    # SIGINT on the job restarted far behind its source (the rest, ~21 batches of 100 read back to back,
    # with no moment between triggers): it must stop after the batch in flight, not run its backlog out
    # (ingest.source.stopping). It is also the restart after the SIGTERM: nothing to replay.
    kafka.produce(topic_name, messages[steady:], route)
    per_trigger = 100
    lagging = _argv(warehouse, kafka, topic_name, per_trigger=per_trigger, interval="0 s")
    text, before, retried = _stop(lagging, env, tmp_path, warehouse, signal.SIGINT, "sigint-lagging")
    # (a run that failed for the load before it may itself have left a batch to replay)
    assert retried or "0 replayed commits skipped" in text, text[-3000:]
    own = len(_commits(warehouse)) - before  # stopped with most of the backlog unread
    assert own < (len(messages) - steady) // per_trigger // 2, (own, text[-3000:])

    # Restarted on the same checkpoint once the source is complete: exact tables, exact changelog.
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
