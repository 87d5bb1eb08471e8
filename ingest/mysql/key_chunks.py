"""Snapshot chunks of any primary key, and where a key lies among them.

A composite key whose columns are all of the types below is split on the whole key (``key_tuples``,
``query_key_chunks``): bounds are key tuples ``chunk_size`` rows apart in the server's order, so one
first-column value holding millions of rows (a tenant of a ``(tenant, id)`` key) is several chunks.
Flink CDC splits on one column (its chunk key column) and would put such a value in one chunk. Other
tables split on their first primary-key column: a dense integer column by key
arithmetic between MIN and MAX (Flink CDC's evenly-distributed split). Every other table is split where the
server's own order puts a chunk's worth of rows (Flink CDC's query-driven split): a string key (a UUID),
a BINARY/VARBINARY key (UUID bytes), a DATE, DATETIME, TIMESTAMP or DECIMAL key
(``key_bounds``), and an integer key so sparse that arithmetic ranges would hold nothing or nearly
everything (Flink CDC's ``chunk-key.even-distribution.factor.upper-bound``, 1000 keys per row). Each
bound is the key found ``chunk_size`` rows past the last one (``ORDER BY`` the column, on its index),
so no chunk holds more than a chunk's rows plus the rows of its first key value.

A string chunk's bounds are in its column's collation, so the binlog keys placed among them (the
chunk's LW..HW changes, the binlog phase's "has the snapshot read this key already") are compared in
that order: in Python where ``schema_evolution.collation_order`` proves it the collation's, else by
the server (``TextRange``). Binary, temporal and decimal bounds are compared as the server orders
them (``key_bounds.TypedRange``: memcmp of BINARY(n)'s padded bytes, datetimes and decimals by value).
YEAR, BIT, ENUM, FLOAT and DOUBLE keys are split on the number the server orders them by
(``key_ordinals``). Any other first key column (SET, ...) is one chunk, held whole; a composite key with
such a column after the first is split on its first column.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

from ingest.mysql.client import query, quote
from ingest.mysql.key_bounds import TypedRange, binary_width, binlog_key, bounds_typed, encode_bound, typed_key
from ingest.mysql.key_ordinals import OrdinalKey, OrdinalRange, bound_expression, column_sqls, is_ordinal
from ingest.mysql.key_tuples import Compare, TupleRange, after_sql, natural
from schema_evolution.collation_order import local_order

# rows per key value beyond which arithmetic ranges of an integer key are mostly empty (Flink CDC's
# default upper bound of the even-distribution factor)
EVEN_FACTOR_MAX = 1000.0
_INTEGER = re.compile(r"^(tinyint|smallint|mediumint|int|integer|bigint)\b", re.IGNORECASE)
_TEXT = re.compile(r"^(char|varchar)\b", re.IGNORECASE)
_NAME = re.compile(r"\w+")

Bound = Any  # int, str, bytes, date, datetime or Decimal (``key_bounds``); None for an open end
InRange = Callable[[Any, Bound, Bound], bool]


# A chunk's rows are held whole by its read task until its HW (then written): at most about this many
# bytes of them as the server stores them (information_schema's AVG_ROW_LENGTH), so that a wide table's
# chunk of ``chunk_size`` rows does not become gigabytes (a row costs several times its stored size in
# Python). 64 MiB: a 32,768-row chunk of rows up to 2 KiB keeps its size.
CHUNK_MAX_BYTES = 64 << 20
# ... and at most about this many values (rows x columns): each is a Python object from the read to the
# write, whatever its stored size. A 1,000-column table's 64 MiB chunks (4,051 rows of ~16 KB) took the
# snapshot job to 3.0 GiB, ~265 bytes a value (bench/README.md, "a 1,000-column table"). 2^20: a 32,768-row chunk
# of up to 32 columns keeps its size.
CHUNK_MAX_VALUES = 1 << 20


def plan_chunks(
    c: Any,
    database: str,
    table: str,
    key_columns: list[str],
    key_types: list[str],
    chunk_size: int,
    whole_key: bool = True,
    columns: int = 0,
) -> list[tuple[Bound, Bound]]:
    """Key ranges [lo, hi) of about ``chunk_size`` rows each, fewer where rows are wide (at most about
    ``CHUNK_MAX_BYTES``, and ``CHUNK_MAX_VALUES`` of the table's ``columns``), covering the whole key
    space (a row inserted beyond MAX belongs to the last one); open ends as None. One range where the
    table fits in a chunk or its first key column is none of an integer, a CHAR/VARCHAR, a
    ``key_bounds.typed_key`` (binary, DATE/DATETIME/TIMESTAMP, TIME, DECIMAL) or a ``key_ordinals`` one
    (YEAR, BIT, ENUM, FLOAT, DOUBLE: bounds are their numbers), or where a typed bound is not of its
    column's Python type (a zero date)."""
    typed = bool(key_columns) and typed_key(key_types[0])
    if not key_columns or not _splittable(key_types[0]):
        return [(None, None)]
    chunk_size = min(chunk_size, _rows_within_bounds(c, database, table, columns))
    if whole_key and len(key_columns) > 1 and all(map(_splittable, key_types)):
        chunks = query_key_chunks(c, database, table, key_columns, chunk_size, key_types)
        typed_bounds = [(hi[i], t) for _lo, hi in chunks[:-1] for i, t in enumerate(key_types) if typed_key(t)]
        return chunks if all(bounds_typed(t, [v]) for v, t in typed_bounds) else [(None, None)]
    if _TEXT.match(key_types[0]) or is_ordinal(key_types[0]):
        return query_chunks(c, database, table, key_columns[0], chunk_size, key_types[0])
    if typed:
        chunks = query_chunks(c, database, table, key_columns[0], chunk_size)
        return chunks if bounds_typed(key_types[0], [hi for _lo, hi in chunks[:-1]]) else [(None, None)]
    key, name = quote(key_columns[0]), f"{quote(database)}.{quote(table)}"
    lo, hi, count = query(c, f"SELECT MIN({key}), MAX({key}), COUNT(*) FROM {name}")[0]
    if lo is None or count <= chunk_size:
        return [(None, None)]
    lo, hi, count = int(lo), int(hi), int(count)
    if hi - lo + 1 > EVEN_FACTOR_MAX * count:
        return query_chunks(c, database, table, key_columns[0], chunk_size)
    step = max(1, (hi - lo + 1) * chunk_size // count)
    edges: list[Bound] = [None, *range(lo + step, hi + 1, step), None]
    return list(itertools.pairwise(edges))


def _splittable(column_type: str) -> bool:
    """Whether a key column of this type can bound a chunk: an integer, a CHAR/VARCHAR, a
    ``key_bounds.typed_key`` or a ``key_ordinals`` one."""
    return bool(
        _INTEGER.match(column_type) or _TEXT.match(column_type) or typed_key(column_type) or is_ordinal(column_type)
    )


def offset_chunks(
    c: Any,
    database: str,
    table: str,
    key_columns: list[str],
    key_types: list[str],
    chunk_size: int,
    whole_key: bool = True,
    columns: int = 0,
) -> list[tuple[Any, Any]]:
    """``plan_chunks``' ranges with their bounds as offsets hold them (JSON, ``key_bounds.encode_bound``)."""
    chunks = plan_chunks(c, database, table, key_columns, key_types, chunk_size, whole_key, columns)
    return [(encode_bound(lo), encode_bound(hi)) for lo, hi in chunks]


def _rows_within_bounds(c: Any, database: str, table: str, columns: int) -> int:
    """How many of the table's rows of ``columns`` columns fit in ``CHUNK_MAX_VALUES`` values and, by
    their average stored length, in ``CHUNK_MAX_BYTES`` (no byte bound where the server keeps no
    estimate yet, no value bound for 0 columns)."""
    # The caller knows the columns: counting them in information_schema.COLUMNS as well took a
    # 1,000-table job's start-up from 13.0 to 32.4 s (bench/README.md, "a 1,000-column table").
    rows = query(
        c,
        "SELECT AVG_ROW_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
        (database, table),
    )
    length = int(rows[0][0] or 0) if rows else 0
    by_bytes = max(1, CHUNK_MAX_BYTES // length) if length > 0 else 1 << 62
    return min(by_bytes, max(1, CHUNK_MAX_VALUES // columns) if columns > 0 else 1 << 62)


def query_chunks(
    c: Any, database: str, table: str, column: str, chunk_size: int, column_type: str = ""
) -> list[tuple[Bound, Bound]]:
    """Ranges whose bounds are the keys the server finds ``chunk_size`` rows apart in its order of
    ``column``: each the ``chunk_size``-th key strictly after the previous bound, so the split always
    moves on, even past a first-column value with more rows than a chunk (a composite key's). A
    ``key_ordinals`` column's bounds are its numbers."""
    key, name = quote(column), f"{quote(database)}.{quote(table)}"
    read = bound_expression(key, column_type)
    (after,) = column_sqls({column: column_type}, [column])
    bounds: list[Bound] = []
    row = query(c, f"SELECT {read} FROM {name} ORDER BY {key} LIMIT 1 OFFSET %s", (chunk_size,))
    while row:
        bounds.append(row[0][0])
        condition, args = after(key, ">", bounds[-1])
        row = query(
            c,
            f"SELECT {read} FROM {name} WHERE {condition} ORDER BY {key} LIMIT 1 OFFSET %s",
            (*args, chunk_size - 1),
        )
    edges: list[Bound] = [None, *bounds, None]
    return list(itertools.pairwise(edges))


def query_key_chunks(
    c: Any, database: str, table: str, columns: list[str], chunk_size: int, column_types: list[str] | None = None
) -> list[tuple[Bound, Bound]]:
    """``query_chunks`` on a whole composite key (``key_tuples``): each bound the key tuple the server
    finds ``chunk_size`` rows past the previous one in its order of the key, so no chunk holds more
    than ``chunk_size`` rows however many share a first column's value."""
    names = [quote(col) for col in columns]
    types = dict(zip(columns, column_types or [""] * len(columns), strict=True))
    key = ", ".join(bound_expression(n, types[col]) for n, col in zip(names, columns, strict=True))
    order, name = ", ".join(names), f"{quote(database)}.{quote(table)}"
    sqls = column_sqls(types, columns)
    bounds: list[Bound] = []
    row = query(c, f"SELECT {key} FROM {name} ORDER BY {order} LIMIT 1 OFFSET %s", (chunk_size,))
    while row:
        bounds.append(tuple(row[0]))
        after, args = after_sql(names, bounds[-1], sqls)
        row = query(
            c, f"SELECT {key} FROM {name} WHERE {after} ORDER BY {order} LIMIT 1 OFFSET %s", (*args, chunk_size - 1)
        )
    edges: list[Bound] = [None, *bounds, None]
    return list(itertools.pairwise(edges))


def text_bounds(chunks: list[tuple[Bound, Bound]]) -> bool:
    return any(isinstance(b, str) for lo, hi in chunks for b in (lo, hi))


def _typed_bounds(chunks: list[tuple[Bound, Bound]]) -> bool:
    return any(b is not None and not isinstance(b, int | str) for lo, hi in chunks for b in (lo, hi))


class TextRange:
    """Whether a string key lies in [lo, hi) in the order of its column's collation (``__call__``).

    Each comparison is made in Python where ``local_order`` proves that order for the collation and
    both values, else by the server with the column's collation; the server's answers are kept for the
    task's life (a binlog range touches the same keys again and again)."""

    def __init__(self, c: Any, database: str, table: str, column: str) -> None:
        self._c = c
        found = query(
            c,
            "SELECT CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND COLUMN_NAME = %s",
            (database, table, column),
        )
        names = (str(found[0][0]), str(found[0][1])) if found and found[0][1] else None
        # spliced into the server's comparisons: only the server's own names (letters, digits, "_")
        self.charset: str | None
        self.collation: str | None
        self.charset, self.collation = names if names and all(map(_NAME.fullmatch, names)) else (None, None)
        self._asked: dict[tuple[str, str], int] = {}

    def __call__(self, key: Any, lo: Bound, hi: Bound) -> bool:
        return (lo is None or self.compare(key, lo) >= 0) and (hi is None or self.compare(key, hi) < 0)

    def compare(self, a: Any, b: Any) -> int:
        if self.collation is None or not isinstance(a, str) or not isinstance(b, str):
            # a column that is no longer a string (altered meanwhile): the values' own order
            return (a > b) - (a < b)
        la, lb = local_order(self.collation, a), local_order(self.collation, b)
        if la is not None and lb is not None:
            return (la > lb) - (la < lb)
        if (a, b) not in self._asked:
            text = f"CONVERT(%s USING {self.charset}) COLLATE {self.collation}"
            self._asked[(a, b)] = int(query(self._c, f"SELECT STRCMP({text}, {text})", (a, b))[0][0])
        return self._asked[(a, b)]


def range_test(
    c: Any,
    database: str,
    table: str,
    column: str,
    bounds: list[tuple[Bound, Bound]],
    column_type: str | None = None,
) -> InRange:
    """How to test a key of the table against ``bounds``' ranges: by collation where they are strings,
    as the server orders binary, temporal and decimal values where they are those (``TypedRange``).
    ``column_type``: the column's type where the caller has it (else asked of the server if needed); a
    ``key_ordinals`` column's keys are placed by their numbers."""
    if column_type is not None and is_ordinal(column_type):
        return OrdinalRange(OrdinalKey(column_type))
    if text_bounds(bounds):
        return TextRange(c, database, table, column)
    if _typed_bounds(bounds):
        if column_type is None:
            found = query(
                c,
                "SELECT COLUMN_TYPE FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND COLUMN_NAME = %s",
                (database, table, column),
            )
            column_type = str(found[0][0]) if found else ""
        return TypedRange(binary_width(column_type))
    return lambda key, lo, hi: (lo is None or key >= lo) and (hi is None or key < hi)


KeyInRange = Callable[[tuple[Any, ...], Bound, Bound], bool]


def key_range_test(
    c: Any,
    database: str,
    table: str,
    keys: list[str],
    bounds: list[tuple[Bound, Bound]],
    types: Mapping[str, str] | None = None,
) -> KeyInRange:
    """``range_test`` for a whole key: the returned test takes the key's tuple (BINARY(n) values padded
    back, ``key_bounds.binlog_key``). Scalar bounds are on the first key column (``range_test``); tuple
    bounds (``query_key_chunks``) are compared column by column, each column in the server's order.
    ``types``: the key columns' types where the caller has them (else asked of the server if needed)."""
    if not any(isinstance(b, tuple) for pair in bounds for b in pair):
        first = range_test(c, database, table, keys[0], bounds, (types or {}).get(keys[0]))
        return lambda key, lo, hi: first(key[0], lo, hi)
    if types is None or not all(k in types for k in keys):
        found = query(
            c,
            "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (database, table),
        )
        types = {str(name): str(kind) for name, kind in found}
    compares: list[Compare] = []
    for key in keys:
        column_type = types.get(key, "")
        if _TEXT.match(column_type):
            compares.append(TextRange(c, database, table, key).compare)
        elif is_ordinal(column_type):
            compares.append(OrdinalKey(column_type).compare)
        elif width := binary_width(column_type):
            compares.append(functools.partial(_padded, width))
        else:
            compares.append(natural)
    return TupleRange(compares)


def _padded(width: int, key: Any, bound: Any) -> int:
    return natural(binlog_key(key, width), bound)
