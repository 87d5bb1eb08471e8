"""``kafka-sync-table``'s schema discovery at start-up, as Paimon's (``MessageQueueSchemaUtils.getSchema``).

When the target table does not exist yet, Paimon reads the first partition of the first topic (with
``topic-pattern``: the first matching topic) from its beginning until a message gives a data schema: a
row change, not a DDL-only message. It polls for 1 s, and retries 5 times after sleeps of 1, 2, 4, 8 and
16 s; then it stops with ``SchemaRetrievalException``. lakecdc stops in the same case, before Spark
starts, with Paimon's text first. An existing table needs no discovery (its columns are known).

The sleeps add up to ``LAKECDC_SCHEMA_DISCOVERY_TIMEOUT`` seconds (default 31, Paimon's sum): a smaller
value cuts Paimon's schedule short (tests use 0: one poll).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import structlog

from formats import Parser, get_parser
from formats.events import DataChangeEvent, MessageContext
from ingest.kafka.options import librdkafka_config, topic_list
from ingest.kafka.outage import call, is_unavailable_error, timeout_seconds
from ingest.kafka.schema_registry import parser_for
from ingest.source import SourceSettings
from schema_evolution.errors import LakeCdcError, SourcePosition
from sinks.table.catalog import Catalog
from sinks.table.prepare import note_unchecked

log = structlog.get_logger(__name__)

TIMEOUT_ENV = "LAKECDC_SCHEMA_DISCOVERY_TIMEOUT"
POLL_SECONDS = 1.0  # MessageQueueSchemaUtils.POLL_TIMEOUT_MILLIS
PAIMON_SLEEPS = (1.0, 2.0, 4.0, 8.0, 16.0)  # MAX_RETRY = 5, the interval doubling from 1 s
DEFAULT_TIMEOUT = sum(PAIMON_SLEEPS)

# (value, key, offset, timestamp_ms) of one partition, in offset order
Message = tuple[bytes | None, bytes | None, int, int | None]


class SchemaRetrievalError(LakeCdcError):
    """No message gave the new table's columns (Paimon's ``SchemaRetrievalException``)."""


def paimon_message(topic: str) -> str:
    return (
        f"Could not get metadata from server, topic: {topic}. If this topic is not empty, please check the "
        "configuration of synchronization job. Otherwise, you should create the Paimon table first."
    )


def no_schema_error(topic: str, partition: int, table: str, waited: float) -> SchemaRetrievalError:
    return SchemaRetrievalError(
        f"{paimon_message(topic)} (lakecdc: table {table} does not exist, and kafka-sync-table takes a new "
        f"table's columns from the first row change it reads; partition {partition} of topic '{topic}', read "
        f"from its beginning for {waited:.0f} s, holds none: it is empty or has DDL messages only. Create the "
        "table first (as Paimon asks), or produce a row change and start the job again.)"
    )


def discovery_timeout(environ: Mapping[str, str] = os.environ) -> float:
    text = environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN too
        raise LakeCdcError(f"{TIMEOUT_ENV}={text}: expected a number of seconds, 0 or more")
    return value


def retry_sleeps(total: float) -> tuple[float, ...]:
    """Paimon's sleeps between polls, cut short so that they add up to at most ``total`` seconds."""
    out: list[float] = []
    left = total
    for pause in PAIMON_SLEEPS:
        if left <= 0:
            break
        out.append(min(pause, left))
        left -= out[-1]
    return tuple(out)


def gives_schema(parse: Parser, topic: str, partition: int, messages: Iterable[Message]) -> bool:
    """Whether one of ``messages`` is a row change (Paimon's ``RecordParser.buildSchema`` is not null).
    A message the format cannot parse stops the job here, as it would in the stream (and in Paimon)."""
    for value, key, offset, ts in messages:
        events = parse(value, key, MessageContext(SourcePosition(topic, partition, offset), ts))
        if any(type(e) is DataChangeEvent for e in events):
            return True
    return False


