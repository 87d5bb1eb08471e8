"""Data files as compaction reads them (sinks.store.data_files): files of older schemas are read
by field id, so renamed and added columns hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schema_evolution.evolution import diff
from schema_evolution.types import bigint, int_, varchar
from sinks.compaction import compactor
from sinks.store import tables
from sinks.write.chunk_format import INSERT, UPDATE_AFTER
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import COMPACTOR, _commit, _create, _files


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def test_old_schemas_are_read_by_field_id(wh: str) -> None:
    catalog = _create(wh, {})
    _commit(wh, "db.t", 0, [(1, "a", INSERT), (2, "b", INSERT)])
    layout = catalog.load_layout("db.t")
    assert layout is not None
    # Rename v -> name and add a BIGINT column: old files hold "v" under the same field id.
    catalog.apply(layout, diff("db.t", layout.fields, [("id", int_()), ("v", varchar(20)), ("n", bigint())]))
    catalog._catalog.alter_table("db.t", [_rename("v", "name")], False)
    _commit(wh, "db.t", 1, [(2, "b2", UPDATE_AFTER), (3, "c", INSERT)])
    assert compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True).committed
    expected = [
        {"id": 1, "name": "a", "n": None},
        {"id": 2, "name": "b2", "n": None},
        {"id": 3, "name": "c", "n": None},
    ]
    assert read_rust(wh, "db.t") == expected
    assert read_pypaimon(wh, "db.t") == expected
    (metas,) = _files(wh, "db.t").values()
    assert [m.schema_id for m in metas] == [int(tables.open_table(wh, {}, "db.t").table_schema.id)]


def _rename(old: str, new: str) -> Any:
    from pypaimon.schema.schema_change import SchemaChange

    return SchemaChange.rename_column(old, new)
