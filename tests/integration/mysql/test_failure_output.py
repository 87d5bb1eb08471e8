"""A failed run ends with lakecdc's own error (README: Logs): a wrong MySQL password gives, as the last
line on stderr, the error naming the user and the host, with no Java or Python trace; ``-v`` adds the
trace. The fatal error is a log event too (JSON with LAKECDC_LOG_FORMAT=json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from deploy.local_mariadb import LocalMariaDB
from tests.chaos.harness import LOAD_FLAKE
from tests.conftest import ROOT

TRACE_MARKS = ("Traceback (most recent call last)", "\tat org.apache", "py4j", "SQLSTATE")


def _run(
    mariadb: LocalMariaDB, tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    conf = mariadb.mysql_conf(**{"database-name": "nowhere", "table-name": "t", "password": "wrong-password"})
    argv = [sys.executable, "-m", "ingest", "mysql-sync-table", "--warehouse", str(tmp_path / "wh")]
    argv += ["--database", "ods", "--table", "t", *extra]
    for key, value in conf.items():
        argv += ["--mysql-conf", f"{key}={value}"]
    for _ in range(3):
        done = subprocess.run(
            argv,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        # A Python worker too slow to connect back on a loaded machine (tests/chaos/harness.py): again.
        if LOAD_FLAKE not in done.stderr:
            break
    return done


def test_a_wrong_password_ends_with_lakecdcs_error(mariadb: LocalMariaDB, tmp_path: Path) -> None:
    done = _run(mariadb, tmp_path)
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("lakecdc: job failed:"), done.stderr
    assert "cannot connect to MySQL" in last and "root" in last and f"127.0.0.1:{mariadb.port}" in last, last
    assert "wrong-password" not in done.stderr  # nor the secret
    assert not [mark for mark in TRACE_MARKS if mark in done.stderr], done.stderr
    # the fatal error is a log event too
    assert "job failed" in done.stderr.strip().splitlines()[-2]


def test_json_logs_carry_the_fatal_error(mariadb: LocalMariaDB, tmp_path: Path) -> None:
    done = _run(mariadb, tmp_path, env={"LAKECDC_LOG_FORMAT": "json"})
    lines = done.stderr.strip().splitlines()
    assert lines[-2].startswith("{"), done.stderr
    event = json.loads(lines[-2])
    assert event["event"] == "job failed" and event["level"] == "error"
    assert "cannot connect to MySQL" in event["error"] and event["terminal"] is True
    assert lines[-1].startswith("lakecdc: job failed:")


def test_verbose_adds_the_trace(mariadb: LocalMariaDB, tmp_path: Path) -> None:
    done = _run(mariadb, tmp_path, "-v")
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    # (Spark's task errors, logged with -v, may follow as the JVM stops)
    assert "lakecdc: job failed: " in done.stderr and "cannot connect to MySQL" in done.stderr
