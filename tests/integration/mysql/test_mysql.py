"""mysql-sync-table / mysql-sync-database end to end against a real MariaDB server: snapshot,
snapshot with concurrent writes, binlog after it, DDL, new tables, and the server checks. Outcomes
only: the Paimon table equals the MySQL table (both readers), and the changelog replays cleanly."""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.conftest import ROOT
from tests.integration.mysql.conftest import connection_killer, run_beside
from tests.paimon_read import assert_changelog_replays, read_pypaimon, read_rust

_dbs = 0


@pytest.fixture
def source_db(mariadb: LocalMariaDB) -> str:
    global _dbs
    _dbs += 1
    name = f"src{_dbs}"
    mariadb.execute(f"CREATE DATABASE {name}")
    return name


def _settings(
    mariadb: LocalMariaDB,
    warehouse: str,
    database: str,
    table: str = "t",
    action: str = "mysql-sync-table",
    **extra: Any,
) -> SyncSettings:
    conf = mariadb.mysql_conf(
        **{
            "database-name": database,
            "server-time-zone": "+02:00",
            "scan.incremental.snapshot.chunk.size": "500",
        }
    )
    if action == "mysql-sync-table":
        conf["table-name"] = table
    conf.update(extra.pop("mysql_conf", {}))
    values: dict[str, Any] = {
        "action": action,
        "warehouse": warehouse,
        "database": "ods",
        "mysql_conf": conf,
        "available_now": True,
        "max_offsets_per_trigger": 1000,
        **extra,
    }
    if action == "mysql-sync-table":
        values["table"] = table
    return SyncSettings(**values)


