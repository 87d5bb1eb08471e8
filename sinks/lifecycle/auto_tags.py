"""Paimon's automatic tags (``tag.automatic-creation=process-time``): after a commit, once a period
(``tag.creation-period``) has ended and ``tag.creation-delay`` has passed, the latest snapshot is
tagged with the period's start (``2024-05-01`` daily, ``2024-05-01 13`` hourly), and the oldest
automatic tags beyond ``tag.num-retained-max`` are deleted. Planning is pure; ``apply`` acts.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from sinks.option_values import parse_duration_ms

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable

log = structlog.get_logger(__name__)

_PERIODS = {"daily": dt.timedelta(days=1), "hourly": dt.timedelta(hours=1), "two-hours": dt.timedelta(hours=2)}


@dataclass(frozen=True, slots=True)
class AutoTagOptions:
    period: dt.timedelta
    hourly: bool
    delay: dt.timedelta
    num_retained_max: int | None
    time_retained: str | None
    dashes: bool

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> AutoTagOptions | None:
        """None when the table has no automatic tags; ValueError for what lakecdc cannot do."""
        mode = str(options.get("tag.automatic-creation", "none")).strip().lower()
        if mode == "none":
            return None
        if mode != "process-time":
            raise ValueError(
                f"table option tag.automatic-creation={mode} is not supported: lakecdc creates tags by "
                f"process-time only"
            )
        period_name = str(options.get("tag.creation-period", "daily")).strip().lower()
        if period_name not in _PERIODS:
            raise ValueError(f"table option tag.creation-period={period_name}: use one of {', '.join(_PERIODS)}")
        delay = options.get("tag.creation-delay")
        retained = options.get("tag.num-retained-max")
        formatter = str(options.get("tag.period-formatter", "with_dashes")).strip().lower()
        if formatter not in ("with_dashes", "without_dashes"):
            raise ValueError("table option tag.period-formatter must be with_dashes or without_dashes")
        return cls(
            period=_PERIODS[period_name],
            hourly=period_name != "daily",
            delay=dt.timedelta(milliseconds=parse_duration_ms(delay, "tag.creation-delay"))
            if delay
            else dt.timedelta(),
            num_retained_max=int(retained) if retained else None,
            time_retained=options.get("tag.default-time-retained"),
            dashes=formatter == "with_dashes",
        )

    def name(self, start: dt.datetime) -> str:
        if self.hourly:
            return start.strftime("%Y-%m-%d %H" if self.dashes else "%Y%m%d %H")
        return start.strftime("%Y-%m-%d" if self.dashes else "%Y%m%d")

    def pattern(self) -> re.Pattern[str]:
        day = r"\d{4}-\d{2}-\d{2}" if self.dashes else r"\d{8}"
        return re.compile(day + (r" \d{2}" if self.hourly else ""))


@dataclass(frozen=True, slots=True)
class TagPlan:
    create: str | None
    delete: tuple[str, ...]


def plan(opts: AutoTagOptions, now: dt.datetime, existing: Sequence[str]) -> TagPlan:
    """The tag of the latest period that has ended (if not made yet) and the automatic tags to drop.

    ``now`` is local wall-clock time, as Paimon's process-time tags use. A period older than the
    newest automatic tag is never tagged again (it may have been deleted on purpose).
    """
    shifted = now - opts.delay
    midnight = shifted.replace(hour=0, minute=0, second=0, microsecond=0)
    steps = (shifted - midnight) // opts.period
    current_start = midnight + steps * opts.period
    ended = opts.name(current_start - opts.period)
    pattern = opts.pattern()
    autos = sorted(t for t in existing if pattern.fullmatch(t))
    create = ended if (not autos or ended > autos[-1]) and ended not in existing else None
    kept = autos + ([create] if create else [])
    drop: tuple[str, ...] = ()
    if opts.num_retained_max is not None and len(kept) > opts.num_retained_max:
        drop = tuple(kept[: len(kept) - opts.num_retained_max])
    return TagPlan(create, drop)


def apply(table: FileStoreTable, opts: AutoTagOptions, now: dt.datetime | None = None) -> TagPlan:
    """Create and expire automatic tags on a pypaimon table after a commit."""
    manager = table.tag_manager()
    result = plan(opts, now or dt.datetime.now(), list(manager.list_tags()))
    if result.create is not None:
        table.create_tag(result.create, None, True, opts.time_retained)
        log.info("tag created", tag=result.create)
    for name in result.delete:
        table.delete_tag(name)
        log.info("tag expired", tag=name)
    return result
