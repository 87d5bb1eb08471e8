"""Apache Paimon's Kafka ITCases that expect the action to fail at start-up, replayed with Paimon's exact
command lines (``tests/paimon_compat/itcase_args.py``): lakecdc must fail in the same case, with Paimon's
message in its output (docs/research/paimon-options.md §4).

- ``testNotSupportFormat`` (``KafkaCanalSyncTableActionITCase`` and the abstract ``KafkaSyncTableActionITCase``
  its per-format subclasses run): ``value.format=togg-json``.
- ``testTopicIsEmpty`` (``KafkaSyncDatabaseActionITCase`` per format, ``KafkaCanalSyncDatabaseActionITCase``):
  database sync with neither ``topic`` nor ``topic-pattern``.
- ``testKafkaNoNonDdlData`` (``KafkaCanalSyncTableActionITCase``): table sync, no target table, a topic
  holding DDL messages only: the schema cannot be discovered.

None of them gets as far as Spark: the checks run before the streaming query starts.
"""

from __future__ import annotations

from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from tests.paimon_compat.itcase_args import basic_table_config, kafka_sync_database, kafka_sync_table
from tests.paimon_compat.samples import SAMPLES, sample_messages

CANAL_TABLE = SAMPLES / "canal" / "table"


def _produce(kafka: LocalKafka, topic: str, path: Any) -> None:
    messages = sample_messages(path)
    assert messages, path
    kafka.produce(topic, [(None, m) for m in messages])


def _failure(capsys: pytest.CaptureFixture[str], code: int) -> str:
    """The action's stderr, after checking that it failed (a non-zero exit code)."""
    err = capsys.readouterr().err
    assert code != 0, err
    return err


# (the sample the test writes first, the builder's keys): the canal class's own test, then the abstract
# class's (KafkaSyncTableActionITCase#testNotSupportFormat(format)) for one of its formats.
NOT_SUPPORT_FORMAT_CASES = [
    pytest.param(
        "canal/table/schemaevolution/canal-data-1.txt",
        {"partition_keys": ("pt",), "primary_keys": ("pt", "_id")},
        id="canal",
    ),
    pytest.param(
        "debezium/table/schemaevolution/debezium-data-1.txt", {"primary_keys": ("id",)}, id="abstract-debezium"
    ),
]


@pytest.mark.parametrize(("sample", "keys"), NOT_SUPPORT_FORMAT_CASES)
def test_not_support_format(
    kafka: LocalKafka,
    warehouse: str,
    topic_name: str,
    capsys: pytest.CaptureFixture[str],
    sample: str,
    keys: dict[str, Any],
) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, SAMPLES / sample)
    capsys.readouterr()
    conf = {"value.format": "togg-json", "topic": topic_name}
    code = kafka_sync_table(warehouse, kafka.bootstrap, conf, table_conf=basic_table_config(), **keys)
    assert "This format: togg-json is not supported." in _failure(capsys, code)


@pytest.mark.parametrize("fmt", ["canal-json", "debezium-json", "maxwell-json", "ogg-json", "aws-dms-json"])
def test_topic_is_empty(kafka: LocalKafka, warehouse: str, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    # KafkaSyncDatabaseActionITCase#testTopicIsEmpty: getBasicKafkaConfig() and value.format only; the
    # aws-dms subclass's builder adds --primary-keys id.
    builder: dict[str, Any] = {"primary_keys": ("id",)} if fmt == "aws-dms-json" else {}
    capsys.readouterr()
    code = kafka_sync_database(warehouse, kafka.bootstrap, {"value.format": fmt}, **builder)
    err = _failure(capsys, code)
    assert "kafka_conf must and can only set one of the following options: topic,topic-pattern." in err


def test_kafka_no_non_ddl_data(
    kafka: LocalKafka, warehouse: str, topic_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Paimon's default retry window (31 s of sleeps, as MessageQueueSchemaUtils), as the ITCase waits it out:
    # the verdict comes after the DDL messages were read, not from a topic read too early.
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, CANAL_TABLE / "nononddldata" / "canal-data-1.txt")
    capsys.readouterr()
    conf = {"value.format": "canal-json", "topic": topic_name}
    keys: dict[str, Any] = {"partition_keys": ("pt",), "primary_keys": ("pt", "_id")}
    code = kafka_sync_table(warehouse, kafka.bootstrap, conf, table_conf=basic_table_config(), **keys)
    err = _failure(capsys, code)
    assert (
        f"Could not get metadata from server, topic: {topic_name}. If this topic is not empty, please check the "
        "configuration of synchronization job. Otherwise, you should create the Paimon table first."
    ) in err
