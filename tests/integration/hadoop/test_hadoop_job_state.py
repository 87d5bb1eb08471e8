"""Job state through Hadoop's FileSystem in the driver's JVM (#25): every state class lakecdc keeps beside its
checkpoint, written and read through ``sinks.hadoop_files`` over py4j from a real local SparkSession, leaves
exactly the files, byte for byte, that the same steps leave in a local directory. Two locations Hadoop serves
out of the box, so that no connector jar is needed: a ``file:`` URI sent through the JVM on purpose
(``use_hadoop(..., file_uris=True)``), and ``viewfs://``, a scheme only the JVM serves, mounted onto a local
directory by Hadoop settings. Also: racing first starts agree on one commit user, the checkpoint lease, and
the refusal of a scheme Spark's Hadoop cannot serve (``gs://`` without its connector, ``hdfs://`` with
nothing listening), by the state layer and by the job before it writes anything."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from ingest.job import COMMIT_USER_FILE, JobFailed, commit_user, run
from sinks.filesystem import UnsupportedStore
from sinks.hadoop_files import Hadoop, HadoopFile
from sinks.state_files import check_state_location, create_once, lease_directory, state_path, use_hadoop
from sinks.write.lease import LEASE_FILE, FileLease, LeaseHeld, Owner
from tests.integration.kafka.test_sync import _settings
from tests.integration.s3.test_s3_job_state import _same_but_user, exercise, local_files

MOUNT = "lakecdc-state"  # the viewfs mount table of these tests


@pytest.fixture
def viewfs_root(spark: Any, tmp_path: Path) -> tuple[str, Path]:
    """``viewfs://<MOUNT>/<name>`` mounted onto a local directory; the URI and the directory."""
    target = tmp_path / "mounted"
    target.mkdir()
    name = f"m{abs(hash(str(tmp_path))) % 10**8}"
    spark._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{MOUNT}.link./{name}", f"file://{target}")
    return f"viewfs://{MOUNT}/{name}", target


@pytest.fixture
def hadoop(spark: Any, viewfs_root: tuple[str, Path]) -> Iterator[Hadoop]:
    handle = Hadoop.of_session(spark)  # after the mount: its configuration is copied on first use
    use_hadoop(handle)
    yield handle
    use_hadoop(None)


def _no_side_files(root: Path) -> None:
    """No ``.crc`` files (Hadoop's checksummed local filesystem) and no temporary files left."""
    assert not [p for p in root.rglob("*") if p.name.endswith((".crc", ".tmp"))]


def test_every_state_class_through_hadoop_on_a_file_uri_as_locally(hadoop: Hadoop, tmp_path: Path) -> None:
    use_hadoop(hadoop, file_uris=True)
    local, through_jvm = tmp_path / "local" / "checkpoint", tmp_path / "jvm" / "checkpoint"
    assert isinstance(state_path(f"file://{through_jvm}"), HadoopFile)
    assert isinstance(state_path(str(local)), Path)  # a plain path stays local
    on_local = exercise(str(local), tmp_path / "wh-local")
    on_jvm = exercise(f"file://{through_jvm}", tmp_path / "wh-jvm")
    assert on_jvm["tables"] == ["ods.a", "ods.b", "ods.c"] and on_jvm["created"] == ["db.t"]
    written_local, written_jvm = local_files(local), local_files(through_jvm)
    assert written_local.pop(COMMIT_USER_FILE) == on_local["user"]
    assert written_jvm.pop(COMMIT_USER_FILE) == on_jvm["user"]
    assert written_jvm == written_local and len(written_jvm) > 10
    _no_side_files(through_jvm)
    _same_but_user(on_local, on_jvm)


def test_every_state_class_on_viewfs_as_locally(hadoop: Hadoop, viewfs_root: tuple[str, Path], tmp_path: Path) -> None:
    uri, target = viewfs_root
    local = tmp_path / "local" / "checkpoint"
    checkpoint = f"{uri}/jobs/one"
    assert isinstance(state_path(checkpoint), HadoopFile)
    check_state_location(checkpoint)  # served: no error
    on_local = exercise(str(local), tmp_path / "wh-local")
    on_viewfs = exercise(checkpoint, tmp_path / "wh-viewfs")
    written_local, written_viewfs = local_files(local), local_files(target / "jobs" / "one")
    written_local.pop(COMMIT_USER_FILE)
    assert written_viewfs.pop(COMMIT_USER_FILE) == on_viewfs["user"]
    assert written_viewfs == written_local
    _no_side_files(target)
    _same_but_user(on_local, on_viewfs)


@pytest.mark.parametrize("form", ["viewfs", "file-uri"])
def test_racing_first_starts_through_hadoop_agree_on_one_commit_user(
    hadoop: Hadoop, viewfs_root: tuple[str, Path], tmp_path: Path, form: str
) -> None:
    if form == "viewfs":
        checkpoint, directory = f"{viewfs_root[0]}/race", viewfs_root[1] / "race"
    else:
        use_hadoop(hadoop, file_uris=True)
        directory = tmp_path / "race"
        checkpoint = f"file://{directory}"
    users: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def start() -> None:
        try:
            barrier.wait()
            users.append(commit_user(checkpoint))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(users) == 6 and len(set(users)) == 1
    assert local_files(directory) == {COMMIT_USER_FILE: users[0]}
    path = state_path(checkpoint) / COMMIT_USER_FILE
    assert isinstance(path, HadoopFile) and not create_once(path, "another")
    assert path.read_text() == users[0]


