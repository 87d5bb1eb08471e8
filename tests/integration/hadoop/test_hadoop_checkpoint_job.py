"""A sync job whose checkpoint only Spark's Hadoop serves (#25), end to end as a user runs it: kafka-sync-database
with ``--checkpoint viewfs://…`` and the mount table in ``--spark-conf spark.hadoop.fs.viewfs.mounttable.…``
(Hadoop's own scheme, no jar needed), run on half the messages, restarted on the rest; each time the tables
are exactly the messages' (pypaimon-rust and pypaimon), Spark's checkpoint and lakecdc's job state lie in the
mounted directory, the commit user stays the same and the lease is released. Then ``lakecdc status`` on the
same URI, without a job: it starts a local SparkSession whose mount table comes from spark-defaults.conf."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from deploy.canal_stream import CanalStream, generate, partition_by_key, typed
from deploy.local_kafka import LocalKafka
from ingest.job import COMMIT_USER_FILE
from ingest.streaming.checkpoint import SPARK_DIR, TABLES_FILE
from sinks.write.lease import LEASE_FILE
from tests.paimon_read import read_pypaimon, read_rust

ROOT = Path(__file__).resolve().parents[3]
MOUNT = "lakecdc-job"
LOAD_FLAKE = "Python worker failed to connect back"  # a loaded machine's flake before anything ran


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    for _ in range(3):
        done = subprocess.run(argv, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode == 0 or LOAD_FLAKE not in done.stderr:
            break
    assert done.returncode == 0, done.stderr[-4000:]
    return done


def _assert_exact(warehouse: str, stream: CanalStream) -> None:
    for table in stream.tables:
        expected = sorted((typed(r) for r in stream.expected[table].values()), key=lambda r: r["id"])
        assert read_rust(warehouse, f"ods.{table}") == expected, table
        assert read_pypaimon(warehouse, f"ods.{table}") == expected, table


def test_a_job_on_a_viewfs_checkpoint_restarts_exactly(kafka: LocalKafka, tmp_path: Path, topic_name: str) -> None:
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    mount = f"spark.hadoop.fs.viewfs.mounttable.{MOUNT}.link./ck=file://{mounted}"
    checkpoint = f"viewfs://{MOUNT}/ck/ods-sync"
    warehouse = str(tmp_path / "warehouse")
    stream = generate(keys=40, updates=3, seed=11)
    half = len(stream.messages) // 2
    kafka.create_topic(topic_name, 2)
    argv = [
        sys.executable, "-m", "ingest", "kafka-sync-database", "--warehouse", warehouse, "--database", "ods",
        "--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}", "--kafka-conf", f"topic={topic_name}",
        "--kafka-conf", "value.format=canal-json", "--max-offsets-per-trigger", "60", "--available-now",
        "--checkpoint", checkpoint, "--spark-conf", mount, "--spark-conf", "spark.master=local[2]",
    ]  # fmt: skip
    state = mounted / "ods-sync"

    kafka.produce(topic_name, stream.messages[:half], partition_by_key(2))
    _run(argv)
    _assert_exact(warehouse, stream.prefix(half))
    user = (state / COMMIT_USER_FILE).read_text()
    first_batches = {p.name for p in (state / SPARK_DIR / "commits").iterdir() if p.name.isdigit()}
    assert user.startswith("lakecdc-") and first_batches

    kafka.produce(topic_name, stream.messages[half:], partition_by_key(2))
    _run(argv)  # the restart: from the viewfs checkpoint, with the same commit user
    _assert_exact(warehouse, stream)
    assert (state / COMMIT_USER_FILE).read_text() == user
    batches = {p.name for p in (state / SPARK_DIR / "commits").iterdir() if p.name.isdigit()}
    assert batches > first_batches
    assert sorted(json.loads((state / TABLES_FILE).read_text())) == sorted(f"ods.{t}" for t in stream.tables)
    assert not (state / LEASE_FILE).exists()  # released at the end
    assert not [p for p in state.iterdir() if p.name.endswith((".crc", ".tmp"))]  # job state as a local one's
    assert not (ROOT / "viewfs:").exists()  # the URI never became a local folder

    # lakecdc status on the URI: a local SparkSession, its mount table from spark-defaults.conf
    conf_dir = tmp_path / "spark-conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(mount.replace("=", " ", 1) + "\n")
    status_argv = [sys.executable, "-m", "ingest", "status", "--checkpoint", checkpoint, "--warehouse", warehouse]
    done = _run([*status_argv, "--output", "json"], {"SPARK_CONF_DIR": str(conf_dir)})
    status = json.loads(done.stdout[done.stdout.index("{") :])
    assert status["commit_user"] == user and status["last_batch"] == max(int(b) for b in batches)
    assert sorted(t["table"] for t in status["tables"]) == sorted(f"ods.{t}" for t in stream.tables)
    assert all(t["error"] is None and t["snapshot"] is not None for t in status["tables"])
    assert max(t["last_batch"] for t in status["tables"]) == status["last_batch"]
