"""Table creation and evolution on the driver, against a real Paimon catalog on disk."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

from schema_evolution.errors import IncompatibleTypeChange
from schema_evolution.types import bigint, date, int_, string, timestamp, varchar
from sinks.layout import RecordSchema, TableLayout
from sinks.table.catalog import Catalog
from sinks.table.prepare import IncompatibleTable, TableDefinitionError, TablePolicy, TablePreparer
from tests.paimon_read import paimon_schema, read_pypaimon, read_rust


def _record(*fields, pks=("id",), source="shop.t") -> RecordSchema:  # type: ignore[no-untyped-def]
    return RecordSchema(tuple(fields), tuple(pks), source)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(str(tmp_path / "wh"))


def test_creates_with_source_keys_partition_keys_and_default_options(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy(partition_keys=("id",), table_conf={"bucket": "2"}))
    layouts = prep.prepare([("db.t", _record(("id", int_()), ("v", varchar(5))))])
    assert layouts["db.t"].primary_keys == ("id",) and layouts["db.t"].partition_keys == ("id",)
    assert paimon_schema(catalog.warehouse, "db.t") == [("id", "INT NOT NULL"), ("v", "VARCHAR(5)")]
    options = catalog._catalog.get_table("db.t").table_schema.options
    assert options["changelog-producer"] == "input" and options["bucket"] == "2"


def test_keys_missing_from_the_source_are_refused(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy(primary_keys=("nope",)))
    with pytest.raises(TableDefinitionError, match=r"key column\(s\) \['nope'\] are not in the source table") as info:
        prep.prepare([("db.t", _record(("id", int_()), ("v", int_())))])
    assert str(info.value).startswith(  # Paimon's message (CdcActionCommonUtils.setPrimaryKeys) first
        "For sink table t, not all specified primary keys '[nope]' exist in source tables or computed columns "
        "'[id, v]'.\n"
    )
    prep = TablePreparer(catalog, TablePolicy(primary_keys=("id",), partition_keys=("p", "v")))
    with pytest.raises(TableDefinitionError, match=r"Fix --partition-keys") as info:
        prep.prepare([("db.t", _record(("id", int_()), ("v", int_())))])
    assert str(info.value).startswith(
        "For sink table t, not all specified partition keys '[p, v]' exist in source tables or computed columns "
        "'[id, v]'.\n"
    )


def test_duplicate_columns_are_refused_with_paimons_message(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy())
    with pytest.raises(TableDefinitionError) as info:
        prep.prepare([("db.t", _record(("id", int_()), ("v", int_()), ("v", string())))])
    assert str(info.value).startswith(
        "Table t contains duplicate columns: [v].\nPossible causes are: 1. computed columns or metadata columns "
        "contain duplicate fields; 2. the catalog is case-insensitive"
    )


def test_sequence_groups_are_checked_against_the_columns_at_creation(catalog: Catalog) -> None:
    conf = {"merge-engine": "partial-update", "fields.g.sequence-group": "v,w"}
    prep = TablePreparer(catalog, TablePolicy(table_conf=conf))
    with pytest.raises(
        TableDefinitionError, match=r"cannot create table 'db\.t': --table-conf: Field w can not be found"
    ):
        prep.prepare([("db.t", _record(("id", int_()), ("v", varchar(5)), ("g", int_())))])
    layouts = prep.prepare([("db.t", _record(("id", int_()), ("v", varchar(5)), ("w", int_()), ("g", int_())))])
    assert layouts["db.t"].refuses_retractions is None  # sequence groups take updates and deletes


def test_evolves_in_source_order_within_one_batch(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy())
    layouts = prep.prepare(
        [
            ("db.t", _record(("id", int_()), ("v", varchar(5)))),
            ("db.t", _record(("id", int_()), ("v", varchar(50)), ("w", int_()))),
            ("db.t", _record(("id", int_()), ("w", bigint()))),  # v dropped, w widened
        ]
    )
    assert [(n, str(t)) for n, t in layouts["db.t"].fields] == [
        ("id", "INT NOT NULL"),
        ("v", "VARCHAR(50)"),
        ("w", "BIGINT"),
    ]


def test_shards_that_disagree_on_keys_make_an_append_table(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy())
    layouts = prep.prepare(
        [
            ("db.t", _record(("id", int_()), ("k", int_()), source="s1.t")),
            ("db.t", _record(("id", int_()), ("k", int_()), pks=("k",), source="s2.t")),
        ]
    )
    assert layouts["db.t"].primary_keys == ()


def test_existing_foreign_table_must_be_compatible(catalog: Catalog) -> None:
    catalog.create_table("db.t", [("k", string()), ("v1", string())], ["k"], [], {})
    prep = TablePreparer(catalog, TablePolicy(), commit_user="me")
    with pytest.raises(IncompatibleTable, match="Paimon schema and source table schema are not compatible") as info:
        prep.prepare([("db.t", _record(("id", int_()), ("v1", varchar(10))))])
    assert str(info.value).startswith(  # Paimon's message (CdcActionCommonUtils.assertSchemaCompatible) first
        "Paimon schema and source table schema are not compatible.\n"
        "Paimon fields are: [`k` STRING NOT NULL, `v1` STRING].\n"
        "Source table fields are: [`id` INT NOT NULL, `v1` VARCHAR(10)]\n(table 'db.t': "
    )


def test_incompatible_type_change_names_table_column_and_types(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy())
    prep.prepare([("db.t", _record(("id", int_()), ("d", int_())))])
    with pytest.raises(
        IncompatibleTypeChange, match=r"table 'db\.t', column 'd': the source type changed from INT to DATE"
    ) as info:
        prep.prepare([("db.t", _record(("id", int_()), ("d", date())))])
    # Paimon's message (UpdatedDataFieldsProcessFunctionBase) first
    assert str(info.value).startswith("Cannot convert field d from type INT to DATE of Paimon table db.t.\n(")


def test_shards_whose_types_cannot_merge_are_refused_at_creation_with_paimons_message(catalog: Catalog) -> None:
    # Paimon's testIncompatibleMySqlTable: two source tables, one Paimon table, v1 TIMESTAMP(0) and INT
    prep = TablePreparer(catalog, TablePolicy())
    first = _record(("id", int_()), ("v1", timestamp(0)), source="db.incompatible_field_1")
    other = _record(("id", int_()), ("v1", int_()), source="db.incompatible_field_2")
    with pytest.raises(IncompatibleTypeChange) as info:
        prep.prepare([("d.t", first), ("d.t", other)])
    assert str(info.value).startswith(
        "Column v1 have different types when merging schemas.\n"
        "Current table 'db.incompatible_field_1' field: `v1` TIMESTAMP(0)\n"
        "To be merged table 'db.incompatible_field_2' field: `v1` INT\n(source tables"
    )


def test_an_append_table_with_fixed_buckets_needs_a_bucket_key(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy(table_conf={"bucket": "2"}))
    with pytest.raises(TableDefinitionError, match=r"^You should define a 'bucket-key' for bucketed append mode\."):
        prep.prepare([("db.t", _record(("v", string()), pks=()))])
    TablePreparer(catalog, TablePolicy(table_conf={"bucket": "2", "bucket-key": "v"})).prepare(
        [("db.t", _record(("v", string()), pks=()))]
    )


def test_ignore_incompatible_skips_only_the_bad_table(catalog: Catalog) -> None:
    catalog.create_table("db.bad", [("k", string())], ["k"], [], {})
    prep = TablePreparer(catalog, TablePolicy(ignore_incompatible=True), commit_user="me")
    layouts = prep.prepare([("db.bad", _record(("id", int_()))), ("db.good", _record(("id", int_())))])
    assert set(layouts) == {"db.good"}
    assert prep.skipped == {"db.bad"}
    assert set(prep.prepare([("db.bad", _record(("id", int_())))])) == set()  # stays skipped


def test_database_sync_keys_fall_back_as_in_paimon_and_per_table_partition_keys_apply(catalog: Catalog) -> None:
    policy = TablePolicy(
        primary_keys=("nope",),
        partition_keys=("also_nope",),
        multiple_partition_keys={"b": ("id",)},
        lenient_keys=True,
    )
    prep = TablePreparer(catalog, policy)
    layouts = prep.prepare([("db.a", _record(("id", int_()))), ("db.b", _record(("id", int_()), source="shop.src_b"))])
    assert layouts["db.a"].primary_keys == ("id",)  # --primary-keys not in the source: the source's keys
    assert layouts["db.a"].partition_keys == ()  # --partition-keys not in the source: none
    assert layouts["db.b"].partition_keys == ("id",)  # --multiple-table-partition-keys b=id


def test_source_keys_are_not_used_when_sync_primary_keys_from_source_schema_is_false(catalog: Catalog) -> None:
    prep = TablePreparer(catalog, TablePolicy(source_primary_keys=False))
    assert prep.prepare([("db.t", _record(("id", int_())))])["db.t"].primary_keys == ()


def test_mysql_actions_refuse_shards_that_disagree_on_keys(catalog: Catalog) -> None:
    # Paimon's MySqlSyncTableActionITCase.testNoPrimaryKey: its message, and what to do.
    prep = TablePreparer(catalog, TablePolicy(require_primary_keys=True))
    with pytest.raises(
        TableDefinitionError,
        match=r"^Failed to set specified primary keys for sink table t\. Also, can't infer primary keys "
        r"from source table schemas because source tables have no primary keys or have different primary keys"
        r"\.\n\(table 'db\.t': give --primary-keys",
    ):
        prep.prepare(
            [
                ("db.t", _record(("id", int_()), ("k", int_()), source="s1.t")),
                ("db.t", _record(("id", int_()), ("k", int_()), pks=("k",), source="s2.t")),
            ]
        )
    # --sync-primary-keys-from-source-schema false asks for an append table: no keys needed
    prep = TablePreparer(catalog, TablePolicy(require_primary_keys=True, source_primary_keys=False))
    assert prep.prepare([("db.t", _record(("id", int_())))])["db.t"].primary_keys == ()


def _options(catalog: Catalog, table: str) -> dict[str, str]:
    return dict(catalog._catalog.get_table(table).table_schema.options)


def test_table_conf_changes_options_of_an_existing_table_except_bucket_and_immutable_ones(catalog: Catalog) -> None:
    # Paimon's testOptionsChangeInExistingTable and testInvalidAlterBucket: changed options are set,
    # new ones added, bucket (and any immutable option) kept as the table has it.
    catalog.create_table(
        "db.t", [("id", int_()), ("v", string())], ["id"], [], {"bucket": "1", "sink.parallelism": "1"}
    )
    conf = {"bucket": "2", "sink.parallelism": "2", "snapshot.expire.limit": "1000", "merge-engine": "first-row"}
    prep = TablePreparer(catalog, TablePolicy(table_conf=conf))
    prep.prepare([("db.t", _record(("id", int_()), ("v", string())))])
    options = _options(catalog, "db.t")
    assert options["bucket"] == "1" and "merge-engine" not in options
    assert options["sink.parallelism"] == "2" and options["snapshot.expire.limit"] == "1000"
    # an option lakecdc would not honour is refused for an existing table too, naming it
    prep = TablePreparer(catalog, TablePolicy(table_conf={"rowkind.field": "op"}))
    prep.prepare([("db.t", _record(("id", int_()), ("v", string())))])  # immutable: kept, warned
    assert "rowkind.field" not in _options(catalog, "db.t")
    prep = TablePreparer(catalog, TablePolicy(table_conf={"data-file.external-paths": "/x"}))
    with pytest.raises(TableDefinitionError, match=r"table 'db\.t': --table-conf data-file.external"):
        prep.prepare([("db.t", _record(("id", int_()), ("v", string())))])
    # record-level expiry on an existing table: its time field must be one of the table's columns
    conf = {"record-level.expire-time": "1 d", "record-level.time-field": "ts"}
    prep = TablePreparer(catalog, TablePolicy(table_conf=conf))
    with pytest.raises(TableDefinitionError, match="Can not find time field ts for record level expire"):
        prep.prepare([("db.t", _record(("id", int_()), ("v", string())))])


def test_many_tables_list_the_catalog_once_and_a_schema_change_on_one_is_applied(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layouts are kept across batches (no schema read per table and batch), yet a column added to
    one of many tables is applied to it alone, and the next batch sees the reloaded table."""
    prep = TablePreparer(catalog, TablePolicy(), state_dir=str(Path(catalog.warehouse).parent / "ck"))
    base = _record(("id", int_()), ("v", varchar(5)))
    names = [f"db.t{i:02d}" for i in range(30)]
    listings: list[set[str]] = []  # the databases of each listing
    loads: list[str] = []
    listed, load = catalog.existing_tables, catalog.load_layout

    def existing_tables(databases: Sequence[str]) -> set[str]:
        listings.append(set(databases))
        return listed(databases)

    def load_layout(table: str) -> TableLayout | None:
        loads.append(table)
        return load(table)

    monkeypatch.setattr(catalog, "existing_tables", existing_tables)
    monkeypatch.setattr(catalog, "load_layout", load_layout)
    assert sorted(prep.prepare([(t, base) for t in names])) == names
    assert listings == [{"db"}]  # one listing for 30 new tables
    loads.clear()

    wider = _record(("id", int_()), ("v", varchar(5)), ("w", bigint()))
    layouts = prep.prepare([(t, wider if t == "db.t17" else base) for t in names])
    assert listings == [{"db"}] and loads == ["db.t17"]  # the altered table alone is read back
    assert layouts["db.t17"].field_types()["w"] == bigint()
    assert paimon_schema(catalog.warehouse, "db.t17") == [("id", "INT NOT NULL"), ("v", "VARCHAR(5)"), ("w", "BIGINT")]
    assert all("w" not in layouts[t].field_types() for t in names if t != "db.t17")
    assert paimon_schema(catalog.warehouse, "db.t03") == [("id", "INT NOT NULL"), ("v", "VARCHAR(5)")]

    # The next batch (the old schema's chunks, then the new one's) writes the altered table as it is now.
    layouts = prep.prepare([("db.t17", base), ("db.t17", wider), ("db.t03", base)])
    assert layouts["db.t17"].field_types()["w"] == bigint() and layouts["db.t17"].schema_id == 1
    assert loads == ["db.t17"] and listings == [{"db"}]

    # A restart (a new preparer) lists once, loads each table it meets, and knows the tables as its own.
    state = str(Path(catalog.warehouse).parent / "ck")
    again = TablePreparer(Catalog(catalog.warehouse), TablePolicy(), state_dir=state)
    assert again._ours("db.t05")
    assert again.prepare([(t, base) for t in names])["db.t17"].field_types()["w"] == bigint()


