"""The rows a Paimon table holds in a range of one integer key column, read-only (pypaimon-rust's SQL
over the table's latest snapshot). A source that takes a new snapshot of a table reads them to tell
which keys the source no longer has, and delete them with their stored values
(``ingest.mysql.resnapshot``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _name(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def keys_sql(table: str, keys: Sequence[str], split: str | None, lo: int | None, hi: int | None) -> str:
    """The query of ``table``'s (``database.table``) ``keys`` columns (``*``: all) of the rows whose
    ``split`` column is in [lo, hi) (an open end where None; every row without ``split``)."""
    database, _, name = table.partition(".")
    where = []
    if split is not None and lo is not None:
        where.append(f"{_name(split)} >= {int(lo)}")
    if split is not None and hi is not None:
        where.append(f"{_name(split)} < {int(hi)}")
    columns = ", ".join(_name(k) for k in keys) if keys else "*"
    sql = f"SELECT {columns} FROM {_name(database)}.{_name(name)}"
    return sql + (" WHERE " + " AND ".join(where) if where else "")


def rows_in_range(
    warehouse: str, table: str, split: str | None, lo: int | None, hi: int | None
) -> list[dict[str, Any]]:
    """Every row of ``table`` whose ``split`` column lies in [lo, hi) (every row without ``split``)."""
    from sinks.table.query import run_query

    result = run_query(warehouse, keys_sql(table, (), split, lo, hi), table.partition(".")[0])
    return result.to_pylist() if result.num_columns else []
