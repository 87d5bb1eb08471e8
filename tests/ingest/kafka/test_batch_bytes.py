"""A Kafka micro-batch bounded by bytes of messages (``ingest.kafka.batch_bytes``), without a broker:
the sizes come from a function of (topic, partition, offset)."""

from __future__ import annotations

from ingest.kafka.batch_bytes import MAX_BATCH_BYTES, MessageSizes, within_bytes


def test_counts_within_the_bytes_are_kept_and_more_are_cut_in_proportion() -> None:
    counts = {("a", "0"): 3000, ("a", "1"): 1000}
    assert within_bytes(counts, {"a": 100.0}, 400_000) == counts  # 400,000 bytes: all of them
    cut = within_bytes(counts, {"a": 100.0}, 200_000)
    assert cut == {("a", "0"): 1500, ("a", "1"): 500}
    assert within_bytes(counts, {}, 1) == counts  # no sample: no bound


def test_topics_of_other_sizes_weigh_by_their_own_and_an_unsampled_one_by_the_largest() -> None:
    counts = {("small", "0"): 1000, ("big", "0"): 1000, ("new", "0"): 1000}
    # 1000 x 10 + 1000 x 1000 + 1000 x 1000 (the largest) = 2,010,000 bytes, for 1,005,000
    cut = within_bytes(counts, {"small": 10.0, "big": 1000.0}, 1_005_000)
    assert sum(cut.values()) == 1500 and set(cut.values()) == {500}


def _sizes(size: int, seen: list[tuple[str, int, int]], now: list[float] | None = None) -> MessageSizes:
    def size_at(topic: str, partition: int, offset: int) -> int:
        seen.append((topic, partition, offset))
        return size

    clock = now if now is not None else [0.0]
    return MessageSizes(size_at, clock=lambda: clock[0])


def test_large_messages_are_sampled_at_the_partitions_with_most_waiting_and_bounded() -> None:
    seen: list[tuple[str, int, int]] = []
    now = [0.0]
    sizes = _sizes(40_000, seen, now)  # a 1,000-column canal-json row
    counts = {("t", str(p)): 10_000 + p for p in range(6)}
    starts = {("t", str(p)): 100 * p for p in range(6)}
    bounded = sizes.bound(starts, counts)
    assert sorted(seen) == [("t", p, 100 * p) for p in (2, 3, 4, 5)]  # the four with most waiting
    assert sum(bounded.values()) == MAX_BATCH_BYTES // 40_000
    # sampled once per RESAMPLE_S: the next plan reuses it, a later one samples again
    sizes.bound(starts, counts)
    assert len(seen) == 4
    now[0] = 31.0
    sizes.bound(starts, counts)
    assert len(seen) == 8


def test_small_batches_and_small_messages_are_left_alone() -> None:
    seen: list[tuple[str, int, int]] = []
    few = {("t", "0"): 511}  # 511 messages of at most 1 MiB: under 512 MiB whatever their size
    assert _sizes(1 << 20, seen).bound({("t", "0"): 0}, few) == few and seen == []
    many = {("t", "0"): 500_000}  # make bench's ~794-byte messages: 379 MiB
    assert _sizes(794, seen).bound({("t", "0"): 0}, many) == many and len(seen) == 1


def test_a_failed_sample_leaves_the_batch_to_its_message_budget() -> None:
    def size_at(topic: str, partition: int, offset: int) -> int:
        raise RuntimeError("broker away")

    counts = {("t", "0"): 50}
    assert MessageSizes(size_at, max_bytes=1000).bound({("t", "0"): 0}, counts) == counts
