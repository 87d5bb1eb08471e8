"""Binlog faults a MySQL job must survive or stop on clearly (#23 items 6 and 4), on a server whose
row events do not name their columns (MariaDB's default NO_LOG: the job keeps a schema history).

- A DDL the parser cannot read, in a database the job does not capture, is not parsed: the job
  goes on. One on a captured table stops the job naming its binlog position and the ways forward;
  ``scan.schema-history.skip-ddl`` at that position lets it go on from the same checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    bare = LocalMariaDB(str(tmp_path_factory.mktemp("faults")), extra_args=["--binlog-row-metadata=NO_LOG"])
    try:
        yield bare
    finally:
        bare.close()


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
    assert "PARTITION BY HASH(id) PARTITIONS 4" in message and "binlog_row_metadata" in message
    found = re.search(r"scan\.schema-history\.skip-ddl=(\S+?:\d+)", message)
    assert found is not None, message
    # The statement changed no column: passed over at its position, the job goes on.
    run(_settings(server, tmp_path, "f6b", **{"scan.schema-history.skip-ddl": found.group(1)}))
    assert _ids(tmp_path) == [1, 2, 3, 4]
