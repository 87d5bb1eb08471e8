"""``--mysql-conf scan.snapshot.when-needed=true`` (#23 item 4, Debezium's ``snapshot.mode=when_needed``):
a checkpoint whose binlog position is gone (purged, RESET MASTER) makes the job take a new snapshot of
the captured tables instead of stopping; rows inserted, updated and deleted while the binlog was lost
all reach Paimon, and the binlog goes on after it. Without the option the job stops as before.

On a server whose row events do not name their columns (MariaDB's default NO_LOG): the schema
history starts again at the re-snapshot's position.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from sinks.crash_points import VARIABLE
from tests.paimon_read import read_changelog, read_pypaimon, read_rust

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[3]
OPTION = "scan.snapshot.when-needed"


@pytest.fixture(scope="module")
def server(nolog_server: LocalMariaDB) -> LocalMariaDB:
    return nolog_server


def _conf(server: LocalMariaDB, database: str, table: str, **conf: str) -> dict[str, str]:
    return server.mysql_conf(
        **{"database-name": database, "table-name": table, "scan.incremental.snapshot.chunk.size": "7", **conf}
    )


def _settings(server: LocalMariaDB, warehouse: Path, database: str, table: str = "t", **conf: str) -> SyncSettings:
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=str(warehouse),
        database="ods",
        table=table,
        mysql_conf=_conf(server, database, table, **conf),
        available_now=True,
        checkpoint=f"{warehouse}/ck",
    )


def _source(server: LocalMariaDB, table: str) -> list[dict[str, Any]]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT id, v, n FROM {table} ORDER BY id")
            return [{"id": i, "v": v, "n": n} for i, v, n in cur.fetchall()]
    finally:
        conn.close()


def _assert_equal(server: LocalMariaDB, table: str, warehouse: Path, target: str = "ods.t") -> None:
    expected = _source(server, table)
    assert read_rust(str(warehouse), target) == expected
    assert read_pypaimon(str(warehouse), target) == expected


def _setup(server: LocalMariaDB, database: str, key: str = "INT") -> None:
    values = ", ".join(f"({i}, 'v{i}', {i})" for i in range(1, 51))
    server.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (id {key} PRIMARY KEY, v VARCHAR(20) NOT NULL, n INT)",
        f"INSERT INTO {database}.t VALUES {values}",
    )


def _gap(server: LocalMariaDB, database: str) -> None:
    """Inserts, updates (one of them moving a key), deletes (rows of the first, middle and last chunks,
    a run of neighbouring keys among them), all while the job is stopped."""
    server.execute(
        f"INSERT INTO {database}.t VALUES (51, 'v51', 51), (52, 'v52', 52), (200, 'v200', 200)",
        f"UPDATE {database}.t SET v = 'changed', n = n + 1000 WHERE id IN (3, 20, 45)",
        f"UPDATE {database}.t SET id = 300 WHERE id = 10",
        f"DELETE FROM {database}.t WHERE id IN (1, 2, 15, 16, 17, 33, 49, 50, 52)",
        f"DELETE FROM {database}.t WHERE id BETWEEN 25 AND 29",
    )


def _position(server: LocalMariaDB) -> tuple[str, int]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW MASTER STATUS")
            row = cur.fetchone()
            return str(row[0]), int(row[1])
    finally:
        conn.close()


def _files(server: LocalMariaDB) -> list[str]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW BINARY LOGS")
            return [str(r[0]) for r in cur.fetchall()]
    finally:
        conn.close()


def _purge(server: LocalMariaDB) -> None:
    """Every binlog file but a new one gone (MariaDB purges a file only once its binlog checkpoint
    is in a later one: asked again until it is)."""
    server.execute("FLUSH BINARY LOGS")
    for _ in range(50):
        newest = _position(server)[0]
        server.execute(f"PURGE BINARY LOGS TO '{newest}'")
        if _files(server) == [newest]:
            return
        time.sleep(0.2)
    raise AssertionError(f"binlog not purged: {_files(server)}")


def test_a_purged_binlog_is_re_snapshotted_with_the_option_deletes_included(
    spark: Any, server: LocalMariaDB, tmp_path: Path
) -> None:
    _setup(server, "rs1")
    run(_settings(server, tmp_path, "rs1"))
    _assert_equal(server, "rs1.t", tmp_path)
    synced = _position(server)
    _gap(server, "rs1")
    _purge(server)

    # the default is unchanged: the job stops naming the position
    with pytest.raises(JobFailed, match=r"purged") as failed:
        run(_settings(server, tmp_path, "rs1"))
    assert f"{synced[0]}:{synced[1]}" in str(failed.value) and OPTION in str(failed.value)
    assert 1 in {r["id"] for r in read_rust(str(tmp_path), "ods.t")}  # nothing written

    run(_settings(server, tmp_path, "rs1", **{OPTION: "true"}))
    _assert_equal(server, "rs1.t", tmp_path)
    marker = json.loads((tmp_path / "ck" / "lakecdc-mysql-resnapshot.json").read_text())
    assert marker["from"]["binlog"] == list(synced) and "purged" in marker["problem"]
    assert len(marker["chunks"]) > 3 and marker["scans"]["rs1.t"]["split"] == "id"

    # the changelog: the first snapshot's +I, then the re-snapshot's -D of each vanished key (before
    # the chunk's rows) and its rows again
    changes = read_changelog(str(tmp_path), "ods.t", ("id", "v", "n"))
    deleted = sorted(i for kind, i, _v, _n in changes if kind == "-D")
    assert deleted == [1, 2, 10, 15, 16, 17, 25, 26, 27, 28, 29, 33, 49, 50]

    # the binlog goes on after the re-snapshot, from its position (and with the re-based history)
    server.execute(
        "INSERT INTO rs1.t VALUES (400, 'v400', 400)",
        "UPDATE rs1.t SET n = -1 WHERE id = 4",
        "DELETE FROM rs1.t WHERE id = 5",
        "ALTER TABLE rs1.t ADD COLUMN w INT",
        "INSERT INTO rs1.t VALUES (401, 'v401', 401, 7)",
    )
    run(_settings(server, tmp_path, "rs1", **{OPTION: "true"}))
    rows = {r["id"]: r for r in read_rust(str(tmp_path), "ods.t")}
    assert rows[401]["w"] == 7 and 5 not in rows and rows[4]["n"] == -1
    expected = _source(server, "rs1.t")
    for read in (read_rust, read_pypaimon):
        assert [{k: r[k] for k in ("id", "v", "n")} for r in read(str(tmp_path), "ods.t")] == expected


def test_reset_master_is_re_snapshotted_with_the_option_a_string_key_as_one_chunk(
    spark: Any, server: LocalMariaDB, tmp_path: Path
) -> None:
    server.execute(
        "CREATE DATABASE rs2",
        "CREATE TABLE rs2.s (id VARCHAR(10) PRIMARY KEY, v VARCHAR(20), n INT)",
        "INSERT INTO rs2.s VALUES " + ", ".join(f"('k{i:03d}', 'v{i}', {i})" for i in range(1, 31)),
    )
    run(_settings(server, tmp_path, "rs2", "s"))
    server.execute(
        "RESET MASTER",
        "INSERT INTO rs2.s VALUES ('k100', 'new', 100)",
        "UPDATE rs2.s SET n = 0 WHERE id = 'k005'",
        "DELETE FROM rs2.s WHERE id IN ('k001', 'k017', 'k030')",
    )
    with pytest.raises(JobFailed, match=r"RESET MASTER"):
        run(_settings(server, tmp_path, "rs2", "s"))
    run(_settings(server, tmp_path, "rs2", "s", **{OPTION: "true"}))
    marker = json.loads((tmp_path / "ck" / "lakecdc-mysql-resnapshot.json").read_text())
    assert marker["chunks"] == [["rs2", "s", None, None]] and marker["scans"]["rs2.s"]["split"] is None
    expected = sorted(_source(server, "rs2.s"), key=lambda r: r["id"])
    assert read_rust(str(tmp_path), "ods.s") == expected
    assert read_pypaimon(str(tmp_path), "ods.s") == expected


@pytest.mark.faults
def test_a_re_snapshot_killed_midway_ends_exact(server: LocalMariaDB, tmp_path: Path) -> None:
    """SIGKILL after the first re-snapshot batch's files are written (not committed), and again after
    one re-snapshot batch is committed: each restart finishes the re-snapshot exactly."""
    _setup(server, "rs3")
    warehouse = str(tmp_path / "wh")
    argv = [
        sys.executable, "-m", "ingest", "mysql-sync-table", "--warehouse", warehouse, "--database", "ods",
        "--table", "t", "--max-offsets-per-trigger", "14", "--available-now",
        "--spark-conf", "spark.master=local[2,4]",
    ]  # fmt: skip
    for key, value in _conf(server, "rs3", "t").items():
        argv += ["--mysql-conf", f"{key}={value}"]
    _run(argv)
    _gap(server, "rs3")
    _purge(server)
    again = [*argv, "--mysql-conf", f"{OPTION}=true"]
    _run(again, "before-commit", tmp_path / "crash1.log")  # the first re-snapshot batch
    _run(again, "before-commit:2", tmp_path / "crash2.log")  # one re-snapshot batch committed
    _run(again)
    expected = _source(server, "rs3.t")
    assert read_rust(warehouse, "ods.t") == expected
    assert read_pypaimon(warehouse, "ods.t") == expected


def _run(argv: list[str], point: str | None = None, log_path: Path | None = None) -> None:
    """The job to its end, or (``point``) until it is killed there; again after a loaded machine's
    flake before the point (the same checkpoint)."""
    from tests.chaos.harness import LOAD_FLAKE
    from tests.integration.test_crash_points import with_group_gone

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(VARIABLE, None)
    for _ in range(3):
        if point is None:
            done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=400, check=False)
            if done.returncode == 0 or LOAD_FLAKE not in done.stderr:
                break
            continue
        assert log_path is not None
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                argv, cwd=ROOT, env={**env, VARIABLE: point}, stdout=log, stderr=log, start_new_session=True
            )
            try:
                proc.wait(timeout=400)
            finally:
                if proc.returncode is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        text = log_path.read_text(errors="replace")
        if proc.returncode == -signal.SIGKILL or LOAD_FLAKE not in text:
            break
    if point is None:
        assert done.returncode == 0, done.stderr[-4000:]
        return
    assert proc.returncode == -signal.SIGKILL, text[-4000:]
    assert f"crash point {point.split(':')[0]} reached" in text, text[-4000:]
    with_group_gone(proc.pid)
