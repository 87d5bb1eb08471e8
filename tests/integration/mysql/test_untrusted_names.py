"""MySQL table names are untrusted too (#24), against a real MariaDB server: a table whose name holds a
backquote, a quote, a semicolon and a space is read through correctly quoted SQL when it is routed to
a safe Paimon name, and refused at start-up (nothing created outside the warehouse) when its own name
would become the Paimon table's; --excluding-tables routes it away."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from schema_evolution.identifiers import shown
from tests.paimon_read import read_pypaimon, read_rust

HOSTILE = "we`ird;'x y"


@pytest.fixture
def source_db(mariadb: LocalMariaDB) -> str:
    name = f"untrusted{os.getpid()}"
    mariadb.execute(f"DROP DATABASE IF EXISTS {name}")
    mariadb.execute(f"CREATE DATABASE {name}")
    quoted = "`" + HOSTILE.replace("`", "``") + "`"
    mariadb.execute(f"CREATE TABLE {name}.good (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.execute(f"CREATE TABLE {name}.{quoted} (id INT PRIMARY KEY, `v``;'` VARCHAR(20))")
    mariadb.execute(f"INSERT INTO {name}.good VALUES (1, 'a'), (2, 'b')")
    mariadb.execute(f"INSERT INTO {name}.{quoted} VALUES (7, 'x'), (8, 'y')")
    return name


def _settings(mariadb: LocalMariaDB, warehouse: Path, database: str, **extra: Any) -> SyncSettings:
    conf = mariadb.mysql_conf(**{"database-name": database, "server-time-zone": "+02:00"})
    conf.update(extra.pop("mysql_conf", {}))
    values: dict[str, Any] = {
        "action": "mysql-sync-database",
        "warehouse": str(warehouse),
        "database": "ods",
        "mysql_conf": conf,
        "available_now": True,
        **extra,
    }
    return SyncSettings(**values)


def _paths(root: Path) -> set[str]:
    out = {str(root)}
    for directory, dirs, files in os.walk(root):
        out.update(os.path.join(directory, n) for n in dirs + files)
    return out


def test_a_table_named_with_sql_metacharacters_is_refused_at_start_up_or_routed_away(
    spark: Any, mariadb: LocalMariaDB, source_db: str, tmp_path: Path
) -> None:
    warehouse = tmp_path / "nest" / "warehouse"
    warehouse.parent.mkdir(parents=True)
    before = _paths(tmp_path)
    with pytest.raises(JobFailed) as info:
        run(_settings(mariadb, warehouse, source_db))
    message = str(info.value)
    assert message.startswith(f"UnsafeNameError: the target table name {shown(HOSTILE)}"), message
    assert "'`'" in message and "--excluding-tables" in message
    outside = [p for p in _paths(tmp_path) - before if not p.startswith(f"{warehouse}")]
    assert outside == []
    tables = warehouse / "ods.db"  # the target database may be made at start-up: no table in it
    assert not tables.exists() or list(tables.iterdir()) == []

    # Routed away, the rest of the database syncs.
    run(_settings(mariadb, tmp_path / "wh2", source_db, excluding_tables="we.*"))
    assert read_rust(str(tmp_path / "wh2"), "ods.good") == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]


def test_a_table_named_with_sql_metacharacters_syncs_into_a_safe_name(
    spark: Any, mariadb: LocalMariaDB, source_db: str, tmp_path: Path
) -> None:
    """mysql-sync-table reads it (its snapshot's SELECT quotes the table and column names) into 'weird'."""
    warehouse = str(tmp_path / "warehouse")
    settings = _settings(
        mariadb,
        tmp_path / "warehouse",
        source_db,
        action="mysql-sync-table",
        table="weird",
        mysql_conf={"table-name": "we.ird.*"},
    )
    run(settings)
    rows = read_rust(warehouse, "ods.weird")
    assert rows == read_pypaimon(warehouse, "ods.weird")
    assert rows == [{"id": 7, "v`;'": "x"}, {"id": 8, "v`;'": "y"}]
