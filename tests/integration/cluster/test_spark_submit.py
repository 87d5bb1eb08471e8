"""``spark-submit`` with lakecdc's entry file (deploy/spark_submit_entry.py): cluster deploy mode is
refused by Spark itself for Python applications on a standalone cluster (client mode is the way)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from deploy.local_spark_cluster import _spark_home
from tests.conftest import ROOT

ENTRY = str(ROOT / "deploy" / "spark_submit_entry.py")


def _submit(master: str, *spark_args: str) -> list[str]:
    return [str(_spark_home() / "bin" / "spark-submit"), "--master", master, *spark_args]


def _env() -> dict[str, str]:
    # The driver's and executors' Python: the one lakecdc is installed in.
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}


def test_cluster_deploy_mode_is_refused_by_spark_for_python_on_standalone(tmp_path: Path) -> None:
    argv = _submit("spark://127.0.0.1:7077", "--deploy-mode", "cluster", ENTRY, "kafka-sync-table", "--help")
    done = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0
    assert "Cluster deploy mode is currently not supported for python applications on standalone clusters" in (
        done.stderr + done.stdout
    )
