"""A Spark streaming data source over Kafka, built on confluent-kafka (PySpark Python data source API).

    spark.readStream.format("lakecdc-kafka")
        .option("kafka.bootstrap.servers", "127.0.0.1:9092")
        .option("lakecdc.spec", KafkaSourceSpec(...).to_json()).load()

Offsets are ``{"topic": {"partition": next_offset}}`` and live in the Spark checkpoint; Spark
plans each micro-batch as one input partition per Kafka partition range (long ranges are split so
every core has work), and replays exactly the same ranges after a failure. With a ``ParseSpec``
the reader parses messages where it fetches them and emits chunk rows (``sinks.write.chunk_format``);
without one it emits raw messages.

librdkafka properties are passed as ``kafka.<property>`` options, the secret ones together as the one
option ``lakecdc.secrets``, whose value Spark's option redaction hides in plans and the UI (a private
key in ``ssl.key.pem`` has no name Spark would redact).
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import pyarrow as pa
import structlog
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from ingest import logs
from ingest.kafka.batch_bytes import MAX_BATCH_BYTES, MessageSizes
from ingest.kafka.fetch import RAW_DDL, READER_DEFAULTS, fetch_range, raw_batches
from ingest.kafka.offset_checks import (
    KafkaSourceError,
    OffsetLoss,
    Offsets,
    TopicState,
    find_losses,
    resume,
    split_ids,
    with_ids,
)
from ingest.kafka.outage import BrokerUnavailableError, call, is_unavailable_error
from ingest.kafka.ranges import KafkaRange, RangeGroup, group_ranges, share_budget
from ingest.kafka.schema_registry import parser_for
from ingest.kafka.spec import KafkaSourceSpec, kafka_properties, registry_settings
from ingest.kafka.startup import StartupMode, parse_specific_offsets
from ingest.pipeline.partition_stream import assemble
from ingest.source import MAX_BATCH_BYTES_OPTION, stop_file, stopping
from ingest.workers.memory import release_unused_memory
from sinks.write.chunk_format import CHUNK_DDL

# kept importable from here (bench, tests)
__all__ = [
    "READER_DEFAULTS",
    "KafkaRange",
    "KafkaSourceError",
    "KafkaSourceSpec",
    "RangeGroup",
    "group_ranges",
    "kafka_properties",
    "registry_settings",
    "share_budget",
]

log = structlog.get_logger(__name__)

T = TypeVar("T")

# Messages: smaller splits cost more in task overhead than they win in parallelism. Tests fix the
# split size (LAKECDC_SPLIT_MESSAGES) so that ranges are split and the order across splits is exercised.
_MIN_SPLIT = 20_000


class KafkaCdcDataSource(DataSource):
    """``format("lakecdc-kafka")``: Kafka as a Spark streaming source."""

    @classmethod
    def name(cls) -> str:
        return "lakecdc-kafka"

    def _spec(self) -> KafkaSourceSpec:
        return KafkaSourceSpec.from_json(self.options.get("lakecdc.spec", "{}"))

    def schema(self) -> str:
        return CHUNK_DDL if self._spec().parse is not None else RAW_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        options = dict(self.options)
        # Spark hands options over with lower-cased keys.
        max_rows = int(options.get("lakecdc.maxrows", options.get("lakecdc.maxRows", 0)) or 0)
        spec = self._spec()
        reader = KafkaStreamReader(spec, kafka_properties(options), max_rows, registry_settings(spec, options))
        reader.stop_file = stop_file(options)
        reader.max_batch_bytes = int(options.get(MAX_BATCH_BYTES_OPTION.lower()) or MAX_BATCH_BYTES)
        return reader


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    stop_file: str | None = None  # the job's stop file (ingest.source.stopping)
    max_batch_bytes: int = MAX_BATCH_BYTES  # (ingest.kafka.batch_bytes)

    def __init__(
        self,
        spec: KafkaSourceSpec,
        properties: dict[str, str],
        max_rows: int,
        registry: dict[str, str] | None = None,
    ) -> None:
        logs.configure_once()  # runs in Spark's Python planner process, which never ran the CLI
        self.spec = spec
        self.properties = properties
        self.registry = registry or {}
        self.max_rows = max_rows
        self._meta: Any = None
        self._admin: Any = None
        self._target: Offsets | None = None
        self._target_state: dict[str, TopicState] | None = None
        self._latest: Offsets | None = None  # the high watermarks latestOffset last saw (reportLatestOffset)
        self._sizes: MessageSizes | None = None  # the planner's samples (the byte bound of a batch, batch_bytes)

    # The metadata clients live on the driver only; executors get the reader without them.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_meta"] = None
        state["_admin"] = None if self._admin is not False else False
        state["_sizes"] = None  # (the planner's)
        return state

    def _consumer(self) -> Any:
        if self._meta is None:
            from confluent_kafka import Consumer

            props = {**self.properties, "enable.auto.commit": False}
            props.setdefault("group.id", "lakecdc-metadata")
            self._meta = Consumer(props)
        return self._meta

    def _call(self, fn: Callable[[float], T], what: str) -> T:
        """A broker call of planning, tried again while no broker answers (ingest.kafka.outage)."""
        servers = self.properties.get("bootstrap.servers", "")
        return call(fn, what, servers, self.spec.broker_unavailable_timeout_s)

    def _topic_partitions(self) -> dict[str, list[int]]:
        return self._call(self._list_topic_partitions, "reading the topics' metadata (list_topics)")

    def _list_topic_partitions(self, timeout: float) -> dict[str, list[int]]:
        from confluent_kafka import KafkaException

        md = self._consumer().list_topics(timeout=timeout)
        names = set(self.spec.topics)
        if self.spec.topic_pattern:
            pattern = re.compile(self.spec.topic_pattern)
            names |= {t for t in md.topics if pattern.fullmatch(t) and not t.startswith("__")}
        out: dict[str, list[int]] = {}
        for topic in sorted(names):
            meta = md.topics.get(topic)
            if meta is not None and is_unavailable_error(meta.error):
                raise KafkaException(meta.error)  # e.g. no leader yet while a broker restarts: retried
            if meta is None or meta.error is not None:
                if self.spec.topics and topic in self.spec.topics:
                    raise KafkaSourceError(
                        f"Kafka topic '{topic}' does not exist or cannot be read "
                        f"({meta.error if meta is not None else 'not in metadata'}); "
                        "create it or fix --kafka-conf topic (Failed to find partition information for topic "
                        f"'{topic}'. Please check your 'topic' and 'bootstrap.servers' config.)"
                    )
                continue
            out[topic] = sorted(meta.partitions)
        if not out and self.spec.topic_pattern and self.spec.pattern_must_match:
            raise KafkaSourceError(
                f"Cannot find topics match the topic-pattern {self.spec.topic_pattern} (kafka-sync-table needs a "
                "topic to read; create it or fix --kafka-conf topic-pattern)"
            )
        return out

    def _watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        tp = TopicPartition(topic, partition)
        low, high = self._call(
            lambda timeout: self._consumer().get_watermark_offsets(tp, timeout=timeout, cached=False),
            f"reading the offsets of topic '{topic}', partition {partition} (watermarks)",
        )
        return int(low), int(high)

    def _topic_ids(self, topics: Sequence[str]) -> dict[str, str]:
        """Each topic's id (Kafka >= 2.8), which changes when a topic is deleted and re-created;
        empty where the broker has none or cannot say (the offset checks then use watermarks only,
        and the reader stops asking)."""
        if not topics or self._admin is False:
            return {}
        try:
            if self._admin is None:
                from confluent_kafka.admin import AdminClient

                self._admin = AdminClient({k: v for k, v in self.properties.items() if k not in _CONSUMER_ONLY})
            ids = self._call(lambda timeout: self._describe(topics, timeout), "reading the topic ids (describe_topics)")
        except BrokerUnavailableError:
            raise  # no broker for the whole timeout: the job stops (not a broker without topic ids)
        except Exception as exc:
            log.warning("Kafka topic ids unavailable: offsets are checked by watermarks only", error=str(exc))
            self._admin = False
            return {}
        return {t: i for t, i in ids.items() if i.strip("A") not in ("", "None")}  # all-zero: no id

    def _describe(self, topics: Sequence[str], timeout: float) -> dict[str, str]:
        from confluent_kafka import TopicCollection

        futures = self._admin.describe_topics(TopicCollection(list(topics)), request_timeout=min(timeout, 10))
        return {name: str(f.result(timeout=timeout + 5).topic_id) for name, f in futures.items()}

    def _snapshot(self) -> dict[str, TopicState]:
        """The topics the job reads, as the broker has them now."""
        parts = self._topic_partitions()
        ids = self._topic_ids(list(parts))
        return {t: TopicState(ids.get(t), {p: self._watermarks(t, p) for p in ps}) for t, ps in parts.items()}

    def _subscribed(self, topic: str) -> bool:
        if topic in self.spec.topics:
            return True
        pattern = self.spec.topic_pattern
        return bool(pattern) and not topic.startswith("__") and re.fullmatch(pattern or "", topic) is not None

    def initialOffset(self) -> dict:
        from confluent_kafka import TopicPartition

        mode = self.spec.startup_mode
        parts = self._topic_partitions()
        offsets: Offsets = {}
        for topic, plist in parts.items():
            offsets[topic] = {}
            for p in plist:
                low, high = self._watermarks(topic, p)
                offsets[topic][str(p)] = high if mode == StartupMode.LATEST_OFFSET else low
        if mode == StartupMode.GROUP_OFFSETS:
            self._group_offsets(parts, offsets)
        elif mode == StartupMode.TIMESTAMP:
            ts = self.spec.startup_timestamp_millis
            if ts is None:
                raise KafkaSourceError("scan.startup.mode=timestamp needs scan.startup.timestamp-millis")
            tps = [TopicPartition(t, p, ts) for t, plist in parts.items() for p in plist]
            found = self._call(
                lambda timeout: self._consumer().offsets_for_times(tps, timeout=timeout),
                "looking up offsets for scan.startup.timestamp-millis (offsets_for_times)",
            )
            for tp in found:
                # -1: no message at or after the timestamp: start at the end.
                offsets[tp.topic][str(tp.partition)] = (
                    tp.offset if tp.offset >= 0 else self._watermarks(tp.topic, tp.partition)[1]
                )
        elif mode == StartupMode.SPECIFIC_OFFSETS:
            # As Paimon: the offsets are the first topic's; other partitions start at the earliest.
            if not self.spec.topics:
                raise KafkaSourceError("scan.startup.mode=specific-offsets needs --kafka-conf topic")
            topic = self.spec.topics[0]
            for p, off in parse_specific_offsets(self.spec.startup_specific_offsets or "").items():
                if str(p) not in offsets.get(topic, {}):
                    raise KafkaSourceError(
                        f"scan.startup.specific-offsets names partition {p}, which topic '{topic}' does not have"
                    )
                offsets[topic][str(p)] = off
        log.info("initial offsets", mode=mode, offsets=offsets)
        return with_ids(offsets, self._topic_ids(list(offsets)))

    def _group_offsets(self, parts: dict[str, list[int]], offsets: Offsets) -> None:
        """The group's committed offsets; a partition without one starts where
        ``properties.auto.offset.reset`` says (lakecdc's default: earliest; ``none``, which reaches
        librdkafka as ``error``, fails as Kafka's Java client does). Without a group id nothing is
        committed (Paimon uses a random group id then), so every partition takes the reset."""
        from confluent_kafka import TopicPartition

        group = self.properties.get("group.id")
        reset = self.properties.get("auto.offset.reset", "earliest").strip().lower()
        tps = [TopicPartition(t, p) for t, plist in parts.items() for p in plist]
        committed: dict[tuple[str, int], int] = {}
        if group and tps:
            found = self._call(
                lambda timeout: self._consumer().committed(tps, timeout=timeout),
                f"reading consumer group '{group}''s committed offsets",
            )
            for tp in found:
                if tp.offset >= 0:
                    committed[(tp.topic, tp.partition)] = tp.offset
        undefined = []
        for tp in tps:
            offset = committed.get((tp.topic, tp.partition))
            if offset is not None:
                offsets[tp.topic][str(tp.partition)] = offset
            elif reset in ("latest", "largest", "end"):
                offsets[tp.topic][str(tp.partition)] = self._watermarks(tp.topic, tp.partition)[1]
            elif reset in ("none", "error"):
                undefined.append(f"{tp.topic}-{tp.partition}")
        if undefined:
            raise KafkaSourceError(
                f"Undefined offset with no reset policy for partitions: [{', '.join(undefined)}] "
                f"(scan.startup.mode=group-offsets with properties.auto.offset.reset=none, and the consumer group "
                f"'{group or ''}' has no committed offset for them; set properties.auto.offset.reset=earliest or "
                "latest, or another scan.startup.mode)"
            )

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_rows) if self.max_rows > 0 else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target_state = self._snapshot()
        self._target = _highs(self._target_state)
        log.info("available-now target", offsets=self._target)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        if stopping(self.stop_file):
            return start  # the job is stopping: no new batch after the one in flight
        positions, ids = split_ids(start)
        state = self._target_state
        if self._target is not None:
            latest = self._target
        else:
            state = self._snapshot()
            latest = _highs(state)
        self._latest = latest
        if state is not None:
            current = {t: state.get(t) for t in positions if t in state or self._subscribed(t)}
            losses = find_losses(positions, ids, current)
            ids |= {t: s.topic_id for t, s in state.items() if s.topic_id}
            if losses:
                return with_ids(self._after_losses(positions, losses), ids)
        end: Offsets = {t: dict(ps) for t, ps in positions.items()}
        available: dict[tuple[str, str], tuple[int, int]] = {}
        for topic, parts in latest.items():
            for p, high in parts.items():
                if p not in end.get(topic, {}):
                    # A partition seen for the first time joins at its earliest offset; its data is
                    # read from the next micro-batch on (as Spark's own Kafka source does).
                    known = state[topic].watermarks.get(int(p)) if state and topic in state else None
                    end.setdefault(topic, {})[p] = (known or self._watermarks(topic, int(p)))[0]
                    continue
                s = positions[topic][p]
                if high > s:
                    available[(topic, p)] = (s, high)
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        counts = {tp: h - s for tp, (s, h) in available.items()}
        if budget is not None and sum(counts.values()) > budget:
            counts = share_budget(counts, budget)
        if budget is not None:  # (--max-offsets-per-trigger 0: no bound at all)
            if self._sizes is None:
                self._sizes = MessageSizes(self._message_size, self.max_batch_bytes)
            counts = self._sizes.bound({tp: s for tp, (s, _h) in available.items()}, counts)
        for (topic, p), n in counts.items():
            end[topic][p] = available[(topic, p)][0] + n
        return with_ids(end, ids)

    def _after_losses(self, positions: Offsets, losses: list[OffsetLoss]) -> Offsets:
        """Stop naming every lost partition, or (scan.offset-reset-on-loss=earliest) a micro-batch
        that reads nothing and moves each to its earliest offset, read from the next batch on."""
        resumed = resume(positions, losses, self.spec.offset_reset_on_loss)
        for loss in losses:
            log.warning(
                "Kafka offsets lost: resuming from the earliest offset (scan.offset-reset-on-loss=earliest); "
                "messages after the checkpointed offset that were deleted are skipped, and a re-created topic "
                "is read from its start",
                problem=loss.describe(),
                topic=loss.topic,
                partition=loss.partition,
                checkpointed=loss.checkpointed,
                resume_at=loss.resume_at,
            )
        return resumed

    def reportLatestOffset(self) -> dict | None:
        """The partitions' high watermarks read by the last ``latestOffset`` (no further broker call;
        with --available-now the run's target): the latest offsets in Spark's progress reports, from
        which ``ingest.streaming.progress`` takes the lag per partition."""
        return dict(self._latest) if self._latest is not None else None

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        (first, first_ids), (last, last_ids) = split_ids(start), split_ids(end)
        ranges: list[tuple[str, int, int, int]] = []
        for topic, parts in last.items():
            if first_ids.get(topic, last_ids.get(topic)) != last_ids.get(topic, first_ids.get(topic)):
                continue  # a re-created topic: this batch only moves to its earliest offsets
            for p, e in parts.items():
                s = first.get(topic, {}).get(p, e)
                if e > s and self.spec.offset_reset_on_loss == "earliest":
                    s = self._skip_deleted(topic, int(p), s, e)
                if e > s:
                    ranges.append((topic, int(p), s, e))
        total = sum(e - s for _, _, s, e in ranges)
        fixed = os.environ.get("LAKECDC_SPLIT_MESSAGES")
        if fixed:
            split = max(int(fixed), 1)
        else:
            split = max(_MIN_SPLIT, math.ceil(total / max(self.spec.min_partitions, 1))) if total else 1
        out: list[KafkaRange] = []
        for topic, part, s, e in ranges:
            cur = s
            while cur < e:
                nxt = e if e - cur < split * 1.5 else cur + split
                out.append(KafkaRange(topic, part, cur, nxt))
                cur = nxt
        return group_ranges(out, split)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangeGroup)
        logs.configure_once()
        parser = None
        if self.spec.parse is not None and self.registry:
            parser = parser_for(self.spec.parse.format, self.registry)
        for r in partition.ranges:
            started = time.monotonic()
            cpu = time.process_time()
            messages = fetch_range(
                self.properties, r.topic, r.partition, r.start, r.end, self.spec.broker_unavailable_timeout_s
            )
            if self.spec.parse is None:
                yield from raw_batches(r.topic, r.partition, messages)
            else:
                yield from assemble(self.spec.parse, r.topic, r.partition, messages, parser)
            log.debug(
                "range read",
                topic=r.topic,
                partition=r.partition,
                messages=r.end - r.start,
                seconds=round(time.monotonic() - started, 3),
                cpu_seconds=round(time.process_time() - cpu, 3),
            )
        release_unused_memory()

    def _message_size(self, topic: str, partition: int, offset: int) -> int:
        """The bytes (key and value) of the message at ``offset``, read as a task reads it."""
        timeout = self.spec.broker_unavailable_timeout_s
        for value, key, *_rest in fetch_range(self.properties, topic, partition, offset, offset + 1, timeout):
            return len(value or b"") + len(key or b"")
        return 0

    def _skip_deleted(self, topic: str, partition: int, start: int, end: int) -> int:
        """With scan.offset-reset-on-loss=earliest, where a range starts below the partition's earliest
        offset (retention since the checkpoint), read from the earliest, logging what is skipped."""
        low = self._watermarks(topic, partition)[0]
        if low <= start:
            return start
        log.warning(
            "Kafka offsets deleted before they were read: skipped (scan.offset-reset-on-loss=earliest)",
            topic=topic,
            partition=partition,
            skipped=f"{start}..{min(low, end) - 1}",
        )
        return min(low, end)

    def commit(self, end: dict) -> None:
        # Offsets live in the checkpoint; committing them to the consumer group too lets Kafka
        # tooling show the job's lag (as Flink's Kafka source does on checkpoints).
        group = self.properties.get("group.id")
        if not (group and self.spec.commit_offsets_to_group):
            return
        from confluent_kafka import TopicPartition

        tps = [TopicPartition(t, int(p), o) for t, ps in split_ids(end)[0].items() for p, o in ps.items()]
        if tps:
            try:
                self._consumer().commit(offsets=tps, asynchronous=False)
            except Exception as exc:  # monitoring only: never fail the job for it
                log.warning("could not commit offsets to the consumer group", group=group, error=str(exc))

    def stop(self) -> None:
        if self._meta is not None:
            self._meta.close()
            self._meta = None


_CONSUMER_ONLY = {"group.id", "auto.offset.reset", "enable.auto.commit", "isolation.level"}
_CONSUMER_ONLY |= {"queued.max.messages.kbytes", "fetch.queue.backoff.ms", "enable.partition.eof"}


def _highs(state: Mapping[str, TopicState]) -> Offsets:
    return {t: {str(p): high for p, (_, high) in sorted(s.watermarks.items())} for t, s in state.items()}
