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

import ctypes
from collections.abc import Callable
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
