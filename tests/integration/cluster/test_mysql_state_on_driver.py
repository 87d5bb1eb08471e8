"""mysql-sync-database on a Spark standalone cluster whose workers cannot see the job's state folder
(#25): each worker, with its executors and their Python workers, runs in its own mount namespace
where the checkpoint's parent directory is an empty read-only tmpfs, as on a cluster whose executors
run on other hosts than the driver. The warehouse stays visible (executors write it).

The server is a MariaDB with binlog_row_metadata=NO_LOG (MariaDB's default): its row events do not
name their columns, so the job names and types binlog rows by its schema history. The driver ships
the definitions as of each binlog range's start inside the read task's partition and keeps the DDL
the read task followed (returned as marks) before the commit; a read task that opened the history
itself finds nothing there and fails."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from deploy.local_spark_cluster import LocalSparkCluster
from tests.conftest import ROOT
from tests.paimon_read import paimon_schema, read_pypaimon, read_rust

SETUP = [
    "CREATE DATABASE shop",
    "CREATE TABLE shop.orders (id INT NOT NULL PRIMARY KEY, item VARCHAR(20), qty INT)",
    "CREATE TABLE shop.users (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(30))",
    "INSERT INTO shop.orders VALUES " + ", ".join(f"({i}, 'item-{i}', {i % 7})" for i in range(1, 121)),
    "INSERT INTO shop.users VALUES " + ", ".join(f"({i}, 'user-{i}')" for i in range(1, 31)),
]
# Read by the second run as one binlog range: rows, a column added mid-range, rows that fill it.
MID_STREAM = [
    "INSERT INTO shop.orders VALUES (121, 'late', 1), (122, 'later', 2)",
    "UPDATE shop.orders SET qty = 100 WHERE id <= 10",
    "DELETE FROM shop.orders WHERE id BETWEEN 50 AND 54",
    "INSERT INTO shop.users VALUES (31, 'user-31')",
    "ALTER TABLE shop.orders ADD COLUMN note VARCHAR(30) AFTER item",
    "INSERT INTO shop.orders (id, item, note, qty) VALUES (123, 'noted', 'first note', 3)",
    "UPDATE shop.orders SET note = CONCAT('n', id), qty = qty + 1 WHERE id BETWEEN 20 AND 29",
    "UPDATE shop.users SET name = 'renamed' WHERE id = 2",
]
# Read by the third run: named by the history the driver kept from the second.
AFTER = [
    "INSERT INTO shop.orders (id, item, note, qty) VALUES (124, 'after', 'second note', 4)",
    "UPDATE shop.orders SET note = 'changed' WHERE id IN (1, 121, 123)",
    "DELETE FROM shop.orders WHERE id = 60",
]


@pytest.fixture(scope="module")
def nolog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    bare = LocalMariaDB(str(tmp_path_factory.mktemp("nolog")), extra_args=["--binlog-row-metadata=NO_LOG"])
    try:
        yield bare
    finally:
        bare.close()


def _mysql_rows(server: LocalMariaDB, table: str) -> list[dict[str, Any]]:
    conn = server.connect("shop")
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {table} ORDER BY id")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        conn.close()


def _sync(cluster: LocalSparkCluster, server: LocalMariaDB, warehouse: Path, checkpoint: Path) -> None:
    conf = server.mysql_conf(**{"database-name": "shop", "scan.incremental.snapshot.chunk.size": "40"})
    argv = [
        sys.executable,
        "-m",
        "ingest",
        "mysql-sync-database",
        *("--warehouse", str(warehouse), "--database", "ods", "--checkpoint", str(checkpoint)),
        *(arg for key, value in conf.items() for arg in ("--mysql-conf", f"{key}={value}")),
        "--available-now",
        *("--spark-conf", f"spark.master={cluster.master_url}"),
        *("--spark-conf", "spark.driver.host=127.0.0.1"),
        *("--spark-conf", "spark.driver.bindAddress=127.0.0.1"),
        *("--spark-conf", "spark.executor.memory=512m"),
        *("--spark-conf", "spark.python.authenticate.socketTimeout=120s"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]


def test_mysql_schema_history_stays_on_the_driver(nolog_server: LocalMariaDB, tmp_path: Path) -> None:
    state = tmp_path / "driver-state"  # hidden from the workers
    checkpoint = state / "ck"
    warehouse = tmp_path / "warehouse"
    state.mkdir()
    warehouse.mkdir()
    nolog_server.execute(*SETUP)
    hidden = (str(state),)
    with LocalSparkCluster(2, 1, "1g", hidden_from_workers=hidden) as cluster:
        _sync(cluster, nolog_server, warehouse, checkpoint)  # the snapshot (chunks on the executors)
        nolog_server.execute(*MID_STREAM)
        _sync(cluster, nolog_server, warehouse, checkpoint)  # the binlog through the ALTER
        nolog_server.execute(*AFTER)
        _sync(cluster, nolog_server, warehouse, checkpoint)  # the binlog after it, as the driver kept it
        # The workers (and so their executors and Python workers) saw no state folder, the warehouse
        # as the driver does.
        for pid in cluster.worker_pids():
            assert os.listdir(f"/proc/{pid}/root{state}") == []
            assert sorted(os.listdir(f"/proc/{pid}/root{warehouse}")) == sorted(os.listdir(warehouse))
    # The driver kept the history: its start and the one DDL of a captured table.
    history = checkpoint / "lakecdc-mysql-schema"
    assert (history / "start.json").exists()
    assert len(list(history.glob("0*.json"))) == 1
    assert [n for n, _ in paimon_schema(str(warehouse), "ods.orders")] == ["id", "item", "qty", "note"]
    for table in ("orders", "users"):
        expected = _mysql_rows(nolog_server, table)
        got = read_rust(str(warehouse), f"ods.{table}")
        assert got == expected, table
        assert read_pypaimon(str(warehouse), f"ods.{table}") == expected, table
    orders = {r["id"]: r for r in read_rust(str(warehouse), "ods.orders")}
    assert orders[123]["note"] == "changed" and orders[124]["note"] == "second note" and orders[25]["note"] == "n25"
    assert 60 not in orders and 52 not in orders and orders[3]["qty"] == 100
