"""Snapshot micro-batches planned by the estimated rows of their chunks (#27)."""

from __future__ import annotations

from typing import Any

from ingest.mysql.snapshot_batches import batch_end, chunk_rows

CHUNK = 32768


def _plan(chunks: list[list[Any]], rows: dict[str, int | None], max_rows: int) -> list[int]:
    """The ``done`` of each micro-batch's end offset, from the first to the last chunk."""
    estimates = chunk_rows(chunks, rows, CHUNK)
    ends, done = [], 0
    while done < len(chunks):
        done = batch_end(estimates, done, max_rows)
        ends.append(done)
    return ends


def test_many_small_tables_share_a_batch_up_to_the_bound() -> None:
    chunks: list[list[Any]] = [["shop", f"t{i:04d}", None, None] for i in range(1000)]
    rows: dict[str, int | None] = {f"shop.t{i:04d}": 10 for i in range(1000)}
    # was 15 chunks a batch (67 batches); at most 256 chunks (Spark tasks) a batch, for an early first commit
    assert _plan(chunks, rows, 500_000) == [256, 512, 768, 1000]
    assert _plan(chunks, rows, 2_500) == [250, 500, 750, 1000]


def test_split_chunks_count_chunk_size_and_edges_what_the_bounded_ones_do_not_hold() -> None:
    chunks: list[list[Any]] = [
        ["d", "big", None, 10],
        ["d", "big", 10, 20],
        ["d", "big", 20, 30],
        ["d", "big", 30, None],
    ]
    assert chunk_rows(chunks, {"d.big": 4 * CHUNK + 2_000}, CHUNK) == [CHUNK + 1_000, CHUNK, CHUNK, CHUNK + 1_000]
    # the last chunk of a table that grew since its plan
    assert chunk_rows(chunks, {"d.big": 10 * CHUNK}, CHUNK) == [4 * CHUNK, CHUNK, CHUNK, 4 * CHUNK]
    # a stale or low estimate never makes an edge chunk smaller than a bounded one
    assert chunk_rows(chunks, {"d.big": 0}, CHUNK) == [CHUNK] * 4


def test_tables_without_an_estimate_count_chunk_size_per_chunk() -> None:
    chunks: list[list[Any]] = [["d", "gone", None, None], ["d", "unknown", None, None]]
    assert chunk_rows(chunks, {"d.gone": None}, CHUNK) == [CHUNK, CHUNK]


def test_an_empty_table_counts_one_row() -> None:
    assert chunk_rows([["d", "empty", None, None]], {"d.empty": 0}, CHUNK) == [1]


def test_at_least_one_chunk_and_never_above_the_bound_unless_alone() -> None:
    rows = [10, 3_000_000, 10, 10, 400, 600]
    assert batch_end(rows, 0, 1_000) == 1  # the next chunk alone exceeds the bound: it waits
    assert batch_end(rows, 1, 1_000) == 2  # a chunk alone above the bound is a batch of its own
    assert batch_end(rows, 2, 1_000) == 5  # 10 + 10 + 400 (+ 600 would exceed 1,000)
    assert batch_end(rows, 5, 1_000) == 6
    assert batch_end(rows, 2, 1_020) == 6  # exactly the bound
    for done in range(len(rows)):
        end = batch_end(rows, done, 1_000)
        assert end > done and (end == done + 1 or sum(rows[done:end]) <= 1_000)


def test_the_old_chunk_count_plan_for_equal_chunks() -> None:
    # chunks of chunk_size rows: as many per batch as before (max_rows // chunk_size)
    chunks: list[list[Any]] = [["d", "t", i, i + 1] for i in range(100)]
    assert _plan(chunks, {"d.t": 100 * CHUNK}, 500_000)[:2] == [15, 30]
