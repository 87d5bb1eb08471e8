"""Loading Apache Paimon's MySQL ITCase set-up scripts (read in place, tests/paimon_compat/samples.py) into a
test MariaDB, with the user those scripts grant to."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deploy.local_mariadb import LocalMariaDB
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
    """The --mysql-conf Paimon's ITCases always pass (their user, New York server time zone)."""
    return {
        "hostname": "127.0.0.1",
        "port": str(server.port),
        "username": "paimonuser",
        "password": "paimonpw",
        "server-time-zone": "America/New_York",
        "database-name": database,
        **extra,
    }


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


def sync_database(db: LocalMariaDB, warehouse: str, database: str, **extra: Any) -> None:
    """``mysql-sync-database`` as Paimon's ITCases run it: into ``default``, on one checkpoint, with
    2 buckets (getBasicTableConfig() picks a random bucket number), once ``--available-now``."""
    from ingest.cli.settings import SyncSettings
    from ingest.job import run

    conf = paimon_conf(db, database, **extra.pop("mysql_conf", {}))
    run(
        SyncSettings(
            action="mysql-sync-database",
            warehouse=warehouse,
            database="default",
            mysql_conf=conf,
            available_now=True,
            checkpoint=f"{warehouse}/ck",
            table_conf={"bucket": "2", **extra.pop("table_conf", {})},
            **extra,
        )
    )


def private_server(datadir: Path, script: str) -> Iterator[LocalMariaDB]:
    """A MariaDB of its own holding one Paimon set-up script (for scripts whose databases would clash
    with others in the session server), in New York summer time as Paimon's container; closed after."""
    server = LocalMariaDB(str(datadir), time_zone="-04:00")
    load_paimon_script(server, script)
    try:
        yield server
    finally:
        server.close()