def _source_rows(mariadb: LocalMariaDB, database: str, table: str, columns: str) -> list[tuple[Any, ...]]:
    conn = mariadb.connect(database)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT {columns} FROM {table} ORDER BY id")
            return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def _paimon_rows(warehouse: str, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    rows = read_rust(warehouse, table)
    assert rows == read_pypaimon(warehouse, table)
    return [tuple(r[c] for c in columns) for r in rows]


def _assert_changelog_replays(warehouse: str, table: str, columns: tuple[str, ...]) -> None:
    assert_changelog_replays(warehouse, table, columns)


def test_snapshot_then_binlog_all_types(mariadb: LocalMariaDB, source_db: str, warehouse: str) -> None:
    mariadb.execute(
        f"""CREATE TABLE {source_db}.t (
            id INT PRIMARY KEY, flag TINYINT(1), u BIGINT UNSIGNED, d DECIMAL(65, 30), f DOUBLE,
            v VARCHAR(20), c CHAR(3), txt TEXT, bin VARBINARY(8), bits BIT(10), b1 BIT(1),
            dt DATETIME(6), ts TIMESTAMP(3) NULL, day DATE, tm TIME, yr YEAR, j JSON,
            e ENUM('red', 'green'), s SET('a', 'b', 'c'), emoji VARCHAR(10)
        )""",
        f"""INSERT INTO {source_db}.t VALUES
            (1, 1, 18446744073709551615, 12345678901234567890123456789012345.123456789012345678901234567890,
             1.5, 'hello', 'abc', 'long text', x'00ff10', b'1010101010', b'1', '2024-02-29 23:59:59.123456',
             '2024-01-01 10:00:00.123', '2024-02-29', '12:34:56', 2024, '{{"k": [1, 2]}}', 'green', 'a,c', '😀é'),
            (2, 0, 0, 0, -0.25, NULL, NULL, NULL, NULL, b'0', b'0', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             '', NULL)""",
    )
    run(_settings(mariadb, warehouse, source_db))
    mariadb.execute(
        f"UPDATE {source_db}.t SET v = 'changed', ts = '2024-06-30 23:00:00', s = 'b' WHERE id = 1",
        f"INSERT INTO {source_db}.t (id, v, bits, dt) VALUES (3, 'binlog', b'11', '2023-01-01 00:00:00')",
        f"DELETE FROM {source_db}.t WHERE id = 2",
    )
    run(_settings(mariadb, warehouse, source_db))
    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    assert [r["id"] for r in rows] == [1, 3]
    one = rows[0]
    assert one["flag"] is True and one["u"] == Decimal("18446744073709551615")
    # DECIMAL(65,30) is STRING, its trailing zeros dropped as Paimon's MySQL action does
    assert one["d"] == "12345678901234567890123456789012345.12345678901234567890123456789"
    assert one["f"] == 1.5 and one["v"] == "changed" and one["c"] == "abc" and one["txt"] == "long text"
    assert one["bin"] == b"\x00\xff\x10" and one["bits"] == (0b1010101010).to_bytes(2, "big") and one["b1"] is True
    assert one["dt"] == dt.datetime(2024, 2, 29, 23, 59, 59, 123456)
    # TIMESTAMP: the wall clock of server-time-zone (+02:00), from the snapshot and from the binlog.
    assert one["ts"] == dt.datetime(2024, 6, 30, 23, 0, 0)
    assert one["day"] == dt.date(2024, 2, 29) and one["tm"] == dt.time(12, 34, 56) and one["yr"] == 2024
    assert one["j"] == '{"k": [1, 2]}' and one["e"] == "green" and one["s"] == ["b"] and one["emoji"] == "😀é"
    three = rows[1]
    assert three["v"] == "binlog" and three["bits"] == b"\x00\x03" and three["dt"] == dt.datetime(2023, 1, 1)
    _assert_changelog_replays(warehouse, "ods.t", ("id", "v"))


@pytest.fixture(params=["FULL", "NO_LOG"])
def row_metadata(request: pytest.FixtureRequest, mariadb: LocalMariaDB) -> Iterator[str]:
    """The server's binlog_row_metadata for one test (NO_LOG: the job keeps a schema history)."""
    mariadb.execute(f"SET GLOBAL binlog_row_metadata = '{request.param}'")
    try:
        yield request.param
    finally:
        mariadb.execute("SET GLOBAL binlog_row_metadata = 'FULL'")


def test_snapshot_with_concurrent_writes_ends_equal_to_the_source(
    mariadb: LocalMariaDB, source_db: str, warehouse: str, row_metadata: str
) -> None:
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
    conn = mariadb.connect(source_db)
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, %s)", [(i, f"v{i}", 0) for i in range(1, 6001)])
    stop = threading.Event()
    writes = [0]

    def writer() -> None:
        rng = random.Random(5)
        c = mariadb.connect(source_db)
        with c.cursor() as cur:
            while not stop.is_set():
                key = rng.randrange(1, 7000)
                choice = rng.random()
                if choice < 0.5:
                    cur.execute("UPDATE t SET n = n + 1, v = %s WHERE id = %s", (f"u{writes[0]}", key))
                elif choice < 0.7:
                    cur.execute("DELETE FROM t WHERE id = %s", (key,))
                else:
                    cur.execute("INSERT IGNORE INTO t VALUES (%s, %s, 0)", (key, f"i{writes[0]}"))
                writes[0] += 1
        c.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        # Twelve snapshot chunks over several micro-batches while the writer runs.
        result = run(_settings(mariadb, warehouse, source_db, max_offsets_per_trigger=1000))
        assert result.stats.batches >= 3
    finally:
        stop.set()
        thread.join()
    assert writes[0] > 100
    run(_settings(mariadb, warehouse, source_db))  # the binlog up to now
    expected = _source_rows(mariadb, source_db, "t", "id, v, n")
    assert _paimon_rows(warehouse, "ods.t", ["id", "v", "n"]) == expected
    _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))


def test_ddl_mid_stream_adds_columns(mariadb: LocalMariaDB, source_db: str, warehouse: str) -> None:
    mariadb.execute(
        f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(10))", f"INSERT INTO {source_db}.t VALUES (1, 'a')"
    )
    run(_settings(mariadb, warehouse, source_db))
    mariadb.execute(
        f"ALTER TABLE {source_db}.t ADD COLUMN price DECIMAL(10, 2) NOT NULL DEFAULT 1.50, MODIFY v VARCHAR(30)",
        f"INSERT INTO {source_db}.t VALUES (2, 'a much longer value', 9.99)",
        f"UPDATE {source_db}.t SET v = 'b' WHERE id = 1",
    )
    run(_settings(mariadb, warehouse, source_db))
    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    # The update after the ALTER carries the new column's default, as the binlog row does.
    assert rows == [
        {"id": 1, "v": "b", "price": Decimal("1.50")},
        {"id": 2, "v": "a much longer value", "price": Decimal("9.99")},
    ]


