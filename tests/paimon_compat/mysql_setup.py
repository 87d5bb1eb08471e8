"""Loading Apache Paimon's MySQL ITCase set-up scripts (read in place, tests/paimon_compat/samples.py) into a
test MariaDB, with the user those scripts grant to."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from deploy.local_mariadb import LocalMariaDB
from tests.paimon_compat.itcase_args import (
    basic_mysql_config,
    basic_table_config,
    confuse_args,
    run_action,
    sync_database_args,
    sync_table_args,
)
from tests.paimon_compat.samples import SCRIPTS

# The options Paimon's testOptionsChange and testNewlyAddedTablesOptionsChange give a second job.
CHANGED_OPTIONS = {
    "sink.savepoint.auto-tag": "true",
    "tag.num-retained-max": "5",
    "tag.automatic-creation": "process-time",
    "tag.creation-period": "hourly",
    "tag.creation-delay": "600000",
    "snapshot.time-retained": "1h",
    "snapshot.num-retained.min": "5",
    "snapshot.num-retained.max": "10",
    "changelog-producer": "input",
}


def paimon_conf(server: LocalMariaDB, database: str, **extra: str) -> dict[str, str]:
    """The --mysql_conf of a Paimon MySQL ITCase: getBasicMySqlConfig() (its user, New York server time
    zone, scan.newly-added-table.enabled=false), then the test's database-name and extras."""
    return basic_mysql_config(server.port, **{"database-name": database, **extra})


def load_paimon_script(server: LocalMariaDB, name: str, session_zone: str | None = None) -> None:
    """Run ``name`` (e.g. sync_table_setup.sql) statement by statement on one connection."""
    server.execute("CREATE USER IF NOT EXISTS 'paimonuser'@'%' IDENTIFIED BY 'paimonpw'")
    lines = (SCRIPTS / name).read_text().splitlines()
    # Comment lines, and comments after a statement's ';' (tablelist_test_setup.sql has those).
    text = "\n".join(re.sub(r";[ \t]+--.*$", ";", ln) for ln in lines if not ln.strip().startswith("--"))
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            if session_zone is not None:
                cur.execute(f"SET time_zone = '{session_zone}'")
            for statement in (s.strip() for s in text.split(";\n")):
                if statement:
                    cur.execute(statement.rstrip(";"))
    finally:
        conn.close()


def mysql_sync_table(
    server: LocalMariaDB,
    warehouse: str,
    database: str,
    table_name: str,
    *,
    mysql_conf: Mapping[str, str] | None = None,
    checkpoint: str | None = None,
    **builder: Any,
) -> int:
    """``mysql_sync_table`` with the command line of Paimon's SyncTableActionBuilder (into ``default.t``),
    through lakecdc's CLI, once over what the server holds now; returns main()'s exit code. ``builder``:
    the builder's calls (partition_keys, primary_keys, table_conf, computed_columns, ...)."""
    conf = paimon_conf(server, database, **{"table-name": table_name, **(mysql_conf or {})})
    argv = sync_table_args("mysql_sync_table", warehouse, conf, **builder)
    return run_action(confuse_args(argv), checkpoint or f"{warehouse}/ck")


def mysql_sync_database(
    server: LocalMariaDB,
    warehouse: str,
    database: str,
    *,
    mysql_conf: Mapping[str, str] | None = None,
    checkpoint: str | None = None,
    basic_table_conf: bool = True,
    **builder: Any,
) -> int:
    """``mysql_sync_database`` with the command line of Paimon's SyncDatabaseActionBuilder (into
    ``default``), through lakecdc's CLI; returns main()'s exit code. With ``basic_table_conf`` the
    table conf is getBasicTableConfig() updated with ``builder``'s ``table_conf``, as most of
    Paimon's database ITCases pass."""
    conf = paimon_conf(server, database, **(mysql_conf or {}))
    if basic_table_conf:
        builder["table_conf"] = basic_table_config() | dict(builder.get("table_conf") or {})
    argv = sync_database_args("mysql_sync_database", warehouse, conf, **builder)
    return run_action(confuse_args(argv), checkpoint or f"{warehouse}/ck")


def sync_database(server: LocalMariaDB, warehouse: str, database: str, **extra: Any) -> None:
    """:func:`mysql_sync_database`, which must succeed."""
    assert mysql_sync_database(server, warehouse, database, **extra) == 0, "mysql_sync_database failed (stderr above)"


def private_server(datadir: Path, script: str) -> Iterator[LocalMariaDB]:
    """A MariaDB of its own holding one Paimon set-up script (for scripts whose databases would clash
    with others in the session server), in New York summer time as Paimon's container; closed after."""
    server = LocalMariaDB(str(datadir), time_zone="-04:00")
    load_paimon_script(server, script)
    try:
        yield server
    finally:
        server.close()
