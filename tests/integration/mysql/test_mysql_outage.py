"""MariaDB restarted for 45 s during a snapshot and during a binlog read: the job waits for it and resumes
from the last position, and ends with the table exact (#23; ingest/mysql/client.py, ingest/mysql/binlog.py).

Each test has a private server (stopped and started again on the same port and data directory; the
shared session server stays up for the other tests). The jobs run under ``local[2]``, where a failed task
fails the job: the outage is survived inside the read tasks and the driver's planning, not by Spark
retrying tasks. The snapshot case runs ``--available-now`` in this process; the binlog case a running job
from the CLI (a whole binlog range is one read task, too quick to stop the server in the middle of)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.job import run
from tests.chaos.harness import LOAD_FLAKE, run_past_load_flakes
from tests.conftest import ROOT
from tests.integration.mysql.test_mysql import (
    _assert_changelog_replays,
    _cli,
    _paimon_rows,
    _settings,
    _source_rows,
)

# Long fault runs: `make faults`, not `make test` (README: Guarantees has their figures).
pytestmark = pytest.mark.faults

OUTAGE_S = 45


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalMariaDB]:
    with LocalMariaDB(str(tmp_path / "db"), time_zone="+02:00") as db:
        db.execute("CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(200), n INT)")
        yield db


def _snapshots(warehouse: str) -> int:
    return len(list((Path(warehouse) / "ods.db" / "t" / "snapshot").glob("snapshot-*")))


def _run_with_outage(settings: Any, db: LocalMariaDB, warehouse: str, after_commits: int) -> dict[str, float]:
    """Run the job; once it has made ``after_commits`` commits, stop the server for OUTAGE_S seconds."""
    out: dict[str, Any] = {}
    thread = threading.Thread(target=run_past_load_flakes, args=(lambda: run(settings), out), daemon=True)
    thread.start()
    deadline = time.monotonic() + 300
    while _snapshots(warehouse) < after_commits:
        assert "ended" not in out and time.monotonic() < deadline, out
        time.sleep(0.05)
    committed = _snapshots(warehouse)
    db.stop()
    down = time.monotonic()
    time.sleep(OUTAGE_S)
    assert "ended" not in out, out  # the job waited for the server
    db.start()
    up = time.monotonic()
    thread.join(600)
    assert "error" not in out, out.get("error")
    assert _snapshots(warehouse) > committed  # it went on after the outage
    figures = {"outage_s": up - down, "ended_after_s": out["ended"] - up, "batches": out["result"].stats.batches}
    print(f"MariaDB outage survived: {figures}")
    return figures


def test_a_45_s_restart_during_the_snapshot_is_survived(spark: Any, server: LocalMariaDB, tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    c = server.connect("s")
    with c.cursor() as cur:
        for start in range(0, 20_000, 2_000):
            rows = [(i, f"v{i}" * 20) for i in range(start, start + 2_000)]
            cur.executemany("INSERT INTO t VALUES (%s, %s, 0)", rows)
    c.close()
    conf = {"scan.incremental.snapshot.chunk.size": "500"}
    settings = _settings(server, warehouse, "s", mysql_conf=conf, max_offsets_per_trigger=1000)
    _run_with_outage(settings, server, warehouse, after_commits=2)
    assert _paimon_rows(warehouse, "ods.t", ["id", "v", "n"]) == _source_rows(server, "s", "t", "id, v, n")
    _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))


def test_a_45_s_restart_during_the_binlog_is_survived(server: LocalMariaDB, tmp_path: Path) -> None:
    """A running job (the CLI, ``local[2]``: one attempt per task) in its binlog phase while a writer
    inserts, updates and deletes; the server is stopped 45 s and started again. The job keeps running and
    goes on committing; stopped (SIGTERM) and caught up (--available-now), the table is exact."""
    warehouse = str(tmp_path / "warehouse")
    server.execute("INSERT INTO s.t VALUES " + ", ".join(f"({i}, 'v{i}', 0)" for i in range(500)))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_MYSQL_PASSWORD": ROOT_PASSWORD}
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        rng = random.Random(7)
        while not stop.is_set():
            try:
                c = server.connect("s")
                with c.cursor() as cur:
                    while not stop.is_set():
                        key = rng.randrange(0, 1_500)
                        if rng.random() < 0.2:
                            cur.execute("DELETE FROM t WHERE id = %s", (key,))
                        else:
                            cur.execute("INSERT INTO t VALUES (%s, 'w', 1) ON DUPLICATE KEY UPDATE n = n + 1", (key,))
                        written[0] += 1
                        time.sleep(0.005)
                c.close()
            except pymysql.err.OperationalError:
                time.sleep(0.2)  # the server is down

    def wait_for(count: int, proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + 300
        while _snapshots(warehouse) < count:
            assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.2)

    thread = threading.Thread(target=writer)
    log = open(tmp_path / "job.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        _cli(server, warehouse, "s", "--trigger-interval", "1s"), cwd=ROOT, env=env, stdout=log, stderr=log
    )
    try:
        wait_for(1, proc)  # the snapshot committed: the binlog phase from here on
        thread.start()
        wait_for(4, proc)
        server.stop()
        down = time.monotonic()
        time.sleep(OUTAGE_S)
        assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]  # still running
        server.start()
        up = time.monotonic()
        after = _snapshots(warehouse)
        wait_for(after + 3, proc)  # and committing again
        resumed_in = time.monotonic() - up
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    print(f"MariaDB outage during the binlog survived: {up - down:.1f} s down, commits again {resumed_in:.1f} s after")
    for _ in range(3):
        caught_up = subprocess.run(
            _cli(server, warehouse, "s", "--available-now"), cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=600, check=False,
        )  # fmt: skip
        if LOAD_FLAKE not in caught_up.stdout + caught_up.stderr:
            break  # (else Spark could not start a Python worker on the loaded machine: again)
    assert caught_up.returncode == 0, caught_up.stderr[-3000:]
    assert written[0] > 0
    assert _paimon_rows(warehouse, "ods.t", ["id", "v", "n"]) == _source_rows(server, "s", "t", "id, v, n")
    _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))
