"""Paimon's snapshot retention rules (sinks.lifecycle.retention is pure)."""

from __future__ import annotations

import pytest

from sinks.lifecycle.retention import RetentionOptions, expire_changelog_until, expire_until, parse_duration_ms

HOUR = 3_600_000


def _times(first: int, last: int, now: int, age_of_first: int, step: int) -> dict[int, int]:
    """Snapshots first..last, the first ``age_of_first`` ms old, each ``step`` ms after the previous."""
    return {i: now - age_of_first + (i - first) * step for i in range(first, last + 1)}


def test_defaults_follow_paimon() -> None:
    opts = RetentionOptions.from_table_options({})
    assert (opts.num_retained_min, opts.num_retained_max, opts.time_retained_ms, opts.expire_limit) == (
        10,
        2**31 - 1,
        HOUR,
        50,
    )


@pytest.mark.parametrize(
    ("text", "ms"), [("1 h", HOUR), ("30min", 1_800_000), ("10 s", 10_000), ("7d", 7 * 86_400_000), ("500", 500)]
)
def test_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text, "snapshot.time-retained") == ms


def test_bad_options_are_named() -> None:
    with pytest.raises(ValueError, match=r"snapshot\.time-retained"):
        RetentionOptions.from_table_options({"snapshot.time-retained": "soon"})
    with pytest.raises(ValueError, match="must not exceed"):
        RetentionOptions.from_table_options({"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "3"})
    with pytest.raises(ValueError, match="at least 1"):
        RetentionOptions.from_table_options({"snapshot.num-retained.min": "0"})


def test_young_snapshots_and_the_minimum_are_kept() -> None:
    now = 10 * HOUR
    opts = RetentionOptions()
    # 100 snapshots, all younger than an hour: nothing expires.
    assert expire_until(_times(1, 100, now, HOUR // 2, 1000), now, opts) is None
    # 100 snapshots one minute apart, the first 100 minutes old: the last 60 are younger than an
    # hour. Expire up to the first young one, at most 50 per run.
    times = _times(1, 100, now, 100 * 60_000, 60_000)
    young = min(i for i, t in times.items() if t >= now - HOUR)
    assert expire_until(times, now, opts) == min(young, 1 + 50)
    assert expire_until(times, now, RetentionOptions(expire_limit=1000)) == young
    # Everything old: the newest num-retained.min stay.
    assert expire_until(_times(1, 100, now, 5 * HOUR, 1), now, RetentionOptions(expire_limit=1000)) == 91
    # No more than num-retained.min snapshots exist: nothing to do.
    assert expire_until(_times(1, 10, now, 5 * HOUR, 1), now, opts) is None


def test_maximum_wins_over_age() -> None:
    now = 10 * HOUR
    opts = RetentionOptions(num_retained_min=2, num_retained_max=5, expire_limit=1000)
    assert expire_until(_times(1, 20, now, 60_000, 1000), now, opts) == 16


def test_consumers_and_earliest_hint() -> None:
    now = 10 * HOUR
    opts = RetentionOptions(num_retained_min=1, expire_limit=1000)
    times = _times(31, 60, now, 5 * HOUR, 1)
    assert expire_until(times, now, opts) == 60
    # A consumer that has read up to snapshot 40 holds everything from 40 on.
    assert expire_until(times, now, opts, consumer_next=40) == 40
    assert expire_until(times, now, opts, consumer_next=20) is None


def test_changelog_retention_defaults_to_the_snapshots_and_decouples_when_longer() -> None:
    same = RetentionOptions.from_table_options({"snapshot.num-retained.min": "3", "snapshot.time-retained": "1 d"})
    assert (same.changelog_num_retained_min, same.changelog_time_retained_ms) == (3, 24 * HOUR)
    assert not same.changelog_decoupled
    for option, value in (
        ("changelog.num-retained.min", "20"),
        ("changelog.num-retained.max", "20"),
        ("changelog.time-retained", "7 d"),
    ):
        snapshot_max = {"snapshot.num-retained.max": "10"} if option == "changelog.num-retained.max" else {}
        opts = RetentionOptions.from_table_options({**snapshot_max, option: value})
        assert opts.changelog_decoupled, option
    # Shorter than the snapshots': nothing to keep longer (Java's isChangelogDecoupled).
    assert not RetentionOptions.from_table_options({"changelog.time-retained": "1 min"}).changelog_decoupled
    with pytest.raises(ValueError, match=r"changelog\.num-retained\.min \(9\) must not exceed"):
        RetentionOptions.from_table_options({"changelog.num-retained.min": "9", "changelog.num-retained.max": "3"})


def test_changelog_expiry_counts_back_from_the_latest_snapshot() -> None:
    """ExpireChangelogImpl.expire: changelogs 1..40 kept beyond snapshots 41..60."""
    now = 10 * HOUR
    opts = RetentionOptions(changelog_num_retained_min=30, changelog_time_retained_ms=1, expire_limit=1000)
    times = _times(1, 40, now, 5 * HOUR, 1)
    assert expire_changelog_until(times, 60, now, opts) == 31  # the newest 30 snapshots' worth stays
    assert expire_changelog_until(times, 60, now, opts, consumer_next=20) == 20
    limited = RetentionOptions(changelog_num_retained_min=30, changelog_time_retained_ms=1, expire_limit=5)
    assert expire_changelog_until(times, 60, now, limited) == 6
    # Young changelogs stay whatever the minimum; num-retained.max overrides their age.
    young = RetentionOptions(changelog_num_retained_min=1, changelog_time_retained_ms=HOUR, expire_limit=1000)
    ages = {**_times(1, 20, now, 5 * HOUR, 1), **_times(21, 40, now, HOUR // 2, 1)}
    assert expire_changelog_until(ages, 60, now, young) == 21
    capped = RetentionOptions(
        changelog_num_retained_min=1, changelog_num_retained_max=25, changelog_time_retained_ms=HOUR, expire_limit=1000
    )
    assert expire_changelog_until(ages, 60, now, capped) == 36
    # The newest kept changelog always stays; too few: nothing.
    everything = RetentionOptions(changelog_num_retained_min=1, changelog_time_retained_ms=1, expire_limit=1000)
    assert expire_changelog_until(times, 60, now, everything) == 40
    assert expire_changelog_until({7: 0}, 60, now, everything) is None
