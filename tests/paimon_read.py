"""Independent read-back of Paimon tables, through both pypaimon-rust and pypaimon."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in a stable order: by ``id`` where the table has one, else by all values."""
    if rows and "id" in rows[0]:
        return sorted(rows, key=lambda r: r["id"])
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r.values()))


def read_rust(warehouse: str, table: str) -> list[dict[str, Any]]:
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": warehouse}).get_table(table)
    rb = t.new_read_builder()
    batches = rb.new_read().read(rb.new_scan().plan().splits())
    return _sorted(pa.Table.from_batches(batches).to_pylist()) if batches else []


def read_pypaimon(warehouse: str, table: str) -> list[dict[str, Any]]:
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({"warehouse": warehouse}).get_table(table)
    rb = t.new_read_builder()
    return _sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


def read_changelog(warehouse: str, table: str, columns: tuple[str, ...] = ("id", "v")) -> list[tuple[Any, ...]]:
    """Every changelog row of every snapshot, in commit order: (row kind, *columns)."""
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": warehouse}).get_table(table)
    latest = t.latest_snapshot()
    if latest is None:
        return []
    out: list[tuple[Any, ...]] = []
    for snap in range(1, latest.id() + 1):
        rb = t.new_read_builder().with_include_row_kind(True)
        batches = rb.new_read().read(rb.new_incremental_scan(snap - 1, snap, mode="changelog").plan().splits())
        for row in pa.Table.from_batches(batches).to_pylist() if batches else []:
            out.append((row["rowkind"], *(row[c] for c in columns)))
    return out
