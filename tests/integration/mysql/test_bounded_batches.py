"""A binlog backlog read in bounded micro-batches (#27, *Bounded micro-batches everywhere*): under
--max-offsets-per-trigger the binlog phase ends each micro-batch at a transaction boundary about that
many binlog events on, so a backlog becomes several commits; a multi-row transaction is never split;
a batch killed before its commit is replayed over the same range. The table ends equal to MariaDB
(both readers) and its changelog replays."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from ingest.mysql.client import master_status
from ingest.mysql.spec import binlog_offset
from sinks.crash_points import VARIABLE
from tests.conftest import ROOT
from tests.integration.mysql.test_mysql import _assert_changelog_replays, _paimon_rows, _source_rows

SMALL = 12_000  # single-row transactions of the backlog
BIG = 20_000  # rows of its one multi-row statement
EVENTS = 12_000  # --max-offsets-per-trigger: binlog events per micro-batch (a small transaction has 5)


_dbs = 0


@pytest.fixture
def source_db(mariadb: LocalMariaDB) -> str:
    global _dbs
    _dbs += 1
    mariadb.execute(f"CREATE DATABASE bounded{_dbs}")
    return f"bounded{_dbs}"


def _conf(mariadb: LocalMariaDB, database: str) -> dict[str, str]:
    return mariadb.mysql_conf(**{"database-name": database, "table-name": "t"})


def _settings(mariadb: LocalMariaDB, warehouse: str, database: str) -> SyncSettings:
    return SyncSettings(
        action="mysql-sync-table", warehouse=warehouse, database="ods", table="t", available_now=True,
        mysql_conf=_conf(mariadb, database), max_offsets_per_trigger=EVENTS,
    )  # fmt: skip


def _backlog(mariadb: LocalMariaDB, database: str) -> tuple[int, int]:
    """Writes the backlog: single-row transactions (inserts, updates, deletes), then one 20,000-row
    INSERT ... SELECT, then a few more; returns the binlog offsets around the big transaction."""
    # written without a log flush per commit (the server's setting is put back)
    flush = _source_rows_of(mariadb, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")[0][0]
    mariadb.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
    try:
        return _write_backlog(mariadb, database)
    finally:
        mariadb.execute(f"SET GLOBAL innodb_flush_log_at_trx_commit = {int(flush)}")


def _source_rows_of(mariadb: LocalMariaDB, sql: str) -> list[tuple[Any, ...]]:
    conn = mariadb.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def _write_backlog(mariadb: LocalMariaDB, database: str) -> tuple[int, int]:
    mariadb.execute(
        f"""CREATE PROCEDURE {database}.small(n INT, base INT) BEGIN
            DECLARE i INT DEFAULT 0;
            WHILE i < n DO
                IF i % 10 = 9 THEN DELETE FROM t WHERE id = base + i - 5;
                ELSEIF i % 3 = 2 THEN UPDATE t SET n = n + 1, v = CONCAT('u', i) WHERE id = base + i - 1;
                ELSE INSERT INTO t VALUES (base + i, CONCAT('s', i), 0);
                END IF;
                SET i = i + 1;
            END WHILE;
        END""",
        f"CALL {database}.small({SMALL}, 1000)",
        "FLUSH BINARY LOGS",  # a rotation in the backlog: a file's end ends a micro-batch
    )
    conn = mariadb.connect(database)
    try:
        before = master_status(conn)
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO t SELECT seq + 1000000, CONCAT('b', seq), 1 FROM seq_1_to_{BIG}")
        conn.commit()
        after = master_status(conn)
    finally:
        conn.close()
    mariadb.execute(f"CALL {database}.small(2000, 100000)")
    return binlog_offset(before), binlog_offset(after)


def _binlog_offsets(warehouse: str) -> dict[int, dict[str, Any]]:
    """Each binlog micro-batch's end offset, from Spark's offset log (batch id -> offset)."""
    offsets = Path(warehouse) / "_lakecdc" / "checkpoints"
    found = {}
    for path in offsets.glob("*/spark/offsets/[0-9]*"):
        offset: dict[str, Any] = json.loads(path.read_text().splitlines()[-1])
        if not offset["chunks"]:
            found[int(path.name)] = offset
    return found


def _binlog_ends(warehouse: str) -> dict[int, tuple[str, int]]:
    return {k: (str(o["binlog"][0]), int(o["binlog"][1])) for k, o in _binlog_offsets(warehouse).items()}


def _assert_gtid_sets_before_the_cuts(mariadb: LocalMariaDB, warehouse: str) -> None:
    """Each offset's GTID set is the transactions before its position (a failover finds it again by
    them): at a cut inside a file, up to the one before the transaction that starts there."""
    conn, checked = mariadb.connect(), 0
    try:
        with conn.cursor() as cur:
            for offset in _binlog_offsets(warehouse).values():
                file, pos = offset["binlog"]
                cur.execute(f"SHOW BINLOG EVENTS IN %s FROM {int(pos)} LIMIT 1", (file,))
                rows = cur.fetchall()
                if pos == 4 or not rows or rows[0][2] != "Gtid":
                    continue  # a file's start, or the binlog's end as it was planned
                domain, server, number = str(rows[0][5]).split()[-1].split("-")
                before = {g.split("-")[0]: g for g in str(offset["gtids"]).split(",") if g}
                assert before[domain] == f"{domain}-{server}-{int(number) - 1}", (offset, rows[0])
                checked += 1
    finally:
        conn.close()
    assert checked, "no micro-batch ended inside a binlog file"


def _snapshots(warehouse: str) -> int:
    return len(list((Path(warehouse) / "ods.db" / "t" / "snapshot").glob("snapshot-*")))


def _check(mariadb: LocalMariaDB, warehouse: str, database: str, big: tuple[int, int]) -> dict[int, tuple[str, int]]:
    columns = "id, v, n"
    assert _paimon_rows(warehouse, "ods.t", ["id", "v", "n"]) == _source_rows(mariadb, database, "t", columns)
    _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))
    ends = _binlog_ends(warehouse)
    # the multi-row transaction is never split: no micro-batch ends inside it
    assert not [e for e in ends.values() if big[0] < binlog_offset(e) < big[1]], (big, sorted(ends.values()))
    assert [e for e in ends.values() if e[1] == 4], ends  # the rotation: the next file from position 4
    return ends


def test_a_backlog_becomes_bounded_micro_batches_and_a_killed_one_is_replayed_over_the_same_range(
    mariadb: LocalMariaDB, source_db: str, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "warehouse")
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
    mariadb.execute("INSERT INTO t SELECT seq, CONCAT('v', seq), 0 FROM seq_1_to_100", database=source_db)
    run(_settings(mariadb, warehouse, source_db))  # the snapshot: batch 0
    snapshot_commits = _snapshots(warehouse)
    big = _backlog(mariadb, source_db)
    argv = [sys.executable, "-m", "ingest", "mysql-sync-table", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--table", "t", "--spark-conf", "spark.master=local[2]", "--available-now"]
    argv += ["--max-offsets-per-trigger", str(EVENTS)]
    for k, v in _conf(mariadb, source_db).items():
        if k != "password":
            argv += ["--mysql-conf", f"{k}={v}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_MYSQL_PASSWORD": ROOT_PASSWORD}
    # The backlog's second micro-batch (batch 2) is killed once written, nothing of it committed.
    log = tmp_path / "crash.log"
    with open(log, "wb") as out:
        proc = subprocess.run(
            argv, cwd=ROOT, env={**env, VARIABLE: "before-commit:2"}, stdout=out, stderr=out, timeout=300,
            start_new_session=True, check=False,
        )  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, log.read_text(errors="replace")[-3000:]
    planned = _binlog_ends(warehouse)
    assert sorted(planned) == [1, 2], planned
    run(_settings(mariadb, warehouse, source_db))
    ends = _check(mariadb, warehouse, source_db, big)
    _assert_gtid_sets_before_the_cuts(mariadb, warehouse)
    assert {k: v for k, v in ends.items() if k in planned} == planned  # the killed batch replayed as planned
    # ~5 events per small transaction: the backlog is several micro-batches, each committed
    assert len(ends) >= 4 and _snapshots(warehouse) - snapshot_commits >= 4, (ends, _snapshots(warehouse))