def discover(
    poll: Callable[[float], Iterable[Message]],
    parse: Parser,
    topic: str,
    partition: int,
    sleeps: Iterable[float],
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Paimon's loop: a poll, then a sleep and a poll again for each of ``sleeps``, until a row change."""
    if gives_schema(parse, topic, partition, poll(POLL_SECONDS)):
        return True
    for pause in sleeps:
        sleep(pause)
        if gives_schema(parse, topic, partition, poll(POLL_SECONDS)):
            return True
    return False


def target_table(settings: SourceSettings) -> str:
    return f"{settings.name(settings.database)}.{settings.name(settings.table or '')}"


def check_schema_discoverable(settings: SourceSettings, checkpoint: str | None = None) -> None:
    """``kafka-sync-table`` with no target table yet: stop unless the first topic's first partition has a
    row change within Paimon's retry window. With the table there: when no row change is there to check
    it against, it is noted beside ``checkpoint`` as accepted unchecked, as Paimon skips its check."""
    if settings.action.database_sync:
        return  # Paimon's database sync creates each table from its first message, and never discovers
    table = target_table(settings)
    if Catalog(settings.warehouse, settings.catalog_conf).load_layout(table) is not None:
        if checkpoint is not None and not _existing_table_checkable(settings):
            # Paimon retrieves the schema of an existing table too, and when it finds none it skips
            # the compatibility check and evolves the table from the data that comes later.
            log.info("no row change to check the existing table against at start-up; its columns will follow the "
                     "source", table=table)  # fmt: skip
            note_unchecked(checkpoint, table)
        return
    conf = settings.kafka_conf
    parse = parser_for(conf["value.format"], conf) or get_parser(conf["value.format"].strip().lower())
    sleeps = retry_sleeps(discovery_timeout())
    consumer = _consumer(conf)
    try:
        topic = _first_topic(consumer, conf)
        partition = _first_partition(consumer, conf, topic)
        log.info("reading the topic for the new table's schema", table=table, topic=topic, partition=partition)
        found = discover(_poller(consumer, topic, partition), parse, topic, partition, sleeps)
    finally:
        consumer.close()
    if not found:
        raise no_schema_error(topic, partition, table, sum(sleeps) + POLL_SECONDS * (len(sleeps) + 1))


def _existing_table_checkable(settings: SourceSettings) -> bool:
    """Whether the first partition of the first topic has a row change now (one poll; an empty
    partition is not polled). Where the topic cannot be read here, True: the check stays, as before."""
    from confluent_kafka import KafkaException, TopicPartition

    conf = settings.kafka_conf
    parse = parser_for(conf["value.format"], conf) or get_parser(conf["value.format"].strip().lower())
    consumer = _consumer(conf)
    try:
        topic = _first_topic(consumer, conf)
        partition = _first_partition(consumer, conf, topic)
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_seconds(conf))
        if low >= high:
            return False
        return discover(_poller(consumer, topic, partition), parse, topic, partition, ())
    except (LakeCdcError, KafkaException) as exc:
        log.info(
            "existing table: the topic could not be read at start-up; the first row change is checked", error=str(exc)
        )
        return True
    finally:
        consumer.close()


def _consumer(conf: Mapping[str, str]) -> Any:
    """Paimon's earliest consumer: the job's client properties, no offsets committed anywhere."""
    from confluent_kafka import Consumer

    props: dict[str, Any] = {**librdkafka_config(conf), "enable.auto.commit": False, "enable.partition.eof": False}
    props["enable.auto.offset.store"] = False
    props["auto.offset.reset"] = "earliest"
    props.setdefault("group.id", "lakecdc-schema-discovery")  # librdkafka needs one; assign() never joins it
    return Consumer(props)


def _first_topic(consumer: Any, conf: Mapping[str, str]) -> str:
    topics = topic_list(conf.get("topic", ""))
    if topics:
        return topics[0]
    pattern = conf.get("topic-pattern", "")
    regex = re.compile(pattern)
    md = _list_topics(consumer, conf, None)
    names = sorted(t for t in md.topics if regex.fullmatch(t) and not t.startswith("__"))
    if not names:
        raise LakeCdcError(
            f"Cannot find topics match the topic-pattern {pattern} (kafka-sync-table needs a topic to read; create "
            "it or fix --kafka-conf topic-pattern)"
        )
    return names[0]


def _list_topics(consumer: Any, conf: Mapping[str, str], topic: str | None) -> Any:
    """Topic metadata, waited for while no broker answers (``lakecdc.broker-unavailable-timeout``)."""
    servers = conf.get("properties.bootstrap.servers", "")
    what = f"reading topic '{topic}''s metadata" if topic else "listing the topics (list_topics)"
    return call(lambda timeout: consumer.list_topics(topic, timeout=timeout), what, servers, timeout_seconds(conf))


def _first_partition(consumer: Any, conf: Mapping[str, str], topic: str) -> int:
    meta = _list_topics(consumer, conf, topic).topics.get(topic)
    if meta is None or meta.error is not None or not meta.partitions:
        reason = "not in metadata" if meta is None else (meta.error or "no partitions")
        raise LakeCdcError(
            f"Kafka topic '{topic}' does not exist or cannot be read ({reason}); create it or fix --kafka-conf "
            f"topic (Failed to find partition information for topic '{topic}'. Please check your 'topic' and "
            "'bootstrap.servers' config.)"
        )
    return min(meta.partitions)


def _poller(consumer: Any, topic: str, partition: int) -> Callable[[float], Iterator[Message]]:
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])

    def poll(seconds: float) -> Iterator[Message]:
        """The messages that arrive within ``seconds`` (Paimon's ``consumer.poll``), as they arrive."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            m = consumer.poll(left)
            if m is None:
                break
            err = m.error()
            if err is not None:
                if is_unavailable_error(err):
                    continue  # librdkafka reconnects by itself
                if err.fatal() or not err.retriable():
                    raise LakeCdcError(f"Kafka topic '{topic}', partition {partition}: {err}")
                continue
            ts_type, ts = m.timestamp()
            yield m.value(), m.key(), m.offset(), ts if ts_type else None

    return poll
