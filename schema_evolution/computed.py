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
at every comma, so its specs parse the same here unless an argument starts with a quote.
``parse_computed_columns`` validates everything that does not depend on the source schema at start-up
and returns the columns in dependency order (a computed column may use another one, as in Paimon).

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from schema_evolution.arrow_types import to_arrow
from schema_evolution.conversion import ValueConversionError, convert_column
from schema_evolution.types import PaimonType, Root, int_, parse_type, string, timestamp

_INTS = frozenset({Root.TINYINT, Root.SMALLINT, Root.INT, Root.BIGINT})
_TEXT = frozenset({Root.CHAR, Root.VARCHAR})
_TEMPORAL = frozenset({Root.DATE, Root.TIMESTAMP, Root.TIMESTAMP_LTZ})
_EPOCH_UNITS = {0: "s", 3: "ms", 6: "us", 9: "ns"}
_TEMPORAL_FIELDS = ("year", "month", "day", "hour", "minute", "second")
# name -> (min, max) argument count, the source column included
_ARITY: dict[str, tuple[int, int]] = {
    **dict.fromkeys(_TEMPORAL_FIELDS, (1, 2)),
    "date_format": (2, 3),
    "substring": (2, 3),
    "truncate": (2, 2),
    "upper": (1, 1),
    "lower": (1, 1),
    "trim": (1, 1),
    "cast": (1, 2),
    "now": (0, 0),
}
_JAVA_WHITESPACE = "".join(chr(i) for i in range(33))  # what java.lang.String.trim strips

Token = tuple[str, int | str]  # (pattern letter, count) or ("'", literal text)


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
        if f in _TEMPORAL_FIELDS or f == "date_format":
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
        if f in _TEMPORAL_FIELDS:
            return getattr(pc, f)(self._timestamps(column, input_type))
        if f == "date_format":
            return _format(self._timestamps(column, input_type), self.pattern)
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
        unit = _EPOCH_UNITS[0 if self.precision is None else self.precision]
        if root in _TEXT:
            column = self._to_int64(column)
        # Arrow reads epoch values with floor semantics: -1 us is 1969-12-31 23:59:59.999999.
        return pc.cast(pc.cast(column, pa.int64()), pa.timestamp(unit))

    def _to_int64(self, column: pa.Array) -> pa.Array:
        try:
            return pc.cast(pc.utf8_trim_whitespace(column), pa.int64())
        except pa.ArrowInvalid:
            bad = next((v for v in column.to_pylist() if v is not None and not _is_int(v)), None)
            raise self._fail(f"value {bad!r} of column '{self.source}' is not an epoch number") from None

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
            raise self._fail(f"value {bad!r} of column '{self.source}' is not a date or timestamp")
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


