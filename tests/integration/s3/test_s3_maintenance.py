"""The maintenance commands that rewrite or drop a table's files, on an ``s3://`` warehouse (moto in
server mode, ``tests/support/s3_server.py``), without Spark: ``delete-tag``, ``drop-partition``,
``expire-partitions`` and ``rescale`` (whole table and one partition), each run through the command
line with the store reached by ``--catalog-conf``; and ``lakecdc status`` with its S3 keys from the
AWS_* environment only. Tables are written by pypaimon-rust's writer as a sync job writes them (a
commit user, one identifier per micro-batch); every outcome is read back from the bucket with
pypaimon-rust and pypaimon, and what a command removed is checked by listing the bucket's keys.
(sync, compact, expire-snapshots, remove-orphan-files, query, create-tag and rollback-to on S3:
``test_s3_warehouse.py``.)"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from ingest.cli.main import main
from ingest.job import COMMIT_USER_FILE
from ingest.streaming.checkpoint import TABLES_FILE
from schema_evolution.types import int_, string, varchar
from sinks.store import manifests, tables
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from tests.support.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

BUCKET = "lake"
WAREHOUSE = f"s3://{BUCKET}/warehouse"
USER = "sync-job-user"
DAYS = ("2020-01-01", "2020-01-02", "2999-01-01")

Row = tuple[int, str | None, str, int]  # id, v, dt, row kind


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        server.create_bucket(BUCKET)
        yield server


def _conf(options: Mapping[str, str]) -> list[str]:
    return [a for k, v in options.items() for a in ("--catalog-conf", f"{k}={v}")]


def _args(s3: S3Server, table: str) -> list[str]:
    return ["--warehouse", WAREHOUSE, "--database", "ods", "--table", table, *_conf(s3.catalog_conf)]


def _commit(options: Mapping[str, str], table: str, batch: int, rows: list[Row]) -> None:
    """One micro-batch as a sync job writes it: pypaimon-rust's writer, rows in order, one commit."""
    from pypaimon_rust.datafusion import PaimonCatalog

    builder = (
        PaimonCatalog({**options, "warehouse": WAREHOUSE})
        .get_table(f"ods.{table}")
        .new_stream_write_builder()
        .with_commit_user(USER)
    )
    write = builder.new_write()
    arrays = [
        pa.array([r[0] for r in rows], pa.int32()),
        pa.array([r[1] for r in rows], pa.string()),
        pa.array([r[2] for r in rows], pa.string()),
        pa.array([r[3] for r in rows], pa.int8()),
    ]
    write.write_arrow(pa.RecordBatch.from_arrays(arrays, names=["id", "v", "dt", "_VALUE_KIND"]))
    commit = builder.new_commit()
    assert commit.filter_and_commit({batch: write.prepare_commit(True, batch)}) == 1
    commit.close()


def _table(s3: S3Server, name: str, buckets: int = 2) -> list[dict[str, Any]]:
    """``ods.<name>``: primary key (id, dt), partitioned by dt, ``buckets`` fixed buckets; three
    snapshots of inserts, updates and deletes over three days. Returns the rows it holds."""
    Catalog(WAREHOUSE, s3.catalog_conf).create_table(
        f"ods.{name}",
        [("id", int_()), ("v", varchar(20)), ("dt", string())],
        ["id", "dt"],
        ["dt"],
        {"bucket": str(buckets), "changelog-producer": "input"},
    )
    held: dict[tuple[int, str], str] = {}
    inserts: list[Row] = [(i, f"v{i}", DAYS[i % 3], INSERT) for i in range(30)]
    held.update({(i, dt): v for i, v, dt, _ in inserts if v is not None})
    _commit(s3.catalog_conf, name, 0, inserts)
    updates: list[Row] = []
    for i in range(0, 30, 4):
        dt = DAYS[i % 3]
        updates += [(i, held[(i, dt)], dt, UPDATE_BEFORE), (i, f"u{i}", dt, UPDATE_AFTER)]
        held[(i, dt)] = f"u{i}"
    _commit(s3.catalog_conf, name, 1, updates)
    deletes: list[Row] = [(i, held.pop((i, DAYS[i % 3])), DAYS[i % 3], DELETE) for i in (1, 5, 9)]
    _commit(s3.catalog_conf, name, 2, deletes)
    return _sorted([{"id": i, "v": v, "dt": dt} for (i, dt), v in held.items()])


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["dt"], r["id"]))


