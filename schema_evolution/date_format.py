"""``date_format``'s rendering: the tokens of ``compile_pattern`` (``schema_evolution.date_pattern``)
printed column by column with Arrow compute, as Java's ``DateTimeFormatter`` prints a ``LocalDateTime``
on a default en-US JVM (JDK 17), which is what Paimon does.

- Names are English (``Jan``/``January``/``J``, ``Sun``/``Sunday``/``S``, ``Q1``/``1st quarter``,
  ``AD``/``Anno Domini``/``A``, ``AM``/``PM``).
- Weeks follow ``WeekFields.of(Locale.US)`` (``schema_evolution.week_fields``): Sunday first, and week 1
  holds the first day of the year or month. ``e``/``c`` number Sunday 1 ... Saturday 7; ``w`` is the week
  of the week-based year ``Y`` (2024-12-29 is ``YYYY-ww`` 2025-01 but ``yyyy-ww`` 2024-01).
- ``F`` is ``ALIGNED_DAY_OF_WEEK_IN_MONTH``, ((day - 1) mod 7) + 1, as on JDK 8 to 18 (JDK 17 is the
  one Paimon mostly runs on); JDK 19+ prints the aligned week of month instead (JDK-8282081).
- Unlike ``SimpleDateFormat``: ``u`` is the year (not the day number), ``S`` a fraction of the second cut
  to its count of digits (``SSS`` = milliseconds, ``SSSSSS`` = microseconds), ``yyyy`` puts ``+`` before a
  year above 9999, and ``Q q e c g A n N`` exist.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from schema_evolution.date_pattern import Token as Token
from schema_evolution.date_pattern import compile_pattern as compile_pattern
from schema_evolution.week_fields import week_of_month, week_of_week_based_year

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September"]
_MONTHS += ["October", "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]  # Sunday is 1
_QUARTERS = ["1st quarter", "2nd quarter", "3rd quarter", "4th quarter"]
_ERAS = ["BC", "AD"]
_ERA_NAMES = ["Before Christ", "Anno Domini"]
_MJD_OF_EPOCH = 40587  # modified Julian day of 1970-01-01


class _Fields:
    """The timestamps' fields as int64 arrays, each computed once per column."""

    def __init__(self, ts: pa.Array) -> None:
        self.ts = ts
        self._cache: dict[str, pa.Array] = {}

    def __getitem__(self, name: str) -> pa.Array:
        if name not in self._cache:
            self._cache[name] = self._compute(name)
        return self._cache[name]

    def _compute(self, name: str) -> pa.Array:
        ts = self.ts
        if name == "nano":  # nano of second from Arrow's millisecond/microsecond/nanosecond parts
            ms, us, ns = (self[p] for p in ("millisecond", "microsecond", "nanosecond"))
            return pc.add(pc.add(pc.multiply(ms, 1_000_000), pc.multiply(us, 1000)), ns)
        if name == "dow":  # Sunday 1 ... Saturday 7
            return pc.cast(pc.day_of_week(ts, count_from_zero=False, week_start=7), pa.int64())
        if name == "epoch_day":
            return pc.cast(pc.cast(pc.cast(ts, pa.date32()), pa.int32()), pa.int64())
        if name == "year_of_era":
            return pc.if_else(pc.greater(self["year"], 0), self["year"], pc.subtract(1, self["year"]))
        if name == "quarter":
            return pc.add(pc.divide(pc.subtract(self["month"], 1), 3), 1)
        if name == "second_of_day":
            hours, minutes = pc.multiply(self["hour"], 3600), pc.multiply(self["minute"], 60)
            return pc.add(pc.add(hours, minutes), self["second"])
        if name in ("week", "week_year_shift"):
            length = pc.add(365, pc.cast(pc.is_leap_year(ts), pa.int64()))
            week, shift = week_of_week_based_year(self["day_of_year"], self["dow"], length)
            self._cache["week"] = week
            return week if name == "week" else shift
        if name == "week_of_month":
            return week_of_month(self["day"], self["dow"])
        return pc.cast(getattr(pc, name)(ts), pa.int64())  # year, month, day, day_of_year, hour, ...


def format_timestamps(ts: pa.Array, tokens: tuple[Token, ...]) -> pa.Array:
    """Timezone-naive timestamps rendered as text by ``compile_pattern``'s tokens (null stays null).

    ValueError when a padded field is wider than its pad (Java: "Cannot print as output of ...").
    """
    fields = _Fields(ts)
    parts: list[pa.Array | pa.Scalar] = []
    for token in tokens:
        if not token.letter:
            parts.append(pa.scalar(token.text))
            continue
        part = _RENDERERS[token.letter](fields, token.size)
        if token.pad:
            part = _pad(part, token.pad)
        parts.append(part)
    # an empty string part that is null where the input is null: keeps a literal-only pattern columnar
    parts.append(pc.if_else(pc.is_valid(ts), "", pa.scalar(None, pa.string())))
    return pc.binary_join_element_wise(*parts, "")


def _pad(part: pa.Array, width: int) -> pa.Array:
    widest = pc.max(pc.utf8_length(part)).as_py()
    if widest is not None and widest > width:
        raise ValueError(f"Cannot print as output of {widest} characters exceeds pad width of {width}")
    return pc.utf8_lpad(part, width=width, padding=" ")


def _digits(values: pa.Array, width: int) -> pa.Array:
    return pc.utf8_lpad(pc.cast(values, pa.string()), width=width, padding="0")


