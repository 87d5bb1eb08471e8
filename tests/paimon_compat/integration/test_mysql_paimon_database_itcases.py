"""Apache Paimon's MySqlSyncDatabaseActionITCase, replayed against MariaDB: its set-up script
(../shared/cdc-samples/paimon-mysql/sync_database_setup.sql, read in place, on a server of its own
as Paimon uses a container of its own), its statements and arguments, and its expected schemas,
rows and table lists verbatim. Each group of statements is followed by an ``--available-now`` run
on one checkpoint; ``--mode combined`` is used where Paimon tests tables created while running."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local_mariadb import LocalMariaDB
from schema_evolution.types import int_, string, varchar
from sinks.table.catalog import Catalog
from tests.paimon_compat.itcase_args import TEST_ONLY_CATALOG_CONF
from tests.paimon_compat.mysql_setup import CHANGED_OPTIONS, mysql_sync_database, private_server, sync_database
from tests.paimon_read import java_rows, paimon_schema

T1 = [("k", "INT NOT NULL"), ("v1", "VARCHAR(10)")]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    yield from private_server(tmp_path_factory.mktemp("mariadb-db-itcase"), "sync_database_setup.sql")


_run = sync_database


def _check(wh: str, table: str, schema: list[tuple[str, str]], rows: list[str]) -> None:
    assert paimon_schema(wh, f"default.{table}") == schema
    assert java_rows(wh, f"default.{table}") == sorted(rows)


def _tables(wh: str) -> set[str]:
    return set(Catalog(wh).list_tables("default"))


def test_schema_evolution(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "paimon_sync_database"
    _run(db, wh, s)
    db.execute(
        "INSERT INTO t1 VALUES (1, 'one')", "INSERT INTO t2 VALUES (2, 'two', 20, 200)",
        "INSERT INTO t1 VALUES (3, 'three')", "INSERT INTO t2 VALUES (4, 'four', 40, 400)",
        "INSERT INTO t3 VALUES (-1)", database=s,
    )  # fmt: skip
    _run(db, wh, s)
    t2 = [("k1", "INT NOT NULL"), ("k2", "VARCHAR(10) NOT NULL"), ("v1", "INT"), ("v2", "BIGINT")]
    _check(wh, "t1", T1, ["+I[1, one]", "+I[3, three]"])
    _check(wh, "t2", t2, ["+I[2, two, 20, 200]", "+I[4, four, 40, 400]"])
    db.execute(
        "ALTER TABLE t1 ADD COLUMN v2 INT", "INSERT INTO t1 VALUES (5, 'five', 50)",
        "ALTER TABLE t2 ADD COLUMN v3 VARCHAR(10)", "INSERT INTO t2 VALUES (6, 'six', 60, 600, 'string_6')",
        "INSERT INTO t1 VALUES (7, 'seven', 70)", "INSERT INTO t2 VALUES (8, 'eight', 80, 800, 'string_8')",
        database=s,
    )  # fmt: skip
    _run(db, wh, s)
    _check(wh, "t1", [*T1, ("v2", "INT")], ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]",
                                            "+I[7, seven, 70]"])  # fmt: skip
    _check(wh, "t2", [*t2, ("v3", "VARCHAR(10)")], ["+I[2, two, 20, 200, NULL]", "+I[4, four, 40, 400, NULL]",
           "+I[6, six, 60, 600, string_6]", "+I[8, eight, 80, 800, string_8]"])  # fmt: skip
    db.execute(
        "ALTER TABLE t1 MODIFY COLUMN v2 BIGINT", "INSERT INTO t1 VALUES (9, 'nine', 9000000000000)",
        "ALTER TABLE t2 MODIFY COLUMN v3 VARCHAR(20)",
        "INSERT INTO t2 VALUES (10, 'ten', 100, 1000, 'long_long_string_10')", database=s,
    )  # fmt: skip
    _run(db, wh, s)
    _check(wh, "t1", [*T1, ("v2", "BIGINT")], ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]",
           "+I[7, seven, 70]", "+I[9, nine, 9000000000000]"])  # fmt: skip
    _check(wh, "t2", [*t2, ("v3", "VARCHAR(20)")], ["+I[2, two, 20, 200, NULL]", "+I[4, four, 40, 400, NULL]",
           "+I[6, six, 60, 600, string_6]", "+I[8, eight, 80, 800, string_8]",
           "+I[10, ten, 100, 1000, long_long_string_10]"])  # fmt: skip
    assert "t3" not in _tables(wh)  # no primary key


@pytest.mark.parametrize(
    ("database", "including", "excluding", "existing", "absent"),
    [
        ("paimon_sync_database_including", "flink|paimon.+", None, {"flink", "paimon_1", "paimon_2"}, {"ignored"}),
        ("paimon_sync_database_excluding", ".*", "flink|paimon.+", {"sync"}, {"flink", "paimon_1", "paimon_2"}),
        (
            "paimon_sync_database_in_excluding",
            "flink|paimon.+",
            "paimon_1",
            {"flink", "paimon_2"},
            {"paimon_1", "test"},
        ),
    ],
)
def test_including_and_excluding_tables(
    source: LocalMariaDB, tmp_path: Path, database: str, including: str, excluding: str | None,
    existing: set[str], absent: set[str],
) -> None:  # fmt: skip
    _run(source, str(tmp_path), database, including_tables=including, excluding_tables=excluding)
    assert _tables(str(tmp_path)) == existing and not absent & _tables(str(tmp_path))


@pytest.mark.parametrize("including", ["t1|t2", ".*"])
def test_table_affix(source: LocalMariaDB, tmp_path: Path, including: str) -> None:
    db, wh, s = source, str(tmp_path), "paimon_sync_database_affix"
    Catalog(wh).create_table(
        "default.test_prefix_t1_test_suffix", [("k1", int_()), ("v0", varchar(10))], ["k1"], [], {"bucket": "1"}
    )
    args = {"table_prefix": "test_prefix_", "table_suffix": "_test_suffix", "including_tables": including}
    _run(db, wh, s, **args)
    # IGNORE: the parameter that runs second finds the rows there already and reads them by snapshot.
    db.execute(
        "INSERT IGNORE INTO t1 VALUES (1, 'one')", "INSERT IGNORE INTO t2 VALUES (2, 'two')",
        "INSERT IGNORE INTO t1 VALUES (3, 'three')", "INSERT IGNORE INTO t2 VALUES (4, 'four')", database=s,
    )  # fmt: skip
    _run(db, wh, s, **args)
    table1, table2 = "test_prefix_t1_test_suffix", "test_prefix_t2_test_suffix"
    t1, t2 = [("k1", "INT NOT NULL"), ("v0", "VARCHAR(10)")], [("k2", "INT NOT NULL"), ("v0", "VARCHAR(10)")]
    _check(wh, table1, t1, ["+I[1, one]", "+I[3, three]"])
    _check(wh, table2, t2, ["+I[2, two]", "+I[4, four]"])
    try:  # the tables evolve, the one made beforehand included
        db.execute(
            "ALTER TABLE t1 ADD COLUMN v1 INT", "INSERT INTO t1 VALUES (5, 'five', 50)",
            "ALTER TABLE t2 ADD COLUMN v1 VARCHAR(10)", "INSERT INTO t2 VALUES (6, 'six', 's_6')",
            "INSERT INTO t1 VALUES (7, 'seven', 70)", "INSERT INTO t2 VALUES (8, 'eight', 's_8')", database=s,
        )  # fmt: skip
        _run(db, wh, s, **args)
        rows1 = ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]", "+I[7, seven, 70]"]
        rows2 = ["+I[2, two, NULL]", "+I[4, four, NULL]", "+I[6, six, s_6]", "+I[8, eight, s_8]"]
        _check(wh, table1, [*t1, ("v1", "INT")], rows1)
        _check(wh, table2, [*t2, ("v1", "VARCHAR(10)")], rows2)
        db.execute(
            "ALTER TABLE t1 MODIFY COLUMN v1 BIGINT", "INSERT INTO t1 VALUES (9, 'nine', 9000000000000)",
            "ALTER TABLE t2 MODIFY COLUMN v1 VARCHAR(20)", "INSERT INTO t2 VALUES (10, 'ten', 'long_s_10')",
            database=s,
        )  # fmt: skip
        _run(db, wh, s, **args)
        _check(wh, table1, [*t1, ("v1", "BIGINT")], [*rows1, "+I[9, nine, 9000000000000]"])
        _check(wh, table2, [*t2, ("v1", "VARCHAR(20)")], [*rows2, "+I[10, ten, long_s_10]"])
    finally:  # the source as the script left it (with rows 1-4), for the other parameter
        db.execute(
            "DELETE FROM t1 WHERE k1 > 4", "DELETE FROM t2 WHERE k2 > 4",
            "ALTER TABLE t1 DROP COLUMN IF EXISTS v1", "ALTER TABLE t2 DROP COLUMN IF EXISTS v1", database=s,
        )  # fmt: skip


def test_ignore_incompatible_tables(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "paimon_sync_database_ignore_incompatible"
    Catalog(wh).create_table("default.incompatible", [("k", string()), ("v1", string())], ["k"], [], {"bucket": "1"})
    _run(db, wh, s, ignore_incompatible=True)
    db.execute(
        "INSERT INTO compatible VALUES (2, 'two', 20, 200)", "INSERT INTO compatible VALUES (4, 'four', 40, 400)",
        database=s,
    )  # fmt: skip
    _run(db, wh, s, ignore_incompatible=True)
    schema = [("k1", "INT NOT NULL"), ("k2", "VARCHAR(10) NOT NULL"), ("v1", "INT"), ("v2", "BIGINT")]
    _check(wh, "compatible", schema, ["+I[2, two, 20, 200]", "+I[4, four, 40, 400]"])


def test_sync_multiple_shards_combined(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, shards = source, str(tmp_path), "database_shard_.*"
    _run(db, wh, shards, mode="combined")
    db.execute(
        "INSERT INTO database_shard_1.t1 VALUES (1, 'db1_1')", "INSERT INTO database_shard_1.t1 VALUES (2, 'db1_2')",
        "INSERT INTO database_shard_2.t1 VALUES (3, 'db2_3', 300)",
        "INSERT INTO database_shard_2.t1 VALUES (4, 'db2_4', 400)",
    )  # fmt: skip
    _run(db, wh, shards, mode="combined")
    _check(wh, "t1", [("k", "INT NOT NULL"), ("v1", "VARCHAR(20)"), ("v2", "BIGINT")],
           ["+I[1, db1_1, NULL]", "+I[2, db1_2, NULL]", "+I[3, db2_3, 300]", "+I[4, db2_4, 400]"])  # fmt: skip
    db.execute(
        "ALTER TABLE database_shard_1.t2 ADD COLUMN v2 INT",
        "ALTER TABLE database_shard_2.t2 ADD COLUMN v3 VARCHAR(10)",
        "INSERT INTO database_shard_1.t2 VALUES (1, 1.1, 1)", "INSERT INTO database_shard_1.t2 VALUES (2, 2.2, 2)",
        "INSERT INTO database_shard_2.t2 VALUES (3, 3.3, 'db2_3')",
        "INSERT INTO database_shard_2.t2 VALUES (4, 4.4, 'db2_4')",
    )  # fmt: skip
    _run(db, wh, shards, mode="combined")
    _check(wh, "t2", [("k", "BIGINT NOT NULL"), ("v1", "DOUBLE"), ("v2", "INT"), ("v3", "VARCHAR(10)")],
           ["+I[1, 1.1, 1, NULL]", "+I[2, 2.2, 2, NULL]", "+I[3, 3.3, NULL, db2_3]",
            "+I[4, 4.4, NULL, db2_4]"])  # fmt: skip
    # database_shard_2.t3 has no primary key: its rows are not synchronized.
    db.execute(
        "INSERT INTO database_shard_2.t3 VALUES (1, 'db2_1'), (2, 'db2_2')",
        "INSERT INTO database_shard_1.t3 VALUES (3, 'db1_3'), (4, 'db1_4')",
    )  # fmt: skip
    _run(db, wh, shards, mode="combined")
    _check(wh, "t3", T1, ["+I[3, db1_3]", "+I[4, db1_4]"])
    db.execute(
        "CREATE TABLE database_shard_1.t4 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))",
        "INSERT INTO database_shard_1.t4 VALUES (1, 'db1_1')",
        "CREATE TABLE database_shard_2.t4 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))",
        "INSERT INTO database_shard_2.t4 VALUES (2, 'db2_2')",
    )  # fmt: skip
    _run(db, wh, shards, mode="combined")
    _check(wh, "t4", T1, ["+I[1, db1_1]", "+I[2, db2_2]"])


def test_sync_multiple_shards_without_merging(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, shards = source, str(tmp_path), "without_merging_shard_.*"
    args = {"merge_shards": False, "mode": "combined"}
    _run(db, wh, shards, **args)
    assert _tables(wh) == {"without_merging_shard_1_t1", "without_merging_shard_1_t2", "without_merging_shard_2_t1"}
    db.execute(
        "INSERT INTO without_merging_shard_1.t1 VALUES (1, 'db1_1'), (2, 'db1_2')",
        "INSERT INTO without_merging_shard_2.t1 VALUES (3, 'db2_3', 300), (4, 'db2_4', 400)",
        "ALTER TABLE without_merging_shard_1.t2 ADD COLUMN v2 DOUBLE",
        "INSERT INTO without_merging_shard_1.t2 VALUES (1, 'Apache', 1.1)",
        "INSERT INTO without_merging_shard_1.t2 VALUES (2, 'Paimon', 2.2)",
        "CREATE TABLE without_merging_shard_1.t3 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))",
        "INSERT INTO without_merging_shard_1.t3 VALUES (1, 'test')",
        "CREATE TABLE without_merging_shard_2.t3 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))",
        "INSERT INTO without_merging_shard_2.t3 VALUES (2, 'test')",
    )  # fmt: skip
    _run(db, wh, shards, **args)
    _check(wh, "without_merging_shard_1_t1", T1, ["+I[1, db1_1]", "+I[2, db1_2]"])
    _check(wh, "without_merging_shard_2_t1", [("k", "INT NOT NULL"), ("v1", "VARCHAR(20)"), ("v2", "BIGINT")],
           ["+I[3, db2_3, 300]", "+I[4, db2_4, 400]"])  # fmt: skip
    _check(wh, "without_merging_shard_1_t2", [*T1, ("v2", "DOUBLE")], ["+I[1, Apache, 1.1]", "+I[2, Paimon, 2.2]"])
    _check(wh, "without_merging_shard_1_t3", T1, ["+I[1, test]"])
    _check(wh, "without_merging_shard_2_t3", T1, ["+I[2, test]"])


def test_metadata_columns_and_a_new_table(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh = source, str(tmp_path)
    args = {"metadata_columns": ("table_name", "database_name"), "mode": "combined"}
    _run(db, wh, "metadata", **args)
    db.execute(*[f"INSERT INTO metadata.t1 VALUES ({i}, '{v}')" for i, v in
                 [(1, "db1_1"), (2, "db1_2"), (3, "db2_3"), (4, "db2_4")]])  # fmt: skip
    db.execute(*[f"INSERT INTO metadata.t2 VALUES ({i}, 'db1_{i}')" for i in range(1, 5)])
    db.execute("CREATE TABLE t3 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))", "INSERT INTO t3 VALUES (1, 'Hi')",
               database="metadata")  # fmt: skip
    _run(db, wh, "metadata", **args)
    schema = [*T1, ("table_name", "STRING NOT NULL"), ("database_name", "STRING NOT NULL")]
    _check(wh, "t1", schema, ["+I[1, db1_1, t1, metadata]", "+I[2, db1_2, t1, metadata]",
                              "+I[3, db2_3, t1, metadata]", "+I[4, db2_4, t1, metadata]"])  # fmt: skip
    _check(wh, "t2", schema, [f"+I[{i}, db1_{i}, t2, metadata]" for i in range(1, 5)])
    _check(wh, "t3", schema, ["+I[1, Hi, t3, metadata]"])


def test_add_ignored_table(source: LocalMariaDB, tmp_path: Path) -> None:
    db, wh, s = source, str(tmp_path), "paimon_sync_database_add_ignored_table"
    args = {"including_tables": "t.+", "excluding_tables": ".*a$", "mode": "combined"}
    db.execute("INSERT INTO t1 VALUES (1, 'one')", "INSERT INTO a VALUES (1, 'one')", database=s)
    _run(db, wh, s, **args)
    _check(wh, "t1", T1, ["+I[1, one]"])
    db.execute(
        "CREATE TABLE t2 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))", "INSERT INTO t2 VALUES (1, 'Hi')",
        "CREATE TABLE t22 LIKE t2", "INSERT INTO t22 VALUES (1, 'Hello')",
        "CREATE TABLE ta (k INT, v1 VARCHAR(10), PRIMARY KEY (k))", "INSERT INTO ta VALUES (1, 'Apache')",
        "CREATE TABLE t3 (k INT, v1 VARCHAR(10))", "INSERT INTO t3 VALUES (1, 'Paimon')",
        "CREATE TABLE t4 SELECT * FROM t2", "INSERT INTO t1 VALUES (2, 'two')", database=s,
    )  # fmt: skip
    _run(db, wh, s, **args)
    _check(wh, "t1", T1, ["+I[1, one]", "+I[2, two]"])
    assert _tables(wh) == {"t1", "t2", "t22"}
    _check(wh, "t2", T1, ["+I[1, Hi]"])
    _check(wh, "t22", T1, ["+I[1, Hello]"])


def test_invalid_arguments_give_paimons_messages(
    source: LocalMariaDB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # testSpecifiedMySqlTable and testInvalidDatabase: no table conf, Paimon's messages (exact there).
    wh = str(tmp_path)
    capsys.readouterr()
    conf = {"table-name": "my_table"}
    assert mysql_sync_database(source, wh, "paimon_sync_database", mysql_conf=conf, basic_table_conf=False) != 0
    assert (
        "table-name cannot be set for mysql_sync_database. If you want to sync several MySQL tables into one "
        "Paimon table, use mysql_sync_table instead." in capsys.readouterr().err
    )
    assert mysql_sync_database(source, wh, "invalid", basic_table_conf=False) != 0
    assert "No tables found in MySQL database invalid, or MySQL database does not exist." in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["combined", "divided"])
def test_specify_keys(source: LocalMariaDB, tmp_path: Path, mode: str) -> None:
    # --primary-keys k,part --partition-keys part: tables with a `part` column get both, the others
    # fall back to their own key and no partition; in combined mode the same holds for new tables.
    db, wh, s = source, str(tmp_path), "test_specify_keys"
    args = {"primary_keys": ("k", "part"), "partition_keys": ("part",), "mode": mode}
    new = ["t3", "t4"] if mode == "combined" else []
    try:
        _run(db, wh, s, **args)
        db.execute("INSERT INTO t1 VALUES (1, 1, 'A')", "INSERT INTO t2 VALUES (1, 'A')", database=s)
        if new:
            db.execute("CREATE TABLE t3 (k INT, part INT, v1 VARCHAR(10), PRIMARY KEY (k))",
                       "CREATE TABLE t4 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))",
                       "INSERT INTO t3 VALUES (1, 1, 'A')", "INSERT INTO t4 VALUES (1, 'A')", database=s)  # fmt: skip
        _run(db, wh, s, **args)
        catalog = Catalog(wh)
        for table in ["t1", *new[:1]]:
            layout = catalog.load_layout(f"default.{table}")
            assert layout is not None and (layout.partition_keys, layout.primary_keys) == (("part",), ("k", "part"))
            _check(wh, table, [("k", "INT NOT NULL"), ("part", "INT NOT NULL"), ("v1", "VARCHAR(10)")],
                   ["+I[1, 1, A]"])  # fmt: skip
        for table in ["t2", *new[1:]]:
            layout = catalog.load_layout(f"default.{table}")
            assert layout is not None and (layout.partition_keys, layout.primary_keys) == ((), ("k",))
            _check(wh, table, T1, ["+I[1, A]"])
    finally:  # the source as the script left it, for the other mode
        db.execute("DELETE FROM t1", "DELETE FROM t2", *(f"DROP TABLE IF EXISTS {t}" for t in new), database=s)


@pytest.mark.parametrize(
    ("count", "schema_change", "database"),
    [
        (1, False, "paimon_sync_database_newly_added_tables_1"),
        (3, False, "paimon_sync_database_newly_added_tables_2"),
        (1, True, "paimon_sync_database_newly_added_tables_3"),
    ],
)
def test_newly_added_tables(
    source: LocalMariaDB, tmp_path: Path, count: int, schema_change: bool, database: str
) -> None:
    # testNewlyAddedTableSingleTable, -MultipleTables and -SchemaChange: tables created while
    # the job streams get their rows, the old tables keep streaming, and a new table then altered
    # evolves. (Paimon inserts 1-10 random rows and picks a random new table; fixed here.)
    db, wh, s = source, str(tmp_path), database
    args: dict[str, object] = {"including_tables": "t.+", "mode": "combined",
                               "mysql_conf": {"scan.incremental.snapshot.chunk.size": "1"}}  # fmt: skip
    if schema_change:
        args["catalog_conf"] = TEST_ONLY_CATALOG_CONF
    db.execute("INSERT INTO t1 VALUES (1, 'one')", "INSERT INTO t2 VALUES (2, 'two', 20, 200)",
               "INSERT INTO t1 VALUES (3, 'three')", "INSERT INTO t2 VALUES (4, 'four', 40, 400)",
               database=s)  # fmt: skip
    _run(db, wh, s, **args)
    t2 = [("k1", "INT NOT NULL"), ("k2", "VARCHAR(10) NOT NULL"), ("v1", "INT"), ("v2", "BIGINT")]
    _check(wh, "t1", T1, ["+I[1, one]", "+I[3, three]"])
    _check(wh, "t2", t2, ["+I[2, two, 20, 200]", "+I[4, four, 40, 400]"])
    db.execute("INSERT INTO t1 VALUES (5, 'five')", database=s)
    _run(db, wh, s, **args)
    _check(wh, "t1", T1, ["+I[1, one]", "+I[3, three]", "+I[5, five]"])
    records = {f"t_new_table_{i}": [(k, f"varchar_{k}") for k in range(5 + i)] for i in range(count)}
    for i, (table, rows) in enumerate(records.items()):
        db.execute(f"CREATE TABLE {table} (k INT, v1 VARCHAR(10), PRIMARY KEY (k))", database=s)
        if i == 0:
            db.execute("INSERT INTO t2 VALUES (8, 'eight', 80, 800)", database=s)
        db.execute(f"INSERT INTO {table} VALUES " + ", ".join(f"({k}, '{v}')" for k, v in rows), database=s)
    _run(db, wh, s, **args)
    _check(wh, "t2", t2, ["+I[2, two, 20, 200]", "+I[4, four, 40, 400]", "+I[8, eight, 80, 800]"])
    for table, rows in records.items():
        _check(wh, table, T1, [f"+I[{k}, {v}]" for k, v in rows])
    picked = list(records)[-1]
    records[picked].append((80, "eighty"))
    db.execute(f"INSERT INTO {picked} VALUES (80, 'eighty')", database=s)
    _run(db, wh, s, **args)
    _check(wh, picked, T1, [f"+I[{k}, {v}]" for k, v in records[picked]])
    if schema_change:
        db.execute(f"ALTER TABLE {picked} ADD COLUMN v2 INT", f"INSERT INTO {picked} VALUES (100, 'hundred', 10000)",
                   database=s)  # fmt: skip
        _run(db, wh, s, **args)
        _check(wh, picked, [*T1, ("v2", "INT")],
               [*(f"+I[{k}, {v}, NULL]" for k, v in records[picked]), "+I[100, hundred, 10000]"])  # fmt: skip


def test_newly_added_tables_options_change(source: LocalMariaDB, tmp_path: Path) -> None:
    # A second job, given more --table-conf, creates the new table with all of it (and sets it on
    # the table the first job made).
    db, wh, s = source, str(tmp_path), "newly_added_tables_option_schange"
    db.execute("INSERT INTO t1 VALUES (1, 'one')", "INSERT INTO t1 VALUES (3, 'three')", database=s)
    conf = {"bucket": "1", "sink.parallelism": "1"}
    _run(db, wh, s, table_conf=conf, mode="combined", basic_table_conf=False)
    assert _tables(wh) == {"t1"}
    conf |= CHANGED_OPTIONS
    db.execute(
        "CREATE TABLE t2 (k INT, v1 VARCHAR(10), PRIMARY KEY (k))", "INSERT INTO t2 VALUES (1, 'Hi')", database=s
    )
    _run(db, wh, s, table_conf=conf, checkpoint=f"{wh}/ck2", basic_table_conf=False)
    catalog = Catalog(wh)
    for table in ("t1", "t2"):
        options = catalog.table_options(f"default.{table}")
        assert {k: options.get(k) for k in conf} == conf
    _check(wh, "t2", T1, ["+I[1, Hi]"])


@pytest.mark.parametrize("mode", ["divided", "combined"])
def test_ignore_case(source: LocalMariaDB, tmp_path: Path, mode: str) -> None:
    """testIgnoreCaseDivided / testIgnoreCaseCombined: MySQL's T (UPPERCASE_V0 …) becomes t
    (uppercase_v0 …) in a case-insensitive catalog, schema changes included; in combined mode a
    table T1 created while the job runs becomes t1."""
    db, wh, s = source, str(tmp_path), f"paimon_ignore_CASE_{mode}"
    args = {"catalog_conf": {"case-sensitive": "false"}, "mode": mode}
    _run(db, wh, s, **args)
    tables = ["T", "T1"] if mode == "combined" else ["T"]
    if mode == "combined":
        db.execute("CREATE TABLE T1 (k INT, UPPERCASE_V0 VARCHAR(20), PRIMARY KEY (k))", database=s)
    for table in tables:
        db.execute(f"INSERT INTO {table} VALUES (1, 'Hi')", database=s)
    _run(db, wh, s, **args)
    assert _tables(wh) == {t.lower() for t in tables}
    for table in tables:
        _check(wh, table.lower(), [("k", "INT NOT NULL"), ("uppercase_v0", "VARCHAR(20)")], ["+I[1, Hi]"])
        db.execute(f"ALTER TABLE {table} MODIFY COLUMN UPPERCASE_V0 VARCHAR(30)",
                   f"INSERT INTO {table} VALUES (2, 'Paimon')", database=s)  # fmt: skip
    _run(db, wh, s, **args)
    for table in tables:
        _check(wh, table.lower(), [("k", "INT NOT NULL"), ("uppercase_v0", "VARCHAR(30)")],
               ["+I[1, Hi]", "+I[2, Paimon]"])  # fmt: skip
        db.execute(f"ALTER TABLE {table} ADD COLUMN UPPERCASE_V1 DOUBLE",
                   f"INSERT INTO {table} VALUES (3, 'Test', 0.5)", database=s)  # fmt: skip
    _run(db, wh, s, **args)
    for table in tables:
        schema = [("k", "INT NOT NULL"), ("uppercase_v0", "VARCHAR(30)"), ("uppercase_v1", "DOUBLE")]
        _check(wh, table.lower(), schema, ["+I[1, Hi, NULL]", "+I[2, Paimon, NULL]", "+I[3, Test, 0.5]"])


def test_sync_many_tables_with_limited_memory(source: LocalMariaDB, tmp_path: Path) -> None:
    """testSyncManyTableWithLimitedMemory: 100 tables created while the job streams (combined mode),
    100 rows each, under Paimon's 4 mb write buffer and one sink task: every table gets its rows.
    (Paimon creates them from 100 threads at once; here one statement after another.)"""
    db, wh, s = source, str(tmp_path), "many_table_sync_test"
    args = {
        "mode": "combined",
        "mysql_conf": {"scan.incremental.snapshot.chunk.size": "1"},
        "table_conf": {"sink.parallelism": "1", "write-buffer-size": "4 mb"},
    }
    _run(db, wh, s, **args)
    values = ", ".join(f"({k}, 'string_{k}')" for k in range(100))
    for i in range(100):
        db.execute(f"CREATE TABLE t{i} (k INT, v1 VARCHAR(10), PRIMARY KEY (k))", f"INSERT INTO t{i} VALUES {values}",
                   database=s)  # fmt: skip
    _run(db, wh, s, **args)
    assert _tables(wh) == {"a", *(f"t{i}" for i in range(100))}
    for i in range(100):
        _check(wh, f"t{i}", T1, [f"+I[{k}, string_{k}]" for k in range(100)])


def test_monitored_and_excluded_tables_with_merging(source: LocalMariaDB, tmp_path: Path) -> None:
    """testMonitoredAndExcludedTablesWithMering, by its outcome (Paimon asserts the action's table
    lists): shard_1.t1, shard_1.t3 and shard_2.t1 are synced; t2 of both shards is excluded, as the
    existing Paimon t2 (STRING key) fits neither, and shard_2.t3 has no primary key."""
    db, wh, shards = source, str(tmp_path), "monitored_and_excluded_shard_.*"
    Catalog(wh).create_table("default.t2", [("k", string()), ("v1", string())], ["k"], [], {})
    db.execute("INSERT INTO t1 VALUES (1, 'shard_1')", "INSERT INTO t2 VALUES (1, 'two')",
               "INSERT INTO t3 VALUES (1, 'one')", database="monitored_and_excluded_shard_1")  # fmt: skip
    db.execute("INSERT INTO t1 VALUES (2, 'shard_2')", "INSERT INTO t2 VALUES (2, 0.5)",
               "INSERT INTO t3 VALUES (2, 'x')", database="monitored_and_excluded_shard_2")  # fmt: skip
    _run(db, wh, shards, mode="combined", ignore_incompatible=True, basic_table_conf=False)
    assert _tables(wh) == {"t1", "t2", "t3"}
    _check(wh, "t1", T1, ["+I[1, shard_1]", "+I[2, shard_2]"])
    _check(wh, "t2", [("k", "STRING NOT NULL"), ("v1", "STRING")], [])
    _check(wh, "t3", T1, ["+I[1, one]"])