# ---------------------------------------------------------------------------------------------
# date_format: Java DateTimeFormatter patterns, rendered column by column
# ---------------------------------------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September"]
_MONTHS += ["October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
# letter -> max count; names are English, as with Paimon's default (Locale-less) formatter
_LETTERS = {"y": 9, "u": 9, "M": 5, "L": 5, "d": 2, "D": 3, "H": 2, "h": 2, "K": 2, "k": 2, "m": 2, "s": 2}
_LETTERS.update({"S": 9, "n": 9, "a": 1, "E": 5})
_HINTS = {"Y": " (week-based year; did you mean 'y'?)", "T": " (quote literal text: 'T')"}


def compile_pattern(pattern: str) -> tuple[Token, ...]:
    """Java DateTimeFormatter pattern -> tokens; ValueError for what we cannot render exactly."""
    tokens: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j, lit = i + 1, ""
            while True:
                if j >= len(pattern):
                    raise ValueError(f"unterminated quote in pattern '{pattern}'")
                if pattern[j] == "'":
                    if j + 1 < len(pattern) and pattern[j + 1] == "'":
                        lit, j = lit + "'", j + 2
                        continue
                    break
                lit, j = lit + pattern[j], j + 1
            tokens.append(("'", lit if j > i + 1 else "'"))  # '' alone is one quote
            i = j + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            count = j - i
            if c not in _LETTERS:
                raise ValueError(
                    f"unsupported pattern letter '{c}'{_HINTS.get(c, '')} in '{pattern}' "
                    f"(supported: {' '.join(_LETTERS)})"
                )
            if count > _LETTERS[c]:
                raise ValueError(f"too many pattern letters '{c * count}' in '{pattern}'")
            tokens.append((c, count))
            i = j
        elif c in "[]{}#":
            raise ValueError(f"pattern character '{c}' is not supported in '{pattern}'")
        else:
            tokens.append(("'", c))
            i += 1
    return tuple(tokens)


def _format(ts: pa.Array, tokens: tuple[Token, ...]) -> pa.Array:
    cache: dict[str, pa.Array] = {}

    def part(name: str) -> pa.Array:
        if name not in cache:
            if name == "nano":  # nano-of-second from Arrow's millisecond/microsecond/nanosecond parts
                ms, us, ns = (
                    pc.cast(getattr(pc, p)(ts), pa.int64()) for p in ("millisecond", "microsecond", "nanosecond")
                )
                cache[name] = pc.add(pc.add(pc.multiply(ms, 1_000_000), pc.multiply(us, 1000)), ns)
            else:
                cache[name] = pc.cast(getattr(pc, name)(ts), pa.int64())
        return cache[name]

    def num(values: pa.Array, width: int) -> pa.Array:
        return pc.utf8_lpad(pc.cast(values, pa.string()), width=width, padding="0")

    def hour() -> pa.Array:
        return part("hour")

    renderers: dict[str, Callable[[int], pa.Array]] = {
        "y": lambda n: _year(part("year"), n, num),
        "u": lambda n: _year(part("year"), n, num),
        "M": lambda n: _named(part("month"), n, num, _MONTHS, 1),
        "L": lambda n: _named(part("month"), n, num, _MONTHS, 1),
        "d": lambda n: num(part("day"), n),
        "D": lambda n: num(part("day_of_year"), n),
        "H": lambda n: num(hour(), n),
        "h": lambda n: num(pc.if_else(pc.equal(_mod12(hour()), 0), 12, _mod12(hour())), n),
        "K": lambda n: num(_mod12(hour()), n),
        "k": lambda n: num(pc.if_else(pc.equal(hour(), 0), 24, hour()), n),
        "m": lambda n: num(part("minute"), n),
        "s": lambda n: num(part("second"), n),
        "S": lambda n: num(pc.divide(part("nano"), 10 ** (9 - n)), n),
        "n": lambda n: num(part("nano"), n),
        "a": lambda n: pc.if_else(pc.less(hour(), 12), "AM", "PM"),
        "E": lambda n: _named(part("day_of_week"), max(n, 3), num, _DAYS, 0),  # Arrow: Monday is 0
    }
    parts = [pa.scalar(str(v)) if c == "'" else renderers[c](int(v)) for c, v in tokens]
    # an empty string part that is null where the input is null: keeps a literal-only pattern columnar
    parts.append(pc.if_else(pc.is_valid(ts), "", pa.scalar(None, pa.string())))
    return pc.binary_join_element_wise(*parts, "")


def _mod12(hour: pa.Array) -> pa.Array:
    return pc.if_else(pc.greater_equal(hour, 12), pc.subtract(hour, 12), hour)


def _year(year: pa.Array, n: int, num: Callable[[pa.Array, int], pa.Array]) -> pa.Array:
    if n == 2:  # Java's reduced two-digit year
        return num(pc.subtract(year, pc.multiply(pc.divide(year, 100), 100)), 2)
    return num(year, n)


def _named(values: pa.Array, n: int, num: Callable[[pa.Array, int], pa.Array], names: list[str], base: int) -> pa.Array:
    if n <= 2:
        return num(values, n)
    shown = {3: [x[:3] for x in names], 4: names, 5: [x[0] for x in names]}[n]
    return pc.take(pa.array(shown), pc.subtract(values, base))


# ---------------------------------------------------------------------------------------------
# parsing the command-line specs
# ---------------------------------------------------------------------------------------------

_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.DOTALL)


def parse_computed_columns(specs: Sequence[str]) -> list[ComputedColumn]:
    """Parse and validate ``--computed-column`` values; the result is in dependency order."""
    columns: list[ComputedColumn] = []
    for spec in specs:
        try:
            columns.append(_parse_one(spec))
        except ValueError as exc:
            raise ValueError(f"--computed-column '{spec}': {exc}") from None
    names = [c.name for c in columns]
    for c in columns:
        if names.count(c.name) > 1:
            raise ValueError(f"--computed-column '{c.name}={c.expression}': column '{c.name}' is computed twice")
    return _dependency_order(columns)


def resolve_case_insensitively(
    columns: Sequence[ComputedColumn], source_columns: Sequence[str]
) -> list[ComputedColumn]:
    """The columns with each reference spelled as the source (or computed) column it names
    whatever the case, as Paimon resolves them in a case-insensitive catalog; re-ordered by the
    references so found."""
    names = {n.lower(): n for n in source_columns}
    names.update({c.name.lower(): c.name for c in columns})
    resolved = [c if c.source is None else replace(c, source=names.get(c.source.lower(), c.source)) for c in columns]
    return _dependency_order(resolved)


