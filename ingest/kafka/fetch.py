"""What a Kafka read task runs on an executor: one partition's offsets ``[start, end)`` fetched with
confluent-kafka, as raw Arrow batches when no parser is given. A range whose offsets the partition
no longer holds stops the task naming them; nothing is skipped (#23). While no broker answers (a broker
restarted, the network cut) the task waits, librdkafka reconnecting by itself, up to
``lakecdc.broker-unavailable-timeout`` without a message; then it fails with ``BrokerUnavailableError``
(ingest.kafka.outage)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from ingest.kafka.offset_checks import KafkaSourceError, lost_range_message
from ingest.kafka.outage import CALL_TIMEOUT_S, BrokerUnavailableError, is_unavailable_error, unavailable_message

RAW_DDL = (
    "topic string, partition int, offset bigint, timestamp timestamp, timestamp_type int, key binary, value binary"
)
RAW_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestamp_type", pa.int32()),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
    ]
)

FETCH = 10_000

# librdkafka prefetches up to 64 MiB per partition, past the end of a range too, so a micro-batch
# of a backlog fetched much of the next batch's messages and threw them away (broker and reader
# CPU). A 16 MiB queue read a 125k-message range ~19% faster with ~20% less CPU; a queue that
# small needs a short backoff, or librdkafka waits 1 s whenever it is full (bench/README.md).
# ``properties.*`` in --kafka-conf overrides either.
READER_DEFAULTS = {"queued.max.messages.kbytes": "16384", "fetch.queue.backoff.ms": "20"}

Message = tuple[bytes | None, bytes | None, int, int | None, int]


def fetch_range(
    properties: Mapping[str, str], topic: str, partition: int, start: int, end: int, timeout_s: float
) -> Iterator[Message]:
    """Messages ``[start, end)`` of one partition as ``(value, key, offset, ts_ms, ts_type)``; ``timeout_s``:
    how long to wait for the next message while the broker does not answer."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    props: dict[str, Any] = {**properties, "enable.auto.commit": False, "enable.partition.eof": False}
    props.setdefault("group.id", "lakecdc-reader")
    for key, value in READER_DEFAULTS.items():
        props.setdefault(key, value)
    # An offset that is no longer in Kafka (retention) must stop the job, never be skipped silently.
    props["auto.offset.reset"] = "error"
    consumer = Consumer(props)
    where = f"Kafka topic '{topic}', partition {partition}"
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        nxt = start
        waiting_since = time.monotonic()
        last_error = "no message arrived"
        while nxt < end:
            msgs = consumer.consume(num_messages=min(FETCH, end - nxt), timeout=1.0)
            # Errors are rare: one look per message finds them, and only a batch with some pays for
            # sorting them (two error tests per message were ~7% of a read task's CPU, bench/README.md).
            errors = [m.error() for m in msgs if m.error() is not None]
            real = msgs
            if errors:
                # librdkafka reports a broker it cannot reach as error events, and reconnects by itself
                away = [e for e in errors if is_unavailable_error(e)]
                last_error = str(away[-1]) if away else last_error
                real = [m for m in msgs if not is_unavailable_error(m.error())]
            if not real:
                position = consumer.position([TopicPartition(topic, partition)])[0].offset
                if position >= end:  # the rest were transaction markers or compacted away
                    break
                left = timeout_s - (time.monotonic() - waiting_since)
                _check_still_there(consumer, topic, partition, nxt, end, max(1.0, min(CALL_TIMEOUT_S, left)))
                waited = time.monotonic() - waiting_since
                if waited > timeout_s:
                    what = f"fetching offsets {nxt}..{end - 1} of topic '{topic}', partition {partition}"
                    servers = str(properties.get("bootstrap.servers", ""))
                    raise BrokerUnavailableError(unavailable_message(servers, what, waited, timeout_s, last_error))
                continue
            waiting_since = time.monotonic()
            for m in real:
                err = m.error() if errors else None
                if err is not None:
                    if err.code() == KafkaError._AUTO_OFFSET_RESET or err.code() == KafkaError.OFFSET_OUT_OF_RANGE:
                        low, high = _watermarks(consumer, topic, partition, CALL_TIMEOUT_S)
                        raise KafkaSourceError(lost_range_message(topic, partition, nxt, low, high))
                    raise KafkaSourceError(f"{where}: {err}")
                off = m.offset()
                if off is None:  # only error events lack an offset, and those were handled above
                    continue
                if off >= end:
                    nxt = end
                    break
                ts_type, ts = m.timestamp()
                yield m.value(), m.key(), off, (ts if ts_type else None), ts_type
                nxt = off + 1
    finally:
        consumer.close()


def _watermarks(consumer: Any, topic: str, partition: int, timeout: float) -> tuple[int, int]:
    from confluent_kafka import TopicPartition

    low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout, cached=False)
    return int(low), int(high)


def _check_still_there(consumer: Any, topic: str, partition: int, nxt: int, end: int, timeout: float) -> None:
    """Nothing came: if the partition no longer holds the offsets planned (retention ran, or the topic
    was truncated or re-created, since planning), stop now rather than wait or skip. Brokers need not
    answer such a fetch with OFFSET_OUT_OF_RANGE at once (tansu does not)."""
    try:
        low, high = _watermarks(consumer, topic, partition, timeout)
    except Exception:  # the broker is unreachable: the wait's timeout decides
        return
    if nxt < low or high < end:
        raise KafkaSourceError(lost_range_message(topic, partition, nxt, low, high))


def raw_batches(topic: str, partition: int, messages: Iterator[Message]) -> Iterator[pa.RecordBatch]:
    rows: list[Message] = []
    for m in messages:
        rows.append(m)
        if len(rows) >= FETCH:
            yield _raw_batch(topic, partition, rows)
            rows = []
    if rows:
        yield _raw_batch(topic, partition, rows)


def _raw_batch(topic: str, partition: int, rows: list[Message]) -> pa.RecordBatch:
    values, keys, offsets, ts, ts_types = zip(*rows, strict=True)
    n = len(rows)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([topic] * n, pa.string()),
            pa.array([partition] * n, pa.int32()),
            pa.array(offsets, pa.int64()),
            pa.array(ts, pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC")),
            pa.array(ts_types, pa.int32()),
            pa.array(keys, pa.binary()),
            pa.array(values, pa.binary()),
        ],
        schema=RAW_SCHEMA,
    )
