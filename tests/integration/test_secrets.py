"""Secrets never leak (#24): sync jobs run from the command line with distinctive secret strings, given
through ``${env:...}`` / ``${file:...}`` references (README, Secrets), while the Spark UI runs on a
loopback port. Then every place a secret could end up is searched for them: every line the job
printed (lakecdc at DEBUG, Spark at INFO), every file of the checkpoint and of the warehouse, and what
the Spark UI shows (the environment page: Spark, Hadoop and system properties; the SQL tab's plans;
the jobs' descriptions; the structured-streaming pages). A run with a wrong password fails naming the
user and the host, not the password."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from deploy.canal_stream import generate
from deploy.local_kafka import LocalKafka, free_port
from deploy.local_mariadb import LocalMariaDB
from tests.conftest import ROOT

MYSQL_SECRET = "S3cr3t-Marker-9d41"
WRONG_SECRET = "Wr0ng-Marker-5c02"
S3_SECRET = "S3-Secret-Marker-c7e3"
S3_ACCESS = "S3-Access-Marker-a1b2"
HADOOP_SECRET = "Fs-Secret-Marker-08d6"
SASL_SECRET = "Sasl-Marker-3f88"
KEY_SECRET = "KeyPw-Marker-6b19"
SECRETS = (MYSQL_SECRET, WRONG_SECRET, S3_SECRET, S3_ACCESS, HADOOP_SECRET, SASL_SECRET, KEY_SECRET)
USER = "lakecdc_secret"
PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="cdc" password="PASSWORD";'


def _catalog_conf(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """Object-store keys a local warehouse ignores, from the environment and from a file."""
    access_file = tmp_path / "secrets" / "s3-access"
    access_file.parent.mkdir(exist_ok=True)
    access_file.write_text(S3_ACCESS + "\n")
    argv = [
        "--catalog-conf",
        "s3.secret-key=${env:TEST_S3_SECRET}",
        "--catalog-conf",
        f"s3.access-key=${{file:{access_file}}}",
    ]
    argv += ["--catalog-conf", "fs.s3a.secret.key=${env:TEST_FS_SECRET}"]
    return argv, {"TEST_S3_SECRET": S3_SECRET, "TEST_FS_SECRET": HADOOP_SECRET}


def _common(tmp_path: Path, ui_port: int) -> list[str]:
    argv = ["--warehouse", str(tmp_path / "warehouse"), "--checkpoint", str(tmp_path / "checkpoint")]
    argv += ["--database", "ods", "--trigger-interval", "1s", "--spark-conf", "spark.master=local[1]"]
    argv += ["--spark-conf", "spark.ui.enabled=true", "--spark-conf", f"spark.ui.port={ui_port}"]
    # The SQL tab shows the logical plans too, where the source's options are printed.
    argv += ["--spark-conf", "spark.sql.ui.explainMode=extended"]
    return argv


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_LOG_LEVEL": "DEBUG", "LAKECDC_SPARK_LOG_LEVEL": "INFO"}
    env["LAKECDC_VERBOSE"] = "1"  # tracebacks and Spark's task errors too
    return {**env, **extra}


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # loopback only
        return str(response.read().decode("utf-8", "replace"))


class UiCapture:
    """What the Spark UI of a running job shows, fetched over its REST API and pages."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.pages: dict[str, str] = {}
        self.app = ""

    def ready(self) -> bool:
        try:
            apps = json.loads(_get(f"{self.base}/api/v1/applications"))
        except (OSError, ValueError):  # not listening yet, or "Spark is starting up"
            return False
        self.app = apps[0]["id"] if apps else ""
        return bool(self.app)

    def sql_executions(self) -> int:
        return len(json.loads(_get(f"{self.base}/api/v1/applications/{self.app}/sql")))

    def capture(self) -> None:
        api = f"{self.base}/api/v1/applications/{self.app}"
        for path in ("environment", "sql?details=true&planDescription=true", "jobs", "stages"):
            self.pages[f"api/{path}"] = _get(f"{api}/{path}")
        for path in ("environment/", "SQL/", "jobs/", "StreamingQuery/"):
            self.pages[path] = _get(f"{self.base}/{path}")
        for link in sorted(
            set(re.findall(r'href="([^"]*StreamingQuery/statistics[^"]*)"', self.pages["StreamingQuery/"]))
        ):
            self.pages[link] = _get(self.base + link.replace("&amp;", "&") if link.startswith("/") else link)
        for execution in json.loads(self.pages["api/sql?details=true&planDescription=true"])[:5]:
            path = f"SQL/execution/?id={execution['id']}"
            self.pages[path] = _get(f"{self.base}/{path}")