def _parquet_dictionaries(warehouse: str, skip: Collection[Path] = ()) -> set[bool]:
    """Whether each column chunk of the warehouse's data files (but those in ``skip``) has a dictionary page."""
    import pyarrow.parquet as pq

    out: set[bool] = set()
    for path in set(Path(warehouse).rglob("data-*.parquet")) - set(skip):
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            out |= {meta.row_group(g).column(c).has_dictionary_page for c in range(meta.num_columns)}
    return out


WIDE_CASES = [(127, {}, True), (128, {}, False), (300, {"parquet.enable.dictionary": "true"}, True)]


@pytest.mark.parametrize(("columns", "conf", "dictionary"), WIDE_CASES)
def test_a_wide_table_is_created_without_parquet_dictionaries_unless_table_conf_says(
    catalog: Catalog, columns: int, conf: dict[str, str], dictionary: bool
) -> None:
    """A wide table's writer keeps a dictionary per column: off from 128 columns, and its files have none."""
    fields = [("id", int_()), *((f"c{i}", varchar(8)) for i in range(1, columns))]
    TablePreparer(catalog, TablePolicy(table_conf=conf)).prepare([("db.t", _record(*fields))])
    assert _options(catalog, "db.t").get("parquet.enable.dictionary", "true") == str(dictionary).lower()
    names = [n for n, _ in fields]
    _write_rows(catalog, "db.t", names, 0)
    assert _parquet_dictionaries(catalog.warehouse) == {dictionary}
    # plain Parquet either way: both readers read it back
    expected = [{"id": i, **{n: "a" for n in names[1:]}} for i in (1, 2)]
    assert read_rust(catalog.warehouse, "db.t") == read_pypaimon(catalog.warehouse, "db.t") == expected