def test_database_sync_picks_up_tables_created_while_running(
    mariadb: LocalMariaDB, source_db: str, warehouse: str
) -> None:
    mariadb.execute(
        f"CREATE TABLE {source_db}.a (id INT PRIMARY KEY, v VARCHAR(10))",
        f"CREATE TABLE {source_db}.nokey (v VARCHAR(10))",
        f"INSERT INTO {source_db}.a VALUES (1, 'x')",
        f"INSERT INTO {source_db}.nokey VALUES ('skipped')",
    )
    settings = _settings(mariadb, warehouse, source_db, action="mysql-sync-database")
    run(settings)
    mariadb.execute(
        f"CREATE TABLE {source_db}.b (id BIGINT PRIMARY KEY, w TEXT)",
        f"INSERT INTO {source_db}.b VALUES (10, 'new table')",
        f"INSERT INTO {source_db}.a VALUES (2, 'y')",
    )
    run(settings)
    assert read_rust(warehouse, "ods.a") == [{"id": 1, "v": "x"}, {"id": 2, "v": "y"}]
    assert read_rust(warehouse, "ods.b") == [{"id": 10, "w": "new table"}]
    assert not Path(warehouse, "ods.db", "nokey").exists()  # a table without a primary key is skipped


def _global(mariadb: LocalMariaDB, name: str) -> str:
    conn = mariadb.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT @@GLOBAL.{name}")
            return str(cur.fetchone()[0])
    finally:
        conn.close()


def test_server_checks_and_missing_key_name_the_fix(mariadb: LocalMariaDB, source_db: str, warehouse: str) -> None:
    mariadb.execute(f"CREATE TABLE {source_db}.t (v VARCHAR(10))")
    with pytest.raises(JobFailed, match=r"doesn't have primary keys.\nThey are: .*t\n.give --primary-keys"):
        run(_settings(mariadb, warehouse, source_db))
    # (binlog_row_metadata other than FULL is served by a schema history: test_mysql_schema_history.py)
    for setting, value, fix in [
        ("log_bin_compress", "ON", "set log_bin_compress=OFF"),
        ("binlog_format", "'STATEMENT'", "set binlog_format=ROW"),
        ("binlog_row_image", "'MINIMAL'", "set binlog_row_image=FULL"),
    ]:
        original = _global(mariadb, setting)
        mariadb.execute(f"SET GLOBAL {setting} = {value}")
        try:
            with pytest.raises(JobFailed, match=fix):
                run(_settings(mariadb, warehouse, source_db, checkpoint=f"{warehouse}/ck-{setting}"))
        finally:
            restore = original if original.isdigit() else f"'{original}'"
            mariadb.execute(f"SET GLOBAL {setting} = {restore}")
    mariadb.execute(
        "CREATE USER IF NOT EXISTS 'reader'@'127.0.0.1' IDENTIFIED BY 'pw'",
        f"GRANT SELECT ON {source_db}.* TO 'reader'@'127.0.0.1'",
    )
    reader = {"username": "reader", "password": "pw"}
    with pytest.raises(JobFailed, match="grant the user REPLICATION CLIENT and REPLICATION SLAVE"):
        run(_settings(mariadb, warehouse, source_db, mysql_conf=reader, checkpoint=f"{warehouse}/ck-grants"))
    with pytest.raises(JobFailed, match="cannot connect to MySQL"):
        run(_settings(mariadb, warehouse, source_db, mysql_conf={"password": "wrong"}, checkpoint=f"{warehouse}/ck3"))


