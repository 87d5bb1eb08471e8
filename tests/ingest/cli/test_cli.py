"""The command line accepts Paimon's action arguments in both spellings and refuses what it
cannot honour, before Spark starts."""

from __future__ import annotations

import pytest

from ingest.cli.main import main, parse_args, settings_from_args
from ingest.kafka.options import librdkafka_config, startup_mode, topic_list

KAFKA = [
    "--kafka_conf",
    "properties.bootstrap.servers=127.0.0.1:9092",
    "--kafka_conf",
    "topic=a;b",
    "--kafka_conf",
    "value.format=canal-json",
]


def _settings(argv: list[str]):  # type: ignore[no-untyped-def]
    args, _ = parse_args(argv)
    return settings_from_args(args)


def test_paimon_underscore_spelling_of_a_database_sync_script() -> None:
    s = _settings(
        [
            "kafka-sync-database",
            "--warehouse",
            "/tmp/wh",
            "--database",
            "ods",
            "--table_prefix",
            "ods_",
            "--table_suffix",
            "_rt",
            "--including_tables",
            "orders|customers",
            "--excluding_tables",
            "tmp_.*",
            "--primary_keys",
            "id, region",
            "--partition_keys",
            "region",
            "--type_mapping",
            "tinyint1-not-bool,to_nullable",
            "--table_conf",
            "bucket=4",
            "--catalog_conf",
            "metastore=filesystem",
            "--ignore_incompatible",
            "--sync_primary_keys_from_source_schema",
            "false",
            "--table_mapping",
            "orders=fact_orders",
            "--table_prefix_db",
            "shop=shop_",
            "--including_dbs",
            "shop|crm",
            "--multiple_table_partition_keys",
            "fact_orders=region,dt",
            *KAFKA,
        ]
    )
    assert s.action == "kafka-sync-database"
    assert (s.table_prefix, s.table_suffix) == ("ods_", "_rt")
    assert s.primary_keys == ("id", "region") and s.partition_keys == ("region",)
    assert s.table_conf == {"bucket": "4"} and s.catalog_conf == {"metastore": "filesystem"}
    assert topic_list(s.kafka_conf["topic"]) == ("a", "b")
    assert librdkafka_config(s.kafka_conf) == {"bootstrap.servers": "127.0.0.1:9092"}
    assert s.ignore_incompatible
    assert s.table_mapping == {"orders": "fact_orders"} and s.table_prefix_db == {"shop": "shop_"}
    assert s.including_dbs == "shop|crm"
    assert not s.sync_primary_keys_from_source_schema
    assert s.multiple_table_partition_keys == {"fact_orders": ("region", "dt")}
    assert startup_mode(s.kafka_conf) == "group-offsets"  # Paimon's default; no group id: the reset decides


def test_dash_spelling_and_spark_side_options() -> None:
    s = _settings(
        [
            "kafka-sync-table",
            "--warehouse",
            "/tmp/wh",
            "--database",
            "ods",
            "--table",
            "t",
            "--primary-keys",
            "id",
            "--kafka-conf",
            "properties.bootstrap.servers=127.0.0.1:9092",
            "--kafka-conf",
            "topic=a",
            "--kafka-conf",
            "value.format=canal-json",
            "--kafka-conf",
            "properties.group.id=g1",
            "--checkpoint",
            "/tmp/ck",
            "--trigger-interval",
            "500ms",
            "--max-offsets-per-trigger",
            "1000",
            "--available-now",
            "--spark-conf",
            "spark.master=local[2]",
        ]
    )
    assert s.table == "t" and s.checkpoint == "/tmp/ck"
    assert s.trigger_interval == "500 milliseconds"
    assert s.max_offsets_per_trigger == 1000 and s.available_now
    assert s.spark_conf == {"spark.master": "local[2]"}
    assert startup_mode(s.kafka_conf) == "group-offsets"  # Paimon's default


