"""Loading Apache Paimon's MySQL ITCase set-up scripts (read in place from ../shared) into a
test MariaDB, with the user those scripts grant to."""

from __future__ import annotations

import re

from deploy.local_mariadb import LocalMariaDB
from tests.conftest import SAMPLES

SCRIPTS = SAMPLES.parent / "paimon-mysql"


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
