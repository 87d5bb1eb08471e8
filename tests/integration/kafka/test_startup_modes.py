"""``scan.startup.mode`` end to end (the cases of Paimon's testStarUpOption*, on our own canal messages in
tests/data/canal/startup/), plus partitions added to a topic while a job runs."""

from __future__ import annotations

import time
from typing import Any

from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import run
from tests.conftest import TESTS, sample_messages
from tests.paimon_read import java_rows

FILES = TESTS / "data" / "canal" / "startup"
TABLE = "ods.t"
FIRST = ["+I[3, 10, ten]", "+I[3, 11, eleven]"]
SECOND = ["+I[3, 12, twelve]", "+I[3, 13, thirteen]"]


def _settings(warehouse: str, kafka: LocalKafka, topic: str, checkpoint: str, **conf: str) -> SyncSettings:
    return SyncSettings(
        action="kafka-sync-table",
        warehouse=warehouse,
        database="ods",
        table="t",
        primary_keys=("region", "id"),
        partition_keys=("region",),
        kafka_conf={
            "properties.bootstrap.servers": kafka.bootstrap,
            "topic": topic,
            "value.format": "canal-json",
            **conf,
        },
        checkpoint=checkpoint,
        available_now=True,
    )


def _produce(kafka: LocalKafka, topic: str, name: str) -> None:
    kafka.produce(topic, [(None, m) for m in sample_messages(FILES / name)])


def test_specific_offsets(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "first.txt")
    conf = {"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:1"}
    run(_settings(warehouse, kafka, topic_name, f"{warehouse}/ck", **conf))
    assert java_rows(warehouse, TABLE) == ["+I[3, 11, eleven]"]


def test_latest_offset_then_continue(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "first.txt")
    settings = _settings(warehouse, kafka, topic_name, f"{warehouse}/ck", **{"scan.startup.mode": "latest-offset"})
    result = run(settings)
    assert result.stats.events == 0
    _produce(kafka, topic_name, "second.txt")
    run(settings)  # the same checkpoint: continues where the first run started
    assert java_rows(warehouse, TABLE) == sorted(SECOND)


def test_timestamp(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "first.txt")
    time.sleep(1.0)
    start = int(time.time() * 1000)
    time.sleep(0.2)
    _produce(kafka, topic_name, "second.txt")
    conf = {"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": str(start)}
    run(_settings(warehouse, kafka, topic_name, f"{warehouse}/ck", **conf))
    assert java_rows(warehouse, TABLE) == sorted(SECOND)


def test_group_offsets_resume_where_the_group_committed(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    _produce(kafka, topic_name, "first.txt")
    group = {"properties.group.id": f"g-{topic_name}"}
    # No committed offsets yet: group-offsets (the default with a group id) falls back to earliest.
    # Spark tells the source a micro-batch is done when it plans the next one, so the group's offsets
    # trail the checkpoint by one micro-batch: after two batches of one message, offset 1 is committed.
    first = _settings(warehouse, kafka, topic_name, f"{warehouse}/ck1", **group)
    run(first.model_copy(update={"max_offsets_per_trigger": 1}))
    assert java_rows(warehouse, TABLE) == sorted(FIRST)
    _produce(kafka, topic_name, "second.txt")
    # A new checkpoint in another warehouse: only the group's committed offset says where to start.
    other = f"{warehouse}-2"
    run(_settings(other, kafka, topic_name, f"{other}/ck", **group))
    assert java_rows(other, TABLE) == sorted(["+I[3, 11, eleven]", *SECOND])


def test_topics_matching_the_pattern_later_are_read_from_their_start(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    # The test broker cannot add partitions to a topic (no CreatePartitions); a new topic matching
    # topic-pattern takes the same path: unknown partitions join at their earliest offset.
    kafka.create_topic(f"{topic_name}_a", 1)
    _produce(kafka, f"{topic_name}_a", "first.txt")
    settings = _settings(warehouse, kafka, "placeholder", f"{warehouse}/ck")
    conf = {k: v for k, v in settings.kafka_conf.items() if k != "topic"}
    settings = settings.model_copy(update={"kafka_conf": {**conf, "topic-pattern": f"{topic_name}_.*"}})
    run(settings)
    assert java_rows(warehouse, TABLE) == sorted(FIRST)
    kafka.create_topic(f"{topic_name}_b", 1)
    _produce(kafka, f"{topic_name}_b", "second.txt")
    run(settings)  # the new topic's partition joins at its earliest offset,
    run(settings)  # and its data is read from the next micro-batch on
    assert java_rows(warehouse, TABLE) == sorted(FIRST + SECOND)
