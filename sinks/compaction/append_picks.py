"""Which small files of an append table (no primary key) to merge: Paimon's append compaction.

A streaming job adds a file to every bucket it touches at every commit, so an append table's
readers open ever more small files. Paimon merges them without looking at rows (append files need
no merging to read right): tables with fixed buckets by ``BucketedAppendCompactManager`` — a window
of consecutive files, in write order, so a bucket's rows keep their order — and bucket-unaware
tables (``bucket=-1``) by ``AppendCompactCoordinator`` — per partition, small files packed by size
into tasks of about twice the target file size. Pure planning over file metadata, unit-tested
against Paimon's own cases; the defaults are Paimon's ``CoreOptions``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from sinks.option_values import parse_memory_size, whole_number

# Paimon's AppendCompactCoordinator: a partition whose small files could not be packed is aged at
# every plan that brings it no new small file; past COMPACT_AGE plans its 2+ files merge anyway.
COMPACT_AGE = 5
# BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE
FULL_COMPACT_MIN_FILE = 3


@dataclass(frozen=True, slots=True)
class AppendCompactionOptions:
    """The compaction options of one append table, with Paimon's defaults."""

    min_file_num: int = 5  # compaction.min.file-num
    target_file_size: int = 256 << 20  # target-file-size (Paimon: 256 mb for append tables)
    small_file_ratio: float = 0.7  # compaction.small-file-ratio
    open_file_cost: int = 4 << 20  # source.split.open-file-cost
    force_rewrite_all_files: bool = False  # compaction.force-rewrite-all-files

    @property
    def compaction_file_size(self) -> int:
        """Files below this size take part (Paimon leaves middle-sized files alone so that a
        compaction's own output, a little under the target, is not compacted again)."""
        return int(self.target_file_size * self.small_file_ratio)

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> AppendCompactionOptions:
        min_files = whole_number(options, "compaction.min.file-num", 5, minimum=1)
        size = options.get("target-file-size")
        cost = options.get("source.split.open-file-cost")
        ratio_text = options.get("compaction.small-file-ratio")
        try:
            ratio = float(str(ratio_text).strip()) if ratio_text is not None else 0.7
        except ValueError:
            raise ValueError(f"table option compaction.small-file-ratio='{ratio_text}' is not a number") from None
        if not 0 < ratio <= 1:
            raise ValueError(f"table option compaction.small-file-ratio must be in (0, 1], got {ratio}")
        return cls(
            min_file_num=min_files,
            target_file_size=parse_memory_size(size, "target-file-size") if size is not None else 256 << 20,
            small_file_ratio=ratio,
            open_file_cost=(parse_memory_size(cost, "source.split.open-file-cost") if cost is not None else 4 << 20),
            force_rewrite_all_files=str(options.get("compaction.force-rewrite-all-files", "false")).strip().lower()
            == "true",
        )


@dataclass(frozen=True, slots=True)
class AppendFile:
    """What planning needs of one append data file; ``order`` sorts files in write order."""

    name: str
    size: int
    order: tuple[int, ...]


def pick_bucketed(files: Sequence[AppendFile], opts: AppendCompactionOptions) -> list[AppendFile]:
    """A fixed bucket's next compaction (``pickCompactBefore``): in write order, the first window
    of ``min_file_num`` consecutive files, a window's oldest file dropped whenever the window
    reaches twice the target size (so large files slide out). Empty when there is none."""
    window: list[AppendFile] = []
    total = 0
    for f in sorted(files, key=lambda f: f.order):
        window.append(f)
        total += f.size
        if len(window) >= opts.min_file_num:
            return window
        if total >= opts.target_file_size * 2:
            total -= window.pop(0).size
    return []


def pick_bucketed_full(files: Sequence[AppendFile], opts: AppendCompactionOptions) -> list[AppendFile]:
    """A fixed bucket's full compaction (``FullCompactTask``): leading large files stay; the rest
    is rewritten when it holds more small files than large ones and at least three files
    (everything with ``compaction.force-rewrite-all-files``)."""
    ordered = sorted(files, key=lambda f: f.order)
    if opts.force_rewrite_all_files:
        return ordered
    small_size = opts.compaction_file_size
    start = 0
    while start < len(ordered) and ordered[start].size >= small_size:
        start += 1
    rest = ordered[start:]
    small = sum(f.size < small_size for f in rest)
    return rest if small > len(rest) - small and len(rest) >= FULL_COMPACT_MIN_FILE else []


def pack_unaware(
    files: Sequence[AppendFile], opts: AppendCompactionOptions, *, waited: bool = False
) -> list[list[AppendFile]]:
    """A bucket-unaware partition's compactions (``AppendCompactCoordinator``): its small files
    sorted by size and packed into bins, a bin closed once it holds 2+ files and twice the target
    size (each file counted with the open-file cost); the last bin only with ``min_file_num``
    files. ``waited``: the partition has waited long enough (or a full compaction was asked for),
    so its small files merge together when nothing else was packed and there are at least two."""
    small = sorted((f for f in files if f.size < opts.compaction_file_size), key=lambda f: (f.size, f.order))
    bins: list[list[AppendFile]] = []
    current: list[AppendFile] = []
    total = 0
    for f in small:
        current.append(f)
        total += f.size + opts.open_file_cost
        if len(current) > 1 and total >= opts.target_file_size * 2:
            bins.append(current)
            current, total = [], 0
    if len(current) >= opts.min_file_num:
        bins.append(current)
        current = []
    if not bins and waited and len(current) > 1:
        bins.append(current)
    return bins


class PartitionAges:
    """The coordinator's per-partition age, kept by a streaming job across its plans: reset when a
    new small file arrives, grown by every plan that packs nothing; once a plan finds it past
    ``COMPACT_AGE`` the partition's leftover small files are compacted together."""

    def __init__(self) -> None:
        self._state: dict[Hashable, tuple[frozenset[str], int]] = {}
        self._pending: dict[Hashable, tuple[frozenset[str], int]] = {}

    def waited(self, key: Hashable, small_files: Sequence[str]) -> bool:
        """Whether the partition ``key``, holding ``small_files`` now, has waited long enough.
        Follow with ``planned``."""
        names = frozenset(small_files)
        seen, age = self._state.get(key, (frozenset(), 0))
        if not names <= seen:
            age = 0  # a new small file arrived
        self._pending[key] = (names, age)
        return age >= COMPACT_AGE

    def planned(self, key: Hashable, packed: bool) -> None:
        """Record the plan ``waited`` preceded: the age grows when nothing was packed and starts
        again once the aged files were packed."""
        names, age = self._pending.pop(key)
        self._state[key] = (names, age + 1 if not packed else 0 if age >= COMPACT_AGE else age)
