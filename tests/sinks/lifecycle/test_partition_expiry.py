"""Paimon's partition expiry rules (pure) and dropping expired partitions of real tables."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from ingest.cli.main import main
from schema_evolution.types import int_, string
from sinks.lifecycle.partition_expiry import (
    PartitionExpiryOptions,
    PartitionInfo,
    java_to_strptime,
    partition_time,
    plan,
)
from sinks.lifecycle.partitions import expire_partitions
from sinks.store import tables
from sinks.table.catalog import Catalog
from sinks.table.options import validate_table_options
from sinks.write.chunk_format import CHUNK_SCHEMA, INSERT, VALUE_KIND, serialize_batch
from sinks.write.committer import Committer
from sinks.write.writer import WriteContext, write_chunks
from tests.paimon_read import read_pypaimon, read_rust

NOW = dt.datetime(2024, 3, 10, 12, 0, 0)


@pytest.mark.parametrize(
    ("keys", "values", "pattern", "formatter", "expected"),
    [
        (["dt"], ["2024-03-01"], None, None, dt.datetime(2024, 3, 1)),
        (["dt"], ["2024-3-1 7:05:09.25"], None, None, dt.datetime(2024, 3, 1, 7, 5, 9, 250000)),
        (["dt"], ["20240301"], None, "yyyyMMdd", dt.datetime(2024, 3, 1)),
        (["dt", "hh"], ["2024-03-01", "07"], "$dt $hh:00:00", None, dt.datetime(2024, 3, 1, 7)),
        (["y", "m", "d"], ["2024", "03", "01"], "$y-$m-$d", None, dt.datetime(2024, 3, 1)),
        # $dt1 is matched before $dt (longer keys first, as Java does)
        (["dt", "dt1"], ["2024-03-01", "2024-03-05"], "$dt1", None, dt.datetime(2024, 3, 5)),
        (["dt"], ["2024-03-01T07"], None, "yyyy-MM-dd'T'HH", dt.datetime(2024, 3, 1, 7)),
        (["dt"], [None], None, None, None),  # NULL never expires
        (["dt"], ["default"], None, None, None),  # no time in it
        (["dt"], ["2024-02-30"], None, None, None),  # no such day
        (["dt"], ["2024-03-01"], None, "yyyyMMdd", None),  # does not fit the formatter
    ],
)
def test_partition_time(
    keys: list[str], values: list[str | None], pattern: str | None, formatter: str | None, expected: dt.datetime | None
) -> None:
    fmt = None if formatter is None else java_to_strptime(formatter)
    assert partition_time(keys, values, pattern, fmt) == expected


def test_unsupported_formatter_letters_are_refused_at_start_up() -> None:
    with pytest.raises(ValueError, match="'EEE' is not supported"):
        java_to_strptime("EEE yyyy")
    with pytest.raises(ValueError, match=r"partition\.timestamp-formatter"):
        validate_table_options({"partition.timestamp-formatter": "yyyy QQ"}, True)
    with pytest.raises(ValueError, match=r"partition\.expiration-strategy"):
        validate_table_options({"partition.expiration-strategy": "sometimes"}, True)
    with pytest.raises(ValueError, match=r"partition\.expiration-time"):
        validate_table_options({"partition.expiration-time": "soon"}, True)


def _infos(*values: str | None) -> list[PartitionInfo]:
    return [PartitionInfo((v,), 0) for v in values]


def test_expired_is_strictly_before_the_cutoff_sorted_and_capped() -> None:
    opts = PartitionExpiryOptions.from_table_options({"partition.expiration-time": "7 d"})
    # cutoff = 2024-03-03 12:00; a partition's time is its day's midnight
    result = plan(opts, ["dt"], _infos("2024-03-03", "2024-03-02", "2024-03-04", "2024-02-01", None), NOW)
    assert result.expired == (("2024-02-01",), ("2024-03-02",), ("2024-03-03",))
    assert result.unreadable == ((None,),)
    capped = PartitionExpiryOptions.from_table_options(
        {"partition.expiration-time": "7 d", "partition.expiration-max-num": "2"}
    )
    assert plan(capped, ["dt"], _infos("2024-03-02", "2024-02-01", "2024-03-01"), NOW).expired == (
        ("2024-02-01",),
        ("2024-03-01",),
    )
    exact = PartitionExpiryOptions.from_table_options({"partition.expiration-time": "12 h"})
    assert plan(exact, ["dt"], _infos("2024-03-10"), NOW).expired == ()  # == cutoff: not before it


def test_update_time_strategy_uses_the_newest_file() -> None:
    opts = PartitionExpiryOptions.from_table_options(
        {"partition.expiration-time": "1 h", "partition.expiration-strategy": "update-time"}
    )
    old = int((NOW - dt.timedelta(hours=2)).timestamp() * 1000)
    new = int((NOW - dt.timedelta(minutes=5)).timestamp() * 1000)
    infos = [PartitionInfo(("not-a-date",), old), PartitionInfo(("x",), new)]
    assert plan(opts, ["dt"], infos, NOW).expired == (("not-a-date",),)


def _write(wh: str, batch_id: int, rows: list[tuple[int, str | None]]) -> None:
    layout = Catalog(wh).load_layout("db.t")
    assert layout is not None
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([r[0] for r in rows], pa.int32()),
            pa.array([r[1] for r in rows]),
            pa.array([INSERT] * len(rows), pa.int8()),
        ],
        names=["id", "dt", VALUE_KIND],
    )
    chunk = {
        "table": "db.t", "topic": "t", "kafka_partition": 0, "first_offset": 0, "last_offset": 0, "seq": 0,
        "schema": None, "rows": len(rows), "events": len(rows), "data": serialize_batch(batch), "ddl": None,
        "mark": None,
    }  # fmt: skip
    ctx = WriteContext(wh, {}, "u", batch_id, {"db.t": layout})
    out = list(write_chunks([pa.RecordBatch.from_pylist([chunk], schema=CHUNK_SCHEMA)], ctx))
    assert Committer(wh, {}, "u").commit("db.t", batch_id, [m for b in out for m in b.column("message").to_pylist()])


@pytest.fixture
def partitioned(tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table(
        "db.t", [("id", int_()), ("dt", string())], ["id", "dt"], ["dt"], {"changelog-producer": "input", "bucket": "1"}
    )
    _write(wh, 0, [(1, "2020-01-01"), (2, "2020-01-02"), (3, "2999-01-01")])
    _write(wh, 1, [(4, "2020-01-02"), (5, "soon"), (6, "2999-01-02")])
    return wh


def test_expired_partitions_are_dropped_in_an_overwrite_snapshot(partitioned: str) -> None:
    result = expire_partitions(partitioned, {}, "db.t", {"partition.expiration-time": "1 d"})
    assert result.expired == (("2020-01-01",), ("2020-01-02",))
    assert result.unreadable == (("soon",),)
    expected = [{"id": 3, "dt": "2999-01-01"}, {"id": 5, "dt": "soon"}, {"id": 6, "dt": "2999-01-02"}]
    assert read_rust(partitioned, "db.t") == expected
    assert read_pypaimon(partitioned, "db.t") == expected
    kinds = [s.commit_kind for s in tables.open_table(partitioned, {}, "db.t").snapshot_manager().list_snapshots()]
    assert kinds == ["APPEND", "APPEND", "OVERWRITE"]
    # nothing left to expire: no new snapshot
    assert expire_partitions(partitioned, {}, "db.t", {"partition.expiration-time": "1 d"}).expired == ()
    assert len(tables.open_table(partitioned, {}, "db.t").snapshot_manager().list_snapshots()) == 3


def test_cli_expires_by_formatter_and_cap(partitioned: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["expire-partitions", "--warehouse", partitioned, "--database", "db", "--table", "t"]
    assert main([*args, "--expiration-time", "1 d", "--max-expires", "1"]) == 0
    assert "1 partition(s) expired" in capsys.readouterr().out
    assert sorted(r["id"] for r in read_rust(partitioned, "db.t")) == [2, 3, 4, 5, 6]
    # a table without partition.expiration-time and no --expiration-time: nothing to do
    assert main(args) == 0
    assert "0 partition(s) expired" in capsys.readouterr().out