def _read_rust(options: Mapping[str, str], table: str) -> list[dict[str, Any]]:
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({**options, "warehouse": WAREHOUSE}).get_table(f"ods.{table}")
    rb = t.new_read_builder()
    batches = rb.new_read().read(rb.new_scan().plan().splits())
    return _sorted(pa.Table.from_batches(batches).to_pylist()) if batches else []


def _read_pypaimon(options: Mapping[str, str], table: str) -> list[dict[str, Any]]:
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({**options, "warehouse": WAREHOUSE}).get_table(f"ods.{table}")
    rb = t.new_read_builder()
    return _sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


def _reads(s3: S3Server, table: str) -> list[dict[str, Any]]:
    rows = _read_rust(s3.catalog_conf, table)
    assert rows == _read_pypaimon(s3.catalog_conf, table)
    return rows


def _live(s3: S3Server, table: str) -> set[tuple[tuple[Any, ...], int]]:
    """(partition values, bucket) of every bucket the latest snapshot reads."""
    return set(manifests.live_files(tables.open_table(WAREHOUSE, s3.catalog_conf, f"ods.{table}")))


def _keys(s3: S3Server, table: str, under: str = "") -> set[str]:
    """The objects under the table's folder ``under`` (no directory markers)."""
    return {k for k in s3.keys(BUCKET, f"warehouse/ods.db/{table}/{under}") if not k.endswith("/")}


def _data_keys(s3: S3Server, table: str, dt: str) -> set[str]:
    return {k for k in _keys(s3, table, f"dt={dt}/") if k.endswith((".parquet", ".orc", ".avro"))}


def test_create_and_delete_tags(s3: S3Server, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _table(s3, "tagged")
    args = _args(s3, "tagged")
    assert main(["create-tag", *args, "--tag-name", "first", "--snapshot", "1"]) == 0
    assert main(["create-tag", *args, "--tag-name", "second"]) == 0
    assert main(["create-tag", *args, "--tag-name", "third"]) == 0
    tag_keys = {f"warehouse/ods.db/tagged/tag/tag-{n}" for n in ("first", "second", "third")}
    assert _keys(s3, "tagged", "tag/") == tag_keys
    capsys.readouterr()
    assert main(["delete-tag", *args, "--tag-name", "second,third"]) == 0
    assert "tag 'third' deleted" in capsys.readouterr().out
    assert _keys(s3, "tagged", "tag/") == {"warehouse/ods.db/tagged/tag/tag-first"}
    assert main(["delete-tag", *args, "--tag-name", "second"]) == 2
    assert "no such tag: second" in capsys.readouterr().err
    # what is left reads the same through both libraries: the table, and the tag as of snapshot 1
    # (pypaimon-rust's Table.list_tags() keeps the GIL while it waits for the store: it would hang on
    # this in-process moto server, so its reader answers through lakecdc query's time travel)
    from sinks.table.query import run_query

    table = tables.open_table(WAREHOUSE, s3.catalog_conf, "ods.tagged")
    assert table.tag_manager().list_tags() == ["first"]
    assert _reads(s3, "tagged") == expected
    first = [{"id": i, "v": f"v{i}", "dt": DAYS[i % 3]} for i in range(30)]
    tag_table = table.copy({"scan.tag-name": "first"})
    rb = tag_table.new_read_builder()
    assert _sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()) == _sorted(first)
    sql = "SELECT id, v, dt FROM tagged VERSION AS OF 'first'"
    assert _sorted(run_query(WAREHOUSE, sql, "ods", s3.catalog_conf).to_pylist()) == _sorted(first)


