"""``spark.read.format("paimon")``: the latest state, time travel to a snapshot or a tag, and the
changes between two versions, all equal to what pypaimon-rust and pypaimon read."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from ingest.cli.main import main
from schema_evolution.types import array, decimal, int_, string, time, timestamp, varchar
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import (
    CHUNK_SCHEMA,
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
    serialize_batch,
)
from sinks.write.committer import Committer
from sinks.write.writer import WriteContext, write_chunks
from tests.conftest import ROOT
from tests.paimon_read import read_pypaimon, read_rust

FIELDS = [
    ("id", int_().with_nullable(False)),
    ("v", varchar(10)),
    ("amount", decimal(10, 2)),
    ("at", timestamp(3)),
    ("t", time(3)),
    ("tags", array(string())),
]
Row = tuple[int, str | None, str, str, int, list[str]]


def _commit(wh: str, batch_id: int, rows: list[Row], kinds: list[int]) -> None:
    layout = Catalog(wh).load_layout("db.t")
    assert layout is not None
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([r[0] for r in rows], pa.int32()),
            pa.array([r[1] for r in rows], pa.string()),
            pa.array([Decimal(r[2]) for r in rows], pa.decimal128(10, 2)),
            pa.array([dt.datetime.fromisoformat(r[3]) for r in rows], pa.timestamp("ms")),
            pa.array([r[4] for r in rows], pa.time32("ms")),
            pa.array([r[5] for r in rows], pa.list_(pa.string())),
            pa.array(kinds, pa.int8()),
        ],
        names=[*(n for n, _ in FIELDS), VALUE_KIND],
    )
    chunk = {
        "table": "db.t",
        "topic": "t",
        "kafka_partition": 0,
        "first_offset": batch_id,
        "last_offset": batch_id,
        "seq": batch_id,
        "schema": None,
        "rows": len(rows),
        "events": len(rows),
        "data": serialize_batch(batch),
        "ddl": None,
        "mark": None,
    }
    ctx = WriteContext(wh, {}, "u", batch_id, {"db.t": layout})
    out = list(write_chunks([pa.RecordBatch.from_pylist([chunk], schema=CHUNK_SCHEMA)], ctx))
    assert Committer(wh, {}, "u").commit("db.t", batch_id, [m for b in out for m in b.column("message").to_pylist()])


A: Row = (1, "a", "1.50", "2024-01-02 03:04:05.678", 3_723_004, ["x"])
B: Row = (2, "b", "2.00", "2024-02-03 04:05:06.000", 0, [])
B2: Row = (2, None, "2.50", "2024-02-03 04:05:07.000", 86_399_999, ["y", "z"])
C: Row = (3, "c", "-3.25", "2024-03-04 05:06:07.001", 1, ["w"])


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Snapshot 1: A, B (tagged 'first'); 2: B updated, A deleted; 3: C inserted."""
    wh = str(tmp_path_factory.mktemp("paimon-read") / "wh")
    Catalog(wh).create_table("db.t", FIELDS, ["id"], [], {"changelog-producer": "input", "bucket": "2"})
    _commit(wh, 0, [A, B], [INSERT, INSERT])
    assert main(["create-tag", "--warehouse", wh, "--database", "db", "--table", "t", "--tag-name", "first"]) == 0
    _commit(wh, 1, [B, B2, A], [UPDATE_BEFORE, UPDATE_AFTER, DELETE])
    _commit(wh, 2, [C], [INSERT])
    assert main(["create-tag", "--warehouse", wh, "--database", "db", "--table", "t", "--tag-name", "last"]) == 0
    return wh


def _expected(row: Row) -> dict[str, Any]:
    return {
        "id": row[0],
        "v": row[1],
        "amount": Decimal(row[2]),
        "at": dt.datetime.fromisoformat(row[3]),
        "t": (dt.datetime.min + dt.timedelta(milliseconds=row[4])).time(),
        "tags": row[5],
    }


def _read(spark: Any, **options: str) -> list[dict[str, Any]]:
    df = spark.read.format("paimon").options(**options).load()
    return sorted((r.asDict(recursive=True) for r in df.collect()), key=lambda r: (r["id"], r.get("rowkind") or ""))


def test_latest_state_equals_both_readers(spark: Any, table: str) -> None:
    got = _read(spark, warehouse=table, table="db.t")
    assert got == [_expected(B2), _expected(C)]
    by_rust = read_rust(table, "db.t")
    assert [r["id"] for r in by_rust] == [r["id"] for r in got] == [r["id"] for r in read_pypaimon(table, "db.t")]
    assert [str(r["amount"]) for r in by_rust] == [str(r["amount"]) for r in got]


def test_a_table_path_works_like_warehouse_and_table(spark: Any, table: str) -> None:
    rows = spark.read.format("paimon").load(str(Path(table) / "db.db" / "t")).collect()
    assert sorted(r["id"] for r in rows) == [2, 3]


