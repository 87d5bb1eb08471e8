"""Apache Paimon's ``KafkaCanalSyncDatabaseActionITCase``, replayed: Paimon's messages (read in place), exact
command lines (``tests/paimon_compat/itcase_args.py``) and expected tables.

Paimon's job runs on while the test writes the next files; a replay runs the job once per step on the
same checkpoint. Topic names get the test's prefix (the broker is shared by the session, so Paimon's
``schema_evolution_.+`` pattern would match other tests' topics). ``testTopicIsEmpty`` is in
``test_kafka_itcase_failures.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from schema_evolution.types import parse_type
from sinks.table.catalog import Catalog
from tests.paimon_compat.itcase_args import basic_table_config, itcase_random, kafka_sync_database
from tests.paimon_compat.samples import SAMPLES, sample_messages
from tests.paimon_read import java_rows, paimon_schema

CANAL_DATABASE = SAMPLES / "canal" / "database"


def _produce(kafka: LocalKafka, topic: str, sample: str) -> None:
    messages = sample_messages(CANAL_DATABASE / sample)
    if messages:  # some of Paimon's later files hold only the licence header
        kafka.produce(topic, [(None, m) for m in messages])


def _job(warehouse: str, kafka: LocalKafka, conf: dict[str, str], **builder: Any) -> Callable[[], int]:
    """kafka_sync_database with Paimon's command line (getBasicKafkaConfig(), value.format=canal-json,
    ``conf``); calling the result runs it once over what the topics hold: its exit code."""
    conf = {"value.format": "canal-json", **conf}
    return lambda: kafka_sync_database(warehouse, kafka.bootstrap, conf, **builder)


def _tables(warehouse: str) -> set[str]:
    from pypaimon import CatalogFactory

    return set(CatalogFactory.create({"warehouse": warehouse}).list_tables("default"))


# testSchemaEvolutionImpl: after canal-data-N of every topic, t1's and t2's schema and rows.
SCHEMA_EVOLUTION_STEPS = [
    (
        [("k", "INT NOT NULL"), ("v1", "VARCHAR(10)")],
        ["+I[1, one]", "+I[3, three]"],
        [("k1", "INT NOT NULL"), ("k2", "VARCHAR(10) NOT NULL"), ("v1", "INT"), ("v2", "BIGINT")],
        ["+I[2, two, 20, 200]", "+I[4, four, 40, 400]"],
    ),
    (
        [("k", "INT NOT NULL"), ("v1", "VARCHAR(10)"), ("v2", "INT")],
        ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]", "+I[7, seven, 70]"],
        [("k1", "INT NOT NULL"), ("k2", "VARCHAR(10) NOT NULL"), ("v1", "INT"), ("v2", "BIGINT"),
         ("v3", "VARCHAR(10)")],
        ["+I[2, two, 20, 200, NULL]", "+I[4, four, 40, 400, NULL]", "+I[6, six, 60, 600, string_6]",
         "+I[8, eight, 80, 800, string_8]"],
    ),
    (
        [("k", "INT NOT NULL"), ("v1", "VARCHAR(10)"), ("v2", "BIGINT")],
        ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]", "+I[7, seven, 70]",
         "+I[9, nine, 9000000000000]"],
        [("k1", "INT NOT NULL"), ("k2", "VARCHAR(10) NOT NULL"), ("v1", "INT"), ("v2", "BIGINT"),
         ("v3", "VARCHAR(20)")],
        ["+I[2, two, 20, 200, NULL]", "+I[4, four, 40, 400, NULL]", "+I[6, six, 60, 600, string_6]",
         "+I[8, eight, 80, 800, string_8]", "+I[10, ten, 100, 1000, long_long_string_10]"],
    ),
]  # fmt: skip


def _check_steps(
    warehouse: str, kafka: LocalKafka, job: Callable[[], int], topics: Sequence[str], folder: str,
    files: int, steps: list[tuple[Any, ...]], tables: tuple[str, str],
) -> None:  # fmt: skip
    """Paimon's loop: canal-data-N of topic i (into topics[i], or all into the one topic), then both tables."""
    for n, (schema1, rows1, schema2, rows2) in enumerate(steps, start=1):
        if n > 1:
            for i in range(files):
                _produce(kafka, topics[i if len(topics) > 1 else 0], f"{folder}/topic{i}/canal-data-{n}.txt")
        assert job() == 0
        for table, schema, rows in ((tables[0], schema1, rows1), (tables[1], schema2, rows2)):
            assert paimon_schema(warehouse, f"default.{table}") == schema, f"{table} after step {n}"
            assert java_rows(warehouse, f"default.{table}") == sorted(rows), f"{table} after step {n}"


@pytest.mark.parametrize("shape", ["MultiTopic-topic", "MultiTopic-topic-pattern", "OneTopic"])
def test_schema_evolution(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, shape: str) -> None:
    # testSchemaEvolutionMultiTopic (Paimon picks topic or topic-pattern at random: both run here),
    # testSchemaEvolutionOneTopic
    names = [f"{topic_name}_schema_evolution_{i}" for i in range(3)]
    topics = [f"{topic_name}_schema_evolution"] if shape == "OneTopic" else names
    for topic in topics:
        kafka.create_topic(topic, 1)
    for i in range(3):
        _produce(kafka, topics[i if len(topics) > 1 else 0], f"schemaevolution/topic{i}/canal-data-1.txt")
    if shape == "MultiTopic-topic-pattern":
        conf = {"topic-pattern": f"{topic_name}_schema_evolution_.+"}
    else:
        conf = {"topic": ";".join(topics)}
    job = _job(warehouse, kafka, conf, table_conf=basic_table_config())
    _check_steps(warehouse, kafka, job, topics, "schemaevolution", 3, SCHEMA_EVOLUTION_STEPS, ("t1", "t2"))


