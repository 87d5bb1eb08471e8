"""Moving a checkpoint's binlog position to another server by its GTID set (#23 item 4): what is
refused, and what the move leaves beside the checkpoint (``ingest.mysql.failover``). The servers'
answers are stubbed; ``tests/integration/mysql/test_gtid_failover.py`` fails over for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.mysql import failover
from ingest.mysql.client import MySqlConnection, MySqlSourceError
from ingest.mysql.failover import FAILOVER_FILE, Failover, moved_server
from ingest.mysql.gtid import GtidSet
from ingest.mysql.schema_history import SERVER_FILE, SchemaHistory
from ingest.mysql.snapshot import SnapshotRegistry
from ingest.mysql.spec import MySqlSourceSpec, binlog_offset
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from schema_evolution.mysql_tables import Column, TableDef

OLD, NEW = "server_id 1", "server_id 2"
START = {"chunks": [], "done": 0, "binlog": ["binlog.000003", 900], "server": OLD, "gtids": "0-1-40"}


class Servers:
    """The new server's answers: its GTID sets and where a set's next transaction starts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, executed: str | None = "0-1-60", purged: str = "") -> None:
        self.asked: list[GtidSet] = []
        sets = (None if executed is None else GtidSet.of(executed), GtidSet.of(purged))
        monkeypatch.setattr(failover, "retrying", lambda _conn, _look: sets)

        def after(_conn: Any, gtids: GtidSet, _server_id: int) -> tuple[str, int]:
            self.asked.append(gtids)
            return ("binlog.000001", 100 + 10 * max(gtids.mariadb.values(), default=0))

        monkeypatch.setattr(failover, "position_after_gtids", after)


def _failover(tmp_path: Path) -> Failover:
    spec = MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "", 10), "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")),
        str(tmp_path),
    )  # fmt: skip
    return Failover(spec)


def _table(*names: str) -> TableDef:
    return TableDef(tuple(Column(n, "int") for n in names), ("id",))


def test_an_offset_is_moved_only_when_it_names_another_server() -> None:
    assert moved_server(START, NEW) and not moved_server(START, OLD)
    assert not moved_server({"binlog": ["b.1", 4]}, NEW)  # from before offsets named their server


def test_the_move_rebases_the_history_and_retires_the_watermarks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    servers = Servers(monkeypatch)
    history = SchemaHistory(str(tmp_path))
    history.start(("binlog.000001", 4), {"d.t": _table("id")})
    history.record(binlog_offset(("binlog.000002", 50)), ("binlog.000002", 50), {"d.t": _table("id", "v")})
    # a DDL after the committed position, read by a batch that never committed
    history.record(binlog_offset(("binlog.000004", 7)), ("binlog.000004", 7), {"d.t": _table("id", "v", "w")})
    mark = {"chunk": 0, "database": "d", "table": "t", "target": "ods.t", "lo": None, "hi": None}
    SnapshotRegistry(str(tmp_path)).record(0, [json.dumps({**mark, "hw": ["binlog.000002", 10]})], lambda t: False)
    (tmp_path / SERVER_FILE).write_text(json.dumps({"server": OLD, "files": {"binlog.000003": 5}}))

    moved = _failover(tmp_path).resume(START, NEW)
    assert moved == ("binlog.000001", 500) and servers.asked == [GtidSet.parse("0-1-40")]
    # the definitions as of the old position, at the new one, and nothing keyed by old positions
    assert history.as_of(binlog_offset(moved)) == {"d.t": _table("id", "v")}
    assert json.loads((history.dir / "start.json").read_text())["position"] == list(moved)
    assert not list(history.dir.glob("[0-9]*.json"))
    assert SnapshotRegistry(str(tmp_path)).by_table() == {}
    assert json.loads((tmp_path / SERVER_FILE).read_text()) == {"server": NEW, "files": {}}
    marker = json.loads((tmp_path / FAILOVER_FILE).read_text())
    assert marker["from"]["gtids"] == "0-1-40" and marker["to"] == {"server": NEW, "binlog": list(moved)}

    # Again (a restart, or Spark's replay of the batch): the same position, from the marker.
    history.record(binlog_offset(("binlog.000001", 700)), ("binlog.000001", 700), {"d.t": _table("id")})
    assert _failover(tmp_path).resume(START, NEW) == moved and len(servers.asked) == 1
    assert len(list(history.dir.glob("[0-9]*.json"))) == 1  # the new server's entries are kept


def test_a_crash_while_the_history_was_rebased_is_finished_from_the_marker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    Servers(monkeypatch)
    history = SchemaHistory(str(tmp_path))
    history.start(("binlog.000001", 4), {"d.t": _table("id")})
    history.record(binlog_offset(("binlog.000002", 50)), ("binlog.000002", 50), {"d.t": _table("id", "v")})
    moved = _failover(tmp_path).resume(START, NEW)
    # as if the job died after the entries went and before the new start was written
    history.start(("binlog.000001", 4), {"d.t": _table("id")})
    assert _failover(tmp_path).resume(START, NEW) == moved
    assert history.as_of(binlog_offset(moved)) == {"d.t": _table("id", "v")}


def test_a_planned_end_is_found_after_the_same_transactions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    Servers(monkeypatch)
    end = {**START, "binlog": ["binlog.000003", 2000], "gtids": "0-1-55"}
    assert _failover(tmp_path).end(end, NEW) == ("binlog.000001", 650)


@pytest.mark.parametrize(
    ("start", "executed", "purged", "reason"),
    [
        ({**START, "gtids": None}, "0-1-60", "", "holds no GTID set"),
        ({**START, "chunks": [["d", "t", None, None]]}, "0-1-60", "", "while the snapshot was read"),
        (START, "0-1-30", "", "caught up"),
        (START, None, "", "keeps no GTIDs"),
        (START, "0-1-60", "0-1-45", "purged"),
    ],
)
def test_a_move_that_cannot_be_exact_stops_the_job(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    start: dict[str, Any],
    executed: str | None,
    purged: str,
    reason: str,
) -> None:
    Servers(monkeypatch, executed, purged)
    with pytest.raises(MySqlSourceError, match=reason) as stopped:
        _failover(tmp_path).resume(start, NEW)
    assert OLD in str(stopped.value) and NEW in str(stopped.value) and "binlog.000003:900" in str(stopped.value)
    assert not (tmp_path / FAILOVER_FILE).exists()


def test_watermarks_ahead_of_the_position_stop_the_job(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    Servers(monkeypatch)
    mark = {"chunk": 0, "database": "d", "table": "t", "target": "ods.t", "lo": None, "hi": None}
    SnapshotRegistry(str(tmp_path)).record(0, [json.dumps({**mark, "hw": ["binlog.000003", 1200]})], lambda t: False)
    with pytest.raises(MySqlSourceError, match=r"high watermarks \(up to binlog\.000003:1200"):
        _failover(tmp_path).resume(START, NEW)
