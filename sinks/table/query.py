"""SQL over Paimon tables (pypaimon-rust's DataFusion context), for inspecting what a job wrote:
``SELECT … FROM table``, system tables such as ``"table$snapshots"``, ``$schemas``, ``$files``."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from sinks.filesystem import with_environment
from sinks.table.locations import resolve_warehouse


def run_query(
    warehouse: str, sql: str, database: str = "default", options: Mapping[str, str] | None = None
) -> pa.Table:
    """Run one SQL statement; tables resolve in ``database`` unless qualified. ``warehouse`` is a
    relative or absolute path, a ``file:`` URI (pypaimon-rust itself takes absolute ones only) or an
    ``s3://`` URI (``s3.*`` options from ``options`` or the AWS_* environment)."""
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    location = resolve_warehouse(warehouse)
    ctx.register_catalog("paimon", {**with_environment(location, options or {}), "warehouse": location}, database)
    batches = ctx.sql(sql)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)
