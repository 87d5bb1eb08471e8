"""Java's localized week fields (``WeekFields.of(Locale.US)``: weeks start on Sunday, and the first
week of a year or month is the one holding its first day, even a single day), column by column.

Transcribed from ``java.time.temporal.WeekFields.ComputedDayOfField``: ``localizedDayOfWeek``,
``localizedWeekOfMonth``, ``localizedWeekOfWeekBasedYear`` and ``localizedWeekBasedYear``, with the
first day of week Sunday and minimal days 1 (so week 0 never occurs). Inputs are int64 arrays.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

_MINIMAL_DAYS = 1


def _mod7(values: pa.Array) -> pa.Array:
    """``values`` mod 7 for values > -7 (Arrow's integer division truncates)."""
    shifted = pc.add(values, 7)
    return pc.subtract(shifted, pc.multiply(pc.divide(shifted, 7), 7))


def start_of_week_offset(day: pa.Array, dow: pa.Array) -> pa.Array:
    """``startOfWeekOffset``: ``day`` is a day of month or year (1-based), ``dow`` its localized day of week."""
    week_start = _mod7(pc.subtract(day, dow))
    # Java: offset = -weekStart, or 7 - weekStart when weekStart + 1 > minimal days
    return pc.if_else(pc.greater(pc.add(week_start, 1), _MINIMAL_DAYS), pc.subtract(7, week_start), 0)


def compute_week(offset: pa.Array, day: pa.Array | int) -> pa.Array:
    return pc.divide(pc.add(pc.add(offset, 6), day), 7)  # (7 + offset + (day - 1)) / 7


def week_of_month(day_of_month: pa.Array, dow: pa.Array) -> pa.Array:
    """``W``: week 1 is the (partial) Sunday-to-Saturday week holding the 1st of the month."""
    return compute_week(start_of_week_offset(day_of_month, dow), day_of_month)


def week_of_week_based_year(day_of_year: pa.Array, dow: pa.Array, year_length: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(``w``, the year shift for ``Y``): week 1 holds 1 January, so the last days of December can
    be week 1 of the next week-based year (shift 1; otherwise 0)."""
    offset = start_of_week_offset(day_of_year, dow)
    week = compute_week(offset, day_of_year)
    new_year_week = compute_week(offset, pc.add(year_length, _MINIMAL_DAYS))
    next_year = pc.and_(pc.greater(week, 50), pc.greater_equal(week, new_year_week))
    week = pc.if_else(next_year, pc.add(pc.subtract(week, new_year_week), 1), week)
    return week, pc.cast(next_year, pa.int64())
