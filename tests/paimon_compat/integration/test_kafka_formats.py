"""Every Kafka CDC format end to end (real broker, Spark and Paimon files), against the expected
results of Apache Paimon's ``KafkaSyncTableActionITCase`` for the same sample messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from tests.paimon_compat.itcase_args import basic_table_config, kafka_sync_database, kafka_sync_table
from tests.paimon_compat.samples import SAMPLES, sample_messages
from tests.paimon_read import java_rows, paimon_schema

TABLE = "default.t"  # ActionITCaseBase's database; the table keeps the replays' short name


def _settings(warehouse: str, kafka: LocalKafka, topic: str, fmt: str, **builder: Any) -> Callable[[], int]:
    """kafka_sync_table with Paimon's command line (getBasicKafkaConfig(), value.format, topic; by default
    ``--primary-keys id``), through lakecdc's CLI; calling the result runs it once: its exit code."""
    builder.setdefault("primary_keys", ("id",))
    conf = {"value.format": fmt, "topic": topic}
    return lambda: kafka_sync_table(warehouse, kafka.bootstrap, conf, **builder)


def _produce(kafka: LocalKafka, topic: str, path: str) -> None:
    messages = sample_messages(SAMPLES / path)
    assert messages, path
    kafka.produce(topic, [(None, m) for m in messages])


# KafkaSyncTableActionITCase#testSchemaEvolutionImpl (types STRING: these formats carry none,
# or — debezium without its schema envelope — none that Paimon uses).
GENERIC_STEPS = [
    (
        ["id", "name", "description", "weight"],
        ["+I[101, scooter, Small 2-wheel scooter, 3.14]", "+I[102, car battery, 12V car battery, 8.1]"],
    ),
    (
        ["id", "name", "description", "weight", "age"],
        [
            "+I[101, scooter, Small 2-wheel scooter, 3.14, NULL]",
            "+I[102, car battery, 12V car battery, 8.1, NULL]",
            "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18]",
            "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24]",
        ],
    ),
    (
        ["id", "name", "description", "weight", "age", "address"],
        [
            "+I[102, car battery, 12V car battery, 8.1, NULL, NULL]",
            "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18, NULL]",
            "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24, NULL]",
            "+I[105, hammer, 14oz carpenter's hammer, 0.875, NULL, Beijing]",
            "+I[107, rocks, box of assorted rocks, 5.3, NULL, NULL]",
        ],
    ),
]


@pytest.mark.parametrize("fmt", ["debezium", "maxwell", "ogg", "aws-dms"])
def test_schema_evolution_per_format(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, fmt: str) -> None:
    kafka.create_topic(topic_name, 1)
    job = _settings(warehouse, kafka, topic_name, f"{fmt}-json", table_conf=basic_table_config(),
                    settings={"max_offsets_per_trigger": "3"})  # fmt: skip
    for step, (columns, rows) in enumerate(GENERIC_STEPS, start=1):
        _produce(kafka, topic_name, f"{fmt}/table/schemaevolution/{fmt}-data-{step}.txt")
        assert job() == 0
        schema = paimon_schema(warehouse, TABLE)
        assert schema == [("id", "STRING NOT NULL")] + [(c, "STRING") for c in columns[1:]], f"after step {step}"
        assert java_rows(warehouse, TABLE) == sorted(rows), f"{fmt} after step {step}"