# Spark gives a new Python worker 10 s to connect back; on a loaded machine (other test suites) a run
# may fail that way before doing anything, and is then run again from scratch. One core (local[1])
# starts fewer workers at once.
FLAKE = "Python worker failed to connect back"


def _run_until(
    argv: list[str],
    env: dict[str, str],
    log_dir: Path,
    ui: UiCapture,
    done: Callable[[], bool],
    step: Callable[[], None],
    fresh: Callable[[], None],
) -> str:
    """Runs the CLI until ``done()`` (calling ``step()`` while it runs), captures the UI, then stops the
    job with SIGINT as an operator would. Returns everything every run printed."""
    printed = ""
    for attempt in range(4):
        ui.app = ""
        log_path = log_dir / f"job-{attempt}.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
            try:
                deadline = time.monotonic() + 300
                while not (ui.ready() and done() and ui.sql_executions() >= 2):
                    if proc.poll() is not None:
                        break
                    assert time.monotonic() < deadline, log_path.read_bytes().decode("utf-8", "replace")[-3000:]
                    if ui.app:
                        step()
                    time.sleep(0.5)
                else:
                    ui.capture()
                    proc.send_signal(signal.SIGINT)
                    proc.wait(timeout=120)
            finally:
                with contextlib.suppress(ProcessLookupError):  # its JVM and Python workers too
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        text = log_path.read_bytes().decode("utf-8", "replace")
        printed += text
        if ui.pages:
            return printed
        assert FLAKE in text, text[-3000:]  # the job stopped by itself: only that is run again
        fresh()
    pytest.fail(f"four runs failed: {FLAKE}")


def _fresh(tmp_path: Path) -> Callable[[], None]:
    def clean() -> None:
        for name in ("checkpoint", "warehouse"):
            shutil.rmtree(tmp_path / name, ignore_errors=True)

    return clean


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _assert_no_secret(where: str, texts: Mapping[str, bytes | str]) -> None:
    assert texts, f"nothing searched in {where}"
    for name, text in texts.items():
        data = text.encode() if isinstance(text, str) else text
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} in {where}: {name}"


def _assert_nowhere(tmp_path: Path, ui: UiCapture, log_text: str, job: str) -> None:
    _assert_no_secret("the job's output", {"log": log_text})
    checkpoint = _files(tmp_path / "checkpoint")
    assert any(name.startswith("spark/offsets/") for name in checkpoint), sorted(checkpoint)
    _assert_no_secret("the checkpoint", checkpoint)
    warehouse = _files(tmp_path / "warehouse")
    assert any("/snapshot/snapshot-" in name for name in warehouse), sorted(warehouse)
    _assert_no_secret("the warehouse", warehouse)
    for i, (name, text) in enumerate(sorted(ui.pages.items())):  # kept for a look when this fails
        keep = Path(os.environ.get("LAKECDC_TEST_UI_DIR", tmp_path / "ui"))
        keep.mkdir(exist_ok=True, parents=True)
        (keep / f"{i:02d}-{re.sub(r'[^A-Za-z0-9]+', '_', name)}").write_text(text)
    # The pages hold what was searched: properties, plans, the query.
    sql = ui.pages["api/sql?details=true&planDescription=true"]
    assert "spark.app.name" in ui.pages["api/environment"] and job in sql and "MicroBatchScan" in sql
    _assert_no_secret("the Spark UI", dict(ui.pages))