def _cli(mariadb: LocalMariaDB, warehouse: str, database: str, *extra: str) -> list[str]:
    conf = mariadb.mysql_conf(
        **{"database-name": database, "table-name": "t", "scan.incremental.snapshot.chunk.size": "500"}
    )
    argv = [sys.executable, "-m", "ingest", "mysql_sync_table", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--table", "t", "--spark-conf", "spark.master=local[2]", *extra]
    for k, v in conf.items():
        if k != "password":
            argv += ["--mysql_conf", f"{k}={v}"]
    return argv


def test_sigkill_mid_snapshot_and_mid_binlog_then_restart(
    mariadb: LocalMariaDB, source_db: str, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "warehouse")
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
    conn = mariadb.connect(source_db)
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, 0)", [(i, f"v{i}") for i in range(1, 20001)])
    # The password comes from the environment, not the command line.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_MYSQL_PASSWORD": ROOT_PASSWORD}
    snapshots = Path(warehouse) / "ods.db" / "t" / "snapshot"

    def kill_after(argv: list[str], snapshot_count: int, log_name: str) -> None:
        log = open(tmp_path / log_name, "wb")  # noqa: SIM115
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(list(snapshots.glob("snapshot-*"))) < snapshot_count:
            assert proc.poll() is None, (tmp_path / log_name).read_text()[-3000:]
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()

    # Mid-snapshot: 40 chunks, two per micro-batch; killed after the third commit.
    kill_after(_cli(mariadb, warehouse, source_db, "--max-offsets-per-trigger", "1000", "--available-now"), 3, "a.log")
    # Mid-binlog: a continuous job (1 s trigger) while a writer changes rows; killed mid-stream.
    stop = threading.Event()

    def writer() -> None:
        rng = random.Random(9)
        c = mariadb.connect(source_db)
        with c.cursor() as cur:
            i = 0
            while not stop.is_set():
                i += 1
                key = rng.randrange(1, 21000)
                if i % 5 == 0:
                    cur.execute("DELETE FROM t WHERE id = %s", (key,))
                else:
                    cur.execute("INSERT INTO t VALUES (%s, 'w', 1) ON DUPLICATE KEY UPDATE n = n + 1", (key,))
                # A steady stream (a few hundred changes a second), not as fast as the server takes
                # them: unthrottled, the job fell behind on two busy cores and the test waited minutes.
                time.sleep(0.002)
        c.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        done = len(list(snapshots.glob("snapshot-*")))
        kill_after(_cli(mariadb, warehouse, source_db, "--trigger-interval", "1s"), done + 6, "b.log")
    finally:
        stop.set()
        thread.join()
    finished = subprocess.run(
        _cli(mariadb, warehouse, source_db, "--available-now"), cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert _paimon_rows(warehouse, "ods.t", ["id", "v", "n"]) == _source_rows(mariadb, source_db, "t", "id, v, n")
    _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))


def test_server_restart_mid_stream_loses_nothing(tmp_path: Path) -> None:
    import pymysql

    warehouse = str(tmp_path / "warehouse")
    with LocalMariaDB(str(tmp_path / "db")) as db:
        db.execute("CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
        db.execute("INSERT INTO s.t VALUES " + ", ".join(f"({i}, 'v{i}', 0)" for i in range(1, 2001)))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_MYSQL_PASSWORD": ROOT_PASSWORD}
        snapshots = Path(warehouse) / "ods.db" / "t" / "snapshot"
        stop = threading.Event()

        def writer() -> None:
            rng = random.Random(3)
            while not stop.is_set():
                try:
                    c = db.connect("s")
                    with c.cursor() as cur:
                        while not stop.is_set():
                            key = rng.randrange(1, 2500)
                            cur.execute("INSERT INTO t VALUES (%s, 'w', 1) ON DUPLICATE KEY UPDATE n = n + 1", (key,))
                            time.sleep(0.002)
                    c.close()
                except pymysql.err.OperationalError:
                    time.sleep(0.2)  # the server is restarting

        def wait_for(count: int, proc: subprocess.Popen[bytes]) -> None:
            deadline = time.monotonic() + 180
            while len(list(snapshots.glob("snapshot-*"))) < count:
                assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "the job made no progress"
                time.sleep(0.2)

        thread = threading.Thread(target=writer)
        thread.start()
        log = open(tmp_path / "job.log", "wb")  # noqa: SIM115
        argv = _cli(db, warehouse, "s", "--trigger-interval", "1s")
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
        try:
            wait_for(3, proc)
            db.stop()
            time.sleep(3)
            db.start()
            # The job kept running through the outage and goes on committing afterwards.
            wait_for(len(list(snapshots.glob("snapshot-*"))) + 3, proc)
        finally:
            stop.set()
            thread.join()
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            log.close()
        finished = subprocess.run(
            _cli(db, warehouse, "s", "--available-now"), cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
        assert finished.returncode == 0, finished.stderr[-3000:]
        assert _paimon_rows(warehouse, "ods.t", ["id", "v", "n"]) == _source_rows(db, "s", "t", "id, v, n")
        _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))


