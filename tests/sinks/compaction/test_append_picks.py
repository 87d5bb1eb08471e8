"""Append-table compaction planning, against the cases of Paimon's BucketedAppendCompactManagerTest
and AppendCompactCoordinatorTest (same inputs, same expected picks)."""

from __future__ import annotations

import pytest

from sinks.compaction.append_picks import (
    COMPACT_AGE,
    AppendCompactionOptions,
    AppendFile,
    PartitionAges,
    pack_unaware,
    pick_bucketed,
    pick_bucketed_full,
)

MB = 1 << 20


def _seq(lo: int, hi: int) -> AppendFile:
    """Paimon's test file: sequence numbers lo..hi, one byte per row."""
    return AppendFile(f"f{lo}-{hi}", hi - lo + 1, (lo,))


# BucketedAppendCompactManagerTest: min.file-num 4, target-file-size 1024.
BUCKETED = AppendCompactionOptions(min_file_num=4, target_file_size=1024)


@pytest.mark.parametrize(
    "files",
    [
        [(1, 50)],
        [(1, 2048)],
        [(1, 2048), (2049, 2100)],
        [(1, 2048), (2049, 2100), (2101, 2110)],
        [(1, 2048), (2049, 4096), (4097, 5000)],
        [(1, 1024), (1025, 2049), (2050, 2500), (2501, 4096), (4097, 6000), (6001, 7000), (7001, 7600)],
        [(1, 2048), (2049, 4096), (4097, 4100), (4101, 6150)],
        [(1, 2048), (2049, 4096), (4097, 5000), (5001, 6144), (6145, 7048)],
        [(1, 500), (501, 1000)],
        [(1, 500), (501, 1000), (1001, 2048)],
        [(1, 2050), (2051, 2100), (2101, 2110)],
    ],
)
def test_bucketed_picks_nothing_where_paimon_waits_or_releases(files: list[tuple[int, int]]) -> None:
    assert pick_bucketed([_seq(lo, hi) for lo, hi in files], BUCKETED) == []


def test_bucketed_picks_the_first_window_of_enough_consecutive_files_in_write_order() -> None:
    files = [_seq(lo, lo + 9) for lo in range(1, 131, 10)]
    assert pick_bucketed(list(reversed(files)), BUCKETED) == files[:4]
    # a large file slides out of the window; the window after it is picked
    files = [_seq(1, 2048), *(_seq(lo, lo + 9) for lo in range(2049, 2100, 10))]
    assert pick_bucketed(files, BUCKETED) == files[1:5]


def test_bucketed_full_compaction_keeps_leading_large_files() -> None:
    big, small = [_seq(1, 1000), _seq(1001, 2000)], [_seq(lo, lo + 9) for lo in range(2001, 2040, 10)]
    assert pick_bucketed_full([*big, *small], BUCKETED) == small
    # more large files than small ones after the first small file: nothing to gain
    assert pick_bucketed_full([small[0], *big, small[1]], BUCKETED) == []
    # fewer than three files: nothing
    assert pick_bucketed_full(small[:2], BUCKETED) == []
    forced = AppendCompactionOptions(min_file_num=4, target_file_size=1024, force_rewrite_all_files=True)
    assert pick_bucketed_full([*big, *small], forced) == [*big, *small]


# AppendCompactCoordinatorTest: compaction.min.file-num 3, the default target (256 mb) and open cost (4 mb).
UNAWARE = AppendCompactionOptions(min_file_num=3)
TARGET = 256 * MB


def _files(count: int, size: int) -> list[AppendFile]:
    return [AppendFile(f"f{i}", size, (0,)) for i in range(count)]


@pytest.mark.parametrize(
    ("count", "size", "tasks"),
    [
        (200, 0, 2),  # testForCompactPlan
        (100, 2**62, 0),  # testNoCompactTask
        (100, TARGET // 3 + 1, 17),  # testMinSizeCompactTask
        (100, TARGET // 10 * 8, 0),  # testFilterMiddleFile
        (1000, TARGET // 10, 56),  # testCompactGroupSplit
        (1050, TARGET // 5, 105),
        (1089, TARGET // 5, 109),  # testCompactGroupSplit2
    ],
)
def test_unaware_packs_as_paimons_coordinator(count: int, size: int, tasks: int) -> None:
    bins = pack_unaware(_files(count, size), UNAWARE)
    assert len(bins) == tasks
    assert all(len(b) > 1 for b in bins)
    assert len({f.name for b in bins for f in b}) == sum(len(b) for b in bins)  # no file twice


def test_unaware_leftover_files_merge_once_the_partition_has_waited() -> None:
    # testCompactLessFile: two small files are too few, until the partition has aged.
    files = [f.name for f in _files(2, 0)]
    ages = PartitionAges()
    for _ in range(COMPACT_AGE):
        waited = ages.waited("p", files)
        assert not pack_unaware(_files(2, 0), UNAWARE, waited=waited)
        ages.planned("p", packed=False)
    assert ages.waited("p", files)
    assert len(pack_unaware(_files(2, 0), UNAWARE, waited=True)) == 1
    ages.planned("p", packed=True)
    # one file is never packed alone, however long it waits
    assert pack_unaware(_files(1, 0), UNAWARE, waited=True) == []


def test_a_new_small_file_resets_the_partitions_age() -> None:
    # testAgeGrowUp
    ages = PartitionAges()
    for _ in range(COMPACT_AGE + 3):
        ages.waited("p", ["a"])
        ages.planned("p", packed=False)
    assert ages.waited("p", ["a"])
    ages.planned("p", packed=False)
    assert not ages.waited("p", ["a", "b"])
    ages.planned("p", packed=False)
    # a file leaving (compacted, expired) is no new file
    assert not ages.waited("q", ["a"])


def test_options_follow_paimons_names_and_defaults() -> None:
    default = AppendCompactionOptions.from_table_options({})
    assert (default.min_file_num, default.target_file_size, default.compaction_file_size) == (
        5,
        TARGET,
        int(TARGET * 0.7),
    )
    opts = AppendCompactionOptions.from_table_options(
        {
            "compaction.min.file-num": "3",
            "target-file-size": "8 mb",
            "compaction.small-file-ratio": "0.5",
            "source.split.open-file-cost": "1 mb",
            "compaction.force-rewrite-all-files": "true",
        }
    )
    assert opts == AppendCompactionOptions(3, 8 * MB, 0.5, MB, True)
    with pytest.raises(ValueError, match=r"compaction\.small-file-ratio"):
        AppendCompactionOptions.from_table_options({"compaction.small-file-ratio": "2"})
    with pytest.raises(ValueError, match=r"compaction\.min\.file-num"):
        AppendCompactionOptions.from_table_options({"compaction.min.file-num": "0"})
