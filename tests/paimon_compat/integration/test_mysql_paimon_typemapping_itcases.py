"""Apache Paimon's MySqlCdcTypeMappingITCase, replayed against MariaDB: its set-up script
(../shared/cdc-samples/paimon-mysql/type_mapping_test_setup.sql, read in place), its statements and
``--type-mapping`` arguments, and its expected schemas, primary keys and rows verbatim.

Paimon's job runs continuously while the test issues statements; here an ``--available-now`` run
follows each group of statements, on one checkpoint (``--mode combined`` where Paimon tests tables
created while running). Known MariaDB differences (see that directory's README) are named where
they apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from sinks.table.catalog import Catalog
from tests.paimon_compat.mysql_setup import load_paimon_script, mysql_sync_database, mysql_sync_table, sync_database
from tests.paimon_read import java_rows, paimon_schema


@pytest.fixture(scope="module")
def source(mariadb: LocalMariaDB) -> LocalMariaDB:
    """The ITCase's databases (their names are used by no other script), loaded once in the session
    zone of Paimon's container (Los Angeles, PDT on the dates the script uses)."""
    load_paimon_script(mariadb, "type_mapping_test_setup.sql", session_zone="-07:00")
    return mariadb


def _run_database(db: LocalMariaDB, wh: str, database: str, modes: str, **extra: Any) -> None:
    """Paimon's builder here: getBasicTableConfig(), ``--mode combined --type-mapping <modes>``."""
    sync_database(db, wh, database, mode="combined", type_mapping=(modes,), **extra)


def _check(wh: str, table: str, schema: list[tuple[str, str]], rows: list[str], keys: list[str]) -> None:
    """waitForResult: primary keys, schema, then rows (in any order)."""
    assert _primary_keys(wh, table) == keys
    assert paimon_schema(wh, f"default.{table}") == schema
    assert java_rows(wh, f"default.{table}") == sorted(rows)


def _primary_keys(wh: str, table: str) -> list[str]:
    from pypaimon import CatalogFactory

    return list(CatalogFactory.create({"warehouse": wh}).get_table(f"default.{table}").table_schema.primary_keys)


def _tables(wh: str) -> set[str]:
    return set(Catalog(wh).list_tables("default"))


# ------------------------------------- tinyint1-not-bool -------------------------------------