def _signed(values: pa.Array, width: int, exceeds_pad: bool = False) -> pa.Array:
    """Java's ``SignStyle.NORMAL`` (``-`` for negatives) or ``EXCEEDS_PAD`` (also ``+`` above ``width`` digits)."""
    low, high = pc.min_max(values).values()
    signed = exceeds_pad and width < 19 and high.is_valid and high.as_py() >= 10**width
    if not (signed or (low.is_valid and low.as_py() < 0)):  # the usual case: no sign anywhere
        return _digits(values, width)
    sign = pc.if_else(pc.less(values, 0), "-", "")
    if exceeds_pad and width < 19:
        sign = pc.if_else(pc.greater_equal(values, 10**width), "+", sign)
    return pc.binary_join_element_wise(sign, _digits(pc.abs(values), width), "")


def _year(values: pa.Array, count: int) -> pa.Array:
    if count == 2:  # Java's reduced two-digit year: |year| mod 100
        absolute = pc.abs(values)
        return _digits(pc.subtract(absolute, pc.multiply(pc.divide(absolute, 100), 100)), 2)
    return _signed(values, count, exceeds_pad=count >= 4)


def _names(values: pa.Array, names: list[str], base: int, count: int) -> pa.Array:
    """``count`` 3: short name, 4: full name, 5: narrow (first letter); ``values`` start at ``base``."""
    shown = {3: [n[:3] for n in names], 4: names, 5: [n[0] for n in names]}[count]
    return pc.take(pa.array(shown), pc.subtract(values, base))


def _text_or_number(name: str, names: list[str]) -> Callable[[_Fields, int], pa.Array]:
    def render(f: _Fields, n: int) -> pa.Array:
        return _digits(f[name], n) if n <= 2 else _names(f[name], names, 1, n)

    return render


def _quarter(f: _Fields, n: int) -> pa.Array:
    if n <= 2 or n == 5:
        return _digits(f["quarter"], 1 if n == 5 else n)
    if n == 3:
        return pc.binary_join_element_wise("Q", pc.cast(f["quarter"], pa.string()), "")
    return pc.take(pa.array(_QUARTERS), pc.subtract(f["quarter"], 1))


def _era(f: _Fields, n: int) -> pa.Array:
    names = _ERAS if n <= 3 else _ERA_NAMES if n == 4 else [e[0] for e in _ERAS]
    return pc.if_else(pc.greater(f["year"], 0), names[1], names[0])


def _hour_of_ampm(f: _Fields) -> pa.Array:
    return pc.if_else(pc.greater_equal(f["hour"], 12), pc.subtract(f["hour"], 12), f["hour"])


def _fraction(f: _Fields, n: int) -> pa.Array:
    return _digits(pc.divide(f["nano"], 10 ** (9 - n)), n)


def _milli_of_day(f: _Fields, n: int) -> pa.Array:
    return _digits(pc.add(pc.multiply(f["second_of_day"], 1000), pc.divide(f["nano"], 1_000_000)), n)


def _nano_of_day(f: _Fields, n: int) -> pa.Array:
    return _digits(pc.add(pc.multiply(f["second_of_day"], 1_000_000_000), f["nano"]), n)


def _aligned_day_of_week_in_month(f: _Fields, n: int) -> pa.Array:
    day = pc.subtract(f["day"], 1)
    return _digits(pc.add(pc.subtract(day, pc.multiply(pc.divide(day, 7), 7)), 1), n)


_RENDERERS: dict[str, Callable[[_Fields, int], pa.Array]] = {
    "G": _era,
    "u": lambda f, n: _year(f["year"], n),
    "y": lambda f, n: _year(f["year_of_era"], n),
    "Y": lambda f, n: _year(pc.add(f["year"], f["week_year_shift"]), n),
    "Q": _quarter,
    "q": _quarter,
    "M": _text_or_number("month", _MONTHS),
    "L": _text_or_number("month", _MONTHS),
    "w": lambda f, n: _digits(f["week"], n),
    "W": lambda f, n: _digits(f["week_of_month"], n),
    "D": lambda f, n: _digits(f["day_of_year"], n),
    "d": lambda f, n: _digits(f["day"], n),
    "F": _aligned_day_of_week_in_month,
    "E": lambda f, n: _names(f["dow"], _DAYS, 1, max(n, 3)),
    "e": _text_or_number("dow", _DAYS),
    "c": _text_or_number("dow", _DAYS),
    "a": lambda f, n: pc.if_else(pc.less(f["hour"], 12), "AM", "PM"),
    "h": lambda f, n: _digits(pc.if_else(pc.equal(_hour_of_ampm(f), 0), 12, _hour_of_ampm(f)), n),
    "K": lambda f, n: _digits(_hour_of_ampm(f), n),
    "k": lambda f, n: _digits(pc.if_else(pc.equal(f["hour"], 0), 24, f["hour"]), n),
    "H": lambda f, n: _digits(f["hour"], n),
    "m": lambda f, n: _digits(f["minute"], n),
    "s": lambda f, n: _digits(f["second"], n),
    "S": _fraction,
    "A": _milli_of_day,
    "n": lambda f, n: _digits(f["nano"], n),
    "N": _nano_of_day,
    "g": lambda f, n: _signed(pc.add(f["epoch_day"], _MJD_OF_EPOCH), n),
}
