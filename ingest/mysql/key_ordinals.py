"""Key columns the server orders by a number: YEAR, BIT(n), ENUM, FLOAT and DOUBLE (#27), and SET keys
matched.

The server orders these by ``column + 0``: a YEAR by its year (0000 first), a BIT(n) by its value, an
ENUM by its member's index in the column's definition (not by its name). Chunks split on such a column
(``key_chunks``) so have bounds that are that number: read as ``column + 0`` in the column's order, and
passed back as integers, which the server compares with the column's number. A YEAR or BIT column
compared so is an index range; an ENUM compared with ``>=`` or ``<`` a number is not (MariaDB 10.11,
EXPLAIN: type ALL, a full scan for every chunk) while ``=`` and ``IN`` are, so an ENUM's comparisons
are written as ``IN`` lists of member indexes (``column_sql``). A FLOAT or DOUBLE's bounds are its
values read exactly, as ``column * 1e0`` (the text protocol sends a FLOAT with six digits, another
float; ``ingest.mysql.snapshot`` reads chunks' FLOATs so too), passed back as doubles.

The SELECT (pymysql) and the binlog decoder give these keys differently (checked on MariaDB 10.11 by
``tests/integration/mysql/test_ordinal_key_chunks.py``):

- YEAR: an int from both, but the binlog gives 0000 as 1900 (``uint8 + 1900``; 1900 is no YEAR value);
- BIT(n): ``bytes`` ((n + 7) // 8 of them, big-endian) from the SELECT, a string of n 0s and 1s from
  the binlog;
- ENUM: its member's name from both ("" for the invalid value, index 0);
- FLOAT, DOUBLE: the same double from both (the snapshot's FLOAT read as ``column * 1e0``);
- SET (never split): the members comma-joined in the column's order from the SELECT, a Python set of
  names from the binlog (None for none);
- BINARY(n) (``key_bounds``): all n bytes from the SELECT, without the trailing 0x00 from the binlog.

``select_form`` turns a binlog key into the SELECT's form, so a chunk's back-fill finds the rows its
SELECT read by their keys; ``OrdinalKey.number`` turns either form into the server's number, so a key
is placed among the bounds as the server places it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ingest.mysql.key_bounds import binary_width, binlog_key
from schema_evolution.mysql_dialect import member_values

_ORDINAL = re.compile(r"^(year|bit|enum|float|double|real)\b", re.IGNORECASE)
_SET = re.compile(r"^set\s*\(", re.IGNORECASE)
_BIT_WIDTH = re.compile(r"^bit\s*(?:\((\d+)\))?", re.IGNORECASE)

# How ``column op %s`` is written for one key column (its quoted name, the operator, the bound value):
# the SQL and its arguments.
ColumnSql = Callable[[str, str, Any], tuple[str, list[Any]]]


def plain_sql(column: str, op: str, value: Any) -> tuple[str, list[Any]]:
    return f"{column} {op} %s", [value]


def is_ordinal(column_type: str) -> bool:
    """Whether a key column of this type is split on its number (see the module)."""
    return _ORDINAL.match(column_type.strip()) is not None


class OrdinalKey:
    """One YEAR, BIT(n), ENUM, FLOAT or DOUBLE key column: its number, its SQL comparisons."""

    def __init__(self, column_type: str) -> None:
        text = column_type.strip()
        match = _ORDINAL.match(text)
        assert match is not None, column_type
        kind = match.group(1).lower()
        self.kind = "float" if kind in ("float", "double", "real") else kind  # year, bit, enum or float
        self.members: list[str] = member_values(text) if self.kind == "enum" else []
        self._index = {name: i for i, name in enumerate(self.members, start=1)}
        self._folded = {name.casefold(): i for name, i in reversed(list(self._index.items()))}

    def number(self, value: Any) -> Any:
        """The server's number of a key as the SELECT or the binlog gives it (None stays None: the
        lowest key, as ``key_tuples.TupleRange`` places it)."""
        if value is None:
            return None
        if self.kind == "year":
            return 0 if value == 1900 else int(value)
        if self.kind == "float":
            return float(value)
        if self.kind == "bit":
            if isinstance(value, bytes | bytearray):
                return int.from_bytes(value, "big")
            return int(value, 2) if isinstance(value, str) else int(value)
        if isinstance(value, int):
            return value
        if value == "":
            return 0
        found = self._index.get(value)
        return found if found is not None else self._folded.get(str(value).casefold(), 0)

    def sql(self, column: str, op: str, value: Any) -> tuple[str, list[Any]]:
        """``column op value`` for a number ``value``: an ENUM's ``>``, ``>=`` and ``<`` as the ``IN``
        list of the member indexes that satisfy it (0, the invalid value, among them)."""
        if self.kind != "enum" or op == "=":
            return plain_sql(column, op, value)
        last = len(self.members)
        start, stop = {">": (value + 1, last + 1), ">=": (value, last + 1), "<": (0, value)}[op]
        indexes = list(range(max(0, start), min(last + 1, stop)))
        if not indexes:
            return "1 = 0", []
        return f"{column} IN ({', '.join(['%s'] * len(indexes))})", indexes

    def compare(self, key: Any, bound: Any) -> int:
        """<0, 0, >0 as a key (either form) is before, at or after a number bound."""
        number = self.number(key)
        return (number > bound) - (number < bound)


def ordinal_keys(types: Mapping[str, str], keys: Sequence[str]) -> list[OrdinalKey | None]:
    """An ``OrdinalKey`` for each key column of such a type, else None."""
    return [OrdinalKey(types[k]) if is_ordinal(types.get(k, "")) else None for k in keys]


def column_sqls(types: Mapping[str, str], keys: Sequence[str]) -> list[ColumnSql]:
    """How each key column's bound comparisons are written (``key_tuples.range_sql``)."""
    return [plain_sql if o is None else o.sql for o in ordinal_keys(types, keys)]


