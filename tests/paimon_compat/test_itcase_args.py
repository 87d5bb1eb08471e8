"""The replays' command lines (tests/paimon_compat/itcase_args.py), without servers: built in Paimon's
order, and read by lakecdc's CLI to the same settings in both of confuseArgs' spellings."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ingest.cli.main import parse_args, settings_from_args
from tests.paimon_compat.itcase_args import (
    basic_kafka_config,
    basic_mysql_config,
    basic_table_config,
    confuse_args,
    respell,
    sync_database_args,
    sync_table_args,
)

WH = "/tmp/paimon-itcase-warehouse"
T = basic_table_config(random.Random(7))
ALTER = {"metastore": "test-alter-table"}


def _mysql(**extra: str) -> dict[str, str]:
    return basic_mysql_config(3306, **{"database-name": "paimon_sync_table", **extra})


def _kafka(**extra: str) -> dict[str, str]:
    return basic_kafka_config("127.0.0.1:9092", **{"value.format": "canal-json", "topic": "t", **extra})


# One builder call per kind of Paimon ITCase (docs/research/paimon-options.md §3.3).
TABLE_SYNCS: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    ("mysql_sync_table", _mysql(**{"table-name": r"schema_evolution_\d+"}),
     {"catalog_conf": ALTER, "table_conf": T, "partition_keys": ("pt",), "primary_keys": ("pt", "_id")}),
    ("mysql_sync_table", _mysql(**{"table-name": "schema_evolution_multiple"}),
     {"type_mapping": ("allow-non-string-to-string",)}),
    ("mysql_sync_table", _mysql(**{"table-name": "schema_evolution_comment", "debezium.include.schema.comments": "true",
                                   "jdbc.properties.useInformationSchema": "true"}),
     {"catalog_conf": ALTER, "table_conf": T, "primary_keys": ("_id",)}),
    ("mysql_sync_table", _mysql(**{"table-name": "test_computed_column"}),
     {"partition_keys": ("_year_date",), "primary_keys": ("pk", "_year_date"),
      "computed_columns": ("_year_date=year(_date)", "_truncate_date=trUNcate(pk,2)", "_constant=cast(11,INT)",
                           "_date_format_datetime=date_format(_datetime,yyyy-MM-dd)")}),
    ("mysql_sync_table", _mysql(**{"database-name": "metadata", "table-name": "test_metadata_columns"}),
     {"primary_keys": ("pk",), "metadata_columns": ("table_name", "database_name", "op_ts")}),
    ("mysql_sync_table", _mysql(**{"table-name": "t"}), {"catalog_conf": {"case-sensitive": "false"},
                                                        "primary_keys": ("ID1", "PART"), "partition_keys": ("PART",)}),
    ("mysql_sync_table", _mysql(**{"table-name": "t"}),
     {"table_conf": T | {"bucket-key": "v1"}, "sync_primary_keys_from_source_schema": False}),
    ("kafka_sync_table", _kafka(), {"primary_keys": ("id",), "table_conf": T}),
    ("kafka_sync_table", _kafka(**{"scan.startup.mode": "specific-offsets",
                                   "scan.startup.specific-offsets": "partition:0,offset:1"}),
     {"partition_keys": ("pt",), "primary_keys": ("pt", "_id"), "table_conf": T}),
    ("kafka_sync_table", _kafka(), {"partition_keys": ("_year",), "primary_keys": ("_id", "_year"), "table_conf": T,
                                   "computed_columns": ("_year=year(_date)",), "metadata_column_prefix": "__kafka_",
                                   "metadata_columns": ("topic", "offset", "partition", "timestamp")}),
]  # fmt: skip

DATABASE_SYNCS: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    ("mysql_sync_database", _mysql(**{"database-name": "paimon_sync_database"}), {"table_conf": T}),
    ("mysql_sync_database", _mysql(), {"table_conf": T, "ignore_incompatible": True}),
    ("mysql_sync_database", _mysql(), {"table_conf": T, "table_prefix": "test_prefix_", "table_suffix": "_test_suffix",
                                       "including_tables": "t1|t2", "excluding_tables": "ta|sa"}),
    ("mysql_sync_database", _mysql(**{"scan.incremental.snapshot.chunk.size": "1"}),
     {"catalog_conf": ALTER, "table_conf": T, "including_tables": "t.+", "mode": "combined"}),
    ("mysql_sync_database", _mysql(), {"table_conf": T, "merge_shards": False, "mode": "divided"}),
    ("mysql_sync_database", _mysql(), {"table_conf": T, "mode": "combined", "metadata_columns": ("table_name",
                                                                                                 "database_name")}),
    ("mysql_sync_database", _mysql(), {"table_conf": T, "mode": "combined", "type_mapping": ("tinyint1-not-bool",)}),
    ("mysql_sync_database", _mysql(), {"table_conf": T, "partition_keys": ("part",), "primary_keys": ("k", "part")}),
    ("kafka_sync_database", _kafka(topic="t1;t2;t3"), {"table_conf": T}),
    ("kafka_sync_database", _kafka(), {"table_conf": T, "catalog_conf": {"case-sensitive": "false"},
                                       "multiple_table_partition_keys": {"tt_1": "k1,k2", "tt_2": "k1,k3"}}),
]  # fmt: skip


def _argv_cases() -> list[list[str]]:
    out = [sync_table_args(action, WH, conf, **builder) for action, conf, builder in TABLE_SYNCS]
    return out + [sync_database_args(action, WH, conf, **builder) for action, conf, builder in DATABASE_SYNCS]


CASES = _argv_cases()


def _settings(argv: list[str]) -> dict[str, Any]:
    args, _ = parse_args(argv)
    return settings_from_args(args).model_dump()


@pytest.mark.parametrize("argv", CASES, ids=[f"{a[0]}-{i}" for i, a in enumerate(CASES)])
def test_both_spellings_read_to_the_same_settings(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LAKECDC_AVAILABLE_NOW", "LAKECDC_CHECKPOINT"):
        monkeypatch.delenv(name, raising=False)
    underscores, hyphens = respell(argv, underscores=True), respell(argv, underscores=False)
    assert all("-" not in t[2:] for t in underscores[1::2]) and all("_" not in t[2:] for t in hyphens[1::2])
    assert _settings(underscores) == _settings(hyphens)


def test_table_sync_in_paimons_order() -> None:
    conf = {"hostname": "h", "table-name": "t"}
    argv = sync_table_args(
        "mysql_sync_table", WH, conf, catalog_conf=ALTER | {"case-sensitive": "false"}, table_conf={"bucket": "2"},
        partition_keys=("pt",), primary_keys=("pt", "_id"), type_mapping=("to-string",),
        computed_columns=("a=year(d)", "b=month(d)"), metadata_column_prefix="__", metadata_columns=("op_ts", "x"),
    )  # fmt: skip
    assert argv == [
        "mysql_sync_table", "--warehouse", WH, "--database", "default", "--table", "t",
        "--sync_primary_keys_from_source_schema", "true", "--mysql_conf", "hostname=h", "--mysql_conf", "table-name=t",
        "--catalog-conf", "case-sensitive=false", "--table-conf", "bucket=2", "--partition-keys", "pt",
        "--primary-keys", "pt,_id", "--type-mapping", "to-string", "--computed-column", "a=year(d)",
        "--computed-column", "b=month(d)", "--metadata-column-prefix", "__", "--metadata-column", "op_ts",
        "--metadata-column", "x", "--use_pkeys_from_source_for_paimon_schema",
    ]  # fmt: skip


def test_database_sync_in_paimons_order() -> None:
    argv = sync_database_args(
        "kafka_sync_database", WH, {"topic": "a"}, table_conf={"bucket": "1"}, ignore_incompatible=False,
        merge_shards=True, table_prefix="p_", including_tables="t.+", mode="combined", partition_keys=("k",),
        multiple_table_partition_keys={"tt": "k1,k2"}, metadata_columns=("table_name", "database_name"),
        computed_columns=("c=upper(v)",),
    )  # fmt: skip
    assert argv == [
        "kafka_sync_database", "--warehouse", WH, "--database", "default", "--kafka_conf", "topic=a",
        "--table-conf", "bucket=1", "--ignore-incompatible", "false", "--merge-shards", "true", "--table-prefix", "p_",
        "--including-tables", "t.+", "--mode", "combined", "--partition-keys", "k",
        "--multiple-table-partition-keys", "tt=k1,k2", "--metadata-column", "table_name,database_name",
        "--computed-column", "c=upper(v)",
    ]  # fmt: skip


def test_confuse_args_respells_keys_only_and_is_seeded() -> None:
    argv = ["mysql_sync_table", "--table-conf", "a_b-c=d_e-f", "--use_pkeys_from_source_for_paimon_schema"]
    assert respell(argv, underscores=True) == [
        "mysql_sync_table", "--table_conf", "a_b-c=d_e-f", "--use_pkeys_from_source_for_paimon_schema"
    ]  # fmt: skip
    assert respell(argv, underscores=False) == [
        "mysql-sync-table", "--table-conf", "a_b-c=d_e-f", "--use-pkeys-from-source-for-paimon-schema"
    ]  # fmt: skip
    picks = {tuple(confuse_args(argv, random.Random(seed))) for seed in range(20)}
    assert len(picks) == 2
    assert confuse_args(argv, random.Random(3)) == confuse_args(argv, random.Random(3))


def test_basic_configs_are_paimons() -> None:
    assert basic_mysql_config(3306) == {
        "hostname": "127.0.0.1", "port": "3306", "username": "paimonuser", "password": "paimonpw",
        "server-time-zone": "America/New_York", "scan.newly-added-table.enabled": "false",
    }  # fmt: skip
    assert basic_kafka_config("b:1") == {
        "properties.bootstrap.servers": "b:1", "properties.group.id": "paimon-tests",
        "properties.enable.auto.commit": "false", "properties.auto.offset.reset": "earliest",
    }  # fmt: skip
    for seed in range(30):
        table = basic_table_config(random.Random(seed))
        assert set(table) == {"bucket", "sink.parallelism"} and {*table.values()} <= {"1", "2", "3"}


def test_run_mode_settings_reach_the_job_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # run_action's way to keep Paimon's argv: lakecdc's own settings as LAKECDC_* variables, which the
    # CLI leaves to SyncSettings (it passes only what the command line gives).
    monkeypatch.setenv("LAKECDC_AVAILABLE_NOW", "true")
    monkeypatch.setenv("LAKECDC_CHECKPOINT", "/tmp/paimon-itcase-checkpoint")
    monkeypatch.setenv("LAKECDC_MAX_OFFSETS_PER_TRIGGER", "4")
    settings = _settings(confuse_args(CASES[0], random.Random(1)))
    assert settings["available_now"] is True and settings["checkpoint"] == "/tmp/paimon-itcase-checkpoint"
    assert settings["max_offsets_per_trigger"] == 4