def _dependency_order(columns: list[ComputedColumn]) -> list[ComputedColumn]:
    """Each column after the computed column it reads; otherwise in the order given (as Paimon)."""
    computed = {c.name for c in columns}
    done: set[str] = set()
    ordered: list[ComputedColumn] = []
    pending = list(columns)
    while pending:
        ready = []
        for c in pending:  # one pass in the given order; emitted columns unlock later ones at once
            if c.source not in computed or c.source in done:
                ready.append(c)
                done.add(c.name)
        if not ready:
            cycle = ", ".join(f"'{c.name}={c.expression}'" for c in pending)
            raise ValueError(f"--computed-column: circular references between {cycle}")
        ordered += ready
        pending = [c for c in pending if c.name not in done]
    return ordered


def _parse_one(spec: str) -> ComputedColumn:
    name, eq, expression = spec.partition("=")
    name, expression = name.strip(), expression.strip()
    if not eq or not name:
        raise ValueError("expected 'column-name=function(arguments)'")
    m = _CALL.match(expression)
    if m is None:
        raise ValueError(f"expected 'function(arguments)' after '=', got '{expression}'")
    function = m.group(1).lower()
    if function not in _ARITY:
        raise ValueError(f"unknown function '{m.group(1)}' (known: {', '.join(sorted(_ARITY))})")
    args = _split_args(m.group(2))
    low, high = _ARITY[function]
    if not low <= len(args) <= high:
        want = str(low) if low == high else f"{low} to {high}"
        raise ValueError(f"{function}() takes {want} argument(s), got {len(args)}")
    if function in ("now", "cast"):
        source = None
    else:
        source = args[0]
        if not source:
            raise ValueError(f"the first argument of {function}() must be a column name")
        if source == name:
            raise ValueError(f"column '{name}' cannot reference itself; give the computed column another name")
    col = ComputedColumn(name, expression, source, function)
    rest = args[1:]
    if function in _TEMPORAL_FIELDS or function == "date_format":
        if function == "date_format":
            col = _with(col, pattern=compile_pattern(rest[0]))
            rest = rest[1:]
        if rest:
            precision = _int_arg(rest[0], "precision")
            if precision not in _EPOCH_UNITS:
                raise ValueError(
                    f"precision must be 0 (epoch seconds), 3 (milliseconds), 6 (microseconds) or "
                    f"9 (nanoseconds), got {precision}"
                )
            col = _with(col, precision=precision)
    elif function == "substring":
        begin = _int_arg(rest[0], "begin index")
        end = _int_arg(rest[1], "end index") if len(rest) > 1 else None
        if begin < 0:
            raise ValueError(f"begin index must be >= 0, got {begin}")
        if end is not None and end <= begin:
            raise ValueError(f"end index ({end}) must be larger than begin index ({begin})")
        col = _with(col, begin=begin, end=end)
    elif function == "truncate":
        width = _int_arg(rest[0], "width")
        if width <= 0:
            raise ValueError(f"width must be a positive integer, got {width}")
        col = _with(col, width=width)
    elif function == "cast":
        col = _with(col, cast_value=args[0], cast_type=_cast_type(args[0], args[1] if len(args) > 1 else "STRING"))
    return col


def _with(col: ComputedColumn, **changes: Any) -> ComputedColumn:
    return replace(col, **changes)


def _int_arg(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got '{text}'") from None


def _cast_type(value: str, type_text: str) -> PaimonType:
    try:
        typ = parse_type(type_text)
    except ValueError as exc:
        raise ValueError(f"cast(): {exc}") from None
    if typ.root is Root.ARRAY:
        raise ValueError(f"cast(): type {typ} is not an atomic type")
    try:
        convert_column("cast", [value], typ)
    except ValueConversionError as exc:
        raise ValueError(f"cast(): '{value}' is not a valid {typ}: {str(exc).split(': ', 2)[-1]}") from None
    return typ


def _split_args(text: str) -> list[str]:
    """Split at top-level commas; quoted arguments are verbatim, others trimmed. '' for no arguments."""
    if not text.strip():
        return []
    args: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] in "'\"":
            quote, j, value = text[i], i + 1, ""
            while True:
                if j >= n:
                    raise ValueError(f"unterminated {quote} quote in '{text}'")
                if text[j] == quote:
                    if j + 1 < n and text[j + 1] == quote:
                        value, j = value + quote, j + 2
                        continue
                    break
                value, j = value + text[j], j + 1
            i = j + 1
            while i < n and text[i].isspace():
                i += 1
            if i < n and text[i] != ",":
                raise ValueError(f"unexpected text after the quoted argument {quote}{value}{quote}: '{text[i:]}'")
        else:
            depth, j = 0, i
            while j < n and not (text[j] == "," and depth == 0):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            value, i = text[i:j].strip(), j
        args.append(value)
        if i >= n:
            return args
        i += 1  # the comma