def test_debezium_with_schema_envelope_types_and_evolution(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # KafkaSyncTableActionITCase#runSingleTableSchemaEvolutionWithSchemaIncludeRecord("schemaevolution", "debezium")
    kafka.create_topic(topic_name, 1)
    job = _settings(warehouse, kafka, topic_name, "debezium-json", table_conf=basic_table_config())
    steps = [
        ("INT", ["+I[101, scooter, Small 2-wheel scooter, 3.14]"], 4),
        (
            "INT",
            [
                "+I[101, scooter, Small 2-wheel scooter, 3.14, NULL]",
                "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18]",
            ],
            5,
        ),
        (
            "BIGINT",
            [
                "+I[101, scooter, Small 2-wheel scooter, 3.14, NULL]",
                "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18]",
                "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24]",
            ],
            5,
        ),
        (
            "BIGINT",  # int64 -> int32 is ignored: the table keeps BIGINT
            [
                "+I[101, scooter, Small 2-wheel scooter, 3.14, NULL]",
                "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18]",
                "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24]",
                "+I[105, hammer, 14oz carpenter's hammer, 0.875, 24]",
            ],
            5,
        ),
    ]
    for step, (age_type, rows, width) in enumerate(steps, start=1):
        _produce(kafka, topic_name, f"debezium/table/schema/schemaevolution/debezium-data-{step}.txt")
        assert job() == 0
        expected = [("id", "INT NOT NULL"), ("name", "STRING"), ("description", "STRING"), ("weight", "DOUBLE")]
        if width == 5:
            expected.append(("age", age_type))
        assert paimon_schema(warehouse, TABLE) == expected, f"after step {step}"
        assert java_rows(warehouse, TABLE) == sorted(rows), f"after step {step}"
    # int64 -> string cannot convert: the job stops with Paimon's message, naming the column and both types.
    _produce(kafka, topic_name, "debezium/table/schema/schemaevolution/debezium-data-5.txt")
    capsys.readouterr()
    assert job() != 0
    err = capsys.readouterr().err
    assert "Cannot convert field age from type BIGINT to STRING of Paimon table" in err
    assert "column 'age': the source type changed from BIGINT to STRING" in err


def test_json_format_with_metadata_columns(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "json/table/schemaevolution/json-data-1.txt")
    job = _settings(
        warehouse,
        kafka,
        topic_name,
        "json",
        primary_keys=("a",),
        metadata_columns=("topic", "partition", "offset"),
        metadata_column_prefix="__kafka_",
    )
    assert job() == 0
    schema = paimon_schema(warehouse, TABLE)
    assert schema[0] == ("a", "STRING NOT NULL")
    assert schema[-3:] == [("__kafka_topic", "STRING"), ("__kafka_partition", "INT"), ("__kafka_offset", "BIGINT")]
    rows = java_rows(warehouse, TABLE)
    assert rows and all(f", {topic_name}, 0, " in r for r in rows)


def test_computed_columns_as_partition_key(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "canal/table/computedcolumn/canal-data-1.txt")
    job = _settings(
        warehouse,
        kafka,
        topic_name,
        "canal-json",
        primary_keys=("_id", "pt"),
        partition_keys=("pt",),
        computed_columns=("_year=year(_date)", "pt=date_format(_date, yyyyMM)", "short=truncate(pt, 100)"),
    )
    assert job() == 0
    assert paimon_schema(warehouse, TABLE) == [
        ("_id", "INT NOT NULL"),
        ("_date", "DATE"),
        ("_year", "INT"),
        ("pt", "STRING NOT NULL"),
        ("short", "STRING"),
    ]
    rows = java_rows(warehouse, TABLE)
    assert rows[0] == "+I[1, 19439, 2023, 202303, 202303]"  # truncate of a short string keeps it (no throw)
    from pypaimon import CatalogFactory

    assert CatalogFactory.create({"warehouse": warehouse}).get_table(TABLE).table_schema.partition_keys == ["pt"]


def test_aliyun_insert_update_delete_database_sync(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    for name in ("event-insert.txt", "event-update-in-one.txt"):
        _produce(kafka, topic_name, f"aliyun/table/event/{name}")
    conf = {"value.format": "aliyun-json", "topic": topic_name}
    assert kafka_sync_database(warehouse, kafka.bootstrap, conf) == 0
    target = "default.sync_test_table"
    assert paimon_schema(warehouse, target) == [
        ("id", "BIGINT NOT NULL"),
        ("val", "DOUBLE"),
        ("name", "STRING"),
        ("create_time", "TIMESTAMP(3)"),
    ]
    # DATE values are epoch milliseconds in this format: stored as the UTC instant (see README)
    assert java_rows(warehouse, target) == ["+I[2, 2.2, a, 2024-11-15T08:58:34]"]
