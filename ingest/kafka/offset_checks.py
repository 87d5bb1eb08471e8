"""Checkpointed Kafka offsets against what the broker holds now (#23).

A checkpoint says "partition p of topic t continues at offset n". That is only true while the
partition still holds offset n: a topic deleted and re-created (a new topic id, offsets from 0
again), a log truncated by an unclean leader election (high watermark below n), or retention that
deleted messages before they were read (low watermark above n) each make the saved offset point
at other data, or at none. Read naively, the job stalls until the new log passes n and then skips
everything before it, with exit code 0. ``find_losses`` names each such partition; ``resume``
stops the job with all of them (the default), or, with ``scan.offset-reset-on-loss=earliest``,
returns the offsets to resume from (each affected partition's earliest offset), which the caller
logs as a warning.

Everything here is a pure function of the checkpointed offsets and the broker's current state, so
every case is tested without a broker (tests/ingest/kafka/test_offset_checks.py).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from schema_evolution.errors import LakeCdcError

Offsets = dict[str, dict[str, int]]

# Topic ids travel in the offsets under a key no Kafka topic can have ('@' is not allowed in topic
# names), so a re-created topic is recognised even when it already holds more messages than the
# checkpoint had read. Checkpoints written before the ids were recorded are checked by offsets only.
IDS_KEY = "@topic-ids"

RESET_OPTION = "scan.offset-reset-on-loss"
RESETS = ("none", "earliest")


class KafkaSourceError(LakeCdcError):
    """A Kafka-side problem that retrying will not fix (offsets gone, bad options)."""


class OffsetLossError(KafkaSourceError):
    """The checkpoint points at Kafka data that is no longer there (or is other data now)."""


class LossKind(enum.StrEnum):
    RECREATED = "the topic was deleted and re-created (its topic id changed)"
    END_BELOW = (
        "the partition's end (high watermark) is below the checkpointed offset: topic re-created, or log truncated"
    )
    START_ABOVE = "the partition's earliest offset is above the checkpointed offset: retention deleted unread messages"
    PARTITION_GONE = "the partition no longer exists: topic deleted, or its partitions reduced"


@dataclass(frozen=True)
class TopicState:
    """One topic as the broker has it now: its id (None if the broker reports none) and each
    partition's ``(low, high)`` watermarks."""

    topic_id: str | None
    watermarks: Mapping[int, tuple[int, int]]


@dataclass(frozen=True)
class OffsetLoss:
    kind: LossKind
    topic: str
    partition: int
    checkpointed: int
    watermarks: tuple[int, int] | None  # None: the partition is gone
    old_id: str | None = None
    new_id: str | None = None

    @property
    def resume_at(self) -> int | None:
        """Where ``earliest`` resumes: the partition's earliest offset (None: the partition is dropped)."""
        return None if self.watermarks is None else self.watermarks[0]

    def describe(self) -> str:
        where = f"Kafka topic '{self.topic}', partition {self.partition}: checkpointed next offset {self.checkpointed}"
        if self.watermarks is None:
            broker = "the broker has no such partition"
        else:
            low, high = self.watermarks
            broker = f"the broker's offsets are now {low} (earliest) to {high} (end)"
        ids = f" (topic id {self.old_id} -> {self.new_id})" if self.kind is LossKind.RECREATED else ""
        return f"{where}, {broker}: {self.kind.value}{ids}"


def split_ids(offsets: Mapping[str, object]) -> tuple[Offsets, dict[str, str]]:
    """Offsets as Spark keeps them -> (positions, topic ids)."""
    ids = offsets.get(IDS_KEY)
    positions = {
        t: {p: int(o) for p, o in ps.items()} for t, ps in offsets.items() if t != IDS_KEY and isinstance(ps, dict)
    }
    return positions, dict(ids) if isinstance(ids, dict) else {}


def with_ids(positions: Offsets, ids: Mapping[str, str]) -> dict[str, object]:
    """Positions and the ids of their topics, as Spark keeps them (no ids key when none is known)."""
    known = {t: i for t, i in sorted(ids.items()) if t in positions}
    return {**positions, IDS_KEY: known} if known else dict(positions)


def find_losses(
    positions: Offsets, ids: Mapping[str, str], current: Mapping[str, TopicState | None]
) -> list[OffsetLoss]:
    """Every checkpointed partition whose offset the broker no longer holds. ``current`` has the
    topics the job still reads (None: the topic is not on the broker); checkpointed topics it does
    not name (no longer subscribed) are not checked. A partition new since the checkpoint is no loss."""
    losses: list[OffsetLoss] = []
    for topic, parts in sorted(positions.items()):
        if topic not in current:
            continue
        state = current[topic]
        old_id = ids.get(topic)
        recreated = state is not None and None not in (old_id, state.topic_id) and old_id != state.topic_id
        for p, offset in sorted(parts.items(), key=lambda kv: int(kv[0])):
            marks = None if state is None else state.watermarks.get(int(p))
            loss = _loss(topic, int(p), offset, marks, recreated)
            if loss is not None:
                new_id = state.topic_id if state is not None else None
                losses.append(OffsetLoss(loss, topic, int(p), offset, marks, old_id, new_id))
    return losses


def _loss(topic: str, partition: int, offset: int, marks: tuple[int, int] | None, recreated: bool) -> LossKind | None:
    if marks is None:
        return LossKind.PARTITION_GONE
    if recreated:
        return LossKind.RECREATED
    low, high = marks
    if high < offset:
        return LossKind.END_BELOW
    if low > offset:
        return LossKind.START_ABOVE
    return None


def resume(positions: Offsets, losses: list[OffsetLoss], reset: str) -> Offsets:
    """The positions to continue from: unchanged without losses; with losses, ``OffsetLossError``
    naming each (``reset`` = none), or each lost partition at its earliest offset and each gone one
    dropped (``reset`` = earliest; a dropped partition that comes back starts at its earliest)."""
    if not losses:
        return positions
    if reset != "earliest":
        raise OffsetLossError(loss_message(losses))
    out = {t: dict(ps) for t, ps in positions.items()}
    for loss in losses:
        at = loss.resume_at
        if at is None:
            out[loss.topic].pop(str(loss.partition), None)
        else:
            out[loss.topic][str(loss.partition)] = at
    return {t: ps for t, ps in out.items() if ps}


def loss_message(losses: list[OffsetLoss]) -> str:
    lines = "; ".join(loss.describe() for loss in losses)
    return (
        f"The checkpoint's Kafka offsets no longer match the broker, so reading on would skip or misread data: "
        f"{lines}. Either start over with a new checkpoint (and, if rows were lost upstream, a fresh snapshot of "
        f"the source), or set --kafka-conf {RESET_OPTION}=earliest to resume each of these partitions from its "
        "earliest offset (logged as a warning; unread messages deleted upstream stay lost, and a re-created "
        "topic is read from its start)."
    )


def lost_range_message(topic: str, partition: int, offset: int, low: int, high: int) -> str:
    """A read task's range starts at an offset the partition no longer holds (retention or truncation
    between planning and reading)."""
    return (
        f"Kafka topic '{topic}', partition {partition}: offset {offset} is no longer available (the broker's "
        f"offsets are now {low} (earliest) to {high} (end); deleted by retention, or the topic re-created or "
        f"truncated). Nothing was skipped: the job stops. Restart with --kafka-conf {RESET_OPTION}=earliest to "
        "resume this partition from its earliest offset, or with a new checkpoint (and a fresh snapshot of the "
        "source, since changes were lost upstream)."
    )