def test_create_exclusive_through_hadoop_keeps_the_first_file(hadoop: Hadoop, viewfs_root: tuple[str, Path]) -> None:
    """``FileSystem.create(path, overwrite=false)`` (the path create_once takes off this machine's disk)."""
    uri, target = viewfs_root
    path = HadoopFile.of(f"{uri}/made/once", hadoop)
    assert path.create_exclusive("first")
    assert not path.create_exclusive("second")
    assert (target / "made" / "once").read_text() == "first" == path.read_text()
    path.write_text("replaced")  # a temporary file renamed over it
    assert (target / "made" / "once").read_text() == "replaced"
    assert [p.name for p in (target / "made").iterdir()] == ["once"]
    path.unlink()
    assert not path.exists() and path.parent.is_dir()
    with pytest.raises(FileNotFoundError):
        path.read_text()
    with pytest.raises(FileNotFoundError):
        list(HadoopFile.of(f"{uri}/none", hadoop).iterdir())


@pytest.mark.parametrize("form", ["viewfs", "file-uri"])
def test_filecontext_rename_with_overwrite_replaces_the_target(
    hadoop: Hadoop, viewfs_root: tuple[str, Path], tmp_path: Path, form: str
) -> None:
    """The replace HDFS and object stores need (their FileSystem.rename will not replace a file; a local
    disk's does, so write_text here never takes this path by itself)."""
    uri, target = viewfs_root if form == "viewfs" else (f"file://{tmp_path}/plain", tmp_path / "plain")
    old, new = HadoopFile.of(f"{uri}/r/target", hadoop), HadoopFile.of(f"{uri}/r/.target.tmp", hadoop)
    old.write_text("old")
    new.write_text("new")
    hadoop.rename_over(hadoop.path(new.uri), hadoop.path(old.uri), old.uri)
    assert (target / "r" / "target").read_text() == "new" and old.read_text() == "new"
    assert [p.name for p in (target / "r").iterdir()] == ["target"]


def test_the_checkpoint_lease_through_hadoop(hadoop: Hadoop, viewfs_root: tuple[str, Path]) -> None:
    uri, target = viewfs_root
    # a viewfs checkpoint on this machine's disk: its local directory, under flock as a local checkpoint
    assert lease_directory(f"{uri}/leased") == target / "leased"
    # one Hadoop serves off this machine (HDFS): the lease file itself through Hadoop
    directory = HadoopFile.of(f"{uri}/remote", hadoop)
    first = FileLease(directory, "checkpoint remote", Owner.this_process("first"))
    first.acquire()
    assert (target / "remote" / LEASE_FILE).is_file()
    second = FileLease(directory, "checkpoint remote", Owner.this_process("second"))
    with pytest.raises(LeaseHeld, match="in use by another job"):
        second.acquire()
    first.renew()
    first.verify()
    first.release()
    assert not (target / "remote" / LEASE_FILE).exists()
    second.acquire()
    second.release()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_scheme_spark_hadoop_cannot_serve_is_refused_naming_it(hadoop: Hadoop) -> None:
    hadoop._private_conf().set("ipc.client.connect.max.retries", "0")  # refused at once, not retried
    with pytest.raises(UnsupportedStore) as info:
        check_state_location("gs://bucket/ck")
    message = str(info.value)
    assert "checkpoint gs://bucket/ck: Spark's Hadoop cannot serve gs://" in message
    assert "GoogleHadoopFileSystem" in message  # Hadoop's own reason
    assert "connector jar" in message and "spark.hadoop.fs.gs." in message
    # HDFS's client is in Spark's Hadoop: a namenode nobody answers for is refused too
    hdfs = f"hdfs://127.0.0.1:{_closed_port()}/ck"
    with pytest.raises(UnsupportedStore, match=r"Spark's Hadoop cannot serve hdfs:// \(.*Connection refused"):
        check_state_location(hdfs)


def test_a_job_on_an_unserved_checkpoint_stops_before_writing(
    spark: Any, kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    warehouse = tmp_path / "warehouse"
    settings = _settings(str(warehouse), kafka, topic_name, checkpoint="gs://bucket/ck")
    with pytest.raises(JobFailed, match="checkpoint gs://bucket/ck: Spark's Hadoop cannot serve gs://"):
        run(settings)
    assert not warehouse.exists()
    with pytest.raises(UnsupportedStore, match="without Spark's Hadoop"):
        state_path("viewfs://x/y")  # the job handed its Hadoop back


def test_a_mysql_job_on_a_hadoop_only_checkpoint_is_refused_before_writing(
    spark: Any, viewfs_root: tuple[str, Path], tmp_path: Path
) -> None:
    """The MySQL source's planner keeps job state from a Python worker that has no JVM: refused at start-up,
    before the commit user or the lease is written (no server is needed to get there)."""
    from ingest.cli.settings import SyncSettings

    uri, target = viewfs_root
    warehouse = tmp_path / "warehouse"
    conf = {"hostname": "127.0.0.1", "port": str(_closed_port()), "username": "u", "database-name": "d"}
    conf["table-name"] = "t"
    settings = SyncSettings(
        action="mysql-sync-table", warehouse=str(warehouse), database="ods", table="t", mysql_conf=conf,
        checkpoint=f"{uri}/mysql", available_now=True,
    )  # fmt: skip
    with pytest.raises(JobFailed, match=r"keeps job state from its planner.*give --checkpoint one of those"):
        run(settings)
    assert not (target / "mysql").exists() and not warehouse.exists()
