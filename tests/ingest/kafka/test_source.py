"""Planning of the Kafka source (no broker needed): ranges, splits, admission control."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import pytest
from pyspark.sql.datasource import InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from ingest.kafka.source import (
    KafkaRange,
    KafkaSourceSpec,
    KafkaStreamReader,
    RangeGroup,
    group_ranges,
    parse_specific_offsets,
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


def test_specific_offsets_syntax() -> None:
    assert parse_specific_offsets("partition:0,offset:42;partition:1,offset:300") == {0: 42, 1: 300}
    with pytest.raises(ValueError, match="expected partition:N,offset:M"):
        parse_specific_offsets("0:42")


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
