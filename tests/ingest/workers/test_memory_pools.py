"""Compaction's own Arrow memory pool (ingest/workers/memory.py): what it allocates from, and that the
worker's default pool comes back after it, also when the compaction fails."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ingest.workers.memory import compaction_pool


def test_arrow_allocates_from_the_compaction_pool_inside_and_from_the_default_after() -> None:
    default = pa.default_memory_pool()
    with compaction_pool():
        inside = pa.default_memory_pool()
        assert inside.backend_name in {"jemalloc", "system"}
        before = inside.bytes_allocated()
        data = pc.sort_indices(pa.array([f"{i:036d}" for i in range(50_000)]))  # a sort's buffers
        assert inside.bytes_allocated() > before
    assert pa.default_memory_pool().backend_name == default.backend_name
    assert data.to_numpy()[0] == 0  # buffers made inside outlive the block, in the pool that made them


def test_the_default_pool_comes_back_when_the_compaction_raises() -> None:
    default = pa.default_memory_pool().backend_name
    with pytest.raises(RuntimeError, match="merge failed"), compaction_pool():
        raise RuntimeError("merge failed")
    assert pa.default_memory_pool().backend_name == default
