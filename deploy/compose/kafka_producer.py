"""Fills the compose stack's Kafka topic with canal-json changes of two tables (``deploy.canal_stream``):
creates the topic, produces one stream of inserts, updates and deletes, then (unless ``--rounds``
ends it) another round of changes to the same keys every ``--interval`` seconds.

    python -m deploy.compose.kafka_producer --bootstrap kafka:9092 --topic shop_cdc [--rounds 0]
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from deploy.canal_stream import generate


def ensure_topic(bootstrap: str, topic: str, partitions: int, timeout_s: float = 120.0) -> None:
    """Create ``topic`` unless it exists, waiting for the broker (it may still be starting)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if topic in admin.list_topics(timeout=5).topics:
                return
            admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(timeout=30)
            return
        except KafkaException as exc:
            if time.monotonic() > deadline:
                raise SystemExit(f"kafka_producer: cannot create topic {topic} on {bootstrap}: {exc}") from None
            time.sleep(1)


def produce_round(producer: Producer, topic: str, partitions: int, keys: int, seed: int) -> int:
    """One stream of changes; keys hash to partitions as canal's do, so a key's changes stay in order."""
    stream = generate(keys=keys, updates=3, seed=seed)
    for key, value in stream.messages:
        while True:
            try:
                producer.produce(topic, value=value, key=key, partition=zlib.crc32(key) % partitions)
                break
            except BufferError:
                producer.poll(0.5)
    if producer.flush(60) != 0:
        raise SystemExit("kafka_producer: messages still unsent after 60 s")
    return len(stream.messages)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap", default="kafka:9092")
    ap.add_argument("--topic", default="shop_cdc")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--keys", type=int, default=1000, help="keys per table")
    ap.add_argument("--rounds", type=int, default=0, help="rounds of changes; 0: keep going")
    ap.add_argument("--interval", type=float, default=10.0, help="seconds between rounds")
    ap.add_argument("--ready-file", default="/tmp/producer-ready", help="touched after the first round")
    # The test suite's broker (tansu) reports a partition's end as the start of its last record batch + 1
    # (deploy/local_kafka.py); one record per batch keeps that end exact there.
    ap.add_argument("--batch-messages", type=int, default=10000, help="records per produce batch at most")
    args = ap.parse_args(argv)
    ensure_topic(args.bootstrap, args.topic, args.partitions)
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "batch.num.messages": args.batch_messages})
    rounds = 0
    while args.rounds == 0 or rounds < args.rounds:
        sent = produce_round(producer, args.topic, args.partitions, args.keys, seed=rounds + 1)
        rounds += 1
        print(f"kafka_producer: round {rounds}: {sent} messages to {args.topic}", file=sys.stderr)
        if rounds == 1 and args.ready_file:
            Path(args.ready_file).touch()
        if args.rounds == 0 or rounds < args.rounds:
            time.sleep(args.interval)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
