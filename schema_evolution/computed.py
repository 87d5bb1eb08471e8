"""Computed columns (``--computed-column 'name=func(args)'``), as Paimon's CDC actions define them.

A spec names a new column and one function of at most one source column plus literals::

    --computed-column 'pt=date_format(create_time, yyyy-MM-dd)'
    --computed-column 'y=year(ts_ms, 3)'               # an epoch-milliseconds BIGINT column
    --computed-column 'k=truncate(id, 100)'
    --computed-column 'src=cast(mysql, STRING)'        # a constant
    --computed-column 'ingested=now()'

Functions and result types (Paimon's ``Expression``):

- ``year|month|day|hour|minute|second(col[, precision])`` -> INT;
  ``date_format(col, pattern[, precision])`` -> STRING, ``pattern`` in Java ``DateTimeFormatter`` letters.
  ``col`` is a DATE, TIMESTAMP(p), TIMESTAMP_LTZ (taken at UTC), text that parses as a date or
  timestamp ("2023-03-23", "2023-03-23 14:30:05.123", "2023-03-23T14:30", single-digit fields too), or an
  epoch number: integer columns always, text when ``precision`` is given; ``precision`` 0/3/6/9 means
  epoch seconds/milliseconds/microseconds/nanoseconds (integers default to seconds).
- ``substring(col, begin[, end])`` -> STRING (0-based, end exclusive; non-text columns use their text form).
- ``truncate(col, width)`` -> the column's type: integers and DECIMAL round down to a multiple of
  ``width`` (for DECIMAL, of ``width`` units of the last digit: 12.34 -> 12.30 for width 10), text
  keeps its first ``width`` characters.
- ``upper|lower|trim(col)`` -> STRING; ``trim`` strips characters <= U+0020 like Java's ``String.trim``.
- ``cast(value[, type])`` -> ``type`` (default STRING): the literal ``value`` on every row.
- ``now()`` -> TIMESTAMP(3).

Arguments are split at commas outside parentheses; an argument wrapped in '...' or "..." is taken
verbatim (a doubled quote inside is one quote), others are trimmed. So ``cast(x, DECIMAL(10, 2))`` works
and a pattern with a comma is written ``date_format(ts, "yyyy-MM-dd, HH")``. Quotes inside an unquoted
argument are kept (Java pattern literals: ``yyyy-MM-dd'T'HH``); Paimon has no quoting at all and splits
at every comma, so its specs parse the same here unless an argument starts with a quote. A
``date_format`` pattern in single quotes keeps them, as in Paimon: ``date_format(ts, 'yyyy-ww')`` prints
the text ``yyyy-ww`` (Java reads quoted pattern text as a literal). The pattern letters, the en-US week
rules and the JDK chosen for ``F`` are in ``schema_evolution.date_format``.
``parse_computed_columns`` (``schema_evolution.computed_specs``) validates everything that does not
depend on the source schema at start-up and returns the columns in dependency order (a computed column
may use another one, as in Paimon).

Deviations from Paimon, on purpose:

- ``truncate`` of text shorter than ``width`` returns the text unchanged; ``substring`` clamps out-of-range
  indexes (Paimon throws for both and the job dies on the first short value).
- ``now()`` is not the wall clock: ``evaluate`` takes ``now_ms`` from the caller, who must pass a time
  fixed per source message (e.g. the Kafka message timestamp, or one value per row as an int64 array),
  so a replayed batch writes the same value. It is rendered as the UTC wall time of that instant
  (Paimon uses the JVM's local zone).
- ``upper``/``lower``/``trim`` accept CHAR too (Paimon only VARCHAR); a ``precision`` argument on a
  DATE/TIMESTAMP column is refused at start-up instead of failing on the first row.
- Upper/lower casing is Arrow's per-character Unicode mapping ('ß' stays 'ß'; Java gives "SS").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from schema_evolution.arrow_types import to_arrow
from schema_evolution.conversion import convert_column
from schema_evolution.date_format import Token, format_timestamps
from schema_evolution.payloads import preview
from schema_evolution.types import PaimonType, Root, int_, string, timestamp

_INTS = frozenset({Root.TINYINT, Root.SMALLINT, Root.INT, Root.BIGINT})
_TEXT = frozenset({Root.CHAR, Root.VARCHAR})
_TEMPORAL = frozenset({Root.DATE, Root.TIMESTAMP, Root.TIMESTAMP_LTZ})
EPOCH_UNITS = {0: "s", 3: "ms", 6: "us", 9: "ns"}
TEMPORAL_FIELDS = ("year", "month", "day", "hour", "minute", "second")
_JAVA_WHITESPACE = "".join(chr(i) for i in range(33))  # what java.lang.String.trim strips


@dataclass(frozen=True)
class ComputedColumn:
    name: str
    expression: str  # the original text, for messages
    source: str | None  # referenced column, None for now()/cast()
    function: str = ""
    precision: int | None = None  # temporal functions: epoch precision of a numeric input
    pattern: tuple[Token, ...] = ()  # date_format
    begin: int = 0  # substring
    end: int | None = None  # substring
    width: int = 0  # truncate
    cast_type: PaimonType | None = None
    cast_value: str | None = None

    def _fail(self, reason: str) -> ValueError:
        return ValueError(f"computed column '{self.name}' ({self.expression}): {reason}")

    def result_type(self, input_type: PaimonType | None) -> PaimonType:
        """The column's Paimon type, given its source column's type (None for now()/cast())."""
        f = self.function
        if f == "now":
            return timestamp(3)
        if f == "cast":
            assert self.cast_type is not None
            return self.cast_type
        if input_type is None:
            raise self._fail(f"the source column '{self.source}' has no type")
        root = input_type.root
        if f in TEMPORAL_FIELDS or f == "date_format":
            if root in _TEMPORAL and self.precision is not None:
                raise self._fail(
                    f"column '{self.source}' is {input_type}: the precision argument only applies to epoch numbers"
                )
            if root not in _TEMPORAL | _INTS | _TEXT:
                raise self._wrong_type(input_type, "a DATE, TIMESTAMP, epoch integer or date/time text column")
            return string() if f == "date_format" else int_()
        if f == "substring":
            if root in (Root.BINARY, Root.VARBINARY, Root.ARRAY):
                raise self._wrong_type(input_type, "a column with a text form")
            return string()
        if f == "truncate":
            if root not in _INTS | _TEXT | {Root.DECIMAL}:
                raise self._wrong_type(input_type, "an integer, DECIMAL or text column")
            return input_type
        if root not in _TEXT:  # upper / lower / trim
            raise self._wrong_type(input_type, "a text column")
        return string()

    def _wrong_type(self, typ: PaimonType, takes: str) -> ValueError:
        return self._fail(f"{self.function}() cannot take column '{self.source}' of type {typ}; it takes {takes}")

    def evaluate(
        self, column: pa.Array | None, input_type: PaimonType | None, length: int, now_ms: int | pa.Array
    ) -> pa.Array:
        """Compute the column for ``length`` rows; null where the source value is null.

        ``now_ms`` (epoch milliseconds, or an int64 array with one per row) is only read by now(); it
        must be fixed per source message so that replays are deterministic (see the module docstring).
        """
        out_type = to_arrow(self.result_type(input_type))
        f = self.function
        if f == "now":
            if isinstance(now_ms, int):
                return pa.repeat(pa.scalar(now_ms, pa.timestamp("ms")), length)
            return pc.cast(pc.cast(now_ms, pa.int64()), pa.timestamp("ms"))
        if f == "cast":
            assert self.cast_type is not None
            return pa.repeat(convert_column(self.name, [self.cast_value], self.cast_type)[0], length)
        if column is None or input_type is None:
            raise self._fail(f"no values given for the source column '{self.source}'")
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        try:
            result = self._compute(column, input_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError) as exc:
            raise self._fail(f"cannot evaluate: {str(exc).splitlines()[0]}") from None
        return result if result.type == out_type else pc.cast(result, out_type)

    def _compute(self, column: pa.Array, input_type: PaimonType) -> pa.Array:
        f = self.function
        if f in TEMPORAL_FIELDS:
            return getattr(pc, f)(self._timestamps(column, input_type))
        if f == "date_format":
            timestamps = self._timestamps(column, input_type)
            try:
                return format_timestamps(timestamps, self.pattern)
            except ValueError as exc:  # a padded field wider than its pad, as Java fails at that row
                raise self._fail(f"cannot format: {exc}") from None
        if f == "substring":
            text = column if pa.types.is_string(column.type) else pc.cast(column, pa.string())
            return pc.utf8_slice_codeunits(text, self.begin, self.end)
        if f == "truncate":
            return self._truncate(column, input_type)
        if f == "upper":
            return pc.utf8_upper(column)
        if f == "lower":
            return pc.utf8_lower(column)
        return pc.utf8_trim(column, characters=_JAVA_WHITESPACE)

    def _timestamps(self, column: pa.Array, input_type: PaimonType) -> pa.Array:
        """The source as a timezone-naive Arrow timestamp (UTC wall time for instants)."""
        root = input_type.root
        if root is Root.DATE:
            return pc.cast(column, pa.timestamp("s"))
        if root is Root.TIMESTAMP:
            return column
        if root is Root.TIMESTAMP_LTZ:
            return pc.cast(column, pa.timestamp(column.type.unit))
        if root in _TEXT and self.precision is None:
            return self._parse_text(column)
        unit = EPOCH_UNITS[0 if self.precision is None else self.precision]
        if root in _TEXT:
            column = self._to_int64(column)
        # Arrow reads epoch values with floor semantics: -1 us is 1969-12-31 23:59:59.999999.
        return pc.cast(pc.cast(column, pa.int64()), pa.timestamp(unit))

    def _to_int64(self, column: pa.Array) -> pa.Array:
        try:
            return pc.cast(pc.utf8_trim_whitespace(column), pa.int64())
        except pa.ArrowInvalid:
            bad = next((v for v in column.to_pylist() if v is not None and not _is_int(v)), None)
            raise self._fail(f"value {preview(bad)} of column '{self.source}' is not an epoch number") from None

    def _parse_text(self, column: pa.Array) -> pa.Array:
        text = pc.utf8_trim_whitespace(column)
        parsed = _cast_timestamps(text)
        if parsed is None:  # Paimon also takes single-digit fields ("2023-3-5 1:2:3"): pad them and retry
            parsed = _cast_timestamps(pa.array([_pad_datetime(v) for v in text.to_pylist()], pa.string()))
        if parsed is None:
            bad = next(
                (v for v in text.to_pylist() if v is not None and _cast_timestamps(_one(_pad_datetime(v))) is None),
                None,
            )
            raise self._fail(f"value {preview(bad)} of column '{self.source}' is not a date or timestamp")
        return parsed

    def _truncate(self, column: pa.Array, input_type: PaimonType) -> pa.Array:
        root = input_type.root
        if root in _TEXT:
            return pc.utf8_slice_codeunits(column, 0, self.width)  # shorter text: unchanged
        if root is Root.DECIMAL:
            # Python handles the unscaled arithmetic: Arrow has no modulo kernel for decimals.
            scale = input_type.scale or 0
            out: list[Decimal | None] = []
            for v in column.to_pylist():
                if v is None:
                    out.append(None)
                    continue
                unscaled = int(v.scaleb(scale))
                out.append(Decimal(unscaled - unscaled % self.width).scaleb(-scale))
            return pa.array(out, column.type)
        # floor(value / width) * width, with Arrow's truncating division corrected for negatives
        values = pc.cast(column, pa.int64())
        rem = pc.subtract(values, pc.multiply(pc.divide(values, self.width), self.width))
        rem = pc.if_else(pc.less(rem, 0), pc.add(rem, self.width), rem)
        return pc.cast(pc.subtract_checked(values, rem), column.type)


def _one(text: str | None) -> pa.Array:
    return pa.array([text], pa.string())


def _is_int(text: str) -> bool:
    return re.fullmatch(r"\s*[+-]?\d{1,18}\s*", text) is not None


def _cast_timestamps(text: pa.Array) -> pa.Array | None:
    # nanoseconds keep every digit Paimon keeps; microseconds reach years outside 1677..2262
    for unit in ("ns", "us"):
        try:
            return pc.cast(text, pa.timestamp(unit))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    return None


_LOOSE_DATETIME = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:([ T])(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d*)?)?)?$")


def _pad_datetime(v: str | None) -> str | None:
    m = None if v is None else _LOOSE_DATETIME.match(v)
    if m is None:
        return v
    y, mo, d, sep, h, mi, s, frac = m.groups()
    out = f"{y}-{int(mo):02d}-{int(d):02d}"
    if sep:
        out += f" {int(h):02d}:{int(mi):02d}:{int(s or 0):02d}" + (frac if frac and frac != "." else "")
    return out
