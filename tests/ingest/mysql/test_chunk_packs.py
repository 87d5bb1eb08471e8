"""Which snapshot chunks share a read task (``ingest.mysql.chunk_packs``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ingest.mysql.chunk_packs import MAX_PACK, ChunkPack, chunk_partitions, pack_chunks
from ingest.mysql.key_diff import ResnapshotChunkPartition
from ingest.mysql.spec import Chunk, ChunkPartition


def _parts(n: int) -> list[ChunkPartition]:
    return [ChunkPartition(i, Chunk("d", f"t{i}", None, None)) for i in range(n)]


def _indexes(tasks: Sequence[object]) -> list[list[int]]:
    out = []
    for task in tasks:
        if isinstance(task, ChunkPack):
            out.append([p.index for p in task.parts])
        else:
            assert isinstance(task, ChunkPartition)
            out.append([task.index])
    return out


def test_small_tables_are_packed_into_one_task_per_core() -> None:
    assert _indexes(pack_chunks(_parts(8), [10] * 8, 8096, 2)) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_many_small_tables_are_packed_at_most_max_pack_a_task() -> None:
    tasks = _indexes(pack_chunks(_parts(256), [10] * 256, 8096, 2))
    assert len(tasks) == 256 // MAX_PACK
    assert [i for t in tasks for i in t] == list(range(256))


def test_a_pack_holds_at_most_a_chunks_estimated_rows() -> None:
    assert _indexes(pack_chunks(_parts(5), [3000, 3000, 3000, 100, 100], 8096, 1)) == [[0, 1], [2, 3, 4]]


def test_chunks_of_a_chunks_rows_stay_tasks_of_their_own_and_small_ones_around_them_pack() -> None:
    parts = _parts(6)
    tasks = pack_chunks(parts, [5, 8096, 9000, 5, 5, 5], 8096, 1)
    assert _indexes(tasks) == [[1], [2], [0, 3, 4, 5]]
    assert tasks[0] is parts[1]  # not wrapped


def test_one_small_chunk_alone_is_not_wrapped() -> None:
    parts = _parts(3)
    assert pack_chunks(parts, [5, 5, 5], 8096, 4) == parts


@given(
    st.lists(st.integers(0, 20000), max_size=300),
    st.integers(1, 20000),
    st.integers(1, 8),
)
def test_every_chunk_is_read_once_and_packs_are_bounded(rows: list[int], chunk_size: int, tasks: int) -> None:
    packed = pack_chunks(_parts(len(rows)), rows, chunk_size, tasks)
    indexes = _indexes(packed)
    assert sorted(i for t in indexes for i in t) == list(range(len(rows)))
    for t in indexes:
        if len(t) > 1:
            assert len(t) <= MAX_PACK
            assert sum(rows[i] for i in t) <= chunk_size
            assert all(rows[i] < chunk_size for i in t)
    small = sum(1 for n in rows if n < chunk_size)
    if small >= tasks:  # enough small chunks: at least a task per core among them
        assert sum(1 for t in indexes if rows[t[0]] < chunk_size) >= tasks


def test_partitions_are_numbered_from_the_first_chunk_and_carry_a_resnapshots_scan() -> None:
    chunks: list[list[Any]] = [["d", "a", None, 5], ["d", "a", 5, None]]
    plain = chunk_partitions(chunks, 7, True, None)
    assert [(p.index, p.chunk.lo, p.chunk.hi, p.history) for p in plain] == [(7, None, 5, True), (8, 5, None, True)]
    again = chunk_partitions(chunks, 0, False, {})
    assert all(isinstance(p, ResnapshotChunkPartition) and p.scan is None for p in again)
