"""The schema history's decisions on a binlog statement (#23 item 6): DDL outside the captured
databases is not parsed, unparseable DDL of tables the job does not capture is forgotten, and
only a captured table's unparseable DDL stops the job, naming the position and the ways forward."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.mysql.options import skip_ddl_positions
from ingest.mysql.schema_history import SchemaHistory, follow_ddl, history_mark, unfollowed_ddl
from ingest.mysql.spec import binlog_offset
from schema_evolution.mysql_tables import Column, DdlError, TableDef
from schema_evolution.payloads import previews

PARTITIONED = "CREATE TABLE {name} (id INT PRIMARY KEY, v INT) PARTITION BY HASH(id) PARTITIONS 4"
T = TableDef((Column("id", "int", False), Column("v", "int")), ("id",))
AT = ("mysql-bin.000002", 1234)


def _follow(statement: str, catalog: dict[str, TableDef] | None = None, skip: tuple = ()) -> dict:
    catalog = {"shop.t": T} if catalog is None else catalog
    return follow_ddl(catalog, statement, "shop", AT, lambda d: d == "shop", lambda d, t: t != "aux", skip)


def test_unparseable_ddl_of_another_database_is_not_parsed() -> None:
    assert _follow(PARTITIONED.format(name="other.p")) == {}
    assert _follow("DROP DATABASE other") == {}


def test_unparseable_ddl_of_an_uncaptured_table_forgets_it() -> None:
    assert _follow(PARTITIONED.format(name="aux"), {"shop.t": T, "shop.aux": T}) == {"shop.aux": None}


def test_unparseable_ddl_of_a_captured_table_raises() -> None:
    with pytest.raises(DdlError):
        _follow(PARTITIONED.format(name="shop.u"))
    with pytest.raises(DdlError):
        _follow("ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4")


def test_skipped_position_passes_over_the_statement() -> None:
    assert _follow("ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4", skip=(AT,)) == {}


def test_parseable_ddl_is_followed_and_kept_to_the_captured_databases() -> None:
    changes = _follow("RENAME TABLE t TO other.t2")
    assert changes == {"shop.t": None}
    assert _follow("ALTER TABLE t ADD COLUMN w INT")["shop.t"].names() == ["id", "v", "w"]


def test_the_stop_names_position_statement_and_ways_forward() -> None:
    text = "ALTER TABLE t PARTITION BY HASH(id)\n   PARTITIONS 4 " + "x" * 400
    message = str(unfollowed_ddl(AT, text, DdlError("cannot parse")))
    assert "binlog mysql-bin.000002:1234" in message
    assert f"a statement of {len(text)} characters (ALTER TABLE; --log-payloads shows it)" in message  # no DDL
    assert "PARTITION" not in message
    with previews(True):
        shown = str(unfollowed_ddl(AT, text, DdlError("cannot parse")))
    assert "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4 xxx" in shown and "…" in shown
    assert "scan.schema-history.skip-ddl=mysql-bin.000002:1234" in message
    assert "--excluding-tables" in message and "binlog_row_metadata=FULL" in message
    assert len(message) < 1200


def test_skip_ddl_positions() -> None:
    assert skip_ddl_positions("mysql-bin.000003:1234, b.1:4") == (("mysql-bin.000003", 1234), ("b.1", 4))
    assert skip_ddl_positions("") == ()
    with pytest.raises(ValueError, match="file:pos"):
        skip_ddl_positions("mysql-bin.000003")


def test_history_marks_are_recorded_as_the_read_task_recorded_them_and_a_replay_is_a_no_op(tmp_path: Path) -> None:
    # The binlog read task returns each change of the history as a mark; the driver records it before
    # the commit: the same entry record() makes, at the same offset, and again on a replay.
    wider = TableDef((*T.columns, Column("w", "int")), ("id",))
    offset = binlog_offset(AT)
    history = SchemaHistory(str(tmp_path / "driver"))
    history.start(("mysql-bin.000002", 4), {"shop.t": T, "shop.old": T})
    chunk = json.dumps({"chunk": 3, "database": "shop", "table": "t", "target": "ods.t", "hw": list(AT)})
    notes = [history_mark(offset, AT, {"shop.t": wider, "shop.old": None}), chunk]
    assert history.record_marks(notes) == [chunk]  # the chunk's high watermark goes on to the registry
    direct = SchemaHistory(str(tmp_path / "direct"))
    direct.record(offset, AT, {"shop.t": wider, "shop.old": None})
    entry = history.dir / f"{offset:020d}.json"
    assert isinstance(entry, Path)  # a local checkpoint's history is plain files
    assert entry.read_text() == (direct.dir / entry.name).read_text()
    assert history.as_of(offset - 1) == {"shop.t": T, "shop.old": T}
    assert history.as_of(offset) == {"shop.t": wider}
    written = entry.stat().st_mtime_ns
    assert history.record_marks(notes) == [chunk]
    assert entry.stat().st_mtime_ns == written
    assert sorted(p.name for p in history.dir.iterdir()) == [entry.name, "start.json"]
