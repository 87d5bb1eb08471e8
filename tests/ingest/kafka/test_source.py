"""Planning of the Kafka source (no broker needed): ranges, splits, admission control."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

import pytest
from pyspark.sql.datasource import InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from ingest.kafka.source import (
    KafkaRange,
    KafkaSourceError,
    KafkaSourceSpec,
    KafkaStreamReader,
    RangeGroup,
    group_ranges,
)


def _reader(min_partitions: int = 2) -> KafkaStreamReader:
    return KafkaStreamReader(KafkaSourceSpec(topics=("t",), min_partitions=min_partitions), {}, 0)


def _groups(parts: Sequence[InputPartition]) -> list[RangeGroup]:
    assert all(isinstance(p, RangeGroup) for p in parts)
    return cast(list[RangeGroup], list(parts))


def _ranges(parts: Sequence[InputPartition]) -> list[tuple[int, int, int]]:
    return [(r.partition, r.start, r.end) for g in _groups(parts) for r in g.ranges]


def test_long_ranges_are_split_in_offset_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_SPLIT_MESSAGES", "40")
    parts = _reader().partitions({"t": {"0": 0, "1": 5}}, {"t": {"0": 100, "1": 5}})
    assert _ranges(parts) == [(0, 0, 40), (0, 40, 80), (0, 80, 100)]
    assert len(parts) == 3  # each split is a task of its own
    parts = _reader().partitions({"t": {"0": 0}}, {"t": {"0": 55}})
    assert _ranges(parts) == [(0, 0, 55)]  # < 1.5 splits: whole


def test_default_split_keeps_small_ranges_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKECDC_SPLIT_MESSAGES", raising=False)
    parts = _reader().partitions({"t": {"0": 0, "1": 0}}, {"t": {"0": 1000, "1": 10}})
    assert _ranges(parts) == [(0, 0, 1000), (1, 0, 10)]
    assert len(parts) == 1  # two small ranges: one task reads both


def test_many_small_partitions_share_a_few_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKECDC_SPLIT_MESSAGES", raising=False)
    start = {"t": {str(p): 0 for p in range(8)}}
    end = {"t": {str(p): 30_000 for p in range(8)}}
    parts = _reader(min_partitions=2).partitions(start, end)
    # 240k messages for 2 cores: 120k-message tasks of four partitions each, in partition order
    assert [[r.partition for r in g.ranges] for g in _groups(parts)] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_groups_keep_each_partitions_ranges_in_offset_order() -> None:
    ranges = [KafkaRange("t", 0, 0, 50), KafkaRange("t", 0, 50, 100), KafkaRange("t", 0, 100, 120)]
    ranges += [KafkaRange("t", 1, 7, 17), KafkaRange("t", 2, 0, 60)]
    groups = group_ranges(ranges, 60)
    assert [[(r.partition, r.start) for r in g.ranges] for g in groups] == [
        [(0, 0)],
        [(0, 50)],
        [(0, 100), (1, 7)],
        [(2, 0)],
    ]
    assert [r for g in groups for r in g.ranges] == ranges
    assert group_ranges([], 10) == []


def test_read_limit_is_shared_in_proportion_and_all_available_ignores_it() -> None:
    reader = _reader()
    reader._target = {"t": {"0": 1000, "1": 3000}}  # as prepareForTriggerAvailableNow records it
    start = {"t": {"0": 0, "1": 0}}
    assert reader.latestOffset(start, ReadMaxRows(400)) == {"t": {"0": 100, "1": 300}}
    assert reader.latestOffset(start, ReadAllAvailable()) == {"t": {"0": 1000, "1": 3000}}
    # at the target, the source reports no new data: available-now ends
    assert reader.latestOffset({"t": {"0": 1000, "1": 3000}}, ReadMaxRows(400)) == {"t": {"0": 1000, "1": 3000}}


def test_read_limit_is_used_whole_so_no_tail_batch_is_left() -> None:
    # Floor-rounded shares of 500 over these partitions leave 1-3 messages behind, which cost a
    # micro-batch of their own; the whole budget is used, so two batches read everything.
    reader = _reader()
    reader._target = {"t": {"0": 250, "1": 249, "2": 251, "3": 250}}
    start = {"t": {"0": 0, "1": 0, "2": 0, "3": 0}}
    first = reader.latestOffset(start, ReadMaxRows(500))
    assert sum(first["t"].values()) == 500
    assert all(abs(first["t"][p] - reader._target["t"][p] / 2) <= 1 for p in first["t"])
    assert reader.latestOffset(first, ReadMaxRows(500)) == reader._target
    # a partition with little waiting still gets a message: none starves behind the big ones
    reader._target = {"t": {"0": 10_000, "1": 1}}
    assert reader.latestOffset({"t": {"0": 0, "1": 0}}, ReadMaxRows(100)) == {"t": {"0": 99, "1": 1}}


class _FakeConsumer:
    """The metadata calls the reader makes, over topic -> (low, high) per partition and a group's commits."""

    def __init__(self, topics: dict[str, list[tuple[int, int]]], committed: dict[tuple[str, int], int]) -> None:
        self.topics = topics
        self.commits = committed

    def list_topics(self, timeout: float) -> object:
        meta = {
            t: SimpleNamespace(error=None, partitions={p: None for p in range(len(w))}) for t, w in self.topics.items()
        }
        return SimpleNamespace(topics=meta)

    def get_watermark_offsets(self, tp: object, timeout: float, cached: bool) -> tuple[int, int]:
        return self.topics[tp.topic][tp.partition]  # type: ignore[attr-defined]

    def committed(self, tps: list[object], timeout: float) -> list[object]:
        for tp in tps:
            tp.offset = self.commits.get((tp.topic, tp.partition), -1001)  # type: ignore[attr-defined]
        return tps


