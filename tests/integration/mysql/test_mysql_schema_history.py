"""Servers whose row events do not name their columns (``binlog_row_metadata`` NO_LOG here, as
MariaDB's default, MySQL 5.7, or MySQL 8's MINIMAL): the job keeps a schema history from the DDL
in the binlog. The same workload — ALTERs of every kind read long after they ran, across job
restarts, a gh-ost style table swap, unsigned maxima, ENUM / SET, latin1 and binary columns — runs
against a server with FULL metadata and one without; both Paimon tables must be equal, and equal
to MySQL's rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.conftest import ROOT
from tests.paimon_read import read_pypaimon, read_rust

SETUP = [
    "CREATE DATABASE hist",
    "CREATE TABLE hist.t (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, a TINYINT UNSIGNED, e ENUM('x','y''s','a,b'), "
    "s SET('p','q','r'), v VARCHAR(10) CHARACTER SET latin1, b VARBINARY(4), n INT) DEFAULT CHARSET=utf8mb4",
    "INSERT INTO hist.t VALUES (1, 255, 'y''s', 'p,r', 'café', x'00ff', 7), (2, 0, 'a,b', '', NULL, NULL, NULL)",
]
# Run while no job reads: the next run meets them all in the binlog, behind the ALTERs.
FIRST = [
    "INSERT INTO hist.t VALUES (18446744073709551615, 200, 'x', 'q', 'naïve', x'01', -5)",
    "ALTER TABLE hist.t ADD COLUMN w INT AFTER id, ADD COLUMN u MEDIUMINT UNSIGNED FIRST",
    "INSERT INTO hist.t (u, id, w, a, e, s, v, b, n) VALUES (16777215, 3, 30, 3, 'y''s', 'p,q,r', 'über', x'02', 3)",
    "ALTER TABLE hist.t DROP COLUMN n",
    "INSERT INTO hist.t (id, w, a, v) VALUES (4, 40, 4, 'vier')",
    "UPDATE hist.t SET v = 'élan', w = 11 WHERE id = 1",
]
SECOND = [
    "ALTER TABLE hist.t CHANGE COLUMN v v2 VARCHAR(20) CHARACTER SET latin1, MODIFY a SMALLINT UNSIGNED",
    "INSERT INTO hist.t (id, w, a, v2, e) VALUES (5, 50, 65535, 'fünf', 'a,b')",
    "ALTER TABLE hist.t RENAME COLUMN w TO w2",
    "UPDATE hist.t SET w2 = 99 WHERE id = 3",
    # gh-ost: a shadow table altered and filled, then swapped in by one RENAME TABLE.
    "CREATE TABLE hist._t_gho LIKE hist.t",
    "ALTER TABLE hist._t_gho ADD COLUMN z VARCHAR(5) AFTER id",
    "INSERT INTO hist._t_gho (u, id, z, w2, a, e, s, v2, b) SELECT u, id, 'zz', w2, a, e, s, v2, b FROM hist.t",
    "RENAME TABLE hist.t TO hist._t_del, hist._t_gho TO hist.t",
    "DROP TABLE hist._t_del",
    "INSERT INTO hist.t (id, z, w2, a, v2) VALUES (6, 'sechs', 60, 6, 'six')",
    "UPDATE hist.t SET z = 'neu' WHERE id = 2",
    "DELETE FROM hist.t WHERE id = 4",
]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LocalMariaDB]]:
    full = LocalMariaDB(str(tmp_path_factory.mktemp("full")))
    bare = LocalMariaDB(str(tmp_path_factory.mktemp("nolog")), extra_args=["--binlog-row-metadata=NO_LOG"])
    try:
        yield {"full": full, "nolog": bare}
    finally:
        full.close()
        bare.close()


def _settings(server: LocalMariaDB, warehouse: str, **conf: str) -> SyncSettings:
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=warehouse,
        database="ods",
        table="t",
        mysql_conf=server.mysql_conf(**{"database-name": "hist", "table-name": "t", **conf}),
        available_now=True,
        checkpoint=f"{warehouse}/ck",
    )


def _mysql_rows(server: LocalMariaDB) -> list[dict[str, Any]]:
    conn = server.connect("hist")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM t ORDER BY id")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        conn.close()


def test_schema_history_gives_the_table_full_metadata_gives(
    spark: Any, servers: dict[str, LocalMariaDB], tmp_path: Path
) -> None:
    tables: dict[str, list[dict[str, Any]]] = {}
    for kind, server in servers.items():
        warehouse = str(tmp_path / kind)
        server.execute(*SETUP)
        run(_settings(server, warehouse))
        server.execute(*FIRST)
        run(_settings(server, warehouse))  # the binlog behind two ALTERs, in one read
        server.execute(*SECOND)
        run(_settings(server, warehouse))  # a restart: the history so far comes from the checkpoint
        tables[kind] = read_rust(warehouse, "ods.t")
        assert read_pypaimon(warehouse, "ods.t") == tables[kind]
        # Both keep a history (with FULL metadata it types the rows); one file per DDL followed.
        history = Path(warehouse) / "ck" / "lakecdc-mysql-schema"
        assert len(list(history.glob("0*.json"))) == 8
    assert tables["nolog"] == tables["full"]
    # Rows written after the last DDL match MySQL in every column; older rows keep the columns
    # they were written with (dropped and renamed-away columns stay in Paimon, new ones are NULL
    # until the row changes, as with Paimon's MySQL action; gh-ost's copy into the shadow table
    # is not a change of the captured table).
    source = {r["id"]: r for r in _mysql_rows(servers["nolog"])}
    got = {r["id"]: r for r in tables["nolog"]}
    assert sorted(got) == sorted(source) == [1, 2, 3, 5, 6, 18446744073709551615]
    for key in (2, 6):
        for column, value in source[key].items():
            if isinstance(value, set):
                value = sorted(value)  # Paimon's SET is ARRAY<STRING>
            if isinstance(value, bytes | bytearray):
                value = bytes(value)
            assert got[key][column] == (value if value not in ("", set()) else None), (key, column)
    big = got[18446744073709551615]
    assert (big["a"], big["e"], big["s"], big["v"], big["b"], big["n"], big["u"]) == (
        200, "x", ["q"], "naïve", b"\x01", -5, None,
    )  # fmt: skip
    assert (got[1]["v"], got[1]["v2"], got[1]["b"], got[1]["e"], got[1]["s"]) == (
        "élan",
        None,
        b"\x00\xff",
        "y's",
        ["p", "r"],
    )
    assert (got[3]["u"], got[3]["w"], got[3]["w2"], got[3]["e"], got[3]["s"]) == (
        16777215,
        None,  # w was renamed to w2 before the row's update: the update carries w2 only
        99,
        "y's",
        ["p", "q", "r"],
    )
    assert (got[5]["a"], got[5]["v2"], got[5]["e"]) == (65535, "fünf", "a,b")


def test_history_needs_a_start_it_can_read(servers: dict[str, LocalMariaDB], tmp_path: Path) -> None:
    with pytest.raises(JobFailed, match=r"scan\.startup\.mode=earliest-offset needs binlog_row_metadata=FULL"):
        run(_settings(servers["nolog"], str(tmp_path / "wh"), **{"scan.startup.mode": "earliest-offset"}))


def statements_of(text: str) -> list[str]:
    """A set-up script's statements: "--" comment lines (and comments after a statement's ";") dropped,
    statements split at a ";" that ends a line."""
    import re

    lines = text.splitlines()
    text = "\n".join(re.sub(r";[ \t]+--.*$", ";", ln) for ln in lines if not ln.strip().startswith("--"))
    return [s.strip().rstrip(";") for s in text.split(";\n") if s.strip()]


def assert_history_defines_tables_as_the_server(
    statements: list[str], server: LocalMariaDB, load: Any, at_least: int
) -> None:
    """Every table the statements create, as the DDL parser defines it from them and as MariaDB's
    information_schema does after ``load`` ran them: same columns in the same order, same keys,
    nullability, Paimon types, and character sets where the DDL names one."""
    from ingest.mysql.client import table_definitions
    from schema_evolution.mysql_ddl import apply_ddl
    from schema_evolution.mysql_tables import TableDef
    from schema_evolution.mysql_types import mysql_to_paimon

    parsed: dict[str, TableDef] = {}
    database = None
    for statement in statements:
        words = statement.split()
        if words[0].upper() == "USE":
            database = words[1].strip("`")
            continue
        for name, definition in apply_ddl(parsed, statement, database).items():
            if definition is None:
                parsed.pop(name, None)
            else:
                parsed[name] = definition
    load(server)
    conn = server.connect()
    try:
        actual = table_definitions(conn, r"(?!mysql$|sys$).*")
    finally:
        conn.close()
    assert sorted(parsed) == sorted(actual)
    assert len(actual) >= at_least
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


def test_history_definitions_equal_the_servers_for_our_script(tmp_path: Path) -> None:
    """tests/data/mysql-ddl/server-setup.sql: every column type, odd names, character sets, composite
    and changed keys, ALTERs of every kind, a renamed and a dropped table, a table of another database."""
    statements = statements_of((ROOT / "tests" / "data" / "mysql-ddl" / "server-setup.sql").read_text())

    def load(server: LocalMariaDB) -> None:
        conn = server.connect()
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
        finally:
            conn.close()

    server = LocalMariaDB(str(tmp_path / "db"))
    try:
        assert_history_defines_tables_as_the_server(statements, server, load, at_least=6)
    finally:
        server.close()
