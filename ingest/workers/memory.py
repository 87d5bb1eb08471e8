"""Give a Python worker's freed memory back to the system at the end of a task.

Spark keeps its Python workers between tasks, so what a task freed stays mapped by the allocators
unless it is handed back: Arrow's pool (mimalloc) keeps its pages, glibc keeps the heap that
librdkafka's fetch buffers and Python's objects grew. A read task parses ~125k messages, so an
idle reader sat on 250 to 350 MiB while another worker wrote; handing the pages back (a few ms) took
an idle reader to 140 to 230 MiB, measured with bench's command (bench/README.md).

(pandas is no longer hidden from pyarrow in the workers, as it was until 1c7ef91: compaction runs in the
same workers since then, and it needs pyarrow's pandas support — pypaimon imports pandas anyway, and
converting a TIMESTAMP(9) value to Python fails without it.)
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pyarrow as pa


@cache
def _malloc_trim() -> Callable[[int], Any] | None:
    """glibc's ``malloc_trim`` from the process's own symbols (None where the C library is not glibc)."""
    try:
        trim: Callable[[int], Any] = ctypes.CDLL(None).malloc_trim
        return trim
    except (OSError, AttributeError):
        return None


def release_unused_memory() -> None:
    """Return freed Arrow and C heap memory to the operating system."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _compaction_pool() -> pa.MemoryPool:
    """jemalloc where pyarrow has it, else the C library's allocator (see ``compaction_pool``)."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.system_memory_pool()


@contextlib.contextmanager
def compaction_pool() -> Iterator[None]:
    """Arrow allocates from jemalloc (or the C library) inside the block, then hands that pool's
    freed memory back; the worker's default pool (mimalloc) is restored after it.

    A compaction reads, sorts and writes whole row groups of large strings: under mimalloc one
    bucket of 2M UUID-keyed rows peaked at 531 MiB and the worker kept 381 MiB after
    ``release_unused_memory``; under jemalloc 300-342 MiB and 257, under the C library's 451 and
    180, both ~10% faster (bench/README.md). The read and write tasks stay on mimalloc: a whole job
    under jemalloc took ~10% longer."""
    previous = pa.default_memory_pool()
    pool = _compaction_pool()
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(previous)
        pool.release_unused()
