"""The Kubernetes recipe (deploy/kubernetes/submit.sh, deploy/entrypoint.sh), as far as a machine without
Kubernetes can run it.

1. ``submit.sh`` runs Spark's real Kubernetes submission client against a loopback stand-in for the API server
   that records what it is sent: the driver pod (image, arguments, volumes, environment) and the
   ``spark.properties`` config map.
2. That driver pod's command then runs through the image's entrypoint as a local process, with its recorded
   properties; only the master is swapped for a loopback standalone master that has no workers, so no
   executor comes from anywhere else. One "executor pod" runs ``<image> executor`` with the SPARK_* variables
   Kubernetes' executor pods get, and registers with the driver as Kubernetes' executor backend does.
3. The job's tables must come out exact, and its tasks must have run in that executor."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka, free_port
from deploy.local_spark_cluster import LocalSparkCluster
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches

ENTRYPOINT = str(ROOT / "deploy" / "entrypoint.sh")
ENTRY = str(ROOT / "deploy" / "spark_submit_entry.py")


def _env() -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)  # lakecdc, spark-submit's python: the image's
    return {
        **os.environ,
        "PATH": f"{venv_bin}:{os.environ['PATH']}",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }


def test_pass_through_runs_lakecdc() -> None:
    done = subprocess.run([ENTRYPOINT, "--version"], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("lakecdc "), done.stdout


def test_an_executor_pod_without_its_settings_is_refused_by_name() -> None:
    env = {k: v for k, v in _env().items() if not k.startswith("SPARK_")}
    done = subprocess.run([ENTRYPOINT, "executor"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "SPARK_EXECUTOR_MEMORY" in done.stderr


def _executor_java_options() -> list[str]:
    """The executor JVM options a Kubernetes executor pod gets as SPARK_JAVA_OPT_<n>: the driver's
    ``spark.executor.extraJavaOptions``, which SparkContext supplements with Java 17's module options."""
    probe = (
        "from pyspark.sql import SparkSession\n"
        "s = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "print(s.sparkContext.getConf().get('spark.executor.extraJavaOptions'))\n"
        "s.stop()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=_env(), capture_output=True, text=True, timeout=300, check=True
    )
    return done.stdout.strip().splitlines()[-1].split()


