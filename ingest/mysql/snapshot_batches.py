"""How many snapshot chunks one micro-batch reads under ``--max-offsets-per-trigger``: planned by the
rows each chunk is estimated to hold, not by a chunk count.

A chunk bounded on both sides by the integer split holds about ``chunk_size`` rows; a whole table
(no bounds: a small table, or a key that is not split) holds about its ``information_schema.TABLES``
row estimate; an edge chunk of a split table (open on one side) holds its share of what the table's
bounded chunks do not (rows beyond the bounds planned, or inserted since), at least ``chunk_size``.
Estimates only shape micro-batches: they are not in the offset (a checkpoint is read the same whatever
they were), and the chunks of a batch are fixed once Spark stored its offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ingest.mysql.client import query, variables


def chunk_rows(chunks: Sequence[Sequence[Any]], table_rows: Mapping[str, int | None], chunk_size: int) -> list[int]:
    """The estimated rows of each chunk ``[db, table, lo, hi]`` of ``chunks`` (the whole plan, so a
    table's bounded chunks are all counted), by its table's ``table_rows`` ("db.table"; a table
    missing from it or None counts ``chunk_size`` per chunk, as before)."""
    bounded: dict[str, int] = {}
    edges: dict[str, int] = {}
    for database, table, lo, hi in chunks:
        if lo is not None or hi is not None:
            counts = bounded if lo is not None and hi is not None else edges
            counts[f"{database}.{table}"] = counts.get(f"{database}.{table}", 0) + 1
    rows = []
    for database, table, lo, hi in chunks:
        name = f"{database}.{table}"
        total = table_rows.get(name)
        if total is None or (lo is not None and hi is not None):
            rows.append(chunk_size)
        elif lo is None and hi is None:
            rows.append(max(1, total))
        else:
            rows.append(max(chunk_size, (total - chunk_size * bounded.get(name, 0)) // edges[name]))
    return rows


# Each chunk has its own watermarks and back-fill, and small chunks share read tasks (``chunk_packs``),
# but a micro-batch's chunks all commit together: 1,000 small tables in one micro-batch committed nothing
# for 122 s (bench-scale). At most this many chunks a batch gives a first commit within seconds and
# costs the whole load little.
MAX_CHUNKS_PER_BATCH = 256


def batch_end(rows: Sequence[int], done: int, max_rows: int, max_chunks: int = MAX_CHUNKS_PER_BATCH) -> int:
    """The index after the last chunk of the micro-batch that starts at chunk ``done``: the chunks
    whose estimated ``rows`` add up to at most ``max_rows``, at least one (a chunk alone above it),
    and at most ``max_chunks`` of them."""
    end = min(len(rows), done + 1)
    total = rows[done] if done < len(rows) else 0
    while end < len(rows) and end - done < max_chunks and total + rows[end] <= max_rows:
        total += rows[end]
        end += 1
    return end


def table_row_estimates(c: Any, tables: Iterable[tuple[str, str]]) -> dict[str, int]:
    """``information_schema.TABLES.TABLE_ROWS`` of ``tables`` ("db.table" -> rows), in one query over
    their databases (MySQL 8 caches the statistics for ``information_schema_stats_expiry`` seconds:
    asked fresh where the server has that variable)."""
    tables = list(tables)
    wanted = {f"{d}.{t}" for d, t in tables}
    databases = sorted({d for d, _t in tables})
    if not databases:
        return {}
    if "information_schema_stats_expiry" in variables(c, "information_schema_stats_expiry"):
        query(c, "SET SESSION information_schema_stats_expiry = 0")
    marks = ",".join(["%s"] * len(databases))
    rows = query(
        c,
        f"SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ({marks})",
        databases,
    )
    found = {f"{d}.{t}": int(n or 0) for d, t, n in rows}
    return {name: n for name, n in found.items() if name in wanted}
