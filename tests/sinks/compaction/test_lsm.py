"""Paimon's universal compaction picking, rule by rule (sinks.compaction.lsm is pure planning)."""

from __future__ import annotations

import pytest

from sinks.compaction.lsm import CompactionOptions, LsmFile, pick_full, pick_universal, sorted_runs
from sinks.option_values import parse_memory_size

OPTS = CompactionOptions.from_table_options({})


def _files(*runs: tuple[int, int]) -> list[LsmFile]:
    """(level, size) per file, newest first: sequence numbers fall as the list goes on."""
    n = len(runs)
    return [LsmFile(f"f{i}", level, size, (n - i) * 10, (n - i) * 10 + 9) for i, (level, size) in enumerate(runs)]


def test_defaults_follow_paimon() -> None:
    assert (OPTS.trigger, OPTS.stop_trigger, OPTS.num_levels, OPTS.max_level) == (5, 8, 6, 5)
    assert (OPTS.max_size_amplification_percent, OPTS.size_ratio, OPTS.target_file_size) == (200, 1, 128 << 20)
    custom = CompactionOptions.from_table_options(
        {"num-sorted-run.compaction-trigger": "3", "target-file-size": "8 mb", "write-only": "TRUE"}
    )
    assert (custom.trigger, custom.stop_trigger, custom.num_levels, custom.target_file_size) == (3, 6, 4, 8 << 20)
    assert custom.write_only
    # A stop trigger below the compaction trigger is raised to it, as Paimon does.
    assert CompactionOptions.from_table_options({"num-sorted-run.stop-trigger": "2"}).stop_trigger == 5


@pytest.mark.parametrize(
    ("text", "size"), [("128 mb", 128 << 20), ("64kb", 64 << 10), ("1048576", 1 << 20), ("2 GB", 2 << 30)]
)
def test_memory_sizes(text: str, size: int) -> None:
    assert parse_memory_size(text, "target-file-size") == size


@pytest.mark.parametrize("bad", ["big", "12 parsecs", ""])
def test_bad_options_name_the_option(bad: str) -> None:
    with pytest.raises(ValueError, match="target-file-size"):
        CompactionOptions.from_table_options({"target-file-size": bad})
    with pytest.raises(ValueError, match=r"full-compaction\.delta-commits"):
        CompactionOptions.from_table_options({"full-compaction.delta-commits": "0"})


def test_runs_are_level0_newest_first_then_one_per_level() -> None:
    files = [
        LsmFile("old0", 0, 1, 0, 9),
        LsmFile("new0", 0, 1, 20, 29),
        LsmFile("a3", 3, 5, 100, 109),
        LsmFile("b3", 3, 5, 30, 39),
        LsmFile("top", 5, 50, 40, 49),
    ]
    runs = sorted_runs(files, 6)
    assert [(r.level, [f.name for f in r.files]) for r in runs] == [
        (0, ["new0"]),
        (0, ["old0"]),
        (3, ["b3", "a3"]),
        (5, ["top"]),
    ]
    with pytest.raises(ValueError, match="num-levels"):
        sorted_runs([LsmFile("x", 7, 1, 0, 1)], 6)


def test_nothing_below_the_trigger() -> None:
    assert pick_universal(_files((0, 1), (0, 1), (0, 1), (5, 1)), OPTS) is None


def test_size_amplification_compacts_everything_and_drops_retractions() -> None:
    unit = pick_universal(_files((0, 1), (0, 1), (0, 1), (0, 1), (5, 1)), OPTS)
    assert unit is not None
    assert (unit.output_level, len(unit.files), unit.drop_delete) == (5, 5, True)


def test_size_ratio_merges_similar_newest_runs_above_the_next_level() -> None:
    unit = pick_universal(_files((0, 1), (0, 1), (0, 1), (0, 1), (5, 100)), OPTS)
    assert unit is not None
    # Output one level below the run left alone; level 5 still holds older rows, so retractions stay.
    assert ([f.name for f in unit.files], unit.output_level, unit.drop_delete) == (["f0", "f1", "f2", "f3"], 4, False)


def test_file_count_forces_a_merge_that_never_outputs_level0() -> None:
    files = _files((0, 1), (0, 10), (0, 100), (0, 1000), (0, 10000), (5, 100000))
    unit = pick_universal(files, OPTS)
    assert unit is not None
    # Two runs are due, but the output may not be level 0: Paimon extends the unit up to the
    # first run above level 0, here the top, which makes it a full compaction.
    assert (unit.output_level, len(unit.files), unit.drop_delete) == (5, 6, True)


def test_output_level_is_one_below_the_next_run() -> None:
    # Paimon's UniversalCompactionTest.testOutputLevel shape: runs at levels 0, 0, 1, 3, 4.
    files = _files((0, 1), (0, 1), (1, 2), (3, 100), (4, 1000))
    opts = CompactionOptions.from_table_options({"num-sorted-run.compaction-trigger": "5"})
    unit = pick_universal(files, opts)
    assert unit is not None
    # Three runs of similar size merge; the next run is at level 3, so the output goes to level 2.
    assert (unit.output_level, [f.name for f in unit.files], unit.drop_delete) == (2, ["f0", "f1", "f2"], False)


def test_full_compaction() -> None:
    assert pick_full([], OPTS) is None
    assert pick_full(_files((5, 10)), OPTS) is None
    unit = pick_full(_files((0, 1), (5, 10)), OPTS)
    assert unit is not None
    assert (unit.output_level, len(unit.files), unit.drop_delete) == (5, 2, True)
    unit = pick_full(_files((3, 1)), OPTS)
    assert unit is not None and unit.output_level == 5
