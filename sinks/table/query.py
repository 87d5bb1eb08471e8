"""SQL over Paimon tables (pypaimon-rust's DataFusion context), for inspecting what a job wrote:
``SELECT … FROM table``, system tables such as ``"table$snapshots"``, ``$schemas``, ``$files``."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from sinks.table.locations import resolve_location


def run_query(
    warehouse: str, sql: str, database: str = "default", options: Mapping[str, str] | None = None
) -> pa.Table:
    """Run one SQL statement; tables resolve in ``database`` unless qualified. ``warehouse`` is a
    relative or absolute path or a ``file:`` URI (pypaimon-rust itself takes absolute ones only)."""
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {**(options or {}), "warehouse": resolve_location(warehouse)}, database)
    batches = ctx.sql(sql)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)