def _wait_for(path: Path, pattern: str, timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace")) if path.exists() else None
        if found:
            return found
        time.sleep(0.5)
    raise TimeoutError(f"{pattern!r} not in {path} within {timeout} s")


class _ApiServer:
    """A loopback stand-in for the Kubernetes API server: it records each request and answers creations
    and patches with the object sent (a watch gets 404; the submission does not wait for the app)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        recorded = self.requests

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _write(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                recorded.append((self.command, self.path, body))
                body.setdefault("metadata", {}).setdefault("uid", "00000000-0000-0000-0000-000000000001")
                self._reply(201, body)

            do_POST = do_PATCH = do_PUT = _write

            def do_GET(self) -> None:
                recorded.append((self.command, self.path, None))
                self._reply(404, {"kind": "Status", "code": 404})

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def created(self, kind: str) -> list[Any]:
        return [body for method, path, body in self.requests if method in ("POST", "PATCH") and f"/{kind}" in path]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _submit_to_kubernetes(action_args: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """deploy/kubernetes/submit.sh against the stand-in: the driver pod and its spark.properties."""
    api = _ApiServer()
    try:
        env = {
            **_env(),
            "K8S_MASTER": f"k8s://{api.url}",
            "LAKECDC_IMAGE": "lakecdc:test",
            "LAKECDC_SUBMIT_ARGS": "--conf spark.kubernetes.submission.waitAppCompletion=false",
        }
        done = subprocess.run(
            [str(ROOT / "deploy" / "kubernetes" / "submit.sh"), *action_args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        api.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Deployed Spark application" in done.stderr, done.stderr[-2000:]
    (pod,) = api.created("pods")
    (config_map,) = [m for m in api.created("configmaps") if "spark.properties" in m.get("data", {})]
    properties = dict(line.split("=", 1) for line in config_map["data"]["spark.properties"].splitlines() if "=" in line)
    return pod, {k: v.replace("\\:", ":") for k, v in properties.items()}


def test_a_kubernetes_submission_runs_through_the_image_entrypoint(
    kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=150, updates=4, seed=5)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    lake = tmp_path / "lake"
    action = [
        "kafka-sync-database",
        *("--warehouse", "/lake/wh", "--database", "ods"),
        *("--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}"),
        *("--kafka-conf", f"topic={topic_name}", "--kafka-conf", "value.format=canal-json"),
        "--available-now",
    ]
    # 1. What Spark's Kubernetes client asks of the cluster.
    pod, properties = _submit_to_kubernetes(action)
    container = pod["spec"]["containers"][0]
    assert container["image"] == "lakecdc:test"
    args = container["args"]
    assert args[:2] == ["driver", "--properties-file"], args
    app = "local:///opt/lakecdc/deploy/spark_submit_entry.py"  # where deploy/Dockerfile puts it
    assert args[3:6] == ["--class", "org.apache.spark.deploy.PythonRunner", app], args
    assert args[6:] == action, args
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    claims = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in pod["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    }
    assert mounts.get("lake") == "/lake" and claims == {"lake": "lakecdc-lake"}, (mounts, claims)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["LAKECDC_STOP_TIMEOUT"] == "60s" and "SPARK_DRIVER_BIND_ADDRESS" in env
    assert properties["spark.kubernetes.container.image"] == "lakecdc:test"
    assert properties["spark.pyspark.python"] == "/usr/local/bin/python"
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "WORKDIR /opt/lakecdc" in dockerfile and "COPY deploy deploy" in dockerfile
    assert 'ENTRYPOINT ["/opt/lakecdc/deploy/entrypoint.sh"]' in dockerfile

    # 2. The driver pod's command through the entrypoint, with its recorded properties; paths of the image
    # (/opt/lakecdc, the /lake volume, its Python) mapped to this machine's, the master to a loopback one.
    driver_port = free_port()
    local = {
        k: v
        for k, v in properties.items()
        if not k.startswith(("spark.kubernetes.", "spark.driver.host", "spark.master", "spark.pyspark."))
    }
    with LocalSparkCluster(workers=0) as cluster:
        local.update(
            {
                "spark.master": cluster.master_url,
                "spark.driver.host": "127.0.0.1",
                "spark.driver.port": str(driver_port),
                "spark.executor.memory": "768m",
                "spark.driver.memory": "1g",
                "spark.python.authenticate.socketTimeout": "120s",
            }
        )
        properties_file = tmp_path / "spark.properties"
        properties_file.write_text("\n".join(f"{k}={v}" for k, v in local.items()))
        driver_args = [
            ENTRY if a == app else (str(lake) + a[len("/lake") :] if a.startswith("/lake/") else a) for a in args
        ]
        driver_args[driver_args.index("--properties-file") + 1] = str(properties_file)
        driver_env = {**_env(), **{k: v for k, v in env.items() if k.startswith("LAKECDC_")}}
        driver_env["SPARK_DRIVER_BIND_ADDRESS"] = "127.0.0.1"
        driver = subprocess.Popen(
            [ENTRYPOINT, *driver_args],
            env=driver_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        executor_log = tmp_path / "executor.log"
        executor = None
        try:
            app_id = _wait_for(cluster.dir / "master.log", r"Registered app .* with ID (app-\S+)", 180).group(1)
            pod_env = {
                "SPARK_DRIVER_URL": f"spark://CoarseGrainedScheduler@127.0.0.1:{driver_port}",
                "SPARK_EXECUTOR_ID": "1",
                "SPARK_EXECUTOR_CORES": "2",
                "SPARK_APPLICATION_ID": app_id,
                "SPARK_EXECUTOR_POD_IP": "127.0.0.1",
                "SPARK_EXECUTOR_MEMORY": "768m",
                "SPARK_EXECUTOR_POD_NAME": "lakecdc-exec-1",
            }
            options = [*_executor_java_options(), "-Djava.io.tmpdir=" + str(tmp_path)]
            pod_env.update({f"SPARK_JAVA_OPT_{i}": option for i, option in enumerate(options)})
            with executor_log.open("w") as log:
                executor = subprocess.Popen(
                    [ENTRYPOINT, "executor"], env={**_env(), **pod_env}, stdout=log, stderr=subprocess.STDOUT
                )
            out, err = driver.communicate(timeout=600)
        finally:
            driver.kill()
            if executor is not None:
                executor.terminate()
                executor.wait(timeout=60)

    # 3. The outcome.
    said = [line for line in err.splitlines() if "lakecdc" in line or "Exception:" in line or "Error:" in line]
    assert driver.returncode == 0, "\n".join(said[-30:])
    assert f"lakecdc: {len(stream.messages)} change events" in out, out
    tasks = executor_log.read_text(errors="replace")
    assert "Successfully registered with driver" in tasks, tasks[-2000:]
    assert tasks.count("Finished task") > 0, tasks[-2000:]
    for table in ("orders", "customers"):
        _assert_table_matches(str(lake / "wh"), stream, table)
