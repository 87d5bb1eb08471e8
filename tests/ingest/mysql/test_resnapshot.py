"""The re-snapshot when a checkpoint's binlog position is gone (``scan.snapshot.when-needed``, #23 item
4): chunk coverage, how keys are compared in Paimon's stored form, and the decision kept beside the
checkpoint (``ingest.mysql.resnapshot``, ``ingest.mysql.key_diff``).
``tests/integration/mysql/test_resnapshot.py`` re-snapshots for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.mysql import key_diff
from ingest.mysql.client import MySqlConnection, MySqlSourceError
from ingest.mysql.key_diff import KeyScan, gone_keys
from ingest.mysql.resnapshot import RESNAPSHOT_FILE, Resnapshot, covers, key_scan, offset_key
from ingest.mysql.schema_history import SERVER_FILE, SchemaHistory
from ingest.mysql.snapshot import SnapshotRegistry
from ingest.mysql.spec import Chunk, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution.mysql_tables import Column, TableDef
from schema_evolution.types import parse_type
from sinks.table.key_scan import keys_sql

START = {"chunks": [], "done": 0, "binlog": ["binlog.000003", 900], "server": "server_id 1", "gtids": None}
TO = {"server": "server_id 1", "binlog": ["binlog.000005", 4], "gtids": None}


def test_chunks_cover_every_key_only_when_contiguous_and_open_at_both_ends() -> None:
    assert covers([(None, None)])
    assert covers([(10, 20), (None, 10), (20, None)])
    assert not covers([(None, 10), (11, None)])  # a gap
    assert not covers([(None, 10), (10, 20)])  # closed above
    assert not covers([(0, 10), (10, None)])  # closed below
    assert not covers([])


def _types(**sql: str) -> dict[str, Any]:
    return {k: parse_type(v) for k, v in sql.items()}


def test_keys_map_to_source_columns_in_stored_form() -> None:
    scan = key_scan(
        "/wh", "ods.t", ("id", "name"), _types(id="INT NOT NULL", name="STRING NOT NULL"),
        [("ID", "int(11) NOT NULL"), ("Name", "varchar(20) NOT NULL"), ("v", "int(11)")], "ID",
    )  # fmt: skip
    assert scan.columns == ("ID", "Name") and scan.as_text == (False, False) and scan.split == "id"
    assert scan.values == (("id", "ID"), ("name", "Name"))
    assert scan.stored_key({"ID": 5, "Name": "a", "v": 1}) == (5, "a")
    # --type-mapping to-string: an integer key is stored as its text; no range read on it
    text = key_scan("/wh", "ods.t", ("id",), _types(id="STRING NOT NULL"), [("id", "bigint(20) NOT NULL")], "id")
    assert text.as_text == (True,) and text.split is None
    assert text.stored_key({"id": 12}) == ("12",) and text.source_key(("12",)) == {"id": 12}


def test_keys_that_cannot_be_compared_exactly_are_refused() -> None:
    with pytest.raises(MySqlSourceError, match="not a column of the source"):
        key_scan("/wh", "ods.t", ("day",), _types(day="STRING"), [("id", "int(11)")], "id")  # computed
    with pytest.raises(MySqlSourceError, match="integer and string keys only"):
        key_scan("/wh", "ods.t", ("at",), _types(at="TIMESTAMP(0)"), [("at", "datetime")], "at")
    with pytest.raises(MySqlSourceError, match="integer and string keys only"):
        key_scan("/wh", "ods.t", ("id",), _types(id="DECIMAL(20, 0)"), [("id", "bigint(20) unsigned")], "id")


def test_the_key_query_reads_the_chunk_range_or_every_key() -> None:
    assert keys_sql("ods.t", ("id", "k"), "id", None, 10) == 'SELECT "id", "k" FROM "ods"."t" WHERE "id" < 10'
    assert keys_sql("ods.t", ("id",), "id", 10, 20) == 'SELECT "id" FROM "ods"."t" WHERE "id" >= 10 AND "id" < 20'
    assert keys_sql("ods.t", ("id",), None, 10, 20) == 'SELECT "id" FROM "ods"."t"'
    assert keys_sql("ods.t", (), "id", 10, None) == 'SELECT * FROM "ods"."t" WHERE "id" >= 10'


def test_gone_keys_are_the_stored_keys_no_row_is_written_under(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []

    stored_rows = [{"ID": i, "V": f"v{i}", "day": "2026"} for i in (1, 2, 3)]

    def stored(*args: Any) -> list[dict[str, Any]]:
        asked.append(args)
        return stored_rows

    import sinks.table.key_scan

    monkeypatch.setattr(sinks.table.key_scan, "rows_in_range", stored)
    # the before-image of a gone key: its stored values under their source names (a computed
    # column, "day", is left to the writer)
    scan = KeyScan("/wh", "ods.t", ("ID",), ("id",), (False,), "ID", (("ID", "id"), ("V", "v")))
    rows = {(2,): {"id": 2, "v": "x"}}
    assert gone_keys(scan, Chunk("d", "t", 1, 4), rows) == [{"id": 1, "v": "v1"}, {"id": 3, "v": "v3"}]
    assert asked == [("/wh", "ods.t", "ID", 1, 4)]
    whole = KeyScan("/wh", "ods.t", ("ID",), ("id",), (False,), None)
    gone_keys(whole, Chunk("d", "t", 1, 4), rows)
    assert asked[-1][-2:] == (None, None)  # one chunk: every key compared
    assert key_diff.ResnapshotChunkPartition(0, Chunk("d", "t", None, None)).scan is None


def _resnapshot(tmp_path: Path) -> Resnapshot:
    spec = MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "", 10), "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")),
        str(tmp_path), warehouse=str(tmp_path / "wh"),
    )  # fmt: skip
    return Resnapshot(spec)


def test_the_decision_is_kept_and_applied_idempotently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resnapshot = _resnapshot(tmp_path)
    scans: dict[str, dict[str, Any]] = {"d.t": {"split": None, "table": "ods.t"}, "d.u": {"split": "id"}}
    monkeypatch.setattr(resnapshot, "_key_scans", lambda _c, _s: {k: dict(v) for k, v in scans.items()})
    history = SchemaHistory(str(tmp_path))
    history.start(("binlog.000001", 4), {"d.t": TableDef((Column("id", "int"),), ("id",))})
    history.record(1, ("binlog.000002", 50), {"d.t": TableDef((Column("id", "int"), Column("v", "int")), ("id",))})
    SnapshotRegistry(str(tmp_path)).record(
        0, [json.dumps({"chunk": 3, "database": "d", "table": "t", "target": "ods.t", "lo": None, "hi": None,
                        "hw": ["binlog.000002", 70]})], lambda _t: False,
    )  # fmt: skip
    (tmp_path / SERVER_FILE).write_text(json.dumps({"server": "server_id 1", "files": {"binlog.000003": 1}}))
    assert resnapshot.marker_for(START) is None
    now = {"d.t": TableDef((Column("id", "int"), Column("w", "int")), ("id",))}
    chunks: list[list[Any]] = [["d", "t", None, 5], ["d", "t", 5, None], ["d", "u", None, 5], ["d", "u", 5, None]]
    marker = resnapshot.decide(START, "purged", TO, now, chunks, {}, {})
    # a table whose keys are not read by range is one chunk; the other keeps its covering chunks
    assert marker["chunks"] == [["d", "t", None, None], ["d", "u", None, 5], ["d", "u", 5, None]]
    assert marker["base"] == 4 and marker["from"] == offset_key(START)
    assert resnapshot.marker_for(START) == marker
    assert resnapshot.marker_for({**START, "binlog": ["binlog.000005", 4]}) is None
    assert json.loads((tmp_path / RESNAPSHOT_FILE).read_text()) == marker
    for _ in range(2):  # a crash after any step applies it again
        resnapshot.apply(marker)
        assert history.as_of(1 << 62) == now
        assert not list(history.dir.glob("[0-9]*.json"))
        assert SnapshotRegistry(str(tmp_path)).high_watermarks() == []
        assert json.loads((tmp_path / SERVER_FILE).read_text()) == {"server": "server_id 1", "files": {}}
    offset = Resnapshot.offset(marker)
    assert offset["binlog"] == TO["binlog"] and offset["done"] == 0 and offset["base"] == 4
    assert offset["chunks"] == marker["chunks"] and offset["resnapshot"] == marker["scans"]
