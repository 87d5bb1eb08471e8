"""How a micro-batch's Kafka offsets become read tasks: one range per partition (long ones split), ranges
packed into groups one task reads in order, and a ``--max-offsets-per-trigger`` budget shared over the
partitions (``ingest.kafka.source`` plans with these)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.datasource import InputPartition


@dataclass(frozen=True)
class KafkaRange(InputPartition):
    """Offsets ``[start, end)`` of one Kafka partition."""

    topic: str
    partition: int
    start: int
    end: int
    value: Any = field(default=None, compare=False)


@dataclass
class RangeGroup(InputPartition):
    """Ranges one read task reads one after the other, in order: a micro-batch over many partitions
    with few messages each costs a few tasks, not a task (and a consumer) per partition."""

    ranges: tuple[KafkaRange, ...]
    value: Any = field(default=None, compare=False)


def group_ranges(ranges: list[KafkaRange], target: int) -> list[RangeGroup]:
    """Consecutive ranges packed into groups of up to ``target`` messages (a longer range is a group
    of its own). Groups keep the ranges' order, so a partition's ranges stay in offset order across
    groups, which is the order the write tasks read them in."""
    groups: list[list[KafkaRange]] = []
    size = 0
    for r in ranges:
        n = r.end - r.start
        if groups and size + n <= target:
            groups[-1].append(r)
            size += n
        else:
            groups.append([r])
            size = n
    return [RangeGroup(tuple(g)) for g in groups]


def share_budget(counts: Mapping[tuple[str, str], int], budget: int) -> dict[tuple[str, str], int]:
    """Split a micro-batch's message budget over partitions in proportion to what each has waiting,
    using the whole budget (largest remainders get the rounding): a floor-rounded share would leave a
    few messages per partition behind, and each such tail costs a whole micro-batch of its own.
    Every partition with messages gets at least one, so none starves."""
    total = sum(counts.values())
    shares = {tp: max(1, n * budget // total) for tp, n in counts.items()}
    left = budget - sum(shares.values())
    by_remainder = sorted(counts, key=lambda tp: (-(counts[tp] * budget % total), tp))
    for tp in by_remainder:
        if left <= 0:
            break
        if shares[tp] < counts[tp]:
            shares[tp] += 1
            left -= 1
    return shares