def bound_expression(column: str, column_type: str) -> str:
    """What a chunk bound reads of a key column (a quoted name): an ordinal column's number (a FLOAT's
    or DOUBLE's exact value: ``* 1e0``)."""
    if not is_ordinal(column_type):
        return column
    return f"{column} * 1e0" if OrdinalKey(column_type).kind == "float" else f"{column} + 0"


def select_form(column_type: str) -> Callable[[Any], Any] | None:
    """How a binlog key value of this column type becomes the value the chunk's SELECT reads (None:
    it is that already): a BINARY(n) padded back (``key_bounds.binlog_key``), and the forms above."""
    text = column_type.strip()
    lower = text.lower()
    if width := binary_width(text):
        return functools.partial(binlog_key, width=width)
    if lower.startswith("year"):
        return lambda v: 0 if v == 1900 else v
    if lower.startswith("bit"):
        match = _BIT_WIDTH.match(text)
        size = (int(match.group(1) or 1) + 7) // 8 if match else 1
        return lambda v: int(v, 2).to_bytes(size, "big") if isinstance(v, str) else v
    if _SET.match(text):
        members = member_values(text)

        def joined(v: Any) -> Any:
            if isinstance(v, set | frozenset):
                return ",".join(m for m in members if m in v)
            return "" if v is None else v

        return joined
    return None


class OrdinalRange:
    """Whether a key of a ``key_ordinals`` column (either form) lies in [lo, hi) of number bounds; a
    key None (undecodable) is the lowest, as ``key_bounds.TypedRange`` places it."""

    def __init__(self, key: OrdinalKey) -> None:
        self.key = key

    def __call__(self, key: Any, lo: Any, hi: Any) -> bool:
        if key is None:
            return lo is None
        return (lo is None or self.key.compare(key, lo) >= 0) and (hi is None or self.key.compare(key, hi) < 0)