def _write_rows(catalog: Catalog, table: str, names: Sequence[str], commit_id: int) -> None:
    """Two rows of every column through pypaimon-rust's stream writer, committed."""
    import pyarrow as pa
    from pypaimon_rust.datafusion import PaimonCatalog

    batch = pa.RecordBatch.from_arrays(
        [pa.array([1, 2], pa.int32()), *(pa.array(["a", "a"]) for _ in names[1:])], names=list(names)
    )
    paimon = PaimonCatalog({"warehouse": catalog.warehouse}).get_table(table)
    write = paimon.new_stream_write_builder().with_commit_user("u").new_write()
    write.write_arrow(batch)
    commit = paimon.new_stream_write_builder().with_commit_user("u").new_commit()
    commit.commit(commit_id, write.prepare_commit(True, commit_id))
    write.close()


def test_a_table_that_grows_wide_or_is_met_wide_gets_the_wide_table_options_unless_it_sets_them(
    catalog: Catalog,
) -> None:
    """Tables made before lakecdc turned dictionaries off, or grown past 128 columns by schema
    evolution, get the option once; their next files have no dictionaries and read back as before."""
    narrow = [("id", int_()), *((f"c{i}", varchar(8)) for i in range(1, 10))]
    wide = [*narrow, *((f"w{i}", varchar(8)) for i in range(130))]
    prep = TablePreparer(catalog, TablePolicy())
    prep.prepare([("db.grows", _record(*narrow))])
    _write_rows(catalog, "db.grows", [n for n, _ in narrow], 0)
    old_files = set(Path(catalog.warehouse).rglob("data-*.parquet"))
    assert _parquet_dictionaries(catalog.warehouse) == {True}
    prep.prepare([("db.grows", _record(*wide))])  # a schema change makes it wide
    assert _options(catalog, "db.grows")["parquet.enable.dictionary"] == "false"
    _write_rows(catalog, "db.grows", [n for n, _ in wide], 1)
    assert _parquet_dictionaries(catalog.warehouse, skip=old_files) == {False}
    expected = [{"id": i, **{n: "a" for n, _ in wide[1:]}} for i in (1, 2)]
    assert read_rust(catalog.warehouse, "db.grows") == read_pypaimon(catalog.warehouse, "db.grows") == expected

    # a wide table made without the option (as before lakecdc set it) gets it when a job first meets it;
    # one whose options say otherwise keeps them
    catalog.create_table("db.old", wide, ["id"], [], {})
    catalog.create_table("db.kept", wide, ["id"], [], {"parquet.enable.dictionary": "true"})
    TablePreparer(catalog, TablePolicy()).prepare([("db.old", _record(*wide)), ("db.kept", _record(*wide))])
    assert _options(catalog, "db.old")["parquet.enable.dictionary"] == "false"
    assert _options(catalog, "db.kept")["parquet.enable.dictionary"] == "true"
    # --table-conf is applied first and wins
    conf = {"parquet.enable.dictionary": "true"}
    catalog.create_table("db.asked", wide, ["id"], [], {})
    TablePreparer(catalog, TablePolicy(table_conf=conf)).prepare([("db.asked", _record(*wide))])
    assert _options(catalog, "db.asked")["parquet.enable.dictionary"] == "true"