AFFIX_STEPS = [
    ([("k1", "INT NOT NULL"), ("v0", "VARCHAR(10)")], ["+I[1, one]", "+I[3, three]"],
     [("k2", "INT NOT NULL"), ("v0", "VARCHAR(10)")], ["+I[2, two]", "+I[4, four]"]),
    ([("k1", "INT NOT NULL"), ("v0", "VARCHAR(10)"), ("v1", "INT")],
     ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]", "+I[7, seven, 70]"],
     [("k2", "INT NOT NULL"), ("v0", "VARCHAR(10)"), ("v1", "VARCHAR(10)")],
     ["+I[2, two, NULL]", "+I[4, four, NULL]", "+I[6, six, s_6]", "+I[8, eight, s_8]"]),
    ([("k1", "INT NOT NULL"), ("v0", "VARCHAR(10)"), ("v1", "BIGINT")],
     ["+I[1, one, NULL]", "+I[3, three, NULL]", "+I[5, five, 50]", "+I[7, seven, 70]", "+I[9, nine, 9000000000000]"],
     [("k2", "INT NOT NULL"), ("v0", "VARCHAR(10)"), ("v1", "VARCHAR(20)")],
     ["+I[2, two, NULL]", "+I[4, four, NULL]", "+I[6, six, s_6]", "+I[8, eight, s_8]", "+I[10, ten, long_s_10]"]),
]  # fmt: skip


@pytest.mark.parametrize("shape", ["MultiTopic", "OneTopic"])
def test_table_affix(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, shape: str) -> None:
    # testTableAffixMultiTopic / testTableAffixOneTopic: test_prefix_t1_test_suffix exists beforehand
    fields = [("k1", parse_type("INT")), ("v0", parse_type("VARCHAR(10)"))]
    Catalog(warehouse).create_table("default.test_prefix_t1_test_suffix", fields, ["k1"], [], {})
    topics = [f"{topic_name}_prefix_suffix_{i}" for i in range(2)] if shape == "MultiTopic" else [topic_name]
    for topic in topics:
        kafka.create_topic(topic, 1)
    for i in range(2):
        _produce(kafka, topics[i if len(topics) > 1 else 0], f"prefixsuffix/topic{i}/canal-data-1.txt")
    including = "t1|t2" if itcase_random("including").getrandbits(1) else ".*"
    job = _job(
        warehouse, kafka, {"topic": ";".join(topics)}, table_prefix="test_prefix_", table_suffix="_test_suffix",
        table_conf=basic_table_config(), including_tables=including,
    )  # fmt: skip
    tables = ("test_prefix_t1_test_suffix", "test_prefix_t2_test_suffix")
    _check_steps(warehouse, kafka, job, topics, "prefixsuffix", 2, AFFIX_STEPS, tables)


INCLUDE_CASES = [
    # includingAndExcludingTablesImpl(including, excluding, existing, not existing)
    pytest.param("flink|paimon.+", None, {"flink", "paimon_1", "paimon_2"}, {"ignore"}, id="IncludingTables"),
    pytest.param(None, "flink|paimon.+", {"ignore"}, {"flink", "paimon_1", "paimon_2"}, id="ExcludingTables"),
    pytest.param("flink|paimon.+", "paimon_1", {"flink", "paimon_2"}, {"paimon_1", "ignore"},
                 id="IncludingAndExcludingTables"),
]  # fmt: skip


@pytest.mark.parametrize(("including", "excluding", "present", "absent"), INCLUDE_CASES)
def test_including_and_excluding_tables(
    spark: Any,
    kafka: LocalKafka,
    warehouse: str,
    topic_name: str,
    including: str | None,
    excluding: str | None,
    present: set[str],
    absent: set[str],
) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "include/topic0/canal-data-1.txt")
    job = _job(
        warehouse, kafka, {"topic": topic_name}, including_tables=including, excluding_tables=excluding,
        table_conf=basic_table_config(),
    )  # fmt: skip
    assert job() == 0
    tables = _tables(warehouse)
    assert present <= tables and not absent & tables, tables


def test_type_mapping_to_string(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "tostring/canal-data-1.txt")
    job = _job(warehouse, kafka, {"topic": topic_name}, table_conf=basic_table_config(), type_mapping=("to-string",))
    assert job() == 0
    assert paimon_schema(warehouse, "default.t1") == [("k1", "STRING NOT NULL"), ("v0", "STRING"), ("v1", "STRING")]
    assert java_rows(warehouse, "default.t1") == ["+I[5, five, 50]", "+I[7, seven, 70]"]


def test_cannot_synchronize_incomplete_json(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A record without database and table: the job stops with Paimon's text up to the record, which lakecdc
    # names by topic, partition and offset (Paimon prints a newline, then Java's CdcRecord.toString()).
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "incomplete/canal-data-1.txt")
    capsys.readouterr()
    assert _job(warehouse, kafka, {"topic": topic_name}, table_conf=basic_table_config())() != 0
    err = capsys.readouterr().err
    assert "Cannot synchronize record when database name or table name is unknown. Invalid record is:" in err
