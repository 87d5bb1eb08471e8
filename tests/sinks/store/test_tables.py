"""Table and database directories stay inside the warehouse (sinks.store.tables, sinks.table.catalog,
sinks.write.committer): an unsafe name is refused before anything is created or read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schema_evolution.identifiers import UnsafeIdentifierError
from schema_evolution.types import parse_type
from sinks.store.tables import database_location, inside_warehouse, open_table, table_location
from sinks.table.catalog import Catalog
from sinks.write.committer import Committer

UNSAFE_IDENTIFIERS = [
    "ods.../../escaped_table",
    "ods./abs",
    "ods.a/b",
    "ods.a\\b",
    "ods...",
    "ods..",
    "ods.nul\x00",
    "ods.t$snapshots",
    "ods.",
    "ods." + "x" * 256,
    "../x.t",
    "/abs.t",
    ".t",
    "a/b.t",
    "no_dot",
]


def _tree(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files}


def test_a_safe_table_is_where_pypaimon_puts_it(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "wh")
    catalog = Catalog(warehouse)
    catalog.create_table("ods.a.b", [("id", parse_type("INT NOT NULL"))], ["id"], [], {"bucket": "1"})
    table = open_table(warehouse, {}, "ods.a.b")
    assert str(table.table_path).removeprefix("file:") == table_location(warehouse, "ods.a.b")
    assert table_location(warehouse, "ods.a.b") == f"{warehouse}/ods.db/a.b"
    assert catalog.list_tables("ods") == ["a.b"]
    assert Committer(warehouse, {}, "u").table_directory("ods.a.b") == Path(warehouse) / "ods.db" / "a.b"


@pytest.mark.parametrize("identifier", UNSAFE_IDENTIFIERS, ids=repr)
def test_unsafe_identifiers_are_refused_before_anything_is_created(tmp_path: Path, identifier: str) -> None:
    warehouse = tmp_path / "deep" / "wh"
    warehouse.mkdir(parents=True)
    before = _tree(tmp_path)
    catalog = Catalog(str(warehouse))
    with pytest.raises(UnsafeIdentifierError):
        table_location(str(warehouse), identifier)
    with pytest.raises(UnsafeIdentifierError):
        catalog.create_table(identifier, [("id", parse_type("INT NOT NULL"))], ["id"], [], {"bucket": "1"})
    with pytest.raises(UnsafeIdentifierError):
        catalog.load_layout(identifier)
    with pytest.raises(UnsafeIdentifierError):
        open_table(str(warehouse), {}, identifier)
    committer = Committer(str(warehouse), {}, "u")
    with pytest.raises(UnsafeIdentifierError):
        committer.table_directory(identifier)
    with pytest.raises(UnsafeIdentifierError):
        committer.last_identifier(identifier)
    with pytest.raises(UnsafeIdentifierError):
        committer.commit(identifier, 1, [])
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("database", ["..", "../x", "/abs", "a.b", "", "x\x00", "d" * 253], ids=repr)
def test_unsafe_databases_are_refused_before_anything_is_created(tmp_path: Path, database: str) -> None:
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    catalog = Catalog(str(warehouse))
    with pytest.raises(UnsafeIdentifierError):
        catalog.ensure_database(database)
    with pytest.raises(UnsafeIdentifierError):
        catalog.list_tables(database)
    with pytest.raises(UnsafeIdentifierError):
        database_location(str(warehouse), database)
    assert _tree(tmp_path) == {"wh"}


@pytest.mark.parametrize(
    ("location", "depth", "inside"),
    [
        ("/w/h/db.db/t", 2, True),
        ("/w/h/db.db", 1, True),
        ("/w/h/db.db/t/", 2, True),
        ("/w/h/db.db/../../t", 2, False),
        ("/w/h/db.db/t/x", 2, False),
        ("/w/h/t", 2, False),
        ("/w/h", 1, False),
        ("/w/hx/db.db/t", 2, False),
        ("/w/t", 1, False),
        ("file:/w/h/db.db/t", 2, True),
        ("file:///w/h/db.db/t", 2, True),
    ],
)
def test_inside_warehouse_is_exact_about_depth(location: str, depth: int, inside: bool) -> None:
    assert inside_warehouse("/w/h", location, depth) is inside
    assert inside_warehouse("file:///w/h/", location, depth) is inside
