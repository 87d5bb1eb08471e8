"""#23 crash points: a real job killed (SIGKILL, its whole process group) at each named point of
``sinks/crash_points.py`` must, once restarted without the fault, end exact.

Kafka (``kafka-sync-database``, two tables, three partitions, a column added and a column widened
mid-stream; every table compacted fully every second commit of a run, its snapshots expired beyond
three while their changelogs are kept — Paimon's decoupled changelog): one job run per point, in
the order the stream reaches them, each on the checkpoint the previous run was killed on — so each
run first recovers from the previous crash, then dies at its own point — and a last run without
the fault to the end (one warehouse for all: eight Spark starts, not fourteen). MySQL
(``mysql-sync-table``): killed at the snapshot → binlog hand-off while a writer changes the table,
then restarted to the end.

Each killed run must exit by SIGKILL (-9) with the hook's line in its log. At the end: the tables
equal the source (pypaimon-rust and pypaimon); the changelog read back from Paimon (the snapshots'
and the kept changelogs', with pypaimon) holds every change once, in per-key order; no commit
identifier twice; and ``lakecdc remove-orphan-files`` deletes exactly the files that no snapshot,
tag or kept changelog names (that set computed here from the metadata with pypaimon's readers,
not lakecdc's), while every file they read is on disk.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from deploy.local_mariadb import LocalMariaDB
from sinks.crash_points import VARIABLE
from tests.chaos.harness import LOAD_FLAKE, assert_no_commit_twice, remove_orphans
from tests.chaos.test_kafka_chaos import PARTITIONS, TABLES, Source, _partition
from tests.conftest import ROOT
from tests.paimon_read import read_pypaimon, read_rust

# Long fault runs: `make faults`, not `make test` (README: Guarantees has their figures).
pytestmark = pytest.mark.faults

CHANGES, KEYS = 3000, 150
# Compacted every second commit, snapshots beyond three expired, their changelogs kept.
TABLE_CONF = (
    "full-compaction.delta-commits=2",
    "snapshot.num-retained.min=2",
    "snapshot.num-retained.max=3",
    "changelog.num-retained.max=1000",
)
# The Kafka points, one run each, in the order the stream reaches them: each run starts on the
# checkpoint the previous one was killed on (so it first recovers from that crash), dies at its own
# point; a last run goes to the end.
KAFKA_POINTS = (
    "table-created",  # batch 0: the first table created, the second not, nothing written
    "between-table-commits",  # batch 0 again: one table committed, the other not
    "before-commit",  # batch 0 again: written, nothing of it committed (one table's commit is done)
    "compaction-written",  # the second commit of the run: compacted, the COMPACT not committed
    "table-altered",  # a column added (or widened), before the batch's writers
    "expiry-data-deleted",
    "expiry-manifests-deleted",
)
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


# ----- running a job to its crash point, and again to its end ----------------------------------------


def _crash(argv: list[str], point: str, log_path: Path, timeout: float = 300) -> None:
    """Run the job with ``LAKECDC_CRASH_AT=point``: it must die by SIGKILL at that point."""
    name = point.split(":")[0]
    for _ in range(3):
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                argv, cwd=ROOT, env={**ENV, VARIABLE: point}, stdout=log, stderr=log, start_new_session=True
            )
            try:
                proc.wait(timeout=timeout)
            finally:
                if proc.returncode is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        text = log_path.read_text(errors="replace")
        if proc.returncode != -signal.SIGKILL and LOAD_FLAKE in text:
            continue  # a loaded machine's flake before the point: the same checkpoint again
        break
    assert proc.returncode == -signal.SIGKILL, f"exit {proc.returncode}, not SIGKILL at {point}:\n{text[-4000:]}"
    assert f"crash point {name} reached" in text, text[-4000:]
    with_group_gone(proc.pid)


def with_group_gone(pgid: int) -> None:
    """Wait until no process of the killed job's group is left (its JVM, its Python workers)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"processes of the killed job's group {pgid} still run")


