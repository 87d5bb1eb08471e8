"""Paimon's partition expiry rules (``partition.expiration-time``), pure: which partitions expire.

A partition expires when its time is before ``now - partition.expiration-time``. Its time is
either read from its values (``values-time``, the default: ``partition.timestamp-pattern`` picks
and joins values, default the first one; ``partition.timestamp-formatter`` parses the result,
default ``yyyy-MM-dd[ HH:mm:ss]``) or is the creation time of its newest data file
(``update-time``). A value that is NULL or does not parse never expires (Paimon logs it, as we
do). At most ``partition.expiration-max-num`` partitions go per check, the smallest values first.
The reference is Java's ``PartitionTimeExtractor`` and ``NormalPartitionExpire``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sinks.option_values import parse_duration_ms, whole_number

STRATEGIES = ("values-time", "update-time")

# Java DateTimeFormatter letters -> strptime directives (the ones partition formatters use).
_JAVA_LETTERS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "M": "%m", "dd": "%d", "d": "%d", "HH": "%H", "H": "%H"}
_JAVA_LETTERS |= {"mm": "%M", "m": "%M", "ss": "%S", "s": "%S"}
_DEFAULT = re.compile(r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?")


@dataclass(frozen=True, slots=True)
class PartitionExpiryOptions:
    expiration_ms: int | None = None  # None: partitions never expire
    check_interval_ms: int = 3_600_000
    strategy: str = "values-time"
    pattern: str | None = None
    formatter: str | None = None  # as strptime format
    max_num: int = 100
    batch_size: int | None = None

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> PartitionExpiryOptions:
        expiration = options.get("partition.expiration-time")
        strategy = str(options.get("partition.expiration-strategy", "values-time")).strip().lower()
        if strategy not in STRATEGIES:
            expected = ", ".join(STRATEGIES)
            raise ValueError(f"option partition.expiration-strategy='{strategy}': expected one of {expected}")
        interval = options.get("partition.expiration-check-interval")
        formatter = options.get("partition.timestamp-formatter")
        return cls(
            expiration_ms=None if expiration is None else parse_duration_ms(expiration, "partition.expiration-time"),
            check_interval_ms=3_600_000
            if interval is None
            else parse_duration_ms(interval, "partition.expiration-check-interval"),
            strategy=strategy,
            pattern=options.get("partition.timestamp-pattern"),
            formatter=None if formatter is None else java_to_strptime(formatter),
            max_num=whole_number(options, "partition.expiration-max-num", 100, minimum=1),
            batch_size=whole_number(options, "partition.expiration-batch-size", None, minimum=1),
        )


def java_to_strptime(pattern: str) -> str:
    """A Java ``DateTimeFormatter`` pattern of date and time fields as a strptime format
    (``yyyyMMdd`` -> ``%Y%m%d``); quoted text is literal. Other letters are refused."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ValueError(f"partition.timestamp-formatter '{pattern}': unclosed quote")
            out.append(pattern[i + 1 : end].replace("%", "%%") or "'")
            i = end + 1
            continue
        if c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            run = pattern[i:j]
            directive = _JAVA_LETTERS.get(run)
            if directive is None:
                raise ValueError(
                    f"partition.timestamp-formatter '{pattern}': '{run}' is not supported "
                    f"(use y, M, d, H, m, s, e.g. 'yyyyMMdd' or 'yyyy-MM-dd HH')"
                )
            out.append(directive)
            i = j
            continue
        out.append("%%" if c == "%" else c)
        i += 1
    return "".join(out)


def partition_time(
    keys: Sequence[str], values: Sequence[str | None], pattern: str | None, formatter: str | None
) -> dt.datetime | None:
    """The time of a partition from its values, or None when it has none (NULL or unparseable)."""
    if any(v is None for v in values):
        return None
    text = str(values[0]) if pattern is None else _fill(pattern, keys, [str(v) for v in values])
    if formatter is not None:
        try:
            return dt.datetime.strptime(text, formatter)
        except ValueError:
            return None
    m = _DEFAULT.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction = m.groups()
    try:
        return dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")[:6]),
        )
    except ValueError:  # Java's lenient resolver would roll an invalid date over; it never expires here
        return None


def _fill(pattern: str, keys: Sequence[str], values: Sequence[str]) -> str:
    # Longer keys first, so $dt does not match inside $dt1 (as Java does).
    order = sorted(range(len(keys)), key=lambda i: -len(keys[i]))
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "$":
            for k in order:
                if pattern.startswith(keys[k], i + 1):
                    out.append(values[k])
                    i += 1 + len(keys[k])
                    break
            else:
                out.append("$")
                i += 1
            continue
        out.append(pattern[i])
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    values: tuple[str | None, ...]  # in partition-key order, as text
    last_file_creation_ms: int


@dataclass(frozen=True, slots=True)
class ExpiryPlan:
    expired: tuple[tuple[str | None, ...], ...]
    unreadable: tuple[tuple[str | None, ...], ...]  # values-time partitions without a time


def plan(
    opts: PartitionExpiryOptions, keys: Sequence[str], partitions: Iterable[PartitionInfo], now: dt.datetime
) -> ExpiryPlan:
    """Which partitions expire at local time ``now``."""
    if opts.expiration_ms is None or not keys:
        return ExpiryPlan((), ())
    cutoff = now - dt.timedelta(milliseconds=opts.expiration_ms)
    expired: list[tuple[str | None, ...]] = []
    unreadable: list[tuple[str | None, ...]] = []
    for p in partitions:
        if opts.strategy == "update-time":
            when = dt.datetime.fromtimestamp(p.last_file_creation_ms / 1000)
        else:
            parsed = partition_time(keys, p.values, opts.pattern, opts.formatter)
            if parsed is None:
                unreadable.append(p.values)
                continue
            when = parsed
        if cutoff > when:
            expired.append(p.values)
    # Java sorts by the values joined with a delimiter, then keeps max-num.
    expired.sort(key=lambda values: "\x00".join("" if v is None else v for v in values))
    return ExpiryPlan(tuple(expired[: opts.max_num]), tuple(unreadable))