def test_drop_partition_then_expiry_deletes_its_files(s3: S3Server, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _table(s3, "dropped")
    args = _args(s3, "dropped")
    old_files = _data_keys(s3, "dropped", DAYS[0])
    assert old_files
    assert main(["drop-partition", *args, "--partition", f"dt={DAYS[0]}"]) == 0
    assert "dropped 1 partition(s)" in capsys.readouterr().out
    kept = [r for r in expected if r["dt"] != DAYS[0]]
    assert _reads(s3, "dropped") == kept
    assert {p for (p, _) in _live(s3, "dropped")} == {(DAYS[1],), (DAYS[2],)}
    snapshots = tables.open_table(WAREHOUSE, s3.catalog_conf, "ods.dropped").snapshot_manager().list_snapshots()
    kinds = [s.commit_kind for s in snapshots]
    assert kinds[-1] == "OVERWRITE"
    assert _data_keys(s3, "dropped", DAYS[0]) == old_files  # files stay until the snapshots reading them expire
    assert main(["expire-snapshots", *args, "--retain-max", "1", "--retain-min", "1"]) == 0
    assert not _data_keys(s3, "dropped", DAYS[0])
    assert _data_keys(s3, "dropped", DAYS[1])
    assert _reads(s3, "dropped") == kept


def test_expire_partitions_by_their_values(s3: S3Server, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _table(s3, "aged")
    args = _args(s3, "aged")
    capsys.readouterr()
    argv = ["expire-partitions", *args, "--expiration-time", "1 d", "--timestamp-formatter", "yyyy-MM-dd"]
    assert main([*argv, "--max-expires", "1"]) == 0
    assert "1 partition(s) expired" in capsys.readouterr().out
    assert {p for (p, _) in _live(s3, "aged")} == {(DAYS[1],), (DAYS[2],)}  # the smallest value first
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1 partition(s) expired" in out and DAYS[1] in out
    assert _reads(s3, "aged") == [r for r in expected if r["dt"] == DAYS[2]]
    assert {p for (p, _) in _live(s3, "aged")} == {(DAYS[2],)}
    old = _data_keys(s3, "aged", DAYS[0]) | _data_keys(s3, "aged", DAYS[1])
    assert old
    assert main(["expire-snapshots", *args, "--retain-max", "1", "--retain-min", "1"]) == 0
    assert not _data_keys(s3, "aged", DAYS[0]) | _data_keys(s3, "aged", DAYS[1])
    assert _reads(s3, "aged") == [r for r in expected if r["dt"] == DAYS[2]]


def test_rescale_a_table_and_one_partition(s3: S3Server, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _table(s3, "scaled", buckets=2)
    args = _args(s3, "scaled")
    assert {b for (_, b) in _live(s3, "scaled")} == {0, 1}
    capsys.readouterr()
    assert main(["rescale", *args, "--bucket-num", "4"]) == 0
    assert "rewritten from 2 into 4 buckets" in capsys.readouterr().out
    assert _reads(s3, "scaled") == expected
    table = tables.open_table(WAREHOUSE, s3.catalog_conf, "ods.scaled")
    assert table.options.options.to_map()["bucket"] == "4"
    assert {b for (_, b) in _live(s3, "scaled")} == {0, 1, 2, 3}
    written = set().union(*(_data_keys(s3, "scaled", dt) for dt in DAYS))
    assert {k.split("/")[-2] for k in written} == {f"bucket-{b}" for b in range(4)}
    assert not [k for k in s3.keys(BUCKET) if k.endswith("lakecdc-lease.json")]  # the lease held, then released
    # a sync job's writer, restarted, writes the new layout: its changes land on the rescaled rows
    _commit(s3.catalog_conf, "scaled", 3, [(0, "u0", DAYS[0], UPDATE_BEFORE), (0, "w0", DAYS[0], UPDATE_AFTER)])
    expected = [{**r, "v": "w0"} if (r["id"], r["dt"]) == (0, DAYS[0]) else r for r in expected]
    assert _reads(s3, "scaled") == expected

    # one partition into 1 bucket: the others keep their files and buckets
    others = {(p, b) for (p, b) in _live(s3, "scaled") if p != (DAYS[1],)}
    other_files = _data_keys(s3, "scaled", DAYS[0]) | _data_keys(s3, "scaled", DAYS[2])
    assert main(["rescale", *args, "--bucket-num", "1", "--partition", f"dt={DAYS[1]}"]) == 0
    assert _reads(s3, "scaled") == expected
    live = _live(s3, "scaled")
    assert {b for (p, b) in live if p == (DAYS[1],)} == {0}
    assert {(p, b) for (p, b) in live if p != (DAYS[1],)} == others
    assert _data_keys(s3, "scaled", DAYS[0]) | _data_keys(s3, "scaled", DAYS[2]) == other_files


def test_status_reads_an_s3_warehouse_with_keys_from_the_environment(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(s3, "watched")
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / COMMIT_USER_FILE).write_text(USER)
    (checkpoint / TABLES_FILE).write_text(json.dumps(["ods.watched"]))
    # the store from the AWS_* environment only (keys, endpoint, region); --catalog-conf gives only
    # the path-style addressing, which has no environment variable
    for variable in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_REGION", REGION)
    argv = ["status", "--checkpoint", str(checkpoint), "--warehouse", WAREHOUSE, "--output", "json"]
    argv += ["--catalog-conf", "s3.path.style.access=true"]
    capsys.readouterr()
    assert main(argv) == 0
    status = json.loads(capsys.readouterr().out)
    [table] = status["tables"]
    assert table["error"] is None
    assert (table["table"], table["snapshot"], table["last_batch"]) == ("ods.watched", 3, 2)
    assert table["commit_kind"] == "APPEND"
    assert status["commit_user"] == USER
    # and the output names none of the keys
    assert SECRET_KEY not in json.dumps(status)


def test_expire_partitions_by_update_time(s3: S3Server, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _table(s3, "touched")
    capsys.readouterr()
    argv = ["expire-partitions", *_args(s3, "touched"), "--expire-strategy", "update-time"]
    assert main([*argv, "--expiration-time", "30 d"]) == 0  # written just now: nothing is that old
    assert "0 partition(s) expired" in capsys.readouterr().out
    assert main([*argv, "--expiration-time", "1 ms", "--max-expires", "2"]) == 0
    assert "2 partition(s) expired" in capsys.readouterr().out
    assert {p for (p, _) in _live(s3, "touched")} == {(DAYS[2],)}
    assert _reads(s3, "touched") == [r for r in expected if r["dt"] == DAYS[2]]


def test_remove_orphan_files_over_every_table_of_the_database(s3: S3Server) -> None:
    """No --table: every table of the database, listed from the bucket; only the planted objects go."""
    from datetime import datetime

    _table(s3, "planted")
    planted = {
        f"warehouse/ods.db/planted/dt={DAYS[0]}/bucket-0/data-orphan-0.parquet",
        "warehouse/ods.db/planted/manifest/manifest-orphan-0",
    }
    for key in planted:
        s3.put(BUCKET, key, b"not referenced")
    before = set(s3.keys(BUCKET, "warehouse/"))
    later = datetime.fromtimestamp(datetime.now().timestamp() + 120).strftime("%Y-%m-%d %H:%M:%S")
    argv = ["remove-orphan-files", "--warehouse", WAREHOUSE, "--database", "ods", *_conf(s3.catalog_conf)]
    assert main([*argv, "--older-than", later, "--dry-run", "true"]) == 0
    assert set(s3.keys(BUCKET, "warehouse/")) == before
    assert main([*argv, "--older-than", later]) == 0
    assert before - set(s3.keys(BUCKET, "warehouse/")) == planted
    assert _reads(s3, "planted")
