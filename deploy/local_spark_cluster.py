"""A Spark standalone cluster on loopback: one master and N workers, started from the pyspark
distribution's own ``bin/spark-class`` (no separate Spark download).

Used by the benchmark (and available for trying a cluster deployment locally) to run a sync job
whose write tasks run in executor JVMs and their Python workers, not in the driver:

    with LocalSparkCluster(workers=2, cores_per_worker=1) as cluster:
        lakecdc kafka-sync-table ... --spark-conf spark.master=<cluster.master_url>
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

from deploy.local_kafka import free_port


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class LocalSparkCluster:
    """Master + ``workers`` workers on 127.0.0.1 with free ports and a temporary work directory.

    ``hidden_from_workers``: directories the workers, their executors and Python workers cannot see, as
    on a cluster whose executors run on other hosts than the driver: each worker starts in its own
    mount namespace (``unshare --mount``, needs root) where every such directory is covered by an
    empty read-only tmpfs (reads find nothing, writes fail)."""

    def __init__(
        self,
        workers: int = 2,
        cores_per_worker: int = 1,
        memory_per_worker: str = "2g",
        hidden_from_workers: tuple[str, ...] = (),
    ) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="lakecdc-spark-cluster-"))
        self.port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        spark_class = str(_spark_home() / "bin" / "spark-class")
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(self.dir / "logs")}
        self.processes: list[subprocess.Popen[bytes]] = []
        self._logs: list[BinaryIO] = []
        master = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port)]
        self._start([spark_class, *master, "--webui-port", str(free_port())], env, "master")
        self._wait_port(self.port)
        for i in range(workers):
            work = self.dir / f"worker-{i}"
            work.mkdir()
            worker = ["org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1"]
            ports = ["--port", str(free_port()), "--webui-port", str(free_port())]
            size = ["--cores", str(cores_per_worker), "--memory", memory_per_worker, "--work-dir", str(work)]
            self._start(_hiding(hidden_from_workers, [spark_class, *worker, *ports, *size]), env, f"worker-{i}")
        self._wait_workers(workers)

    def worker_pids(self) -> list[int]:
        return [p.pid for p in self.processes[1:]]

    def _start(self, cmd: list[str], env: dict[str, str], name: str) -> None:
        log = open(self.dir / f"{name}.log", "wb")  # noqa: SIM115
        self._logs.append(log)
        self.processes.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))

    def _wait_port(self, port: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"Spark master did not listen on port {port} within {timeout} s (see {self.dir})")

    def _wait_workers(self, count: int, timeout: float = 60.0) -> None:
        # The master logs one "Registering worker" line per worker that joined.
        deadline = time.monotonic() + timeout
        log = self.dir / "master.log"
        while time.monotonic() < deadline:
            if log.read_text(errors="replace").count("Registering worker") >= count:
                return
            time.sleep(0.2)
        raise TimeoutError(f"{count} Spark workers did not register within {timeout} s (see {log})")

    def stop(self) -> None:
        for p in reversed(self.processes):
            p.terminate()
        for p in self.processes:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in self._logs:
            log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalSparkCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _hiding(hidden: tuple[str, ...], cmd: list[str]) -> list[str]:
    """``cmd`` in a new mount namespace where each of the ``hidden`` directories is an empty read-only
    tmpfs (``unshare`` execs the shell, which execs ``cmd``: the process id stays the same)."""
    if not hidden:
        return cmd
    mounts = [f"mount -t tmpfs -o ro,size=1m lakecdc-hidden {shlex.quote(d)}" for d in hidden]
    script = " && ".join([*mounts, f"exec {shlex.join(cmd)}"])
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]
