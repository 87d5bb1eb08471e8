"""record-level.expire-time: expired rows leave the table in compaction, as Java's RecordLevelExpire;
the rules on Arrow columns, then real tables written by pypaimon-rust and read back by both readers."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from schema_evolution.types import bigint, int_, varchar
from sinks.compaction import compactor
from sinks.compaction.record_expiry import RecordExpiry
from sinks.store import manifests, tables
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import INSERT, UPDATE_AFTER
from tests.paimon_read import read_pypaimon, read_rust

NOW = 2_000_000_000  # seconds
HOUR = 3600
EXPIRY = RecordExpiry(HOUR, "ts")


def _wall(seconds: int) -> dt.datetime:
    """A TIMESTAMP value: the UTC wall-clock time of an epoch second."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)


def test_options_and_field_checks_follow_paimon() -> None:
    assert RecordExpiry.from_table_options({}) is None
    opts = {"record-level.expire-time": "1 d", "record-level.time-field": "ts"}
    assert RecordExpiry.from_table_options(opts) == RecordExpiry(86_400, "ts")
    with pytest.raises(ValueError, match="You should set time field"):
        RecordExpiry.from_table_options({"record-level.expire-time": "1 d"})
    with pytest.raises(ValueError, match="Can not find time field ts"):
        EXPIRY.check_field([("id", "INT NOT NULL")])
    with pytest.raises(ValueError, match="should be one of INT, BIGINT, or TIMESTAMP, but field type is STRING"):
        EXPIRY.check_field([("ts", "STRING")])
    for typ in ("INT", "BIGINT NOT NULL", "TIMESTAMP(3)", "TIMESTAMP(6) WITH LOCAL TIME ZONE"):
        EXPIRY.check_field([("ts", typ)])


@pytest.mark.parametrize(
    ("column", "kept"),
    [
        # INT: epoch seconds; a NULL time never expires
        (pa.array([NOW - 2 * HOUR, NOW - HOUR, NOW, None], pa.int32()), [False, True, True, True]),
        # BIGINT: seconds, or milliseconds from 10^12 on
        (pa.array([(NOW - 2 * HOUR) * 1000, (NOW - 10) * 1000, NOW - HOUR - 1], pa.int64()), [False, True, False]),
        # TIMESTAMP: its wall-clock time as UTC, whatever the unit
        (pa.array([_wall(NOW - 2 * HOUR), _wall(NOW - 60)], pa.timestamp("us")), [False, True]),
        (pa.array([(NOW - 2 * HOUR) * 10**9, NOW * 10**9], pa.timestamp("ns", "UTC")), [False, True]),
    ],
)
def test_rows_expire_as_javas_reader_filter_says(column: pa.Array, kept: list[bool]) -> None:
    assert EXPIRY.keep(column, NOW).to_pylist() == kept


def test_files_expire_by_their_minimum() -> None:
    assert EXPIRY.expired(NOW - HOUR - 1, NOW) and not EXPIRY.expired(NOW - HOUR, NOW)
    assert EXPIRY.expired((NOW - 2 * HOUR) * 1000, NOW)
    assert EXPIRY.expired(dt.datetime(2000, 1, 1), NOW)
    assert not EXPIRY.expired(None, NOW)


# --- real tables --------------------------------------------------------------------------------


def _commit(wh: str, batch: int, rows: list[tuple[int, str, int | None, int]]) -> None:
    from pypaimon_rust.datafusion import PaimonCatalog

    builder = PaimonCatalog({"warehouse": wh}).get_table("db.t").new_stream_write_builder().with_commit_user("w")
    write = builder.new_write()
    columns = list(zip(*rows, strict=True))
    write.write_arrow(
        pa.RecordBatch.from_arrays(
            [pa.array(columns[0], pa.int32()), pa.array(columns[1]), pa.array(columns[2], pa.int64()),
             pa.array(columns[3], pa.int8())],
            names=["id", "v", "ts", "_VALUE_KIND"],
        )
    )  # fmt: skip
    assert builder.new_commit().filter_and_commit({batch: write.prepare_commit(True, batch)}) == 1


def _reads(wh: str) -> list[dict[str, Any]]:
    rows = read_rust(wh, "db.t")
    assert rows == read_pypaimon(wh, "db.t")
    return rows


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def _create(wh: str, options: dict[str, str]) -> None:
    fields = [("id", int_()), ("v", varchar(20)), ("ts", bigint())]
    Catalog(wh).create_table("db.t", fields, ["id"], [], {"changelog-producer": "input", **options})


def test_compaction_drops_expired_rows(wh: str) -> None:
    _create(wh, {"record-level.expire-time": "1 h", "record-level.time-field": "ts"})
    now = int(time.time())
    old_ms = (now - 2 * HOUR) * 1000
    _commit(wh, 1, [(1, "old", old_ms, INSERT), (2, "fresh", now, INSERT), (3, "no time", None, INSERT)])
    _commit(wh, 2, [(4, "old too", now - 3 * HOUR, INSERT), (2, "fresh2", now, UPDATE_AFTER)])
    # Readers see expired rows until a compaction reaches them.
    assert [r["id"] for r in _reads(wh)] == [1, 2, 3, 4]
    assert compactor.compact(wh, {}, "db.t", "c", 1, full=True).committed
    assert _reads(wh) == [{"id": 2, "v": "fresh2", "ts": now}, {"id": 3, "v": "no time", "ts": None}]


def test_full_compaction_rewrites_a_top_level_file_holding_expired_rows(wh: str) -> None:
    # Written and fully compacted before the option was set: one top-level file with an old row.
    _create(wh, {})
    now = int(time.time())
    _commit(wh, 1, [(1, "old", now - 2 * HOUR, INSERT), (2, "fresh", now, INSERT)])
    assert compactor.compact(wh, {}, "db.t", "c", 1, full=True).committed
    assert compactor.plan(wh, {}, "db.t", full=True) == []  # one top-level run: nothing to do
    from pypaimon.schema.schema_change import SchemaChange

    catalog = Catalog(wh)._catalog
    catalog.alter_table("db.t", [SchemaChange.set_option("record-level.expire-time", "1 h")], False)
    catalog.alter_table("db.t", [SchemaChange.set_option("record-level.time-field", "ts")], False)
    (task,) = compactor.plan(wh, {}, "db.t", full=True)
    assert len(task.files) == 1
    assert compactor.compact(wh, {}, "db.t", "c", 2, full=True).committed
    assert _reads(wh) == [{"id": 2, "v": "fresh", "ts": now}]
    (metas,) = manifests.live_files(tables.open_table(wh, {}, "db.t")).values()
    assert [m.row_count for m in metas] == [1]
    assert compactor.plan(wh, {}, "db.t", full=True) == []  # no expired rows left


def test_minor_compaction_expires_what_it_reads(wh: str) -> None:
    # As in Paimon: rows expire in whatever a compaction reads; a level it leaves alone keeps its own.
    _create(wh, {"record-level.expire-time": "1 h", "record-level.time-field": "ts",
                 "num-sorted-run.compaction-trigger": "2"})  # fmt: skip
    now = int(time.time())
    _commit(wh, 1, [(1, "a", now, INSERT), (2, "b", now - 2 * HOUR, INSERT)])
    _commit(wh, 2, [(3, "c", now - 2 * HOUR, INSERT)])
    _commit(wh, 3, [(4, "d", now, INSERT)])
    assert compactor.compact(wh, {}, "db.t", "c", 3).committed  # three level-0 runs, trigger 2
    assert _reads(wh) == [{"id": 1, "v": "a", "ts": now}, {"id": 4, "v": "d", "ts": now}]