def test_tinyint1_not_bool(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "tinyint1_not_bool_test"
    # tinyInt1isBit compatibility (and, in Paimon, JDBC URL building)
    jdbc = {"jdbc.properties.tinyInt1isBit": "false", "jdbc.properties.useSSL": "false"}
    _run_database(db, wh, s, "tinyint1-not-bool", mysql_conf=jdbc)
    row_type_1 = [("pk", "INT NOT NULL"), ("_tinyint1", "TINYINT")]
    _check(wh, "t1", row_type_1, ["+I[1, 1]"], ["pk"])
    db.execute("ALTER TABLE t1 ADD COLUMN _new_tinyint1 TINYINT(1)", "INSERT INTO t1 VALUES (2, -128, 127)", database=s)
    _run_database(db, wh, s, "tinyint1-not-bool", mysql_conf=jdbc)
    _check(wh, "t1", [*row_type_1, ("_new_tinyint1", "TINYINT")], ["+I[1, 1, NULL]", "+I[2, -128, 127]"], ["pk"])
    db.execute(
        "CREATE TABLE t2 (pk INT, _tinyint1 TINYINT(1), PRIMARY KEY (pk))",
        "INSERT INTO t2 VALUES (1, 1), (2, 127), (3, -128)",
        database=s,
    )
    _run_database(db, wh, s, "tinyint1-not-bool", mysql_conf=jdbc)
    assert "t2" in _tables(wh)
    _check(wh, "t2", row_type_1, ["+I[1, 1]", "+I[2, 127]", "+I[3, -128]"], ["pk"])


def test_conflict_tinyint1_not_bool(source: LocalMariaDB, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    rc = mysql_sync_database(
        source, str(tmp_path), "tinyint1_not_bool_test", mode="combined", type_mapping=("tinyint1-not-bool",),
        mysql_conf={"jdbc.properties.tinyInt1isBit": "true"},
    )  # fmt: skip
    assert rc != 0
    assert (
        "Type mapping option 'tinyint1-not-bool' conflicts with jdbc properties 'jdbc.properties.tinyInt1isBit=true'. "
        "Option 'tinyint1-not-bool' is equal to 'jdbc.properties.tinyInt1isBit=false'." in capsys.readouterr().err
    )


# --------------------------------------- all-to-string ---------------------------------------

ALL_TYPES = [
    "_id", "pt", "_bit1", "_bit", "_tinyint1", "_boolean", "_bool", "_tinyint", "_tinyint_unsigned",
    "_tinyint_unsigned_zerofill", "_smallint", "_smallint_unsigned", "_smallint_unsigned_zerofill", "_mediumint",
    "_mediumint_unsigned", "_mediumint_unsigned_zerofill", "_int", "_int_unsigned", "_int_unsigned_zerofill",
    "_bigint", "_bigint_unsigned", "_bigint_unsigned_zerofill", "_serial", "_float", "_float_unsigned",
    "_float_unsigned_zerofill", "_real", "_real_unsigned", "_real_unsigned_zerofill", "_double", "_double_unsigned",
    "_double_unsigned_zerofill", "_double_precision", "_double_precision_unsigned",
    "_double_precision_unsigned_zerofill", "_numeric", "_numeric_unsigned", "_numeric_unsigned_zerofill", "_fixed",
    "_fixed_unsigned", "_fixed_unsigned_zerofill", "_decimal", "_decimal_unsigned", "_decimal_unsigned_zerofill",
    "_big_decimal", "_date", "_datetime", "_datetime3", "_datetime6", "_datetime_p", "_datetime_p2", "_timestamp",
    "_timestamp0", "_char", "_varchar", "_tinytext", "_text", "_mediumtext", "_longtext", "_bin", "_varbin",
    "_tinyblob", "_blob", "_mediumblob", "_longblob", "_json", "_enum", "_year", "_time", "_point", "_geometry",
    "_linestring", "_polygon", "_multipoint", "_multiline", "_multipolygon", "_geometrycollection", "_set",
]  # fmt: skip

# Paimon's expected first row, verbatim, but for MariaDB's two known differences: JSON keeps the
# inserted text ({"a":"b"}; MySQL gives {"a": "b"}) and ST_GeomFromText('MULTIPOINT((1 1),(2 2))')
# is NULL (MySQL: {"coordinates":[[1,1],[2,2]],"type":"MultiPoint","srid":0}).
ALL_TYPES_ROW_1 = (
    "+I["
    "1, 1.1, "
    "true, 0000000000000000000000000000000000000000000000000000011111000111, "
    "1, 1, 0, 1, 2, 3, "
    "1000, 2000, 3000, "
    "100000, 200000, 300000, "
    "1000000, 2000000, 3000000, "
    "10000000000, 20000000000, 30000000000, 40000000000, "
    "1.5, 2.5, 3.5, "
    "1.000001, 2.000002, 3.000003, "
    "1.000011, 2.000022, 3.000033, "
    "1.000111, 2.000222, 3.000333, "
    "12345.11, 12345.22, 12345.33, "
    "123456789876543212345678987654321.11, 123456789876543212345678987654321.22, "
    "123456789876543212345678987654321.33, "
    "11111, 22222, 33333, 2222222222222222300000001111.123456789, "
    "2023-03-23, "
    # display value of datetime is not affected by timezone
    "2023-03-23 14:30:05.000, 2023-03-23 14:30:05.123, 2023-03-23 14:30:05.123456, "
    "2023-03-24 14:30:00.000, 2023-03-24 14:30:05.120, "
    # display value of timestamp is affected by timezone: stored in Los Angeles, read in New York
    "2023-03-23 18:00:10.123456, 2023-03-23 03:10:00.000000, "
    "Paimon, Apache Paimon, Apache Paimon MySQL TINYTEXT Test Data, Apache Paimon MySQL Test Data, "
    "Apache Paimon MySQL MEDIUMTEXT Test Data, Apache Paimon MySQL Long Test Data, "
    "bytes\u0000\u0000\u0000\u0000\u0000, more bytes, TINYBLOB type test data, BLOB type test data, "
    "MEDIUMBLOB type test data, LONGBLOB  bytes test data, "
    '{"a":"b"}, '
    "value1, "
    "2023, "
    "10:13:23, "
    '{"coordinates":[1,1],"type":"Point","srid":0}, '
    '{"coordinates":[[[1,1],[2,1],[2,2],[1,2],[1,1]]],"type":"Polygon","srid":0}, '
    '{"coordinates":[[3,0],[3,3],[3,5]],"type":"LineString","srid":0}, '
    '{"coordinates":[[[1,1],[2,1],[2,2],[1,2],[1,1]]],"type":"Polygon","srid":0}, '
    "NULL, "
    '{"coordinates":[[[1,1],[2,2],[3,3]],[[4,4],[5,5]]],"type":"MultiLineString","srid":0}, '
    '{"coordinates":[[[[0,0],[10,0],[10,10],[0,10],[0,0]]],[[[5,5],[7,5],[7,7],[5,7],[5,5]]]],'
    '"type":"MultiPolygon","srid":0}, '
    '{"geometries":[{"type":"Point","coordinates":[10,10]},{"type":"Point","coordinates":[30,30]},'
    '{"type":"LineString","coordinates":[[15,15],[20,20]]}],"type":"GeometryCollection","srid":0}, '
    "a,b"
    "]"
)
ALL_TYPES_ROW_2 = "+I[2, 2.2, " + ", ".join(["NULL"] * 20) + ", 50000000000, " + ", ".join(["NULL"] * 55) + "]"


def test_read_all_types(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh = source, str(tmp_path)
    rc = mysql_sync_table(
        db, wh, "all_to_string_test", "all_types_table", table="all_types_table",
        partition_keys=("pt",), primary_keys=("pt", "_id"), type_mapping=("to-string",),
    )  # fmt: skip
    assert rc == 0
    assert len(ALL_TYPES) == 78
    not_null = {"_id", "pt", "_serial"}
    schema = [(c, "STRING NOT NULL" if c in not_null else "STRING") for c in ALL_TYPES]
    _check(wh, "all_types_table", schema, [ALL_TYPES_ROW_1, ALL_TYPES_ROW_2], ["pt", "_id"])


def test_schema_evolution_and_newly_created_table(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "all_to_string_test"
    args = {"excluding_tables": "all_types_table"}
    _run_database(db, wh, s, "to-string", **args)
    table = "schema_evolution_test"
    row_type = [("pk", "STRING NOT NULL"), ("v1", "STRING")]
    db.execute("INSERT INTO schema_evolution_test VALUES (1, 1)", database=s)
    _run_database(db, wh, s, "to-string", **args)
    _check(wh, table, row_type, ["+I[1, 1]"], ["pk"])
    db.execute(
        "ALTER TABLE schema_evolution_test MODIFY COLUMN v1 BIGINT",
        "INSERT INTO schema_evolution_test VALUES (2, 20000000000)",
        database=s,
    )
    _run_database(db, wh, s, "to-string", **args)
    _check(wh, table, row_type, ["+I[1, 1]", "+I[2, 20000000000]"], ["pk"])
    db.execute(
        "ALTER TABLE schema_evolution_test ADD COLUMN v2 VARBINARY(10)",
        "INSERT INTO schema_evolution_test VALUES (3, 3, '0123456789'), (4, 4, 'A')",
        database=s,
    )
    _run_database(db, wh, s, "to-string", **args)
    _check(
        wh, table, [*row_type, ("v2", "STRING")],
        ["+I[1, 1, NULL]", "+I[2, 20000000000, NULL]", "+I[3, 3, 0123456789]", "+I[4, 4, A]"], ["pk"],
    )  # fmt: skip
    db.execute(
        "CREATE TABLE _new_table (pk INT, v VARBINARY(10), PRIMARY KEY (pk))",
        "INSERT INTO _new_table VALUES (1, 'Paimon')",
        database=s,
    )
    _run_database(db, wh, s, "to-string", **args)
    assert "_new_table" in _tables(wh)
    _check(wh, "_new_table", [("pk", "STRING NOT NULL"), ("v", "STRING")], ["+I[1, Paimon]"], ["pk"])


# ------------------------------------- ignore-not-null -------------------------------------


def test_ignore_not_null(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "ignore_not_null_test"
    _run_database(db, wh, s, "to-nullable")
    _check(wh, "t1", [("pk", "INT NOT NULL"), ("v1", "VARCHAR(10)")], ["+I[1, A]"], ["pk"])
    db.execute(
        "ALTER TABLE t1 ADD COLUMN v2 INT NOT NULL DEFAULT 100", "INSERT INTO t1 VALUES (2, 'B', 10)", database=s
    )
    _run_database(db, wh, s, "to-nullable")
    # Paimon: "Currently we haven't handle default value"
    _check(
        wh, "t1", [("pk", "INT NOT NULL"), ("v1", "VARCHAR(10)"), ("v2", "INT")], ["+I[1, A, NULL]", "+I[2, B, 10]"],
        ["pk"],
    )  # fmt: skip
    db.execute("CREATE TABLE _new_table (pk INT, v INT NOT NULL, PRIMARY KEY (pk))", database=s)
    _run_database(db, wh, s, "to-nullable")
    assert "_new_table" in _tables(wh)
    assert paimon_schema(wh, "default._new_table")[1] == ("v", "INT")  # nullable


# -------------------------------------- char-to-string --------------------------------------


def test_char_to_string(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "char_to_string_test"
    _run_database(db, wh, s, "char-to-string")
    row_type = [("pk", "INT NOT NULL"), ("v1", "STRING NOT NULL")]
    _check(wh, "t1", row_type, ["+I[1, 1]"], ["pk"])
    db.execute("ALTER TABLE t1 ADD COLUMN v2 CHAR(1)", "INSERT INTO t1 VALUES (2, '2', 'A'), (3, '3', 'B')", database=s)
    _run_database(db, wh, s, "char-to-string")
    _check(wh, "t1", [*row_type, ("v2", "STRING")], ["+I[1, 1, NULL]", "+I[2, 2, A]", "+I[3, 3, B]"], ["pk"])
    db.execute(
        "CREATE TABLE _new_table (pk INT, v VARCHAR(10), PRIMARY KEY (pk))",
        "INSERT INTO _new_table VALUES (1, 'Paimon')",
        database=s,
    )
    _run_database(db, wh, s, "char-to-string")
    assert "_new_table" in _tables(wh)
    _check(wh, "_new_table", [("pk", "INT NOT NULL"), ("v", "STRING")], ["+I[1, Paimon]"], ["pk"])


# ------------------------------------- longtext-to-bytes -------------------------------------

LONG_TEXT = (
    "This is an example of a long text string, meant to demonstrate the usage of the LONGTEXT data type in SQL "
    "databases."
)
LONG_TEXT_BYTES = (
    "[84, 104, 105, 115, 32, 105, 115, 32, 97, 110, 32, 101, 120, 97, 109, 112, 108, 101, 32, 111, 102, 32, 97, 32, "
    "108, 111, 110, 103, 32, 116, 101, 120, 116, 32, 115, 116, 114, 105, 110, 103, 44, 32, 109, 101, 97, 110, 116, "
    "32, 116, 111, 32, 100, 101, 109, 111, 110, 115, 116, 114, 97, 116, 101, 32, 116, 104, 101, 32, 117, 115, 97, "
    "103, 101, 32, 111, 102, 32, 116, 104, 101, 32, 76, 79, 78, 71, 84, 69, 88, 84, 32, 100, 97, 116, 97, 32, 116, "
    "121, 112, 101, 32, 105, 110, 32, 83, 81, 76, 32, 100, 97, 116, 97, 98, 97, 115, 101, 115, 46]"
)


def test_longtext_to_bytes(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "longtext_to_bytes_test"
    _run_database(db, wh, s, "longtext-to-bytes")
    row_type = [("pk", "INT NOT NULL"), ("v1", "VARCHAR(10) NOT NULL")]
    _check(wh, "t1", row_type, ["+I[1, 1]"], ["pk"])
    db.execute("ALTER TABLE t1 ADD COLUMN v2 LONGTEXT", f"INSERT INTO t1 VALUES (2, '2', '{LONG_TEXT}')", database=s)
    _run_database(db, wh, s, "longtext-to-bytes")
    _check(wh, "t1", [*row_type, ("v2", "BYTES")], ["+I[1, 1, NULL]", f"+I[2, 2, {LONG_TEXT_BYTES}]"], ["pk"])
    db.execute(
        "CREATE TABLE _new_table (pk INT, v LONGTEXT, PRIMARY KEY (pk))",
        "INSERT INTO _new_table VALUES (1, 'Paimon')",
        database=s,
    )
    _run_database(db, wh, s, "longtext-to-bytes")
    assert "_new_table" in _tables(wh)
    _check(wh, "_new_table", [("pk", "INT NOT NULL"), ("v", "BYTES")], ["+I[1, [80, 97, 105, 109, 111, 110]]"], ["pk"])


# --------------------------------- bigint-unsigned-to-bigint ---------------------------------


def test_bigint_unsigned_to_bigint(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "bigint_unsigned_to_bigint_test"
    _run_database(db, wh, s, "bigint-unsigned-to-bigint")
    row_type = [("pk", "INT NOT NULL"), ("v1", "BIGINT"), ("v2", "BIGINT"), ("v3", "BIGINT NOT NULL")]
    _check(wh, "t1", row_type, ["+I[1, 12345, 56789, 123456789]"], ["pk"])
    db.execute(
        "ALTER TABLE t1 ADD COLUMN v4 BIGINT UNSIGNED",
        "INSERT INTO t1 VALUES (2, 23456, 67890, 234567890, 1234567890)",
        database=s,
    )
    _run_database(db, wh, s, "bigint-unsigned-to-bigint")
    _check(
        wh, "t1", [*row_type, ("v4", "BIGINT")],
        ["+I[1, 12345, 56789, 123456789, NULL]", "+I[2, 23456, 67890, 234567890, 1234567890]"], ["pk"],
    )  # fmt: skip
    db.execute(
        "CREATE TABLE _new_table (pk INT, v BIGINT UNSIGNED, PRIMARY KEY (pk))",
        "INSERT INTO _new_table VALUES (1, 1234567890)",
        database=s,
    )
    _run_database(db, wh, s, "bigint-unsigned-to-bigint")
    assert "_new_table" in _tables(wh)
    _check(wh, "_new_table", [("pk", "INT NOT NULL"), ("v", "BIGINT")], ["+I[1, 1234567890]"], ["pk"])