def _started(spec: KafkaSourceSpec, properties: dict[str, str], consumer: _FakeConsumer) -> dict:
    reader = KafkaStreamReader(spec, properties, 0)
    reader._meta = consumer
    reader._admin = False  # a broker without topic ids (tests/ingest/kafka/test_offset_checks.py has ids)
    return reader.initialOffset()


TOPICS = {"a": [(5, 50), (7, 70)], "b": [(0, 9)]}


def test_group_offsets_take_commits_then_the_reset() -> None:
    spec = KafkaSourceSpec(topics=("a", "b"), startup_mode="group-offsets")
    consumer = _FakeConsumer(TOPICS, {("a", 1): 33})
    assert _started(spec, {"group.id": "g"}, consumer) == {"a": {"0": 5, "1": 33}, "b": {"0": 0}}
    latest = {"group.id": "g", "auto.offset.reset": "latest"}
    assert _started(spec, latest, consumer) == {"a": {"0": 50, "1": 33}, "b": {"0": 9}}
    # Without a group id (Paimon's random group) nothing is committed: the reset decides.
    assert _started(spec, {"auto.offset.reset": "latest"}, consumer) == {"a": {"0": 50, "1": 70}, "b": {"0": 9}}


def test_group_offsets_with_reset_none_fail_like_kafkas_client() -> None:
    spec = KafkaSourceSpec(topics=("a",), startup_mode="group-offsets")
    with pytest.raises(KafkaSourceError, match=r"Undefined offset with no reset policy for partitions: \[a-0\]"):
        _started(spec, {"group.id": "g", "auto.offset.reset": "error"}, _FakeConsumer(TOPICS, {("a", 1): 3}))


def test_specific_offsets_are_the_first_topics() -> None:
    spec = KafkaSourceSpec(
        topics=("a", "b"), startup_mode="specific-offsets", startup_specific_offsets="partition:1,offset:42"
    )
    assert _started(spec, {}, _FakeConsumer(TOPICS, {})) == {"a": {"0": 5, "1": 42}, "b": {"0": 0}}
    bad = KafkaSourceSpec(
        topics=("b",), startup_mode="specific-offsets", startup_specific_offsets="partition:3,offset:1"
    )
    with pytest.raises(KafkaSourceError, match="partition 3, which topic 'b' does not have"):
        _started(bad, {}, _FakeConsumer(TOPICS, {}))


def test_missing_topic_and_unmatched_pattern_quote_paimon() -> None:
    missing = KafkaSourceSpec(topics=("nope",))
    with pytest.raises(KafkaSourceError, match=r"Failed to find partition information for topic 'nope'\. Please check"):
        _started(missing, {}, _FakeConsumer(TOPICS, {}))
    pattern = KafkaSourceSpec(topic_pattern="z.*", pattern_must_match=True)
    with pytest.raises(KafkaSourceError, match=r"Cannot find topics match the topic-pattern z\.\*"):
        _started(pattern, {}, _FakeConsumer(TOPICS, {}))
    assert _started(KafkaSourceSpec(topic_pattern="z.*"), {}, _FakeConsumer(TOPICS, {})) == {}
