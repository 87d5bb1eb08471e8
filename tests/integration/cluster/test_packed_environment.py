"""A packed environment on the loopback standalone cluster (``make test-packed``, ~4 min: not in ``make test``).

What a user without lakecdc installed on the cluster's nodes does: install lakecdc into a fresh virtual
environment, pack it with ``venv-pack``, and ship it with ``spark-submit --archives env.tar.gz#environment``;
the executors unpack it into their working directories and run their Python workers from
``./environment/bin/python``. In client deploy mode the driver's JVM starts Python workers of its own (the
data source's planning) with that same relative path, so spark-submit runs in a directory where the archive is
unpacked too; the driver's own Python is the project's environment.

The test checks the outcome (the tables equal the stream) and that the executors' Python workers really ran
from the unpacked archive: their command lines are sampled from /proc while the job runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka
from deploy.local_spark_cluster import LocalSparkCluster, _spark_home
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches

pytestmark = pytest.mark.packed

ENTRY = str(ROOT / "deploy" / "spark_submit_entry.py")


def _pack(tmp: Path) -> Path:
    """lakecdc installed (not editable) into a new venv, packed with venv-pack."""
    env = tmp / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=120)
    subprocess.run([str(env / "bin" / "pip"), "install", "-q", str(ROOT)], check=True, timeout=1200)
    archive = tmp / "env.tar.gz"
    venv_pack = shutil.which("venv-pack", path=str(Path(sys.executable).parent)) or "venv-pack"
    subprocess.run(
        [venv_pack, "-p", str(env), "-o", str(archive), "--compress-level", "1", "-q"], check=True, timeout=1200
    )
    shutil.rmtree(env)  # the executors must not find the unpacked original
    return archive


class _WorkerCommands:
    """``cwd: command line`` of the Python processes started from an unpacked ``environment/`` while it runs."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> _WorkerCommands:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _poll(self) -> None:
        while not self._stop.wait(0.2):
            for entry in Path("/proc").iterdir():
                try:
                    cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if "environment/bin/python" in cmd and "pyspark" in cmd:
                    try:
                        cwd = os.readlink(entry / "cwd")
                    except OSError:
                        continue
                    self.seen.add(f"{cwd}: {cmd.strip()}")


def test_a_venv_pack_archive_runs_the_executors(kafka: LocalKafka, tmp_path: Path, topic_name: str) -> None:
    archive = _pack(tmp_path)
    # Client mode: the driver's JVM starts Python workers too (the data source's planning), with the same
    # relative ./environment/bin/python: spark-submit runs where the archive is unpacked as well.
    driver_dir = tmp_path / "driver"
    (driver_dir / "environment").mkdir(parents=True)
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(driver_dir / "environment")], check=True, timeout=600)
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=200, updates=4, seed=11)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    # The workers' environment has no trace of the checkout: lakecdc comes from the archive only.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "VIRTUAL_ENV")}
    with LocalSparkCluster(workers=1, cores_per_worker=2, memory_per_worker="1g") as cluster:
        argv = [
            str(_spark_home() / "bin" / "spark-submit"),
            *("--master", cluster.master_url, "--deploy-mode", "client"),
            *("--archives", f"{archive}#environment"),
            *("--conf", "spark.pyspark.python=./environment/bin/python"),
            *("--conf", f"spark.pyspark.driver.python={sys.executable}"),
            *("--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=512m"),
            *("--conf", "spark.python.authenticate.socketTimeout=120s"),
            ENTRY,
            "kafka-sync-database",
            *("--warehouse", warehouse, "--database", "ods"),
            *("--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}"),
            *("--kafka-conf", f"topic={topic_name}", "--kafka-conf", "value.format=canal-json"),
            "--available-now",
        ]
        env = {**clean, "SPARK_LOCAL_IP": "127.0.0.1"}  # the driver's lakecdc: the project venv's (editable)
        with _WorkerCommands() as workers:
            done = subprocess.run(
                argv, cwd=driver_dir, env=env, capture_output=True, text=True, timeout=900, check=False
            )
        unpacked = list(cluster.dir.glob("worker-*/app-*/*/environment/bin/python"))
        executor_dirs = {str(p.parent.parent.parent) for p in unpacked}
    said = [line for line in done.stderr.splitlines() if "lakecdc" in line or "Exception" in line or "Error" in line]
    assert done.returncode == 0, "\n".join([*said[-30:], done.stdout[-2000:]])
    assert f"lakecdc: {len(stream.messages)} change events" in done.stdout, done.stdout
    assert unpacked, "no executor unpacked the archive"
    # the executors' Python workers ran from the archive they unpacked (not the driver's copy): their
    # working directory is an executor's
    assert executor_dirs, unpacked
    assert any(seen.startswith(tuple(executor_dirs)) for seen in workers.seen), (executor_dirs, workers.seen)
    for table in ("orders", "customers"):
        _assert_table_matches(warehouse, stream, table)