PU_GROUP = ["--table_conf", "merge-engine=partial-update", "--table_conf", "fields.g.sequence-group=a"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--computed_column", "y=yaer(ts)"], "unknown function 'yaer'"),
        (["--metadata_column", "topic,nope"], "unknown --metadata-column ['nope']"),
        (
            ["--table_conf", "merge-engine=first-row", "--table_conf", "changelog-producer=input"],
            "Only support 'none' and 'lookup' changelog-producer",
        ),
        (["--table_conf", "merge-engine=first-row"], "first-row cannot take the updates and deletes"),
        (["--table_conf", "merge-engine=partial-update"], "set ignore-delete=true, or partial-update.remove"),
        (
            ["--table_conf", "merge-engine=aggregation", "--table_conf", "fields.n.aggregate-function=max"],
            "aggregate function 'max' of field 'n' does not support retraction",
        ),
        (
            ["--table_conf", "merge-engine=aggregation", "--table_conf", "aggregation.remove-record-on-delete=true"],
            "aggregate across the delete",
        ),
        (
            [*PU_GROUP, "--table_conf", "fields.a.aggregate-function=max"],
            "aggregate function 'max' of field 'a' (sequence group of g) does not support retraction",
        ),
        (
            [*PU_GROUP, "--table_conf", "fields.b.aggregate-function=sum"],
            "Must use sequence group for aggregation functions but not found for field b",
        ),
        (
            [*PU_GROUP, "--table_conf", "fields.h.sequence-group=a"],
            "Field a is defined repeatedly by multiple groups",
        ),
        (["--catalog_conf", "case-sensitive=maybe"], "case-sensitive=maybe: expected true or false"),
        (["--table_conf", "bucket=-2"], "bucket=-2 is not supported"),
        (["--table_conf", "file.format=avro"], "lakecdc compacts Parquet files only"),
        (["--table_conf", "changelog.time-retained=soon"], "changelog.time-retained='soon' is not a duration"),
        (
            ["--table_conf", "changelog.num-retained.min=9", "--table_conf", "changelog.num-retained.max=3"],
            "changelog.num-retained.min (9) must not exceed changelog.num-retained.max (3)",
        ),
        (["--table_conf", "num-sorted-run.compaction-trigger=many"], "compaction-trigger='many' is not a whole"),
        (["--table_conf", "snapshot.time-retained=soon"], "snapshot.time-retained='soon' is not a duration"),
        (["--table_conf", "record-level.expire-time=1 d"], "You should set time field for record-level expire"),
        (["--table_conf", "record-level.expire-time=soon"], "record-level.expire-time='soon' is not a duration"),
        (["--table_conf", "sequence.snapshot-ordering=true"], "rows would merge by sequence number only"),
        (["--table_conf", "rowkind.field=op"], "writes each change's row kind itself"),
        (["--table_conf", "primary-key=id"], "give --primary-keys"),
        (["--table_conf", "partition=dt"], "give --partition-keys"),
        (["--table_conf", "data-file.external-paths=/x"], "files in the table directory only"),
        (["--table_conf", "scan.snapshot-id=3"], "scan.snapshot-id is a read option"),
        (["--table_conf", "incremental-between=1,2"], "incremental-between is a read option"),
        (["--table_conf", "sequence.field.sort-order=sideways"], "expected ascending or descending"),
        (["--type_mapping", "to-everything"], "unknown --type-mapping option 'to-everything'"),
        (["--kafka_conf", "scan.startup.mode=sometime"], "scan.startup.mode='sometime' must be one of"),
        (["--kafka_conf", "properties.sasl.jaas.config=x"], "--kafka-conf properties.sasl.jaas.config is refused"),
        (["--kafka_conf", "scan.startup.mdoe=latest-offset"], "did you mean scan.startup.mode"),
        (["--kafka_conf", "topic-pattern=a.*"], "only set one of the following options: topic,topic-pattern."),
        (["--including_tables", "(unclosed"], "not a valid regular expression"),
        (["--table_mapping", "a"], "--table-mapping expects key=value"),
        (["--including_dbs", "(bad"], "not a valid regular expression"),
    ],
)
def test_refused_before_start(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kafka_sync_database", "--warehouse", "/tmp/wh", "--database", "ods", *KAFKA, *extra]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_debezium_avro_without_a_registry_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kafka_sync_table", "--warehouse", "/w", "--database", "d", "--table", "t"]
    argv += ["--kafka_conf", "properties.bootstrap.servers=x", "--kafka_conf", "topic=t"]
    argv += ["--kafka_conf", "value.format=debezium-avro"]
    assert main(argv) == 2
    assert "value.format=debezium-avro needs --kafka-conf schema.registry.url" in capsys.readouterr().err


def test_table_sync_partition_keys_must_be_primary_keys(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kafka_sync_table", "--warehouse", "/w", "--database", "d", "--table", "t", *KAFKA]
    argv += ["--primary_keys", "id", "--partition_keys", "dt"]
    assert main(argv) == 2
    assert "partition keys ['dt'] must be part of the primary keys" in capsys.readouterr().err