@pytest.fixture
def secret_user(mariadb: LocalMariaDB) -> str:
    mariadb.execute(
        f"CREATE USER IF NOT EXISTS '{USER}'@'127.0.0.1' IDENTIFIED BY '{MYSQL_SECRET}'",
        f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'127.0.0.1'",
        "CREATE DATABASE IF NOT EXISTS secrets_src",
        "CREATE TABLE IF NOT EXISTS secrets_src.t (id INT PRIMARY KEY, v VARCHAR(20))",
        "INSERT IGNORE INTO secrets_src.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    return USER


@pytest.mark.timeout(1500)  # up to four runs on a loaded machine (FLAKE)
def test_mysql_job_leaks_no_secret(mariadb: LocalMariaDB, secret_user: str, tmp_path: Path) -> None:
    password_file = tmp_path / "secrets" / "mysql"
    password_file.parent.mkdir()
    password_file.write_text(MYSQL_SECRET + "\n")
    catalog, env = _catalog_conf(tmp_path)
    ui = UiCapture(free_port())
    argv = [sys.executable, "-m", "ingest", "mysql_sync_table", *_common(tmp_path, int(ui.base.rsplit(":", 1)[1]))]
    argv += ["--table", "t", *catalog]
    for conf in ("hostname=127.0.0.1", f"port={mariadb.port}", f"username={secret_user}", "database-name=secrets_src"):
        argv += ["--mysql-conf", conf]
    argv += ["--mysql-conf", "table-name=t"]
    wrong = [str(tmp_path / "checkpoint-wrong") if a == str(tmp_path / "checkpoint") else a for a in argv]
    wrong.append("--available-now")
    argv += ["--mysql-conf", f"password=${{file:{password_file}}}"]
    snapshots = tmp_path / "warehouse" / "ods.db" / "t" / "snapshot"

    def committed(n: int) -> bool:
        return len(list(snapshots.glob("snapshot-*"))) >= n

    changed = [False]

    def binlog_change() -> None:
        if committed(1) and not changed[0]:
            changed[0] = True
            mariadb.execute(
                "INSERT INTO secrets_src.t VALUES (4, 'd') ON DUPLICATE KEY UPDATE v = CONCAT(v, 'x')",
                "UPDATE secrets_src.t SET v = CONCAT(v, 'B') WHERE id = 2",
            )

    def fresh() -> None:
        _fresh(tmp_path)()
        changed[0] = False

    log_text = _run_until(argv, _env(env), tmp_path, ui, lambda: committed(2), binlog_change, fresh)
    assert "job starting" in log_text
    _assert_nowhere(tmp_path, ui, log_text, "mysql-sync-table-ods-t")

    # A wrong password (here from LAKECDC_MYSQL_PASSWORD): the error names the user and the host.
    wrong_env = _env({**env, "LAKECDC_MYSQL_PASSWORD": WRONG_SECRET})
    for _attempt in range(4):
        done = subprocess.run(wrong, cwd=ROOT, env=wrong_env, capture_output=True, text=True, timeout=300, check=False)
        if FLAKE not in done.stderr:
            break
        shutil.rmtree(tmp_path / "checkpoint-wrong", ignore_errors=True)
    assert done.returncode != 0
    assert f"'{secret_user}'@'127.0.0.1'" in done.stderr and "Access denied" in done.stderr, done.stderr[-3000:]
    _assert_no_secret("the failed job's output", {"stdout": done.stdout, "stderr": done.stderr})


@pytest.mark.timeout(1500)  # up to four runs on a loaded machine (FLAKE)
def test_kafka_job_leaks_no_secret(kafka: LocalKafka, topic_name: str, tmp_path: Path) -> None:
    """The local broker takes no SASL logins: the job's SASL login (a Paimon script's sasl.jaas.config,
    translated) and its key password are given but unused (PLAINTEXT), which librdkafka accepts."""
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, generate(tables=("orders",), keys=20, updates=1, seed=3).messages)
    key_file = tmp_path / "secrets" / "key-password"
    key_file.parent.mkdir()
    key_file.write_text(KEY_SECRET)
    catalog, env = _catalog_conf(tmp_path)
    ui = UiCapture(free_port())
    argv = [sys.executable, "-m", "ingest", "kafka_sync_table", *_common(tmp_path, int(ui.base.rsplit(":", 1)[1]))]
    argv += ["--table", "orders", *catalog]
    jaas = PLAIN_JAAS.replace("PASSWORD", "${env:TEST_SASL}")
    for conf in (
        f"properties.bootstrap.servers={kafka.bootstrap}",
        f"topic={topic_name}",
        "value.format=canal-json",
        "properties.security.protocol=PLAINTEXT",
        "properties.sasl.mechanism=PLAIN",
        f"properties.sasl.jaas.config={jaas}",
        f"properties.ssl.key.password=${{file:{key_file}}}",
    ):
        argv += ["--kafka-conf", conf]
    snapshots = tmp_path / "warehouse" / "ods.db" / "orders" / "snapshot"
    env["TEST_SASL"] = SASL_SECRET
    done = lambda: any(snapshots.glob("snapshot-*"))  # noqa: E731
    log_text = _run_until(argv, _env(env), tmp_path, ui, done, lambda: None, _fresh(tmp_path))
    assert "job starting" in log_text
    _assert_nowhere(tmp_path, ui, log_text, "kafka-sync-table-ods-orders")


