"""Planning of the Kafka source (no broker needed): ranges, splits, admission control."""

from __future__ import annotations

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from ingest.kafka_source import KafkaRange, KafkaSourceSpec, KafkaStreamReader, parse_specific_offsets


def _reader(min_partitions: int = 2) -> KafkaStreamReader:
    return KafkaStreamReader(KafkaSourceSpec(topics=("t",), min_partitions=min_partitions), {}, 0)


def test_long_ranges_are_split_in_offset_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_SPLIT_MESSAGES", "40")
    parts = _reader().partitions({"t": {"0": 0, "1": 5}}, {"t": {"0": 100, "1": 5}})
    assert [(p.partition, p.start, p.end) for p in parts if isinstance(p, KafkaRange)] == [
        (0, 0, 40),
        (0, 40, 80),
        (0, 80, 100),
    ]
    parts = _reader().partitions({"t": {"0": 0}}, {"t": {"0": 55}})
    assert [(p.start, p.end) for p in parts if isinstance(p, KafkaRange)] == [(0, 55)]  # < 1.5 splits: whole


def test_default_split_keeps_small_ranges_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKECDC_SPLIT_MESSAGES", raising=False)
    parts = _reader().partitions({"t": {"0": 0, "1": 0}}, {"t": {"0": 1000, "1": 10}})
    assert [(p.partition, p.start, p.end) for p in parts if isinstance(p, KafkaRange)] == [(0, 0, 1000), (1, 0, 10)]


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