def _finish(argv: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The restart, without the fault: it must run to its end."""
    env = {k: v for k, v in ENV.items() if k != VARIABLE}
    for _ in range(3):
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode == 0 or LOAD_FLAKE not in done.stderr:
            break
    assert done.returncode == 0, done.stderr[-4000:]
    return done


# ----- what the table references, independently of lakecdc ----------------------------------------


def _candidates(table_dir: Path) -> set[str]:
    """The files remove-orphan-files may consider: bucket, manifest and index directories."""
    return {
        str(p.relative_to(table_dir))
        for p in table_dir.rglob("*")
        if p.is_file() and (p.parent.name.startswith("bucket-") or p.parent.name in ("manifest", "index"))
    }


def _metadata(table_dir: Path, folder: str, prefix: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((table_dir / folder).glob(f"{prefix}-*"))]


def _references(warehouse: str, identifier: str) -> tuple[set[str], set[str]]:
    """(named, live): the file names that the table's snapshots, tags and kept changelogs name in
    any manifest entry (ADD or DELETE: remove-orphan-files keeps them all, as Paimon's does), and
    those that must exist — their manifests and lists, the files a snapshot or tag reads (ADDs not
    undone by a DELETE) and every changelog file. Read from the JSON metadata with pypaimon's
    manifest readers. A kept changelog's data lists and index manifest may be gone (its snapshot's
    expiry took them)."""
    from pypaimon import CatalogFactory
    from pypaimon.manifest.index_manifest_file import IndexManifestFile
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table: Any = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    root = Path(table.table_path)
    lists, manifests, index = ManifestListManager(table), ManifestFileManager(table), IndexManifestFile(table)
    named: set[str] = set()
    live: set[str] = set()
    owners = [(s, True) for s in _metadata(root, "snapshot", "snapshot") + _metadata(root, "tag", "tag")]
    owners += [(c, False) for c in _metadata(root, "changelog", "changelog")]
    for meta, snapshot in owners:
        count: dict[str, int] = defaultdict(int)  # data files: ADDs minus DELETEs over base and delta
        for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
            name = meta.get(key)
            changelog = key == "changelogManifestList"
            if not name or not (snapshot or changelog or (root / "manifest" / name).exists()):
                continue
            needed = snapshot or changelog
            named.add(name)
            live.update([name] if needed else [])
            for m in lists.read(name):
                named.add(m.file_name)
                live.update([m.file_name] if needed else [])
                for entry in manifests.read(m.file_name, drop_stats=True):
                    files = [entry.file.file_name, *(entry.file.extra_files or ())]
                    named.update(files)
                    if changelog:
                        live.update(files)
                    elif snapshot:
                        for f in files:
                            count[f] += 1 if entry.kind == 0 else -1
        live.update(f for f, n in count.items() if n > 0)
        manifest = meta.get("indexManifest")
        if manifest and (snapshot or (root / "manifest" / manifest).exists()):
            entries = [e.index_file.file_name for e in index.read(manifest)]
            named.update([manifest, *entries])
            live.update([manifest, *entries] if snapshot else [])
    return named, live


def _assert_orphans_removed_exactly(warehouse: str, identifiers: list[str]) -> dict[str, int]:
    """remove-orphan-files deletes exactly the files no snapshot, tag or kept changelog names and
    keeps every other one; every file they read exists. Returns the number of orphans per table."""
    before: dict[str, set[str]] = {}
    expected: dict[str, set[str]] = {}
    for identifier in identifiers:
        table_dir = Path(warehouse) / "ods.db" / identifier.split(".")[1]
        before[identifier] = _candidates(table_dir)
        named, live = _references(warehouse, identifier)
        missing = sorted(live - {Path(p).name for p in before[identifier]})
        assert not missing, f"{identifier}: files read by a snapshot, tag or kept changelog are gone: {missing[:10]}"
        expected[identifier] = {p for p in before[identifier] if Path(p).name not in named}
    remove_orphans(warehouse, "ods")
    for identifier in identifiers:
        table_dir = Path(warehouse) / "ods.db" / identifier.split(".")[1]
        after = _candidates(table_dir)
        wrong = sorted(after ^ (before[identifier] - expected[identifier]))
        assert not wrong, f"{identifier}: remove-orphan-files left or deleted the wrong files: {wrong[:10]}"
    return {i: len(e) for i, e in expected.items()}


def _changelog(warehouse: str, identifier: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """Every changelog row in commit order, (row kind, *columns): each snapshot's, and before the
    earliest snapshot each kept changelog's, read with pypaimon from their changelog manifests. The
    ids must run from 1 without a gap."""
    from pypaimon import CatalogFactory
    from pypaimon.changelog.changelog import Changelog

    table: Any = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    root = Path(table.table_path)
    manager = table.snapshot_manager()
    snapshot_ids = sorted(int(p.name.split("-")[1]) for p in (root / "snapshot").glob("snapshot-*"))
    kept_ids = sorted(int(p.name.split("-")[1]) for p in (root / "changelog").glob("changelog-*"))
    ids = sorted(set(snapshot_ids) | set(kept_ids))
    assert ids == list(range(1, len(ids) + 1)), f"{identifier}: snapshots and kept changelogs {ids}"
    builder = table.new_stream_read_builder().with_include_row_kind(True)
    scan = builder.new_streaming_scan()
    out: list[tuple[Any, ...]] = []
    for sid in ids:
        if sid in snapshot_ids:
            snapshot = manager.get_snapshot_by_id(sid)
        else:
            snapshot = Changelog.try_from_path(table.file_io, str(root / "changelog" / f"changelog-{sid}"))
        plan = scan._create_plan_from_manifests(scan._manifest_list_manager.read_changelog(snapshot), sid)
        rows = builder.new_read().to_arrow(plan.splits())
        for row in rows.to_pylist() if rows is not None else []:
            out.append((row["_row_kind"], *(row[c] for c in columns)))
    return out


# ----- Kafka ------------------------------------------------------------------------------------------


def _kafka_argv(warehouse: str, kafka: LocalKafka, topic: str) -> list[str]:
    argv = [
        sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", warehouse, "--database", "ods",
        "--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}", "--kafka_conf", f"topic={topic}",
        "--kafka_conf", "value.format=canal-json", "--max-offsets-per-trigger", "500", "--available-now",
        "--spark-conf", "spark.master=local[2,4]",
    ]  # fmt: skip
    for conf in TABLE_CONF:
        argv += ["--table-conf", conf]
    return argv


@pytest.mark.timeout(1800)
def test_kafka_job_killed_at_each_crash_point_ends_exact(kafka: LocalKafka, tmp_path: Path, topic_name: str) -> None:
    source = Source(random.Random(23), KEYS, CHANGES)
    kafka.create_topic(topic_name, PARTITIONS)
    kafka.produce(topic_name, [source.next() for _ in range(CHANGES)], _partition)
    warehouse = str(tmp_path / "warehouse")
    argv = _kafka_argv(warehouse, kafka, topic_name)
    for point in KAFKA_POINTS:
        _crash(argv, point, tmp_path / f"{point}.log")
    _finish(argv)

    identifiers = [f"ods.{t}" for t in TABLES]
    orphans = _assert_orphans_removed_exactly(warehouse, identifiers)
    assert sum(orphans.values()) > 0, "the killed attempts' files were not orphans: were the points reached?"
    kept = 0
    for table in TABLES:
        expected = source.expected(table)
        assert read_rust(warehouse, f"ods.{table}") == expected, table
        assert read_pypaimon(warehouse, f"ods.{table}") == expected, table
        got: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
        for kind, key, *image in _changelog(warehouse, f"ods.{table}", ("id", "name", "qty", "note")):
            got[key].append((kind, *image))
        assert dict(got) == dict(source.changes[table]), table
        table_dir = Path(warehouse) / "ods.db" / table
        assert_no_commit_twice(table_dir)
        kept += len(list((table_dir / "changelog").glob("changelog-*")))
    assert kept > 0, "no snapshot expired"


# ----- MySQL ------------------------------------------------------------------------------------------


class _Writer(threading.Thread):
    """Inserts, updates (key changes among them) and deletes rows of ``crashdb.t`` until stopped."""

    def __init__(self, mariadb: LocalMariaDB) -> None:
        super().__init__(daemon=True)
        self.mariadb, self.stop, self.made = mariadb, threading.Event(), 0
        self.error: BaseException | None = None
        self.rng = random.Random(23)

    def run(self) -> None:
        try:
            conn = self.mariadb.connect("crashdb")
            with conn.cursor() as cur:
                while not self.stop.is_set():
                    key = self.rng.randrange(1, 4000)
                    roll = self.rng.random()
                    if roll < 0.3:
                        cur.execute("INSERT IGNORE INTO t VALUES (%s, %s, %s)", (key + 10_000, f"new-{self.made}", 1))
                    elif roll < 0.8:
                        cur.execute("UPDATE t SET v = %s, n = n + 1 WHERE id = %s", (f"up-{self.made}", key))
                    elif roll < 0.9:
                        cur.execute("UPDATE IGNORE t SET id = id + 20000 WHERE id = %s", (key,))
                    else:
                        cur.execute("DELETE FROM t WHERE id = %s", (key,))
                    self.made += 1
                    time.sleep(0.02)
            conn.close()
        except BaseException as exc:  # reported by the test
            self.error = exc


def _assert_changelog_replays(warehouse: str, identifier: str, columns: tuple[str, ...]) -> int:
    """Replaying the changelog from empty gives the table, and every retraction retracts exactly the
    row its key holds: no change twice, none lost. Returns the changelog's length."""
    state: dict[Any, tuple[Any, ...]] = {}
    rows = _changelog(warehouse, identifier, columns)
    for kind, key, *values in rows:
        if kind in ("+I", "+U"):
            assert key not in state, f"{kind} of {key} {values}: the key holds {state.get(key)}"
            state[key] = tuple(values)
        else:
            assert state.get(key) == tuple(values), f"{kind} of {key} {values} but the key holds {state.get(key)}"
            del state[key]
    final = {r[columns[0]]: tuple(r[c] for c in columns[1:]) for r in read_rust(warehouse, identifier)}
    assert state == final
    return len(rows)


@pytest.mark.timeout(900)
def test_mysql_job_killed_at_the_snapshot_to_binlog_hand_off_ends_exact(mariadb: LocalMariaDB, tmp_path: Path) -> None:
    mariadb.execute(
        "DROP DATABASE IF EXISTS crashdb",
        "CREATE DATABASE crashdb",
        "CREATE TABLE crashdb.t (id INT PRIMARY KEY, v VARCHAR(32), n INT)",
    )
    values = ", ".join(f"({i}, 'v{i}', 0)" for i in range(1, 4001))
    mariadb.execute(f"INSERT INTO crashdb.t VALUES {values}")
    warehouse = str(tmp_path / "warehouse")
    conf = mariadb.mysql_conf(
        **{"database-name": "crashdb", "table-name": "t", "scan.incremental.snapshot.chunk.size": "500"}
    )
    argv = [
        sys.executable, "-m", "ingest", "mysql-sync-table", "--warehouse", warehouse, "--database", "ods",
        "--table", "t", "--max-offsets-per-trigger", "1000", "--trigger-interval", "1s",
        "--spark-conf", "spark.master=local[2,4]",
    ]  # fmt: skip
    for key, value in conf.items():
        argv += ["--mysql-conf", f"{key}={value}"]
    writer = _Writer(mariadb)
    writer.start()
    try:
        # Streaming (no --available-now): the binlog the writer makes while the snapshot is read
        # lies beyond the start position, so the job plans the binlog phase as soon as the snapshot
        # is done — and dies there.
        _crash(argv, "snapshot-to-binlog", tmp_path / "crash.log")
    finally:
        writer.stop.set()
        writer.join()
    assert writer.error is None, writer.error
    registry = json.loads(next(Path(warehouse).glob("_lakecdc/checkpoints/*/lakecdc-mysql-snapshot.json")).read_text())
    assert len(registry) >= 4000 // 500  # every chunk committed before the hand-off
    _finish([*argv, "--available-now"])

    conn = mariadb.connect("crashdb")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id, v, n FROM t ORDER BY id")
            expected = [{"id": i, "v": v, "n": n} for i, v, n in cur.fetchall()]
    finally:
        conn.close()
    assert read_rust(warehouse, "ods.t") == expected
    assert read_pypaimon(warehouse, "ods.t") == expected
    assert _assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n")) > len(expected)
    assert_no_commit_twice(Path(warehouse) / "ods.db" / "t")
    _assert_orphans_removed_exactly(warehouse, ["ods.t"])
    assert writer.made > 0
