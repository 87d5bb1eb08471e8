"""``lakecdc query``: SQL over tables the sink wrote, including Paimon's system tables."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ingest.cli.main import main
from schema_evolution.types import int_, varchar
from sinks.table.catalog import Catalog
from sinks.table.query import run_query
from sinks.write.chunk_format import DELETE, INSERT
from tests.sinks.write.test_write_commit import _chunk, _write_and_commit


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    catalog = Catalog(wh)
    catalog.create_table("db.t", [("id", int_()), ("v", varchar(10))], ["id"], [], {"changelog-producer": "input"})
    assert _write_and_commit(wh, catalog, 0, [_chunk("db.t", [(1, "a"), (2, "b")], [INSERT, INSERT], 0)])
    return wh


def test_select_and_system_tables(warehouse: str) -> None:
    assert run_query(warehouse, "SELECT id, v FROM t ORDER BY id", "db").to_pylist() == [
        {"id": 1, "v": "a"},
        {"id": 2, "v": "b"},
    ]
    snapshots = run_query(warehouse, 'SELECT commit_identifier, commit_kind FROM "t$snapshots"', "db")
    assert snapshots.to_pylist() == [{"commit_identifier": 0, "commit_kind": "APPEND"}]
    assert isinstance(run_query(warehouse, "SELECT count(*) AS n FROM db.t"), pa.Table)


def test_cli_prints_rows_and_reports_errors(warehouse: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "SELECT v FROM t ORDER BY id", "--warehouse", warehouse, "--database", "db"]) == 0
    assert capsys.readouterr().out.split() == ["v", "a", "b"]
    assert main(["query", "SELECT * FROM nope", "--warehouse", warehouse, "--database", "db", "--output", "json"]) == 2
    assert "not found" in capsys.readouterr().err


def test_time_travel_by_snapshot_tag_and_timestamp(warehouse: str) -> None:
    catalog = Catalog(warehouse)
    assert main(["create-tag", "--warehouse", warehouse, "--database", "db", "--table", "t", "--tag-name", "v1"]) == 0
    assert _write_and_commit(warehouse, catalog, 1, [_chunk("db.t", [(1, "a"), (3, "c")], [DELETE, INSERT], 2)])

    def ids(sql: str) -> list[int]:
        return sorted(r["id"] for r in run_query(warehouse, sql, "db").to_pylist())

    assert ids("SELECT id FROM t") == [2, 3]
    assert ids("SELECT id FROM t VERSION AS OF 1") == [1, 2]
    assert ids("SELECT id FROM t VERSION AS OF 'v1'") == [1, 2]
    assert ids("SELECT id FROM t TIMESTAMP AS OF '2999-01-01 00:00:00'") == [2, 3]
    with pytest.raises(Exception, match="Snapshot 9 does not exist"):
        run_query(warehouse, "SELECT id FROM t VERSION AS OF 9", "db")
