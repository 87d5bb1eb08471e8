"""Flink CDC MySQL source options a Paimon script passes through --mysql-conf, honoured against a
real MariaDB server (issue #29): newly added tables on a restart, snapshot backfill skipped, the
fetch size, connection retries, the snapshot-only startup mode, and Paimon's start-up errors."""

from __future__ import annotations

import random
import re
import threading
import time
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.paimon_read import read_pypaimon, read_rust

_dbs = 0


@pytest.fixture
def source_db(mariadb: LocalMariaDB) -> str:
    global _dbs
    _dbs += 1
    name = f"opt{_dbs}"
    mariadb.execute(f"CREATE DATABASE {name}")
    return name


def _settings(mariadb: LocalMariaDB, warehouse: str, database: str, conf: dict[str, str], **extra: Any) -> SyncSettings:
    mysql_conf = mariadb.mysql_conf(**{"database-name": database, "scan.incremental.snapshot.chunk.size": "500"})
    mysql_conf.update(conf)
    values: dict[str, Any] = {
        "warehouse": warehouse,
        "database": "ods",
        "mysql_conf": mysql_conf,
        "available_now": True,
        "checkpoint": f"{warehouse}/ck",
        **extra,
    }
    if "table" in extra:
        values["action"] = "mysql-sync-table"
        mysql_conf.setdefault("table-name", extra["table"])
    else:
        values["action"] = "mysql-sync-database"
    return SyncSettings(**values)


def _rows(warehouse: str, table: str) -> list[dict[str, Any]]:
    rows = read_rust(warehouse, table)
    assert rows == read_pypaimon(warehouse, table)
    return rows


def _source(mariadb: LocalMariaDB, database: str, table: str) -> list[dict[str, Any]]:
    conn = mariadb.connect(database)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT id, v FROM {table} ORDER BY id")
            return [{"id": i, "v": v} for i, v in cur.fetchall()]
    finally:
        conn.close()


@pytest.mark.parametrize("enabled", [None, "true", "false"])
def test_newly_matched_table_on_restart(
    mariadb: LocalMariaDB, source_db: str, warehouse: str, enabled: str | None
) -> None:
    """scan.newly-added-table.enabled (Paimon's default true): a table that existed before the job
    but matches only after a restart gets a snapshot; with false, only its later binlog changes."""
    mariadb.execute(
        f"CREATE TABLE {source_db}.a (id INT PRIMARY KEY, v VARCHAR(10))",
        f"CREATE TABLE {source_db}.b (id INT PRIMARY KEY, v VARCHAR(10))",
        f"INSERT INTO {source_db}.a VALUES (1, 'a1')",
        f"INSERT INTO {source_db}.b VALUES (1, 'b1'), (2, 'b2')",
    )
    conf = {} if enabled is None else {"scan.newly-added-table.enabled": enabled}
    run(_settings(mariadb, warehouse, source_db, conf, including_tables="a"))
    mariadb.execute(
        f"INSERT INTO {source_db}.b VALUES (3, 'b3')",  # before the restart: in the binlog the job has read past
        f"CREATE TABLE {source_db}.c (id INT PRIMARY KEY, v VARCHAR(10))",  # created while the job is stopped
        f"INSERT INTO {source_db}.c VALUES (1, 'c1')",
    )
    run(_settings(mariadb, warehouse, source_db, conf, including_tables="a|c"))
    assert _rows(warehouse, "ods.c") == [{"id": 1, "v": "c1"}]
    # Now b matches too (the job restarts with a wider --including-tables).
    run(_settings(mariadb, warehouse, source_db, conf, including_tables="a|b|c"))
    mariadb.execute(
        f"UPDATE {source_db}.b SET v = 'B2' WHERE id = 2",
        f"INSERT INTO {source_db}.b VALUES (4, 'b4')",
        f"INSERT INTO {source_db}.c VALUES (2, 'c2')",
    )
    run(_settings(mariadb, warehouse, source_db, conf, including_tables="a|b|c"))
    if enabled == "false":
        assert _rows(warehouse, "ods.b") == [{"id": 2, "v": "B2"}, {"id": 4, "v": "b4"}]
    else:
        assert _rows(warehouse, "ods.b") == _source(mariadb, source_db, "b")
    # A table created while the job ran is read from the binlog, never snapshotted again.
    assert _rows(warehouse, "ods.c") == [{"id": 1, "v": "c1"}, {"id": 2, "v": "c2"}]
    assert _rows(warehouse, "ods.a") == [{"id": 1, "v": "a1"}]


