"""A binlog micro-batch read by several tasks (#27): the driver splits the batch's range at transaction
starts and, inside one big statement, at row events (``binlog_bound.split_range``). The backlog here
holds many small transactions that update the same keys again and again (each key changes in several
sub-ranges), one 20,000-row UPDATE, and a DDL after which nothing is split. A job killed before the
split batch's commit replays it; the table ends equal to MariaDB (both readers), its changelog replays,
and every key's changelog equals the one a single read task gives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from ingest.mysql.binlog_bound import range_events, split_range
from ingest.mysql.client import master_status
from sinks.crash_points import VARIABLE
from tests.conftest import ROOT
from tests.integration.mysql.test_mysql import _paimon_rows, _source_rows
from tests.paimon_read import assert_changelog_replays, read_changelog

BIG = 20_000  # rows of the one big UPDATE
SMALL = 3_000  # small transactions before it, and as many after it
KEYS = 50  # the keys the small transactions update over and over
COLUMNS = ("id", "v", "n")


def _conf(mariadb: LocalMariaDB) -> dict[str, str]:
    return mariadb.mysql_conf(**{"database-name": "parallel", "table-name": "t"})


def _settings(mariadb: LocalMariaDB, warehouse: str) -> SyncSettings:
    return SyncSettings(
        action="mysql-sync-table", warehouse=warehouse, database="ods", table="t", available_now=True,
        mysql_conf=_conf(mariadb), table_conf={"changelog-producer": "input"},
    )  # fmt: skip


def _job(mariadb: LocalMariaDB, warehouse: str, tmp_path: Path, name: str, **env: str) -> tuple[int, str]:
    """The job as a process (a crash point SIGKILLs it): its exit code and output."""
    argv = [sys.executable, "-m", "ingest", "mysql-sync-table", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--table", "t", "--spark-conf", "spark.master=local[2]", "--available-now"]
    argv += ["--table-conf", "changelog-producer=input"]
    for k, v in _conf(mariadb).items():
        if k != "password":
            argv += ["--mysql-conf", f"{k}={v}"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_MYSQL_PASSWORD": ROOT_PASSWORD, **env}
    environ["LAKECDC_LOG_LEVEL"] = "INFO"
    log = tmp_path / f"{name}.log"
    with open(log, "w") as out:
        done = subprocess.run(
            argv, cwd=ROOT, env=environ, stdout=out, stderr=out, timeout=600, start_new_session=True, check=False
        )
    return done.returncode, log.read_text(errors="replace")


def _backlog(mariadb: LocalMariaDB) -> tuple[tuple[str, int], tuple[str, int]]:
    """Small transactions over KEYS keys, one big UPDATE, small ones again, a DDL, small ones again
    (with the server's log flush per commit off meanwhile); the binlog range it spans."""
    conn = mariadb.connect()
    with conn.cursor() as cur:
        cur.execute("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
        flush = int(cur.fetchall()[0][0])
    conn.close()
    mariadb.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
    try:
        conn = mariadb.connect("parallel")
        start = master_status(conn)
        conn.close()
        mariadb.execute(
            f"CALL parallel.small({SMALL}, 'a', 200000)",
            "UPDATE t SET n = n + 1, v = CONCAT('big', id) WHERE id <= 1000000",  # the big statement, all keys
            f"CALL parallel.small({SMALL}, 'b', 300000)",
            "ALTER TABLE t ADD INDEX n_index (n)",  # a DDL the history follows; Paimon's schema unchanged
            f"CALL parallel.small({SMALL // 3}, 'c', 400000)",
            database="parallel",
        )
        conn = mariadb.connect("parallel")
        end = master_status(conn)
        conn.close()
    finally:
        mariadb.execute(f"SET GLOBAL innodb_flush_log_at_trx_commit = {flush}")
    return start, end


def _changelog_by_key(warehouse: str) -> dict[Any, list[tuple[Any, ...]]]:
    by_key: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
    for kind, key, *values in read_changelog(warehouse, "ods.t", COLUMNS):
        by_key[key].append((kind, *values))
    return dict(by_key)


def test_a_split_batch_equals_one_task_and_a_killed_one_is_replayed(
    mariadb: LocalMariaDB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    split_wh, single_wh = str(tmp_path / "split"), str(tmp_path / "single")
    mariadb.execute("CREATE DATABASE parallel")
    mariadb.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
        f"INSERT INTO t SELECT seq, CONCAT('v', seq), 0 FROM seq_1_to_{KEYS}",
        f"INSERT INTO t SELECT seq + 1000, CONCAT('w', seq), 0 FROM seq_1_to_{BIG - KEYS}",
        database="parallel",
    )
    mariadb.execute(
        f"""CREATE PROCEDURE parallel.small(n INT, tag VARCHAR(4), base INT) BEGIN
            DECLARE i INT DEFAULT 0;
            WHILE i < n DO
                IF i % 7 = 6 THEN DELETE FROM t WHERE id = base + i - 1;
                ELSEIF i % 7 = 5 THEN INSERT INTO t VALUES (base + i, CONCAT(tag, i), i);
                ELSE UPDATE t SET n = n + 1, v = CONCAT(tag, i) WHERE id = 1 + i % {KEYS};
                END IF;
                SET i = i + 1;
            END WHILE;
        END""",
        database="parallel",
    )
    run(_settings(mariadb, split_wh))  # both snapshots before the backlog (a procedure is a DDL)
    run(_settings(mariadb, single_wh))
    start, end = _backlog(mariadb)

    # The range splits over 4 tasks, one cut inside the big UPDATE's transaction, none after the DDL.
    conn = mariadb.connect()
    events = range_events(conn, start[0], start[1], end[1])
    conn.close()
    assert events is not None
    subs = split_range(events, start[1], end[1], 4)
    assert len(subs) == 4, subs
    assert any(after is not None for _o, after, _e in subs), "a cut inside the big statement"
    ddl = next(pos for pos, kind, _e, info in events if kind == "Query" and "ALTER TABLE" in info)
    assert all(e < ddl for _o, _a, e in subs[:-1])

    # Split over 4 read tasks on local[2]: killed once the batch is written, before its commit; then again.
    code, out = _job(
        mariadb, split_wh, tmp_path, "killed", LAKECDC_BINLOG_READ_TASKS="4", **{VARIABLE: "before-commit:1"}
    )
    assert code == -signal.SIGKILL and "binlog micro-batch split" in out, out[-3000:]
    code, out = _job(mariadb, split_wh, tmp_path, "replayed", LAKECDC_BINLOG_READ_TASKS="4")
    assert code == 0 and "binlog micro-batch split" in out, out[-3000:]
    # one read task
    monkeypatch.setenv("LAKECDC_BINLOG_READ_TASKS", "1")
    run(_settings(mariadb, single_wh))

    for warehouse in (split_wh, single_wh):
        assert _paimon_rows(warehouse, "ods.t", list(COLUMNS)) == _source_rows(mariadb, "parallel", "t", "id, v, n")
        assert_changelog_replays(warehouse, "ods.t", COLUMNS)
    split, single = _changelog_by_key(split_wh), _changelog_by_key(single_wh)
    assert split == single
    assert all(len(split[k]) > 3 * 2 * 2 for k in range(1, KEYS + 1))  # updated in several sub-ranges