def test_the_plans_spark_prints_hide_the_source_secrets(spark: Any, tmp_path: Path) -> None:
    """The source's options as Spark prints them: a streaming DataFrame's plans (``explain``, and the
    analysed plan an error or ``spark.sql.ui.explainMode=extended`` shows) mask every secret."""
    from ingest.cli.settings import SyncSettings
    from ingest.job import parse_spec, source_for

    kafka = {"properties.bootstrap.servers": "127.0.0.1:9", "topic": "t", "value.format": "canal-json"}
    kafka["properties.sasl.jaas.config"] = PLAIN_JAAS.replace("PASSWORD", SASL_SECRET)
    kafka |= {"properties.ssl.key.password": KEY_SECRET, "properties.ssl.keystore.key": S3_SECRET}
    mysql = {"hostname": "127.0.0.1", "username": "u", "database-name": "d", "table-name": "t"}
    mysql["password"] = MYSQL_SECRET
    common: dict[str, Any] = {"warehouse": str(tmp_path / "wh"), "database": "ods", "table": "t"}
    for settings in (
        SyncSettings(action="kafka-sync-table", kafka_conf=kafka, **common),
        SyncSettings(action="mysql-sync-table", mysql_conf=mysql, **common),
    ):
        source = source_for(settings, str(tmp_path / "ck"))
        reader = spark.readStream.format(source.data_source.name())
        for key, value in source.options(parse_spec(settings, source.value_format), 2).items():
            reader = reader.option(key, value)
        plans = reader.load()._jdf.queryExecution().toString()
        assert "*********(redacted)" in plans and source.data_source.name() in plans, plans
        _assert_no_secret("the plans", {settings.action.value: plans})


def test_a_wrong_password_is_named_by_user_and_host_only(mariadb: LocalMariaDB, secret_user: str) -> None:
    """The error of a refused login (as the job prints it, without Spark around it)."""
    from ingest.mysql.client import MySqlConnection, MySqlSourceError, connect

    conn = MySqlConnection(hostname="127.0.0.1", port=mariadb.port, username=secret_user, password=WRONG_SECRET)
    with pytest.raises(MySqlSourceError) as info, connect(conn):
        pass
    assert f"Access denied for user '{secret_user}'@'127.0.0.1'" in str(info.value)
    _assert_no_secret("the error", {"error": str(info.value), "repr": repr(conn)})
