"""The Kafka data source on real Spark against a real Kafka-protocol broker."""

from __future__ import annotations

from typing import Any

from deploy.local_kafka import LocalKafka
from ingest.kafka.source import KafkaSourceSpec


def _read_all(spark: Any, kafka: LocalKafka, topic: str, max_rows: int | None = None) -> tuple[list[Any], Any]:
    reader = (
        spark.readStream.format("lakecdc-kafka")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("lakecdc.spec", KafkaSourceSpec(topics=(topic,)).to_json())
    )
    if max_rows:
        reader = reader.option("lakecdc.maxRows", str(max_rows))
    name = f"raw_{topic}"
    query = reader.load().writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    query.awaitTermination()
    rows = spark.sql(f"select topic, partition, offset, key, value from {name}").collect()
    return rows, query


def test_reads_every_partition_exactly_and_respects_the_batch_limit(
    spark: Any, kafka: LocalKafka, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 3)
    records = [(f"k{i}".encode(), f"v{i}".encode()) for i in range(3000)]
    kafka.produce(topic_name, records, lambda key, value: int(key[1:]) % 3)
    rows, query = _read_all(spark, kafka, topic_name, max_rows=700)
    assert len(rows) == 3000
    assert sorted(bytes(r["value"]) for r in rows) == sorted(v for _, v in records)
    for p in range(3):
        assert sorted(r["offset"] for r in rows if r["partition"] == p) == list(range(1000))
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(batches) >= 5  # 3000 messages at most 700 per micro-batch
    assert all(p["numInputRows"] <= 700 for p in batches)
