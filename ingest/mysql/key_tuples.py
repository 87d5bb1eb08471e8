"""Chunk bounds on a whole composite primary key (#27): their SQL and their order.

A table keyed by ``(tenant, id)`` split on ``tenant`` alone puts every row of one tenant in one chunk,
held whole by its read task: a tenant with millions of rows is a chunk of millions. So a composite key
is split on the whole key (``key_chunks.query_key_chunks``): a bound is a tuple of key values, and a
chunk [lo, hi) holds the rows whose key, compared column by column in the server's order, is at or
after ``lo`` and before ``hi``. A scalar bound (a single-column key's, or a checkpoint's from before
composite splits) is a bound on the first key column, as before.

The SQL is spelled out as ``a > x OR (a = x AND b >= y)`` rather than the row constructor
``(a, b) >= (x, y)``, which MariaDB's range optimizer does not turn into an index range (EXPLAIN on
MariaDB 10.11, a 20,000-row table keyed by ``(a, b)``: type ALL for the row constructor, a range of
PRIMARY for the spelled-out form; ``test_composite_key_chunks`` checks the latter); both the
comparison and the equality use the column's collation, as ``ORDER BY`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ingest.mysql.key_ordinals import ColumnSql, plain_sql

# How one key column's values are compared in the server's order: <0, 0, >0 (``key_chunks`` builds
# them: by collation for strings, padded bytes for BINARY(n), by value otherwise).
Compare = Callable[[Any, Any], int]


def natural(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _bound_sql(columns: Sequence[str], bound: Any, op: str, sqls: Sequence[ColumnSql] | None) -> tuple[str, list[Any]]:
    """``key op bound`` for ``op`` in ``>=``, ``>`` and ``<``; ``columns`` are quoted names, as many as
    the key has (a scalar bound uses the first); ``sqls``: how each column's comparisons are written
    (``key_ordinals.column_sqls``; plain ``column op %s`` without)."""
    values = list(bound) if isinstance(bound, tuple) else [bound]
    written = list(sqls) if sqls is not None else [plain_sql] * len(columns)
    strict = "<" if op == "<" else ">"
    n = len(values) - 1
    sql, args = written[n](columns[n], op, values[-1])
    for i in reversed(range(n)):
        before, before_args = written[i](columns[i], strict, values[i])
        equal, equal_args = written[i](columns[i], "=", values[i])
        sql, args = f"({before} OR ({equal} AND {sql}))", [*before_args, *equal_args, *args]
    return sql, args


def range_sql(
    columns: Sequence[str], lo: Any, hi: Any, sqls: Sequence[ColumnSql] | None = None
) -> tuple[str, list[Any]]:
    """A WHERE condition for [lo, hi) (open ends None) and its arguments; "" for the whole table."""
    parts, args = [], []
    for bound, op in ((lo, ">="), (hi, "<")):
        if bound is not None:
            sql, values = _bound_sql(columns, bound, op, sqls)
            parts.append(sql)
            args += values
    return " AND ".join(parts), args


def after_sql(
    columns: Sequence[str], bound: tuple[Any, ...], sqls: Sequence[ColumnSql] | None = None
) -> tuple[str, list[Any]]:
    """A WHERE condition for the keys strictly after ``bound``."""
    return _bound_sql(columns, bound, ">", sqls)


class TupleRange:
    """Whether a key (a tuple of its columns' values, BINARY(n) ones padded back as the SELECT reads
    them) lies in [lo, hi) of scalar or tuple bounds, each column compared by its ``Compare``.

    A key value None (a zero date the binlog cannot decode) is below every bound value, as
    ``key_bounds.TypedRange`` places it; a value of another type than the bound's (the column altered
    meanwhile) lies in no range."""

    def __init__(self, compares: Sequence[Compare]) -> None:
        self.compares = tuple(compares)

    def compare(self, key: Sequence[Any], bound: Any) -> int:
        """<0, 0 or >0 as the key is before, at the start of, or after ``bound`` (a tuple bound of
        fewer columns than the key: the key's prefix of that length)."""
        values = bound if isinstance(bound, tuple) else (bound,)
        for value, of, compare in zip(key, values, self.compares, strict=False):
            order = -1 if value is None else compare(value, of)
            if order:
                return order
        return 0

    def __call__(self, key: Sequence[Any], lo: Any, hi: Any) -> bool:
        try:
            return (lo is None or self.compare(key, lo) >= 0) and (hi is None or self.compare(key, hi) < 0)
        except TypeError:
            return False
