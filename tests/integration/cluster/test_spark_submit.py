"""``spark-submit`` runs lakecdc (deploy/spark_submit_entry.py) on the loopback standalone cluster: the
master and confs are spark-submit's, not lakecdc's local defaults, and the table comes out exact.
Cluster deploy mode is refused by Spark itself for Python applications on a standalone cluster."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.procs import ExecutorCpu
from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka
from deploy.local_spark_cluster import LocalSparkCluster, _spark_home
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches

ENTRY = str(ROOT / "deploy" / "spark_submit_entry.py")


def _submit(master: str, *spark_args: str) -> list[str]:
    return [str(_spark_home() / "bin" / "spark-submit"), "--master", master, *spark_args]


def _env() -> dict[str, str]:
    # The driver's and executors' Python: the one lakecdc is installed in.
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}


def test_spark_submit_client_mode_on_a_standalone_cluster(kafka: LocalKafka, tmp_path: Path, topic_name: str) -> None:
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=100, updates=4, seed=3)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    with LocalSparkCluster(workers=1, cores_per_worker=2, memory_per_worker="1g") as cluster:
        argv = _submit(
            cluster.master_url,
            *("--deploy-mode", "client", "--conf", "spark.driver.host=127.0.0.1"),
            *("--conf", "spark.executor.memory=512m", "--conf", "spark.python.authenticate.socketTimeout=120s"),
            ENTRY,
            "kafka-sync-database",
            *("--warehouse", warehouse, "--database", "ods"),
            *("--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}"),
            *("--kafka-conf", f"topic={topic_name}", "--kafka-conf", "value.format=canal-json"),
            "--available-now",
        )
        with ExecutorCpu() as executors:
            done = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, check=False)
        master_log = (cluster.dir / "master.log").read_text()
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"lakecdc: {len(stream.messages)} change events" in done.stdout, done.stdout
    # The application ran on the cluster spark-submit named (not lakecdc's local[*]).
    assert "Registering app lakecdc kafka-sync-database-ods-all" in master_log, master_log[-2000:]
    assert executors.seconds > 1.0
    for table in ("orders", "customers"):
        _assert_table_matches(warehouse, stream, table)


def test_cluster_deploy_mode_is_refused_by_spark_for_python_on_standalone(tmp_path: Path) -> None:
    argv = _submit("spark://127.0.0.1:7077", "--deploy-mode", "cluster", ENTRY, "kafka-sync-table", "--help")
    done = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0
    assert "Cluster deploy mode is currently not supported for python applications on standalone clusters" in (
        done.stderr + done.stdout
    )
