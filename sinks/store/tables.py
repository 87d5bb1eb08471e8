"""Opening a table as pypaimon's file-store table, and the snapshots it keeps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable, Snapshot


def open_table(warehouse: str, catalog_options: Mapping[str, str], identifier: str) -> FileStoreTable:
    """pypaimon's FileStoreTable (the catalog object, not pypaimon-rust's)."""
    from pypaimon import CatalogFactory

    return CatalogFactory.create({**catalog_options, "warehouse": warehouse}).get_table(identifier)


def latest_snapshot(table: FileStoreTable) -> Snapshot | None:
    return table.snapshot_manager().get_latest_snapshot()


def tag_snapshots(table: FileStoreTable) -> list[Snapshot]:
    """The snapshots the table's tags keep."""
    manager = table.tag_manager()
    out = []
    for name in manager.list_tags():
        tag = manager.get(name)
        if tag is not None:
            out.append(tag.trim_to_snapshot())
    return out
