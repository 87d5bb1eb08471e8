"""A compaction unit merged in key slices, so memory holds about one batch per sorted run instead of
the whole unit (a dynamic bucket grows to 2M rows, and a snapshot compacts one per core).

Every data file of a primary-key bucket is sorted by key, and the files of one level above 0 do
not overlap. Each sorted run (a level-0 file, or a level's files in key order) is read in batches.
At each step, every buffered row whose key is below the smallest *last buffered key* among the runs
not read to their end is final: no run can still bring that key later. Those rows, from all runs,
are one slice; slices hold every row of their keys and come in key order, so merging each alone
(``merge``: one row per key) and writing them in turn gives what merging the whole unit gives.
Keys are compared by Arrow, the order the files were sorted in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataFileMeta


class _Run:
    """One sorted run's batches, and the rows read of it but not yet handed on."""

    def __init__(self, batches: Iterable[pa.Table]) -> None:
        self.batches = iter(batches)
        self.buffer: pa.Table | None = None
        self.done = False

    @property
    def rows(self) -> int:
        return 0 if self.buffer is None else self.buffer.num_rows

    def fill(self, rows: int, max_bytes: int | None = None) -> None:
        """Read on until ``rows`` rows (or ``max_bytes`` bytes, past at least one more batch) are
        buffered or the run ends."""
        parts = [] if self.buffer is None else [self.buffer]
        have = self.rows
        size = 0 if self.buffer is None else self.buffer.nbytes
        read = False
        while not self.done and have < rows and not (read and max_bytes is not None and size >= max_bytes):
            batch = next(self.batches, None)
            if batch is None:
                self.done = True
            elif batch.num_rows:
                parts.append(batch)
                have += batch.num_rows
                size += batch.nbytes
                read = True
        if parts:
            self.buffer = parts[0] if len(parts) == 1 else pa.concat_tables(parts)

    def last_key(self, keys: Sequence[str]) -> pa.Table:
        assert self.buffer is not None
        return self.buffer.slice(self.buffer.num_rows - 1, 1).select(list(keys))

    def take(self, mask: pa.ChunkedArray | None) -> pa.Table | None:
        """The buffered rows ``mask`` selects (all with None), removed from the buffer."""
        buffer = self.buffer
        if buffer is None or buffer.num_rows == 0:
            return None
        if mask is None:
            self.buffer = None
            return buffer
        self.buffer = buffer.filter(pc.invert(mask))
        return buffer.filter(mask)


def _below(data: pa.Table, keys: Sequence[str], cutoff: pa.Table) -> Any:
    """True for the rows of ``data`` whose key is below ``cutoff``'s (one row), in key order."""
    below: Any = None
    equal: Any = None
    for k in keys:
        col, value = data.column(k), cutoff.column(k)[0]
        less = pc.less(col, value)
        below = less if below is None else pc.or_(below, pc.and_(equal, less))
        same = pc.equal(col, value)
        equal = same if equal is None else pc.and_(equal, same)
    return below


def _smallest(candidates: Sequence[pa.Table], keys: Sequence[str]) -> pa.Table:
    both = pa.concat_tables(candidates)
    first = pc.sort_indices(both, sort_keys=[(k, "ascending") for k in keys])[0]
    return both.slice(first.as_py(), 1)


def merged_slices(
    runs: Sequence[Iterable[pa.Table]],
    keys: Sequence[str],
    merge: Callable[[pa.Table], pa.Table],
    batch_rows: int,
    batch_bytes: int | None = None,
) -> Iterator[pa.Table]:
    """``merge`` of the runs' rows, slice by slice in key order (see the module's docstring);
    each run's batches must be sorted by ``keys``. A run buffers ``batch_rows`` rows, or fewer when
    they reach ``batch_bytes`` (wide rows), beyond one more of its batches at each step."""
    cursors = [_Run(r) for r in runs]
    want = batch_rows
    while True:
        for c in cursors:
            c.fill(want, batch_bytes)
        reading = [c for c in cursors if not c.done]
        if not reading:
            rest = [t for t in (c.take(None) for c in cursors) if t is not None]
            if rest:
                yield merge(pa.concat_tables(rest))
            return
        cutoff = _smallest([c.last_key(keys) for c in reading], keys)
        taken = [t for t in (c.take(_below(c.buffer, keys, cutoff)) for c in cursors if c.rows) if t and t.num_rows]
        if not taken:
            # every buffered row of the run that set the cutoff has the cutoff's key: read further
            want = max(want, max(c.rows for c in reading)) + batch_rows
            continue
        want = batch_rows
        yield merge(pa.concat_tables(taken))


def sorted_runs(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """The unit's files as sorted runs: each level-0 file alone; each higher level's files in key
    order, as one run when their key ranges do not overlap (Paimon's invariant), else one run per
    file (memory then grows with the files, but the merge stays right)."""
    runs: list[list[DataFileMeta]] = []
    levels: dict[int, list[DataFileMeta]] = {}
    for f in files:
        if int(f.level) == 0:
            runs.append([f])
        else:
            levels.setdefault(int(f.level), []).append(f)
    for level in sorted(levels):
        try:
            chain = sorted(levels[level], key=_min_key)
            apart = all(_max_key(a) < _min_key(b) for a, b in pairwise(chain))
        except TypeError:  # bounds Python cannot order (a key type changed): read each file alone
            chain, apart = levels[level], False
        runs.extend([chain] if apart else [[f] for f in chain])
    return runs


def _min_key(meta: DataFileMeta) -> tuple[Any, ...]:
    return tuple(meta.min_key.values)


def _max_key(meta: DataFileMeta) -> tuple[Any, ...]:
    return tuple(meta.max_key.values)
