"""Checkpointed Kafka offsets against the broker's (#23): a re-created topic, a truncated log, retention
past unread messages and vanished partitions each stop the job naming topic, partition and offsets, or,
with scan.offset-reset-on-loss=earliest, resume from the earliest offset. No broker needed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from ingest.kafka.offset_checks import (
    IDS_KEY,
    LossKind,
    OffsetLossError,
    TopicState,
    find_losses,
    resume,
    split_ids,
    with_ids,
)
from ingest.kafka.source import KafkaRange, KafkaSourceSpec, KafkaStreamReader, RangeGroup


def _state(topic_id: str | None, *marks: tuple[int, int]) -> TopicState:
    return TopicState(topic_id, dict(enumerate(marks)))


def test_offsets_within_the_watermarks_and_the_same_topic_id_are_no_loss() -> None:
    positions = {"t": {"0": 10, "1": 0}}
    current = {"t": _state("id1", (0, 10), (0, 5), (0, 3))}  # partition 2 is new: no loss
    assert find_losses(positions, {"t": "id1"}, current) == []
    assert resume(positions, [], "none") == positions


@pytest.mark.parametrize(
    ("marks", "kind"),
    [((0, 400), LossKind.END_BELOW), ((1200, 1500), LossKind.START_ABOVE)],
    ids=["end-below-checkpoint", "earliest-above-checkpoint"],
)
def test_watermarks_past_the_checkpoint_stop_the_job_naming_both_offsets(
    marks: tuple[int, int], kind: LossKind
) -> None:
    positions = {"t": {"0": 1000}}
    losses = find_losses(positions, {}, {"t": _state(None, marks)})
    assert [(x.kind, x.topic, x.partition, x.checkpointed, x.watermarks) for x in losses] == [
        (kind, "t", 0, 1000, marks)
    ]
    with pytest.raises(OffsetLossError) as info:
        resume(positions, losses, "none")
    text = str(info.value)
    assert "Kafka topic 't', partition 0: checkpointed next offset 1000" in text
    assert f"now {marks[0]} (earliest) to {marks[1]} (end)" in text
    assert "scan.offset-reset-on-loss=earliest" in text and "new checkpoint" in text
    assert resume(positions, losses, "earliest") == {"t": {"0": marks[0]}}


def test_a_recreated_topic_is_found_by_its_id_even_past_the_old_offset() -> None:
    # The case: 1,000 read, topic re-created with 1,500: watermarks alone look fine.
    positions = {"t": {"0": 1000}}
    losses = find_losses(positions, {"t": "old"}, {"t": _state("new", (0, 1500))})
    assert [x.kind for x in losses] == [LossKind.RECREATED]
    with pytest.raises(OffsetLossError, match=r"re-created \(its topic id changed\) \(topic id old -> new\)"):
        resume(positions, losses, "none")
    assert resume(positions, losses, "earliest") == {"t": {"0": 0}}
    # checkpoints without ids (written before they were recorded) are checked by watermarks only
    assert find_losses(positions, {}, {"t": _state("new", (0, 1500))}) == []


def test_vanished_partitions_and_topics_are_losses_and_dropped_on_reset() -> None:
    positions = {"t": {"0": 5, "1": 7}, "gone": {"0": 3}, "unsubscribed": {"0": 9}}
    current = {"t": _state(None, (0, 5)), "gone": None}  # 'unsubscribed' is not checked
    losses = find_losses(positions, {}, current)
    assert [(x.kind, x.topic, x.partition) for x in losses] == [
        (LossKind.PARTITION_GONE, "gone", 0),
        (LossKind.PARTITION_GONE, "t", 1),
    ]
    with pytest.raises(OffsetLossError, match="partition 1: checkpointed next offset 7, the broker has no such"):
        resume(positions, losses, "none")
    assert resume(positions, losses, "earliest") == {"t": {"0": 5}, "unsubscribed": {"0": 9}}


def test_topic_ids_travel_in_the_offsets_under_a_key_no_topic_can_have() -> None:
    offsets = with_ids({"t": {"0": 3}}, {"t": "id1", "other": "id2"})
    assert offsets == {"t": {"0": 3}, IDS_KEY: {"t": "id1"}}
    assert split_ids(offsets) == ({"t": {"0": 3}}, {"t": "id1"})
    assert with_ids({"t": {"0": 3}}, {}) == {"t": {"0": 3}}  # the offsets of old checkpoints, unchanged


class _Future:
    def __init__(self, topic_id: str) -> None:
        self.topic_id = topic_id

    def result(self, timeout: float) -> Any:
        return SimpleNamespace(topic_id=self.topic_id)


class _Broker:
    """The metadata calls the reader makes: topic -> (id, [(low, high) per partition])."""

    def __init__(self, topics: dict[str, tuple[str, list[tuple[int, int]]]]) -> None:
        self.topics = topics

    def list_topics(self, timeout: float) -> object:
        meta = {
            t: SimpleNamespace(error=None, partitions=dict.fromkeys(range(len(w)))) for t, (_, w) in self.topics.items()
        }
        return SimpleNamespace(topics=meta)

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        return self.topics[tp.topic][1][tp.partition]

    def describe_topics(self, topics: Any, request_timeout: float) -> dict[str, _Future]:
        return {t: _Future(self.topics[t][0]) for t in topics.topic_names}


def _reader(broker: _Broker, reset: str = "none", **spec: Any) -> KafkaStreamReader:
    reader = KafkaStreamReader(KafkaSourceSpec(offset_reset_on_loss=reset, **spec), {}, 0)
    reader._meta = reader._admin = broker
    return reader


def test_initial_offsets_carry_topic_ids() -> None:
    reader = _reader(_Broker({"t": ("id1", [(2, 9)])}), topics=("t",), startup_mode="earliest-offset")
    assert reader.initialOffset() == {"t": {"0": 2}, IDS_KEY: {"t": "id1"}}


@pytest.mark.parametrize("available_now", [False, True])
def test_a_recreated_topic_stops_the_job_before_reading(available_now: bool) -> None:
    reader = _reader(_Broker({"t": ("new", [(0, 1500)])}), topics=("t",))
    if available_now:
        reader.prepareForTriggerAvailableNow()
    start = {"t": {"0": 1000}, IDS_KEY: {"t": "old"}}
    with pytest.raises(
        OffsetLossError, match=r"topic 't', partition 0: checkpointed next offset 1000, .* 0 \(earliest\) to 1500"
    ):
        reader.latestOffset(start, ReadAllAvailable())


def test_reset_moves_to_the_earliest_offset_in_a_batch_that_reads_nothing() -> None:
    reader = _reader(_Broker({"t": ("new", [(0, 1500)])}), "earliest", topics=("t",))
    reader.prepareForTriggerAvailableNow()
    start = {"t": {"0": 1000}, IDS_KEY: {"t": "old"}}
    moved = reader.latestOffset(start, ReadAllAvailable())
    assert moved == {"t": {"0": 0}, IDS_KEY: {"t": "new"}}
    assert reader.partitions(start, moved) == []  # nothing of the old topic's offsets is read
    end = reader.latestOffset(moved, ReadAllAvailable())
    assert end == {"t": {"0": 1500}, IDS_KEY: {"t": "new"}}
    parts = reader.partitions(moved, end)
    ranges = [(r.start, r.end) for g in parts if isinstance(g, RangeGroup) for r in g.ranges]
    assert ranges[0][0] == 0 and ranges[-1][1] == 1500
    assert reader.latestOffset(end, ReadAllAvailable()) == end  # available-now ends


def test_a_deleted_pattern_topic_is_a_loss_and_an_unsubscribed_one_is_not() -> None:
    reader = _reader(_Broker({"cdc_a": ("a", [(0, 5)])}), topic_pattern="cdc_.*")
    start = {"cdc_a": {"0": 5}, "cdc_b": {"0": 3}, "old_topic": {"0": 1}}
    with pytest.raises(
        OffsetLossError, match="topic 'cdc_b', partition 0: checkpointed next offset 3, the broker has no"
    ):
        reader.latestOffset(start, ReadAllAvailable())
    reader = _reader(_Broker({"cdc_a": ("a", [(0, 5)])}), "earliest", topic_pattern="cdc_.*")
    assert reader.latestOffset(start, ReadAllAvailable()) == {
        "cdc_a": {"0": 5},
        "old_topic": {"0": 1},
        IDS_KEY: {"cdc_a": "a"},
    }


def test_with_reset_a_range_below_the_earliest_offset_is_read_from_the_earliest() -> None:
    # Retention ran between planning (or the checkpoint) and this plan: the batch replays from the earliest.
    broker = _Broker({"t": ("id", [(120, 200)])})
    ranges = _reader(broker, "earliest", topics=("t",)).partitions({"t": {"0": 100}}, {"t": {"0": 200}})
    assert [r for g in ranges if isinstance(g, RangeGroup) for r in g.ranges] == [KafkaRange("t", 0, 120, 200)]
    # without the option the range is planned as it is, and the read task stops naming the offsets
    plain = _reader(broker, topics=("t",)).partitions({"t": {"0": 100}}, {"t": {"0": 200}})
    assert [r for g in plain if isinstance(g, RangeGroup) for r in g.ranges] == [KafkaRange("t", 0, 100, 200)]
