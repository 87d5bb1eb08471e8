"""Rows of a bucket's upper-level files, kept between commits by the Python worker that compacts
the bucket, for the compactions that look keys up in them (``changelog-producer=lookup`` and
``first-row``): without it every commit re-reads the whole bucket, so its cost grows with the
bucket rather than with the commit.

A data file never changes once written, so an entry keyed by the file's path and the schema it
is read as stays valid for as long as it is kept (Paimon's lookup cache relies on the same). The
cache holds at most ``lookup.cache-max-memory-size`` bytes (Paimon's option and default, 256 mb)
and drops the least recently used file first; a file larger than the whole budget is read each
time and never kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

import pyarrow as pa

from sinks.option_values import parse_memory_size

DEFAULT_BUDGET = 256 << 20


def budget(options: Mapping[str, str]) -> int:
    """``lookup.cache-max-memory-size`` in bytes (0 turns the cache off)."""
    text = options.get("lookup.cache-max-memory-size")
    return DEFAULT_BUDGET if text is None else parse_memory_size(text, "lookup.cache-max-memory-size")


class FileCache:
    """A byte-bounded LRU map from a file's key to its rows."""

    def __init__(self) -> None:
        self._entries: OrderedDict[Hashable, pa.Table] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # Spark may run tasks of one worker on threads
        self.hits = 0
        self.misses = 0

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, load: Callable[[], pa.Table], limit: int) -> pa.Table:
        """The rows cached under ``key``, or ``load()``'s, kept if they fit within ``limit`` bytes."""
        with self._lock:
            rows = self._entries.get(key)
            if rows is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return rows
            self.misses += 1
        rows = load()
        size = rows.get_total_buffer_size()
        with self._lock:
            if size > limit or key in self._entries:
                self._shrink(limit)
                return rows
            self._entries[key] = rows
            self._bytes += size
            self._shrink(limit)
        return rows

    def _shrink(self, limit: int) -> None:
        while self._bytes > limit and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.get_total_buffer_size()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


# One per Python worker: Spark reuses workers, so a bucket compacted by the same worker in the
# next micro-batch finds its upper levels here.
FILES = FileCache()
