"""Job state beside an ``s3://`` checkpoint (#25): every state class lakecdc keeps beside its checkpoint
(commit user, Spark's progress as the guard reads it, the tables and skipped-offsets files, the MySQL
snapshot registry, known tables, schema history start and changes, re-snapshot and failover markers with
what applying them rewrites, created and unchecked tables, lakecdc status) is written and read through
``sinks.state_files`` on a moto-backed bucket, and leaves exactly the files, byte for byte, that the same
steps leave in a local directory and in a ``file:`` URI's directory. Nothing is stubbed: the same public
calls the driver makes, against a real S3 server on loopback and the real local filesystem."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest.cli.status import job_status
from ingest.job import COMMIT_USER_FILE, commit_user
from ingest.mysql.client import MySqlConnection
from ingest.mysql.failover import FAILOVER_FILE, Failover
from ingest.mysql.resnapshot import Resnapshot
from ingest.mysql.schema_history import SERVER_FILE, SchemaHistory
from ingest.mysql.snapshot import KnownTables, SnapshotRegistry
from ingest.mysql.spec import MySqlSourceSpec, binlog_offset
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from ingest.streaming.checkpoint import (
    SPARK_DIR,
    CheckpointGuard,
    SparkProgress,
    committed_tables,
    record_skips,
)
from schema_evolution.mysql_tables import Column, TableDef
from schema_evolution.types import int_, varchar
from sinks.filesystem import UnsupportedStore
from sinks.layout import RecordSchema
from sinks.state_files import StoreFile, create_once, set_store_options, state_path, write_atomically
from sinks.table.catalog import Catalog
from sinks.table.prepare import UNCHECKED_FILE, TablePolicy, TablePreparer, note_unchecked
from tests.support.s3_server import S3Server

BUCKET = "state"
OLD, NEW = "server_id 1", "server_id 2"
START = {"chunks": [], "done": 0, "binlog": ["binlog.000003", 900], "server": OLD, "gtids": "0-1-40"}
TO = {"server": OLD, "binlog": ["binlog.000005", 4], "gtids": None}
# Spark's offset log entry as Spark writes it (version, metadata, one offset per source)
OFFSETS = 'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1764000000000}\n{"binlog":["binlog.000003",900]}'


def _table(*names: str) -> TableDef:
    return TableDef(tuple(Column(n, "int") for n in names), ("id",))


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        server.create_bucket(BUCKET)
        yield server


@pytest.fixture(autouse=True)
def store_options(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    set_store_options(s3.catalog_conf)  # as the job does with its --catalog-conf
    yield
    set_store_options({})


def _spec(state: str, warehouse: str) -> MySqlSourceSpec:
    return MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "", 10), "d", "t", "initial", ParseSpec("mysql", TableRouter("ods")),
        state, warehouse=warehouse,
    )  # fmt: skip


def exercise(state: str, warehouse: Path) -> dict[str, Any]:
    """Every state write and read the driver does, on checkpoint ``state``; what was read back."""
    seen: dict[str, Any] = {}
    root = state_path(state)
    # the commit user: created once, then read back
    seen["user"] = user = commit_user(state)
    assert commit_user(state) == user
    # Spark's checkpoint as the guard and status read it (Spark writes these files itself)
    write_atomically(root / SPARK_DIR / "offsets" / "0", OFFSETS)
    write_atomically(root / SPARK_DIR / "offsets" / "1", OFFSETS)
    write_atomically(root / SPARK_DIR / "commits" / "0", "v1\n{}")
    progress = SparkProgress.read(root / SPARK_DIR)
    seen["progress"] = (progress.planned, progress.finished, progress.replay)
    seen["runs"] = record_skips(state, ["t:0:5"], "2026-11-27T16:00:00+00:00")
    seen["runs"] = record_skips(state, ["t:0:6"], "2026-11-27T16:01:00+00:00")
    guard = CheckpointGuard(state, user, progress, lambda _t: None, lambda _t: None)
    guard.before_commit(["ods.a", "ods.b"])
    guard.before_commit(["ods.b", "ods.c"])
    seen["tables"] = committed_tables(state)
    # the MySQL snapshot registry and the known tables
    registry = SnapshotRegistry(state)
    mark = {"chunk": 0, "database": "d", "table": "t", "target": "ods.t", "lo": None, "hi": None}
    registry.record(0, [json.dumps({**mark, "hw": ["binlog.000002", 10]})], lambda _t: False)
    registry.record(1, [json.dumps({**mark, "chunk": 1, "hw": ["binlog.000002", 20]})], lambda _t: False)
    seen["registry"] = registry.load()
    seen["by_table"] = registry.by_table()
    known = KnownTables(state)
    seen["known_before"] = known.load()
    known.save([("d", "t")])
    known.add([("d", "u")])
    seen["known"] = sorted(known.load() or ())
    # the schema history: its start, DDL changes (one of them as a read task's mark), reads as of offsets
    history = SchemaHistory(state)
    seen["history_before"] = history.exists()
    history.start(("binlog.000001", 4), {"d.t": _table("id")})
    history.record(binlog_offset(("binlog.000002", 50)), ("binlog.000002", 50), {"d.t": _table("id", "v")})
    history.record(binlog_offset(("binlog.000002", 50)), ("binlog.000002", 50), {"d.t": _table("id", "v")})
    history.record(binlog_offset(("binlog.000004", 7)), ("binlog.000004", 7), {"d.t": None, "d.u": _table("id")})
    seen["as_of"] = [
        sorted(history.as_of(binlog_offset(p)).items())
        for p in (("binlog.000001", 5), ("binlog.000002", 60), ("binlog.000009", 4))
    ]
    write_atomically(root / SERVER_FILE, json.dumps({"server": OLD, "files": {"binlog.000003": 5}}))
    # a re-snapshot decided and applied (twice: a crash after any step applies it again)
    spec = _spec(state, str(warehouse))
    resnapshot = Resnapshot(spec)
    seen["marker_before"] = resnapshot.marker_for(START)
    chunks: list[list[Any]] = [["d", "t", None, None], ["d", "v", None, None]]
    marker = resnapshot.decide(START, "purged", TO, {"d.t": _table("id", "w")}, chunks, {}, {})
    assert resnapshot.marker_for(START) == marker
    for _ in range(2):
        resnapshot.apply(marker)
    seen["after_resnapshot"] = (
        sorted(history.as_of(1 << 62).items()),
        registry.high_watermarks(),
        sorted(known.load() or ()),
    )
    # a failover found again from its marker (written before the crash): applied on restart
    failover_marker = {
        "from": {"server": OLD, "binlog": START["binlog"], "gtids": START["gtids"]},
        "to": {"server": NEW, "binlog": ["binlog.000001", 500]},
        "tables": {"d.t": _table("id", "x").to_json()},
    }
    write_atomically(root / FAILOVER_FILE, json.dumps(failover_marker, sort_keys=True))
    seen["failover"] = Failover(spec).resume(dict(START), NEW)
    seen["after_failover"] = sorted(history.as_of(1 << 62).items())
    # the tables a job created and those it accepted unchecked
    preparer = TablePreparer(Catalog(str(warehouse)), TablePolicy(), commit_user=user, state_dir=state)
    preparer.prepare([("db.t", RecordSchema((("id", int_()), ("v", varchar(5))), ("id",), "shop.t"))])
    note_unchecked(state, "db.old")
    note_unchecked(state, "db.older")
    again = TablePreparer(Catalog(str(warehouse)), TablePolicy(), commit_user=user, state_dir=state)
    seen["created"], seen["unchecked"] = sorted(again._created), sorted(again._unchecked)
    # lakecdc status reads it all back
    status = job_status(state, None, {})
    seen["status"] = (status.commit_user, status.last_batch, status.planned_batch, status.offsets, status.batch_time)
    seen["status_tables"] = [t.table for t in status.tables]
    return seen


def local_files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def store_files(s3: S3Server, prefix: str) -> dict[str, str]:
    out = {}
    for key in s3.keys(BUCKET, prefix + "/"):
        if key.endswith("/"):
            continue  # pyarrow's directory markers: not files
        body = s3.client.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode()
        out[key.removeprefix(prefix + "/")] = body
    return out


def _same_but_user(left: dict[str, Any], right: dict[str, Any]) -> None:
    assert left.pop("user") != right.pop("user")  # each checkpoint its own commit user
    left.pop("status")  # names the commit user; compared below without it
    right.pop("status")
    assert left == right


def test_every_state_class_round_trips_through_s3_as_locally(s3: S3Server, tmp_path: Path) -> None:
    local = tmp_path / "local" / "checkpoint"
    on_local = exercise(str(local), tmp_path / "wh-local")
    on_s3 = exercise(f"s3://{BUCKET}/ckpt/job", tmp_path / "wh-s3")
    status_local, status_s3 = on_local["status"], on_s3["status"]
    assert status_local[0] == on_local["user"] and status_s3[0] == on_s3["user"]
    assert (
        status_local[1:] == status_s3[1:] == (0, 1, [{"binlog": ["binlog.000003", 900]}], "2025-11-24T16:00:00+00:00")
    )
    assert on_s3["progress"] == (1, 0, 1)
    assert on_s3["tables"] == ["ods.a", "ods.b", "ods.c"] and on_s3["status_tables"] == on_s3["tables"]
    assert on_s3["known_before"] is None and on_s3["history_before"] is False
    assert on_s3["failover"] == ("binlog.000001", 500) and on_s3["after_failover"] == [("d.t", _table("id", "x"))]
    assert on_s3["created"] == ["db.t"] and on_s3["unchecked"] == ["db.old", "db.older"]
    # the same files, byte for byte (the commit user's aside)
    written_local, written_s3 = local_files(local), store_files(s3, "ckpt/job")
    assert written_local.pop(COMMIT_USER_FILE) == on_local["user"]
    assert written_s3.pop(COMMIT_USER_FILE) == on_s3["user"]
    assert written_s3 == written_local
    assert UNCHECKED_FILE in written_s3 and FAILOVER_FILE in written_s3
    _same_but_user(on_local, on_s3)


def test_a_file_uri_checkpoint_is_its_local_directory(tmp_path: Path) -> None:
    local = tmp_path / "a" / "checkpoint"
    uri = tmp_path / "b" / "checkpoint"
    on_local = exercise(str(local), tmp_path / "wh-a")
    on_uri = exercise(f"file://{uri}", tmp_path / "wh-b")
    assert isinstance(state_path(f"file://{uri}"), Path) and isinstance(state_path(f"file:{uri}"), Path)
    written_local, written_uri = local_files(local), local_files(uri)
    written_local.pop(COMMIT_USER_FILE), written_uri.pop(COMMIT_USER_FILE)
    assert written_uri == written_local and written_uri
    _same_but_user(on_local, on_uri)


def test_racing_first_starts_on_s3_agree_on_one_commit_user(s3: S3Server) -> None:
    checkpoint = f"s3://{BUCKET}/race/job"
    users: list[str] = []
    barrier = threading.Barrier(6)

    def start() -> None:
        barrier.wait()
        users.append(commit_user(checkpoint))

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(users)) == 1 and len(users) == 6
    assert store_files(s3, "race/job") == {COMMIT_USER_FILE: users[0]}
    path = state_path(checkpoint) / COMMIT_USER_FILE
    assert isinstance(path, StoreFile) and not create_once(path, "another")


def test_missing_state_on_s3_reads_as_missing(s3: S3Server) -> None:
    root = state_path(f"s3://{BUCKET}/nothing/here")
    assert isinstance(root, StoreFile)
    assert not root.exists() and not root.is_dir() and not (root / "f").is_file()
    with pytest.raises(FileNotFoundError):
        (root / "f").read_text()
    with pytest.raises(FileNotFoundError):
        list(root.iterdir())
    assert list(root.glob("*")) == [] and committed_tables(str(root)) == []
    (root / "f").unlink(missing_ok=True)
    progress = SparkProgress.read(root / SPARK_DIR)
    assert (progress.planned, progress.finished) == (None, None)


@pytest.mark.parametrize("location", ["hdfs://nn:8020/ckpt", "gs://b/ckpt", "abfs://c@a.dfs.core.windows.net/x"])
def test_a_checkpoint_on_another_scheme_is_refused_without_spark_hadoop(location: str) -> None:
    """Without Spark's Hadoop handed over (the job does, for such a checkpoint; lakecdc status starts a local
    session: tests/integration/hadoop) nothing is read or written there."""
    scheme = location.split("://", 1)[0]
    with pytest.raises(UnsupportedStore, match=f"{scheme}://.*supported are local paths, file: URIs, s3://"):
        commit_user(location)
    with pytest.raises(UnsupportedStore, match=f"cannot reach {scheme}://"):
        state_path(location)


def test_an_s3a_checkpoint_is_the_same_bucket_and_keys(s3: S3Server) -> None:
    mark = {"chunk": 0, "database": "d", "table": "t", "target": "ods.t", "hw": ["b.1", 4]}
    SnapshotRegistry(f"s3a://{BUCKET}/spelled/job").record(0, [json.dumps(mark)], lambda _t: False)
    assert SnapshotRegistry(f"s3://{BUCKET}/spelled/job").high_watermarks() == [("b.1", 4)]
    assert s3.keys(BUCKET, "spelled/") == ["spelled/job/lakecdc-mysql-snapshot.json"]
