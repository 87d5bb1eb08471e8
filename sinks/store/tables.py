"""Opening a table as pypaimon's file-store table, and the snapshots it keeps."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING

from schema_evolution.identifiers import DATABASE_SUFFIX, UnsafeIdentifierError, check_name, split_identifier

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable, Snapshot


def _root(warehouse: str) -> str:
    """The warehouse as a normalised path, compared lexically (a ``file:`` URI's path; any other URI
    as written)."""
    for scheme in ("file://", "file:"):
        if warehouse.startswith(scheme):
            warehouse = warehouse[len(scheme) :]
            break
    return posixpath.normpath(warehouse or ".")


def inside_warehouse(warehouse: str, location: str, depth: int) -> bool:
    """Whether ``location`` is exactly ``depth`` directories below ``warehouse`` (1: a database's
    directory, 2: a table's), compared after normalising both (``..`` resolved, lexically:
    symbolic links inside the warehouse are the operator's and are followed)."""
    root, path = _root(warehouse), _root(location)
    for _ in range(depth):
        if path == root or not path.startswith(root.rstrip("/") + "/"):
            return False
        path = posixpath.dirname(path)
    return path == root


def database_location(warehouse: str, database: str) -> str:
    """The directory pypaimon's filesystem catalog gives ``database`` (``<warehouse>/<db>.db``), after
    checking that the name is safe and the directory inside the warehouse: ``UnsafeIdentifierError``
    otherwise, before anything is created or read."""
    check_name(database, "database")
    location = f"{warehouse.rstrip('/')}/{database}{DATABASE_SUFFIX}"
    if not inside_warehouse(warehouse, location, 1):
        raise UnsafeIdentifierError("database", database, f"its directory {location} is not inside the warehouse")
    return location


def table_location(warehouse: str, identifier: str) -> str:
    """The directory of table ``identifier`` (``database.table``) in the filesystem catalog
    (``<warehouse>/<db>.db/<table>``), checked like ``database_location``."""
    database, table = split_identifier(identifier)
    location = f"{database_location(warehouse, database)}/{table}"
    if not inside_warehouse(warehouse, location, 2):
        raise UnsafeIdentifierError("table", identifier, f"its directory {location} is not inside the warehouse")
    return location


def open_table(warehouse: str, catalog_options: Mapping[str, str], identifier: str) -> FileStoreTable:
    """pypaimon's FileStoreTable (the catalog object, not pypaimon-rust's); ``UnsafeIdentifierError``
    before any file is read when ``identifier`` is not a safe name inside the warehouse."""
    from pypaimon import CatalogFactory

    table_location(warehouse, identifier)
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
