"""kafka-sync-database on a Spark standalone cluster (master + 2 workers on loopback, started from
the pyspark distribution): reading, parsing and writing run in executor JVMs' Python workers, and
the tables come out exactly as in local mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.procs import ExecutorCpu
from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka
from deploy.local_spark_cluster import LocalSparkCluster
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches


def test_database_sync_on_a_standalone_cluster_writes_on_executors(
    kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=150, updates=5, seed=11)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    with LocalSparkCluster(workers=2, cores_per_worker=1, memory_per_worker="1g") as cluster:
        argv = [
            sys.executable,
            "-m",
            "ingest",
            "kafka-sync-database",
            "--warehouse",
            warehouse,
            "--database",
            "ods",
            "--kafka-conf",
            f"properties.bootstrap.servers={kafka.bootstrap}",
            "--kafka-conf",
            f"topic={topic_name}",
            "--kafka-conf",
            "value.format=canal-json",
            "--max-offsets-per-trigger",
            "1000",
            "--available-now",
            *("--spark-conf", f"spark.master={cluster.master_url}"),
            *("--spark-conf", "spark.driver.host=127.0.0.1"),
            *("--spark-conf", "spark.driver.bindAddress=127.0.0.1"),
            *("--spark-conf", "spark.executor.memory=512m"),
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with ExecutorCpu() as executors:
            done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"lakecdc: {len(stream.messages)} change events" in done.stdout, done.stdout
    # Python workers of the executor JVMs did the reading, parsing and writing.
    assert executors.seconds > 1.0
    for table in ("orders", "customers"):
        _assert_table_matches(warehouse, stream, table)
