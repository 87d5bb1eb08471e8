"""The MySQL schema history's DDL parser against Apache Paimon's MySQL ITCase set-up scripts (read in
place): every table they create is defined exactly as MariaDB's information_schema defines it. Our own
script's check is tests/integration/mysql/test_mysql_schema_history.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploy.local_mariadb import LocalMariaDB
from tests.integration.mysql.test_mysql_schema_history import assert_history_defines_tables_as_the_server, statements_of
from tests.paimon_compat.mysql_setup import SCRIPTS, load_paimon_script


@pytest.mark.parametrize(
    "script",
    ["sync_table_setup.sql", "sync_database_setup.sql", "tablelist_test_setup.sql", "type_mapping_test_setup.sql"],
)
def test_history_definitions_equal_the_servers_for_paimons_scripts(tmp_path: Path, script: str) -> None:
    """Every table Paimon's MySQL ITCases create, as the DDL parser defines it from the script's
    statements and as MariaDB's information_schema does after running them."""
    statements = statements_of((SCRIPTS / script).read_text())
    server = LocalMariaDB(str(tmp_path / "db"))
    try:
        assert_history_defines_tables_as_the_server(
            statements, server, lambda s: load_paimon_script(s, script), at_least=5
        )
    finally:
        server.close()
