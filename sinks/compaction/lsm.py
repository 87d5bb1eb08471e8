"""Which files of one bucket to compact, and into which level: Paimon's universal compaction.

Pure planning over file metadata (no I/O), so every rule is unit-tested on its own. A bucket is an
LSM tree: each level-0 file is a sorted run of its own (newest first), and every non-empty level
above 0 is one sorted run. The rules and defaults follow Paimon's ``UniversalCompaction`` and
``CoreOptions`` so a table kept by lakecdc has the shape a Flink-kept one would have.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sinks.option_values import parse_memory_size, whole_number

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataFileMeta


@dataclass(frozen=True, slots=True)
class CompactionOptions:
    """The compaction options of one table, with Paimon's defaults."""

    trigger: int = 5
    stop_trigger: int = 8
    num_levels: int = 6
    max_size_amplification_percent: int = 200
    size_ratio: int = 1
    full_compaction_delta_commits: int | None = None
    target_file_size: int = 128 << 20
    write_only: bool = False

    @property
    def max_level(self) -> int:
        return self.num_levels - 1

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> CompactionOptions:
        trigger = whole_number(options, "num-sorted-run.compaction-trigger", 5)
        assert trigger is not None
        if trigger < 1:
            raise ValueError("table option num-sorted-run.compaction-trigger must be at least 1")
        stop = whole_number(options, "num-sorted-run.stop-trigger", None)
        levels = whole_number(options, "num-levels", None)
        delta = whole_number(options, "full-compaction.delta-commits", None)
        if delta is not None and delta < 1:
            raise ValueError("table option full-compaction.delta-commits must be at least 1")
        amp = whole_number(options, "compaction.max-size-amplification-percent", 200)
        ratio = whole_number(options, "compaction.size-ratio", 1)
        assert amp is not None and ratio is not None
        size = options.get("target-file-size")
        return cls(
            trigger=trigger,
            stop_trigger=max(trigger, stop if stop is not None else trigger + 3),
            # Paimon: num-levels defaults to trigger + 1, and needs at least two levels.
            num_levels=max(2, levels if levels is not None else trigger + 1),
            max_size_amplification_percent=amp,
            size_ratio=ratio,
            full_compaction_delta_commits=delta,
            target_file_size=parse_memory_size(size, "target-file-size") if size is not None else 128 << 20,
            write_only=str(options.get("write-only", "false")).strip().lower() == "true",
        )


@dataclass(frozen=True, slots=True)
class LsmFile:
    """What planning needs of one data file."""

    name: str
    level: int
    size: int
    min_sequence: int
    max_sequence: int

    @classmethod
    def of(cls, meta: DataFileMeta) -> LsmFile:
        """A data file's planning view, from its pypaimon metadata."""
        return cls(
            name=meta.file_name,
            level=int(meta.level),
            size=int(meta.file_size),
            min_sequence=int(meta.min_sequence_number),
            max_sequence=int(meta.max_sequence_number),
        )


@dataclass(frozen=True, slots=True)
class SortedRun:
    level: int
    files: tuple[LsmFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True, slots=True)
class CompactUnit:
    """Files to merge into ``output_level``; ``drop_delete`` when nothing older lies below it."""

    output_level: int
    files: tuple[LsmFile, ...]
    drop_delete: bool


def sorted_runs(files: Sequence[LsmFile], num_levels: int) -> list[SortedRun]:
    """Level-0 files newest first (one run each), then levels 1.. (one run per non-empty level)."""
    for f in files:
        if not 0 <= f.level < num_levels:
            raise ValueError(
                f"data file {f.name} is at level {f.level}, but the table has num-levels={num_levels}; "
                f"set num-levels to at least {f.level + 1}"
            )
    level0 = sorted((f for f in files if f.level == 0), key=lambda f: (-f.max_sequence, -f.min_sequence, f.name))
    runs = [SortedRun(0, (f,)) for f in level0]
    for level in range(1, num_levels):
        at = tuple(sorted((f for f in files if f.level == level), key=lambda f: f.min_sequence))
        if at:
            runs.append(SortedRun(level, at))
    return runs


def _unit(runs: Sequence[SortedRun], run_count: int, max_level: int, highest_level: int) -> CompactUnit:
    # Paimon's UniversalCompaction.createUnit: output just above the next run left alone, never
    # level 0; taking every run means a full compaction into the top level.
    output = max_level if run_count == len(runs) else max(0, runs[run_count].level - 1)
    if output == 0:
        for run in runs[run_count:]:
            run_count += 1
            if run.level != 0:
                output = run.level
                break
    if run_count == len(runs):
        output = max_level
    files = tuple(f for run in runs[:run_count] for f in run.files)
    return CompactUnit(output, files, drop_delete=output != 0 and output >= highest_level)


def _pick_size_ratio(
    runs: Sequence[SortedRun], opts: CompactionOptions, candidates: int, highest: int, force: bool = False
) -> CompactUnit | None:
    size = sum(r.size for r in runs[:candidates])
    for run in runs[candidates:]:
        if size * (100.0 + opts.size_ratio) / 100.0 < run.size:
            break
        size += run.size
        candidates += 1
    return _unit(runs, candidates, opts.max_level, highest) if force or candidates > 1 else None


def pick_universal(files: Sequence[LsmFile], opts: CompactionOptions) -> CompactUnit | None:
    """Paimon's universal compaction for one bucket: size amplification, then size ratio, then
    the sorted-run count; None when the bucket needs nothing."""
    runs = sorted_runs(files, opts.num_levels)
    if len(runs) < opts.trigger:
        return None
    highest = max(r.level for r in runs)
    candidate = sum(r.size for r in runs[:-1])
    if candidate * 100 > opts.max_size_amplification_percent * runs[-1].size:
        return _unit(runs, len(runs), opts.max_level, highest)
    unit = _pick_size_ratio(runs, opts, 1, highest)
    if unit is not None:
        return unit
    if len(runs) > opts.trigger:
        return _pick_size_ratio(runs, opts, len(runs) - opts.trigger + 1, highest)
    return None


def pick_full(files: Sequence[LsmFile], opts: CompactionOptions, rewrite: Collection[str] = ()) -> CompactUnit | None:
    """Everything into the top level, dropping retractions; when the bucket is already one
    top-level run (such files hold no retractions), only its files named in ``rewrite`` (holding
    expired records: Java's ``pickFullCompaction``), else None."""
    runs = sorted_runs(files, opts.num_levels)
    if not runs:
        return None
    if len(runs) == 1 and runs[0].level == opts.max_level:
        chosen = tuple(f for f in runs[0].files if f.name in rewrite)
        return CompactUnit(opts.max_level, chosen, drop_delete=True) if chosen else None
    return CompactUnit(opts.max_level, tuple(f for r in runs for f in r.files), drop_delete=True)


def pick_force_up_level0(files: Sequence[LsmFile], opts: CompactionOptions) -> CompactUnit | None:
    """Paimon's ``ForceUpLevel0Compaction``: the universal rules, else every level-0 run (with the
    runs above it that the size ratio takes along) into a level above 0. Tables whose readers skip
    level 0 (first-row) need it after every commit to show their data."""
    unit = pick_universal(files, opts)
    if unit is not None:
        return unit
    runs = sorted_runs(files, opts.num_levels)
    level0 = sum(1 for r in runs if r.level == 0)
    if level0 == 0:
        return None
    return _pick_size_ratio(runs, opts, level0, max(r.level for r in runs), force=True)