def test_startup_from_a_timestamp_reads_only_later_changes(
    mariadb: LocalMariaDB, source_db: str, warehouse: str
) -> None:
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    mariadb.execute(f"INSERT INTO {source_db}.t VALUES (1, 'before'), (2, 'before')")
    # Binlog event times have whole seconds: start at the next second, write after it.
    start = (int(time.time()) + 1) * 1000
    time.sleep(max(0.0, start / 1000 - time.time()) + 0.1)
    mariadb.execute(
        f"INSERT INTO {source_db}.t VALUES (3, 'after')", f"UPDATE {source_db}.t SET v = 'changed' WHERE id = 1"
    )
    conf = {"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": str(start)}
    run(_settings(mariadb, warehouse, source_db, mysql_conf=conf))
    # No snapshot: only the changes from that time on (the update of 1 arrives as -U/+U).
    assert read_rust(warehouse, "ods.t") == [{"id": 1, "v": "changed"}, {"id": 3, "v": "after"}]


def test_snapshot_chunk_whose_connection_is_killed_is_read_again(
    mariadb: LocalMariaDB, source_db: str, warehouse: str
) -> None:
    """A snapshot SELECT whose connection dies (KILL here; a restart or failover alike) is read
    again by its task instead of failing the micro-batch."""
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v TEXT)")
    conn = mariadb.connect(source_db)
    with conn.cursor() as cur:
        for start in range(0, 12000, 2000):
            cur.executemany("INSERT INTO t VALUES (%s, %s)", [(i, "x" * 3000) for i in range(start, start + 2000)])
    conn.close()
    killed: list[int] = []
    chunk_select = f"SELECT `id`, `v` FROM `{source_db}`.`t`"  # a chunk's SELECT, not the planner's
    settings = _settings(mariadb, warehouse, source_db, mysql_conf={"scan.incremental.snapshot.chunk.size": "4000"})
    run_beside(connection_killer(mariadb, [chunk_select], 2, killed), settings)
    assert killed, "no snapshot SELECT was caught running"
    assert _paimon_rows(warehouse, "ods.t", ["id"]) == [(i,) for i in range(12000)]


def test_startup_after_a_gtid_set_reads_only_later_transactions(
    mariadb: LocalMariaDB, source_db: str, warehouse: str
) -> None:
    mariadb.execute(f"CREATE TABLE {source_db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    mariadb.execute(f"INSERT INTO {source_db}.t VALUES (1, 'before'), (2, 'before')")
    executed = _global(mariadb, "gtid_binlog_pos")  # MariaDB's form: domain-server-sequence
    mariadb.execute(
        f"INSERT INTO {source_db}.t VALUES (3, 'after')", f"UPDATE {source_db}.t SET v = 'changed' WHERE id = 1"
    )
    conf = {"scan.startup.mode": "specific-offset", "scan.startup.specific-offset.gtid-set": executed}
    run(_settings(mariadb, warehouse, source_db, mysql_conf=conf))
    assert read_rust(warehouse, "ods.t") == [{"id": 1, "v": "changed"}, {"id": 3, "v": "after"}]
    # A set with a gap cannot become one position: here a later transaction of another
    # replication domain is in the set, an earlier one of domain 0 is not.
    conn = mariadb.connect(source_db)
    with conn.cursor() as cur:
        cur.execute("SET SESSION gtid_domain_id = 5")
        cur.execute("INSERT INTO t VALUES (5, 'domain5')")
    conn.close()
    gap = f"{executed},5-1-1"
    conf_gap = {"scan.startup.mode": "specific-offset", "scan.startup.specific-offset.gtid-set": gap}
    with pytest.raises(JobFailed, match="a set with gaps cannot become one binlog position"):
        run(_settings(mariadb, f"{warehouse}2", source_db, mysql_conf=conf_gap))


def test_planning_query_whose_connection_is_killed_is_run_again(mariadb: LocalMariaDB) -> None:
    # The driver's planning queries (the binlog end each micro-batch reads) survive a connection the
    # server drops under them, as in a restart: the first attempt's connection is KILLed for real.
    from ingest.mysql.client import MySqlConnection, master_status, retrying

    conn = MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, connect_timeout=10)
    attempts: list[int] = []

    def planning(c: Any) -> Any:
        attempts.append(c.thread_id())
        if len(attempts) == 1:
            mariadb.execute(f"KILL {c.thread_id()}")
        return master_status(c)

    position = retrying(conn, planning)
    assert len(attempts) == 2 and attempts[0] != attempts[1]
    assert position == retrying(conn, master_status)
