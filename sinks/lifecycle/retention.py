"""Which snapshots may be expired: Paimon's snapshot retention rules as a pure function.

Mirrors ``ExpireSnapshotsImpl.expire``: keep at least ``snapshot.num-retained.min`` snapshots,
at most ``snapshot.num-retained.max``, and every snapshot younger than ``snapshot.time-retained``
(unless that would exceed the maximum); expire at most ``snapshot.expire.limit`` per run, and
never a snapshot a registered consumer has not yet read. ``changelog.num-retained.min/max`` and
``changelog.time-retained`` (defaults: the snapshot options) may keep a changelog longer than its
snapshot — Paimon's decoupled changelog — by ``ExpireChangelogImpl.expire``'s rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sinks.option_values import parse_duration_ms, whole_number


@dataclass(frozen=True, slots=True)
class RetentionOptions:
    num_retained_min: int = 10
    num_retained_max: int = 2**31 - 1
    time_retained_ms: int = 3_600_000
    expire_limit: int = 50
    changelog_num_retained_min: int = 10
    changelog_num_retained_max: int = 2**31 - 1
    changelog_time_retained_ms: int = 3_600_000

    @property
    def changelog_decoupled(self) -> bool:
        """The changelog outlives its snapshots (Java's ``ExpireConfig.isChangelogDecoupled``)."""
        return (
            self.changelog_num_retained_max > self.num_retained_max
            or self.changelog_num_retained_min > self.num_retained_min
            or self.changelog_time_retained_ms > self.time_retained_ms
        )

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> RetentionOptions:
        def whole(key: str, default: int) -> int:
            return whole_number(options, key, default, minimum=1)

        def duration(key: str, default: int) -> int:
            text = options.get(key)
            return default if text is None else parse_duration_ms(text, key)

        snapshot_min = whole("snapshot.num-retained.min", 10)
        snapshot_max = whole("snapshot.num-retained.max", 2**31 - 1)
        snapshot_time = duration("snapshot.time-retained", 3_600_000)
        out = cls(
            num_retained_min=snapshot_min,
            num_retained_max=snapshot_max,
            time_retained_ms=snapshot_time,
            expire_limit=whole("snapshot.expire.limit", 50),
            changelog_num_retained_min=whole("changelog.num-retained.min", snapshot_min),
            changelog_num_retained_max=whole("changelog.num-retained.max", snapshot_max),
            changelog_time_retained_ms=duration("changelog.time-retained", snapshot_time),
        )
        for kind in ("snapshot", "changelog"):
            low = out.num_retained_min if kind == "snapshot" else out.changelog_num_retained_min
            high = out.num_retained_max if kind == "snapshot" else out.changelog_num_retained_max
            if low > high:
                # Paimon's text first (ExpireSnapshotsProcedure since 1.1, which also takes what it is not
                # given from the table's options), so a runbook grepping for it matches.
                raise ValueError(
                    f"retainMax ({high}) must not be less than retainMin ({low}). {kind}.num-retained.min ({low}) "
                    f"must not exceed {kind}.num-retained.max ({high}): values not given on the command line come "
                    f"from the table's options, as in Paimon; give --retain-min too, or lower the table's "
                    f"{kind}.num-retained.min"
                )
        return out


def expire_until(
    snapshot_times: Mapping[int, int], now_ms: int, opts: RetentionOptions, consumer_next: int | None = None
) -> int | None:
    """The first snapshot id to keep (every older one expires), or None when none may expire.

    ``snapshot_times`` maps the existing snapshot ids to their commit times (epoch ms);
    ``consumer_next`` is the lowest snapshot a consumer still has to read.
    """
    if not snapshot_times:
        return None
    earliest, latest = min(snapshot_times), max(snapshot_times)
    if latest - earliest + 1 <= opts.num_retained_min:
        return None
    # Snapshots beyond num-retained.max expire whatever their age.
    lowest = max(latest - opts.num_retained_max + 1, earliest)
    end = latest - opts.num_retained_min + 1
    if consumer_next is not None:
        end = min(end, consumer_next)
    end = min(end, earliest + opts.expire_limit)
    older_than = now_ms - opts.time_retained_ms
    for sid in range(lowest, end):
        time_ms = snapshot_times.get(sid)
        if time_ms is not None and time_ms >= older_than:
            end = sid
            break
    return end if end > earliest else None


def expire_changelog_until(
    changelog_times: Mapping[int, int],
    latest_snapshot: int,
    now_ms: int,
    opts: RetentionOptions,
    consumer_next: int | None = None,
) -> int | None:
    """The first long-lived changelog id to keep (every older one expires), or None.

    ``changelog_times`` maps the ids of the changelogs kept beyond their snapshots to their commit
    times; their retention counts back from ``latest_snapshot``, as ``ExpireChangelogImpl.expire``.
    """
    if not changelog_times:
        return None
    earliest, latest = min(changelog_times), max(changelog_times)
    lowest = max(latest_snapshot - opts.changelog_num_retained_max + 1, earliest)
    end = latest_snapshot - opts.changelog_num_retained_min + 1
    if consumer_next is not None:
        end = min(end, consumer_next)
    end = min(end, earliest + opts.expire_limit, latest)  # the newest changelog file always stays
    if end <= earliest:
        return None
    older_than = now_ms - opts.changelog_time_retained_ms
    for cid in range(lowest, end + 1):
        time_ms = changelog_times.get(cid)
        if time_ms is not None and time_ms >= older_than:
            end = cid
            break
    return end if end > earliest else None
