"""Apache Paimon's MySqlSyncDatabaseTableListITCase, replayed against MariaDB: its set-up script
(../shared/cdc-samples/paimon-mysql/tablelist_test_setup.sql, read in place, on a server of its own:
its ``.*shard_.*`` pattern would also match other scripts' databases), its statements and arguments,
and its expected table lists, schema and rows verbatim.

The Java test picks ``database-name`` (``.*shard_.*`` or ``shard_1|shard_2|shard_3|x_shard_1``) and
the mode (divided or combined) at random; here every combination runs. As in Paimon, tables created
while the job runs are checked in combined mode only. Paimon's job runs continuously while the test
issues statements; here an ``--available-now`` run follows each group of statements, on one
checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from sinks.table.catalog import Catalog
from tests.paimon_compat.mysql_setup import private_server, sync_database
from tests.paimon_read import java_rows, paimon_schema

EXISTING = {
    "shard_1_t11",
    "shard_1_t2",
    "shard_1_t3",
    "shard_1_taa",
    "shard_1_s2",
    "shard_2_t1",
    "shard_2_t22",
    "shard_2_t3",
    "shard_2_tb",
    "x_shard_1_t1",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    yield from private_server(tmp_path_factory.mktemp("mariadb-tablelist-itcase"), "tablelist_test_setup.sql")


@pytest.fixture
def source(server: LocalMariaDB) -> Iterator[LocalMariaDB]:
    """The set-up script's state for each combination: what a combined run adds is undone after it
    (Paimon's container runs the test once)."""
    yield server
    server.execute(
        "DROP DATABASE IF EXISTS shard_3", "DROP DATABASE IF EXISTS what",
        "DROP TABLE IF EXISTS shard_2.ta", "DROP TABLE IF EXISTS shard_2.s3", "DELETE FROM shard_1.t2 WHERE k = 2",
    )  # fmt: skip


def _run(db: LocalMariaDB, wh: str, database_name: str, mode: str) -> None:
    sync_database(
        db, wh, database_name, merge_shards=False, mode=mode, including_tables="t.+|s.+", excluding_tables="ta|sa"
    )


def _tables(wh: str) -> set[str]:
    return set(Catalog(wh).list_tables("default"))


def _primary_keys(wh: str, table: str) -> list[str]:
    from pypaimon import CatalogFactory

    return list(CatalogFactory.create({"warehouse": wh}).get_table(f"default.{table}").table_schema.primary_keys)


def _wait_for_result(wh: str, rows: list[str]) -> None:
    """waitForResult(rows, shard_1_t2, ROW<k INT NOT NULL, name VARCHAR(100)>, [k])."""
    assert _primary_keys(wh, "shard_1_t2") == ["k"]
    assert paimon_schema(wh, "default.shard_1_t2") == [("k", "INT NOT NULL"), ("name", "VARCHAR(100)")]
    assert java_rows(wh, "default.shard_1_t2") == sorted(rows)


@pytest.mark.parametrize("mode", ["divided", "combined"])
@pytest.mark.parametrize("database_name", [".*shard_.*", "shard_1|shard_2|shard_3|x_shard_1"])
def test_action_run_result(source: LocalMariaDB, tmp_path: Path, database_name: str, mode: str) -> None:
    db, wh = source, str(tmp_path)
    args: dict[str, Any] = {"database_name": database_name, "mode": mode}
    _run(db, wh, **args)
    # assertExactlyExistTables
    assert _tables(wh) == EXISTING
    if mode != "combined":
        return
    # test newly created tables; "ensure the job steps into incremental phase"
    _wait_for_result(wh, ["+I[1, A]"])
    db.execute("USE shard_1", "INSERT INTO t2 VALUES (2, 'B')")
    _run(db, wh, **args)
    _wait_for_result(wh, ["+I[1, A]", "+I[2, B]"])
    db.execute(
        # case 1: new tables in existed database
        "USE shard_2",
        "CREATE TABLE ta (k INT, name VARCHAR(100), PRIMARY KEY (k))",  # ignored: ta
        "CREATE TABLE s3 (k INT, name VARCHAR(100), PRIMARY KEY (k))",  # captured: s3
        # case 2: new tables in new captured database
        "CREATE DATABASE shard_3",
        "USE shard_3",
        "CREATE TABLE ta (k INT, name VARCHAR(100), PRIMARY KEY (k))",  # ignored: ta, m
        "CREATE TABLE m (k INT, name VARCHAR(100), PRIMARY KEY (k))",
        "CREATE TABLE tab (k INT, name VARCHAR(100), PRIMARY KEY (k))",  # captured: tab
        # case 3: new tables in new ignored database
        "CREATE DATABASE what",
        "USE what",
        "CREATE TABLE ta (k INT, name VARCHAR(100), PRIMARY KEY (k))",  # ignored: ta
        "CREATE TABLE s4 (k INT, name VARCHAR(100), PRIMARY KEY (k))",  # match including pattern but ignored: s4
    )
    _run(db, wh, **args)
    # waitingTables("shard_2_s3", "shard_3_tab")
    assert {"shard_2_s3", "shard_3_tab"} <= _tables(wh)
    # Stricter than Paimon's wait (its comments name the ignored tables): nothing else appeared.
    assert _tables(wh) == EXISTING | {"shard_2_s3", "shard_3_tab"}
