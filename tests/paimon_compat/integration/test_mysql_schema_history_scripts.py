"""The MySQL schema history's DDL parser against Apache Paimon's MySQL ITCase set-up scripts (read in
place): every table they create is defined exactly as MariaDB's information_schema defines it."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploy.local_mariadb import LocalMariaDB


def _statements(script: str) -> list[str]:
    import re

    from tests.paimon_compat.mysql_setup import SCRIPTS

    lines = (SCRIPTS / script).read_text().splitlines()
    text = "\n".join(re.sub(r";[ \t]+--.*$", ";", ln) for ln in lines if not ln.strip().startswith("--"))
    return [s.strip().rstrip(";") for s in text.split(";\n") if s.strip()]


@pytest.mark.parametrize(
    "script",
    ["sync_table_setup.sql", "sync_database_setup.sql", "tablelist_test_setup.sql", "type_mapping_test_setup.sql"],
)
def test_history_definitions_equal_the_servers_for_paimons_scripts(tmp_path: Path, script: str) -> None:
    """Every table Paimon's MySQL ITCases create, as the DDL parser defines it from the script's
    statements and as MariaDB's information_schema does after running them: same columns in the
    same order, same keys, nullability, Paimon types, and character sets where the DDL names one."""
    from ingest.mysql.client import table_definitions
    from schema_evolution.mysql_ddl import apply_ddl
    from schema_evolution.mysql_tables import TableDef
    from schema_evolution.mysql_types import mysql_to_paimon
    from tests.paimon_compat.mysql_setup import load_paimon_script

    parsed: dict[str, TableDef] = {}
    database = None
    for statement in _statements(script):
        words = statement.split()
        if words[0].upper() == "USE":
            database = words[1].strip("`")
            continue
        for name, definition in apply_ddl(parsed, statement, database).items():
            if definition is None:
                parsed.pop(name, None)
            else:
                parsed[name] = definition
    server = LocalMariaDB(str(tmp_path / "db"))
    try:
        load_paimon_script(server, script)
        conn = server.connect()
        try:
            actual = table_definitions(conn, r"(?!mysql$|sys$).*")
        finally:
            conn.close()
    finally:
        server.close()
    assert sorted(parsed) == sorted(actual)
    assert len(actual) >= 5
    for name, table in actual.items():
        mine = parsed[name]
        assert mine.names() == table.names(), name
        assert mine.primary_key == table.primary_key, name
        for a, b in zip(mine.columns, table.columns, strict=True):
            assert a.nullable == b.nullable, (name, a.name)
            suffix = "" if a.nullable else " NOT NULL"
            assert mysql_to_paimon(a.type + suffix) == mysql_to_paimon(b.type + suffix), (name, a.name, a.type, b.type)
            if a.charset is not None and b.charset is not None:
                assert a.charset == b.charset, (name, a.name)
