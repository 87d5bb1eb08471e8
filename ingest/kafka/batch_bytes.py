"""A Kafka micro-batch bounded by bytes of messages as well as by ``--max-offsets-per-trigger`` (#27).

The message budget alone lets a topic of large messages make huge batches: 20,000 canal-json messages
of a 1,000-column row (~40 KB each, 770 MiB) were one micro-batch at a 2.56 GiB peak, and the default
budget of 500,000 such messages would be ~19 GiB (bench/README.md, "Kafka, wide messages"). So the
planner samples the size of the next message of the partitions with the most waiting, at most every
``RESAMPLE_S`` per topic, and plans at most about ``MAX_BATCH_BYTES`` of them. A replayed batch reads
the offsets its checkpoint holds, whatever a sample said.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import structlog

from ingest.kafka.ranges import share_budget

log = structlog.get_logger("lakecdc.kafka")

# 512 MiB: the ~794-byte messages of ``make bench`` keep their 500,000-message batches (379 MiB).
MAX_BATCH_BYTES = 512 << 20
# Below Kafka's default 1 MB message size, fewer than max_bytes / 1 MiB messages cannot come to
# max_bytes: no sample is taken for them (most micro-batches of a running job).
LARGEST_MESSAGE = 1 << 20
SAMPLED_PARTITIONS = 4
RESAMPLE_S = 30.0

Partition = tuple[str, str]  # (topic, partition) as offsets name them
# The size in bytes (key and value) of the message at an offset of a partition.
SizeAt = Callable[[str, int, int], int]


def within_bytes(counts: Mapping[Partition, int], sizes: Mapping[str, float], max_bytes: int) -> dict[Partition, int]:
    """``counts`` (messages to read per partition) cut to about ``max_bytes`` of messages of each
    topic's average ``sizes`` (a topic without one counts as the largest average), shared over the
    partitions as the message budget is."""
    if not counts or not sizes:
        return dict(counts)
    largest = max(sizes.values())
    estimate = sum(n * sizes.get(topic, largest) for (topic, _p), n in counts.items())
    total = sum(counts.values())
    if estimate <= max_bytes:
        return dict(counts)
    return share_budget(counts, max(1, int(total * max_bytes / estimate)))


class MessageSizes:
    """Each topic's average message size, sampled from the next messages of its partitions with
    the most waiting (``size_at``), kept ``RESAMPLE_S``."""

    def __init__(
        self, size_at: SizeAt, max_bytes: int = MAX_BATCH_BYTES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._size_at = size_at
        self._max_bytes = max_bytes
        self._clock = clock
        self._sizes: dict[str, tuple[float, float]] = {}  # topic -> (average bytes, sampled at)

    def bound(self, starts: Mapping[Partition, int], counts: Mapping[Partition, int]) -> dict[Partition, int]:
        """``counts`` (from ``starts``) within the bound (``MAX_BATCH_BYTES``)."""
        max_bytes = self._max_bytes
        if sum(counts.values()) < max_bytes // LARGEST_MESSAGE:
            return dict(counts)
        now = self._clock()
        for topic in {t for t, _p in counts}:
            kept = self._sizes.get(topic)
            if kept is not None and now - kept[1] < RESAMPLE_S:
                continue
            mine = sorted(((n, tp) for tp, n in counts.items() if tp[0] == topic and n > 0), reverse=True)
            sampled = [
                s for _n, (_t, p) in mine[:SAMPLED_PARTITIONS] if (s := self._sample(topic, p, starts)) is not None
            ]
            if sampled:
                self._sizes[topic] = (sum(sampled) / len(sampled), now)
        sizes = {t: s for t, (s, _at) in self._sizes.items()}
        bounded = within_bytes(counts, sizes, max_bytes)
        if sum(bounded.values()) < sum(counts.values()):
            log.info(
                "micro-batch bounded by bytes",
                messages=sum(bounded.values()),
                of=sum(counts.values()),
                average_bytes={t: round(s) for t, s in sizes.items() if any(tp[0] == t for tp in counts)},
                max_bytes=max_bytes,
            )
        return bounded

    def _sample(self, topic: str, partition: str, starts: Mapping[Partition, int]) -> int | None:
        """One message's size; None where it cannot be read now (the read task will say why, if it
        cannot either): the bound is about memory, and a batch is not refused for a missing sample."""
        offset = starts[(topic, partition)]
        try:
            return self._size_at(topic, int(partition), offset)
        except Exception as exc:
            log.warning("message size not sampled", topic=topic, partition=partition, offset=offset, error=str(exc))
            return None