def test_backfill_skipped_and_small_fetches_converge_to_the_source(
    mariadb: LocalMariaDB, source_db: str, warehouse: str
) -> None:
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    conn = mariadb.connect(source_db)
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s)", [(i, f"v{i}") for i in range(1, 3001)])
    conn.close()
    stop = threading.Event()
    writes = [0]

    def writer() -> None:
        rng = random.Random(7)
        c = mariadb.connect(source_db)
        with c.cursor() as cur:
            while not stop.is_set():
                key = rng.randrange(1, 3500)
                choice = rng.random()
                if choice < 0.5:
                    cur.execute("UPDATE t SET v = %s WHERE id = %s", (f"u{writes[0]}", key))
                elif choice < 0.7:
                    cur.execute("DELETE FROM t WHERE id = %s", (key,))
                else:
                    cur.execute("INSERT IGNORE INTO t VALUES (%s, %s)", (key, f"i{writes[0]}"))
                writes[0] += 1
        c.close()

    conf = {"scan.incremental.snapshot.backfill.skip": "true", "scan.snapshot.fetch.size": "7"}
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        run(_settings(mariadb, warehouse, source_db, conf, table="t", max_offsets_per_trigger=1000))
    finally:
        stop.set()
        thread.join()
    assert writes[0] > 50
    run(_settings(mariadb, warehouse, source_db, conf, table="t"))
    # At least once: the chunks' changes are applied again from their low watermark; by primary key
    # the table still ends equal to the source.
    assert _rows(warehouse, "ods.t") == _source(mariadb, source_db, "t")


def test_connect_max_retries_bounds_the_retries(mariadb: LocalMariaDB, source_db: str, warehouse: str) -> None:
    conf = {"port": "1", "connect.timeout": "120s", "connect.max-retries": "2"}
    started = time.monotonic()
    with pytest.raises(JobFailed, match="cannot connect to MySQL"):
        run(_settings(mariadb, warehouse, source_db, conf, table="t"))
    assert time.monotonic() - started < 60  # 0.2 + 0.4 s of waits, not two minutes


def test_snapshot_mode_reads_the_snapshot_only(mariadb: LocalMariaDB, source_db: str, warehouse: str) -> None:
    mariadb.execute(
        f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(10))", f"INSERT INTO {source_db}.t VALUES (1, 'a')"
    )
    conf = {"scan.startup.mode": "snapshot"}
    # The snapshot mode ends by itself, as Paimon's bounded source (no --available-now)
    run(_settings(mariadb, warehouse, source_db, conf, table="t", available_now=False))
    mariadb.execute(f"INSERT INTO {source_db}.t VALUES (2, 'b')", f"UPDATE {source_db}.t SET v = 'x' WHERE id = 1")
    run(_settings(mariadb, warehouse, source_db, conf, table="t"))
    assert _rows(warehouse, "ods.t") == [{"id": 1, "v": "a"}]


def test_paimon_start_up_errors(mariadb: LocalMariaDB, source_db: str, warehouse: str) -> None:
    mariadb.execute(
        f"CREATE TABLE {source_db}.k1 (v VARCHAR(10))",
        f"CREATE TABLE {source_db}.k2 (v VARCHAR(10))",
        f"CREATE TABLE {source_db}.ok (id INT PRIMARY KEY)",
    )
    with pytest.raises(JobFailed, match=re.escape("No table satisfies the given database name and table name.")):
        run(_settings(mariadb, warehouse, source_db, {"table-name": "nothing"}, table="t"))
    with pytest.raises(
        JobFailed,
        match=r"Source tables of MySQL table synchronization job cannot contain table which doesn't have primary "
        rf"keys.\nThey are: {source_db}.k1, {source_db}.k2",
    ):
        run(_settings(mariadb, warehouse, source_db, {"table-name": "k.|ok"}, table="t", checkpoint=f"{warehouse}/c2"))
    missing = "No tables found in MySQL database nowhere, or MySQL database does not exist."
    with pytest.raises(JobFailed, match=re.escape(missing)):
        run(_settings(mariadb, warehouse, "nowhere", {}, checkpoint=f"{warehouse}/c3"))
