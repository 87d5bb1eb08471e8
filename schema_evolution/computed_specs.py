"""``--computed-column 'name=func(args)'`` specs parsed into ``ComputedColumn``s and validated at
start-up: functions, argument counts and syntax, literal arguments, references between computed
columns (the functions and the argument syntax are described in ``schema_evolution.computed``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from schema_evolution.computed import EPOCH_UNITS, TEMPORAL_FIELDS, ComputedColumn
from schema_evolution.conversion import ValueConversionError, convert_column
from schema_evolution.date_format import compile_pattern
from schema_evolution.types import PaimonType, Root, parse_type

# name -> (min, max) argument count, the source column included
_ARITY: dict[str, tuple[int, int]] = {
    **dict.fromkeys(TEMPORAL_FIELDS, (1, 2)),
    "date_format": (2, 3),
    "substring": (2, 3),
    "truncate": (2, 2),
    "upper": (1, 1),
    "lower": (1, 1),
    "trim": (1, 1),
    "cast": (1, 2),
    "now": (0, 0),
}

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
    # date_format's pattern is passed as written, as in Paimon: a '...' pattern is Java literal text
    args = _split_args(m.group(2), keep_quote="'" if function == "date_format" else "")
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
    if function in TEMPORAL_FIELDS or function == "date_format":
        if function == "date_format":
            col = _with(col, pattern=compile_pattern(rest[0]))
            rest = rest[1:]
        if rest:
            precision = _int_arg(rest[0], "precision")
            if precision not in EPOCH_UNITS:
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


def _split_args(text: str, keep_quote: str = "") -> list[str]:
    """Split at top-level commas; quoted arguments are verbatim, others trimmed (as are those that
    start with ``keep_quote``, quotes kept). '' for no arguments."""
    if not text.strip():
        return []
    args: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] in "'\"" and text[i] != keep_quote:
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
