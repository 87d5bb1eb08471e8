"""A Kafka topic deleted and re-created under a job's checkpoint (#23, item 2): the checkpoint's offsets
now point into other data. Before, ``--available-now`` read the new topic from the old offset on and
exited 0 with the messages before it missing (here 1,000 of 1,500). Now the job stops naming topic,
partition and both offsets; with ``scan.offset-reset-on-loss=earliest`` it reads the new topic whole."""

from __future__ import annotations

import time
from typing import Any

import pytest

from deploy.canal_stream import generate
from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.paimon_read import read_rust


def _settings(warehouse: str, kafka: LocalKafka, topic: str, **conf: str) -> SyncSettings:
    return SyncSettings(
        action="kafka-sync-database",
        warehouse=warehouse,
        database="ods",
        kafka_conf={
            "properties.bootstrap.servers": kafka.bootstrap,
            "topic": topic,
            "value.format": "canal-json",
            **conf,
        },
        checkpoint=f"{warehouse}/checkpoint",
        available_now=True,
        max_offsets_per_trigger=600,
    )


def _recreate(kafka: LocalKafka, topic: str) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    for future in admin.delete_topics([topic]).values():
        future.result(timeout=30)
    deadline = time.monotonic() + 30
    while topic in admin.list_topics(timeout=10).topics:
        assert time.monotonic() < deadline, f"topic {topic} was not deleted"
        time.sleep(0.2)
    kafka.create_topic(topic, 1)


def _ids(warehouse: str, table: str) -> list[int]:
    return [int(r["id"]) for r in read_rust(warehouse, table)]


def test_a_recreated_topic_stops_the_job_or_is_read_from_its_start(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    old = generate(tables=("orders",), keys=1000, updates=0, seed=21).prefix(1000)  # inserts only
    new = generate(tables=("customers",), keys=1500, updates=0, seed=22).prefix(1500)
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, old.messages)
    run(_settings(warehouse, kafka, topic_name))
    assert _ids(warehouse, "ods.orders") == list(range(1000))

    _recreate(kafka, topic_name)
    kafka.produce(topic_name, new.messages)  # the new topic holds more than the checkpoint had read
    for _ in range(2):  # a restart stops the same way: nothing is committed or skipped meanwhile
        with pytest.raises(JobFailed) as info:
            run(_settings(warehouse, kafka, topic_name))
        message = str(info.value)
        assert f"Kafka topic '{topic_name}', partition 0: checkpointed next offset 1000" in message
        assert "0 (earliest) to 1500 (end)" in message and "deleted and re-created" in message
        assert "scan.offset-reset-on-loss=earliest" in message
    assert not _table_exists(warehouse, "customers")

    run(_settings(warehouse, kafka, topic_name, **{"scan.offset-reset-on-loss": "earliest"}))
    assert _ids(warehouse, "ods.customers") == list(range(1500))  # all of the new topic, none skipped
    assert _ids(warehouse, "ods.orders") == list(range(1000))
    # the checkpoint now holds the new topic's id: a plain restart continues without complaint
    kafka.produce(topic_name, generate(tables=("items",), keys=100, updates=0, seed=23).prefix(100).messages)
    run(_settings(warehouse, kafka, topic_name))
    assert _ids(warehouse, "ods.items") == list(range(100))
    assert _ids(warehouse, "ods.customers") == list(range(1500))


def _table_exists(warehouse: str, table: str) -> bool:
    from pathlib import Path

    return (Path(warehouse) / "ods.db" / table / "snapshot").exists()
