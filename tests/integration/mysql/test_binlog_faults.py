"""Binlog faults a MySQL job must survive or stop on clearly (#23 items 6 and 4), on a server whose
row events do not name their columns (MariaDB's default NO_LOG: the job keeps a schema history).

- A DDL the parser cannot read, in a database the job does not capture, is not parsed: the job
  goes on. One on a captured table stops the job naming its binlog position and the ways forward;
  ``scan.schema-history.skip-ddl`` at that position lets it go on from the same checkpoint.
- A binlog reset (RESET MASTER) or purged past the checkpoint's position stops the job with
  lakecdc's error naming the position, instead of waiting forever or pymysql's raw error 1236.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.paimon_read import read_rust

pytestmark = pytest.mark.timeout(420)  # a stalled read fails the test instead of hanging the suite

PARTITIONED = "CREATE TABLE {name} (id INT PRIMARY KEY, v INT) PARTITION BY HASH(id) PARTITIONS 4"


@pytest.fixture(scope="module")
def server(nolog_server: LocalMariaDB) -> LocalMariaDB:
    return nolog_server


def _settings(server: LocalMariaDB, warehouse: Path, database: str, **conf: str) -> SyncSettings:
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=str(warehouse),
        database="ods",
        table="t",
        mysql_conf=server.mysql_conf(**{"database-name": database, "table-name": "t", **conf}),
        available_now=True,
        checkpoint=f"{warehouse}/ck",
    )


def _ids(warehouse: Path) -> list[int]:
    return sorted(r["id"] for r in read_rust(str(warehouse), "ods.t"))


def _setup(server: LocalMariaDB, database: str) -> None:
    server.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (id INT PRIMARY KEY, v INT)",
        f"INSERT INTO {database}.t VALUES (1, 1), (2, 2)",
    )


def test_unparseable_ddl_of_an_uncaptured_database_is_passed_over(
    spark: Any, server: LocalMariaDB, tmp_path: Path
) -> None:
    _setup(server, "f6a")
    run(_settings(server, tmp_path, "f6a"))
    server.execute(
        "INSERT INTO f6a.t VALUES (3, 3)",
        "CREATE DATABASE other6",
        PARTITIONED.format(name="other6.p"),
        "INSERT INTO other6.p VALUES (1, 1)",
        "ALTER TABLE f6a.t ADD COLUMN w INT",
        "INSERT INTO f6a.t VALUES (4, 4, 4)",
    )
    run(_settings(server, tmp_path, "f6a"))
    assert _ids(tmp_path) == [1, 2, 3, 4]
    assert {r["id"]: r["w"] for r in read_rust(str(tmp_path), "ods.t")}[4] == 4


def test_unparseable_ddl_of_a_captured_table_stops_with_its_position(
    spark: Any, server: LocalMariaDB, tmp_path: Path
) -> None:
    _setup(server, "f6b")
    run(_settings(server, tmp_path, "f6b"))
    server.execute(
        "INSERT INTO f6b.t VALUES (3, 3)",
        "ALTER TABLE f6b.t PARTITION BY HASH(id) PARTITIONS 4",
        "INSERT INTO f6b.t VALUES (4, 4)",
    )
    with pytest.raises(JobFailed) as failed:
        run(_settings(server, tmp_path, "f6b"))
    message = str(failed.value)
    # the statement's kind and length, not its text (--log-payloads shows it)
    assert "(ALTER TABLE; --log-payloads shows it)" in message and "PARTITION BY" not in message
    assert "binlog_row_metadata" in message
    found = re.search(r"scan\.schema-history\.skip-ddl=(\S+?:\d+)", message)
    assert found is not None, message
    # The statement changed no column: passed over at its position, the job goes on.
    run(_settings(server, tmp_path, "f6b", **{"scan.schema-history.skip-ddl": found.group(1)}))
    assert _ids(tmp_path) == [1, 2, 3, 4]


def _position(server: LocalMariaDB) -> tuple[str, int]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW MASTER STATUS")
            row = cur.fetchone()
            return str(row[0]), int(row[1])
    finally:
        conn.close()


def test_reset_master_after_a_synced_checkpoint_stops_the_job(spark: Any, server: LocalMariaDB, tmp_path: Path) -> None:
    _setup(server, "f4a")
    server.execute("INSERT INTO f4a.t VALUES (3, 3), (4, 4), (5, 5)")
    run(_settings(server, tmp_path, "f4a"))
    synced = _position(server)
    server.execute("RESET MASTER", "INSERT INTO f4a.t VALUES (6, 6)")
    with pytest.raises(JobFailed, match=r"RESET MASTER") as failed:
        run(_settings(server, tmp_path, "f4a"))
    assert f"{synced[0]}:{synced[1]}" in str(failed.value) and "new checkpoint" in str(failed.value)
    assert _ids(tmp_path) == [1, 2, 3, 4, 5]


def test_a_binlog_purged_past_the_checkpoint_stops_the_job(spark: Any, server: LocalMariaDB, tmp_path: Path) -> None:
    _setup(server, "f4b")
    run(_settings(server, tmp_path, "f4b"))
    synced = _position(server)
    server.execute("INSERT INTO f4b.t VALUES (3, 3)", "FLUSH BINARY LOGS", "INSERT INTO f4b.t VALUES (4, 4)")
    newest = _position(server)[0]
    server.execute(f"PURGE BINARY LOGS TO '{newest}'")
    with pytest.raises(JobFailed, match=r"purged") as failed:
        run(_settings(server, tmp_path, "f4b"))
    message = str(failed.value)
    assert f"{synced[0]}:{synced[1]}" in message and newest in message and "1236" not in message


def test_reset_master_then_writes_past_the_checkpoint_stops_the_job(
    spark: Any, server: LocalMariaDB, tmp_path: Path
) -> None:
    """The binlog made anew by RESET MASTER while the job was stopped has grown past the checkpoint's
    position: the position exists again but names other changes. The file's creation time (its
    first event) tells it from the file the job read."""
    _setup(server, "f4c")
    run(_settings(server, tmp_path, "f4c"))
    synced = _position(server)
    time.sleep(1.1)  # creation times are whole seconds
    # MariaDB's RESET MASTER TO n starts again at file number n: the checkpoint's own file name
    server.execute(f"RESET MASTER TO {int(synced[0].rsplit('.', 1)[1])}")
    n = 3
    while _position(server) <= synced and n < 100_000:
        server.execute(f"INSERT INTO f4c.t VALUES ({n}, {n})")
        n += 1
    assert _position(server)[0] == synced[0]  # the same file name, reaching past the position
    with pytest.raises(JobFailed, match=r"created anew") as failed:
        run(_settings(server, tmp_path, "f4c"))
    assert f"{synced[0]}:{synced[1]}" in str(failed.value) and "RESET MASTER" in str(failed.value)
    assert _ids(tmp_path) == [1, 2]