def test_time_travel_to_a_snapshot_and_to_a_tag(spark: Any, table: str) -> None:
    first = [_expected(A), _expected(B)]
    assert _read(spark, warehouse=table, table="db.t", **{"scan.snapshot-id": "1"}) == first
    assert _read(spark, warehouse=table, table="db.t", **{"scan.tag-name": "first"}) == first
    assert _read(spark, warehouse=table, table="db.t", **{"scan.snapshot-id": "2"}) == [_expected(B2)]


def test_incremental_between_gives_the_changes_with_their_row_kinds(spark: Any, table: str) -> None:
    def kinds(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
        return [(r["rowkind"], r["id"]) for r in rows]

    changes = _read(spark, warehouse=table, table="db.t", **{"incremental-between": "1,3"})
    assert sorted(kinds(changes)) == [("+I", 3), ("+U", 2), ("-D", 1), ("-U", 2)]
    by_tags = _read(spark, warehouse=table, table="db.t", **{"incremental-between": "first,last"})
    assert by_tags == changes
    only_3 = _read(spark, warehouse=table, table="db.t", **{"incremental-between": "2,3"})
    assert kinds(only_3) == [("+I", 3)] and only_3[0]["tags"] == ["w"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scan.snapshot-id": "9"}, "has no snapshot 9"),
        ({"scan.tag-name": "nope"}, "has no tag 'nope'"),
        ({"incremental-between": "3,1"}, "the start must be before the end"),
        ({"incremental-between": "first,nope"}, "no tag nope"),
        ({"scan.snapshot-id": "1", "scan.tag-name": "first"}, "cannot be combined"),
        ({"incremental-between-scan-mode": "diff"}, "expected one of auto, delta, changelog"),
    ],
)
def test_bad_versions_name_the_problem(spark: Any, table: str, options: dict[str, str], message: str) -> None:
    with pytest.raises(Exception, match=message):
        _read(spark, warehouse=table, table="db.t", **options)


def test_relative_paths_and_file_uris_name_the_warehouse(spark: Any, table: str) -> None:
    # Relative to the driver's working directory (this process's; Spark's planner inherits it).
    relative = os.path.relpath(table)
    assert not relative.startswith("/")
    for warehouse in (relative, f"file://{table}", f"file:{table}"):
        assert [r["id"] for r in _read(spark, warehouse=warehouse, table="db.t")] == [2, 3]
    rows = spark.read.format("paimon").load(os.path.join(relative, "db.db", "t")).collect()
    assert sorted(r["id"] for r in rows) == [2, 3]
    rows = spark.read.format("paimon").load(f"file://{table}/db.db/t").collect()
    assert sorted(r["id"] for r in rows) == [2, 3]


@pytest.mark.parametrize("location", ["s3a://bucket/wh", "hdfs://namenode:8020/wh", "gs://bucket/wh"])
def test_an_unsupported_scheme_is_refused_with_the_option_named(spark: Any, location: str) -> None:
    scheme = location.split(":")[0]
    with pytest.raises(Exception, match=f"option 'warehouse' '{location}': the {scheme}:// scheme is not supported"):
        _read(spark, warehouse=location, table="db.t")
    with pytest.raises(Exception, match=f"load\\(\\) path '{location}/db.db/t': the {scheme}:// scheme"):
        spark.read.format("paimon").load(f"{location}/db.db/t").collect()


def test_an_s3_table_path_is_refused_naming_the_warehouse_option(spark: Any) -> None:
    """An s3:// warehouse is read through option('warehouse') (tests/integration/s3); a load() path is local."""
    with pytest.raises(Exception, match=r"load\(\) path 's3://bucket/wh/db\.db/t' must be a local or shared"):
        spark.read.format("paimon").load("s3://bucket/wh/db.db/t").collect()


def test_readme_example_in_a_users_own_session(table: str, tmp_path: Path) -> None:
    """README's example as a user runs it: their own local SparkSession, no PYSPARK_PYTHON, a relative
    warehouse, ``register(spark)``. ``python3`` on PATH here is not a Python that has pyarrow (it fails),
    so the reader's workers must run this interpreter."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "python3").write_text("#!/bin/sh\necho 'not the venv python' >&2\nexit 1\n")
    (fake_bin / "python3").chmod(0o755)
    script = textwrap.dedent(
        """
        from pyspark.sql import SparkSession
        from ingest.paimon.source import register

        spark = (
            SparkSession.builder.master("local[1]").config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false").getOrCreate()
        )
        register(spark)
        df = spark.read.format("paimon").option("warehouse", "warehouse").option("table", "db.t").load()
        print("ids", sorted(r["id"] for r in df.collect()))
        spark.stop()
        """
    )
    os.symlink(table, tmp_path / "warehouse")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update(PATH=f"{fake_bin}:{env['PATH']}", PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ids [2, 3]" in done.stdout
