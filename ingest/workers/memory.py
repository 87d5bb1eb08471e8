"""Give a Python worker's freed memory back to the system at the end of a task.

Spark keeps its Python workers between tasks, so what a task freed stays mapped by the allocators
unless it is handed back: Arrow's pool (mimalloc) keeps its pages, glibc keeps the heap that
librdkafka's fetch buffers and Python's objects grew. A read task parses ~125k messages, so an
idle reader sat on 250 to 350 MiB while another worker wrote; handing the pages back (a few ms) took
an idle reader to 140 to 230 MiB, measured with bench's command (bench/README.md).
"""

from __future__ import annotations

import ctypes
import sys
import threading
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


_pandas_checked = threading.Lock()
_pandas_kept_out = False


def keep_pandas_out() -> None:
    """Stop pyarrow from importing pandas into this Python worker.

    ``pa.array`` asks whether its input is a pandas object, and the first time it does, pyarrow
    imports pandas: ~50 MiB of resident memory and ~0.3 s in every Spark Python worker, which
    never hands pandas objects to Arrow. pyarrow tries that import once per process; hidden while
    it tries, pyarrow takes pandas as absent for ``pa.array`` (lists and tuples convert exactly as
    before), and anything that asks for pandas explicitly (``to_pandas``) still imports it.
    Call at the start of a task, before its first ``pa.array``; a process that already has pandas
    (a driver with pypaimon) is left as it is."""
    global _pandas_kept_out
    with _pandas_checked:
        if _pandas_kept_out or "pandas" in sys.modules:
            return
        sys.meta_path.insert(0, _NoPandas)
        try:
            pa.array([0])  # pyarrow's one look for pandas
        finally:
            sys.meta_path.remove(_NoPandas)
        _pandas_kept_out = True


class _NoPandas:
    """An import finder that refuses pandas (and so its submodules)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name == "pandas":
            raise ImportError("pandas is kept out of this worker's pyarrow", name=name)
