"""What every chaos test shares: its sizes, the kill loop, and the checks on commits and files.

The kill loop starts a ``lakecdc`` job as its own process group, sleeps a random time and SIGKILLs
the whole group (driver, JVM, Python workers), then starts it again on the same checkpoint. A job
that exits on its own before its kill (a refused restart, a crash) fails the test with its log."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

# Spark's Python worker that cannot connect back to a JVM busy on a loaded machine: a flake of the
# machine, not of lakecdc; such a start is tried again (and counted), never hidden.
LOAD_FLAKE = "Python worker failed to connect back"


def run_past_load_flakes(job: Callable[[], Any], out: dict[str, Any], attempts: int = 3) -> None:
    """Run ``job`` (an in-process sync job), starting it again on its checkpoint, as an operator would, when
    Spark could not start a Python worker on the loaded machine (LOAD_FLAKE). ``out`` gets ``result`` or
    the last ``error``, and ``ended`` (time.monotonic()); for a test that runs the job in a thread."""
    for _ in range(attempts):
        try:
            out["result"] = job()
            out.pop("error", None)
            break
        except BaseException as exc:  # reported by the test
            out["error"] = exc
            if LOAD_FLAKE not in str(exc):
                break
    out["ended"] = time.monotonic()


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def seeded_rng(name: str) -> tuple[random.Random, int]:
    """A random source for the kill moments and the changes; ``LAKECDC_CHAOS_SEED`` replays a run."""
    seed = env_int("LAKECDC_CHAOS_SEED", random.SystemRandom().randrange(1 << 30))
    print(f"\nchaos {name}: LAKECDC_CHAOS_SEED={seed}")
    return random.Random(seed), seed


@dataclass
class KillLoop:
    """Runs ``argv`` again and again on one checkpoint, each run SIGKILLed after a random time."""

    argv: list[str]
    logs: Path
    progress: Callable[[], int]  # e.g. the number of snapshots committed so far
    env: dict[str, str] = field(default_factory=lambda: {**os.environ, "PYTHONPATH": str(ROOT)})
    kills: int = 0
    flakes: int = 0
    progress_at_kill: list[int] = field(default_factory=list)

    def kill_once(
        self, rng: random.Random, after_commit: tuple[float, float], early: float = 0.25, last: bool = False
    ) -> None:
        """Start the job and SIGKILL its process group at a random moment: with probability
        ``early`` within its first 30 s (start-up, planning, a first batch), else ``uniform(*after_commit)``
        seconds after its first commit (a busy machine can take a minute to start Spark). The ``last``
        kill comes after a commit if no earlier one did: every run, however few its kills, kills a job
        that has committed (a short form of 2-3 kills would otherwise all land in start-up ~1-6% of runs)."""
        if last and not any(self.progress_at_kill):
            early = 0.0
        for attempt in range(4):
            path = self.logs / f"run-{self.kills:03d}-{attempt}.log"
            with open(path, "wb") as log:
                proc = subprocess.Popen(
                    self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=log, start_new_session=True
                )
                if self._wait_for_moment(proc, rng, after_commit, early):
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    self.kills += 1
                    self.progress_at_kill.append(self.progress())
                    return
            text = path.read_text(errors="replace")
            if LOAD_FLAKE not in text:
                break
            self.flakes += 1
        raise AssertionError(f"the job exited with {proc.returncode} before its kill:\n{text[-4000:]}")

    def _wait_for_moment(
        self, proc: subprocess.Popen[bytes], rng: random.Random, after_commit: tuple[float, float], early: float
    ) -> bool:
        """Wait for the kill moment; False if the job exited first."""
        now = time.monotonic()
        if rng.random() < early:
            deadline = now + rng.uniform(1.0, 30.0)
        else:
            before, limit = self.progress(), now + 600
            while self.progress() == before and time.monotonic() < limit:
                if proc.poll() is not None:
                    return False
                time.sleep(0.1)
            deadline = time.monotonic() + rng.uniform(*after_commit)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            time.sleep(0.05)
        return proc.poll() is None

    def finish(self, *extra: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
        """A last run (e.g. ``--available-now``) to the end; it must exit 0."""
        for _ in range(4):
            done = subprocess.run(
                [*self.argv, *extra], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout,
                check=False,
            )  # fmt: skip
            if done.returncode == 0 or LOAD_FLAKE not in done.stderr:
                break
            self.flakes += 1
        assert done.returncode == 0, done.stderr[-4000:]
        return done


def snapshot_files(table_dir: Path) -> list[dict[str, Any]]:
    """The table's snapshot files, read as JSON, in id order."""
    files = sorted((table_dir / "snapshot").glob("snapshot-*"), key=lambda p: int(p.name.split("-")[1]))
    return [json.loads(p.read_text()) for p in files]


def assert_no_commit_twice(table_dir: Path) -> int:
    """No commit identifier twice per commit user and kind (one micro-batch's APPEND and the
    COMPACT of the same commit share their identifier, as in Paimon). Returns the snapshot count."""
    seen: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    snapshots = snapshot_files(table_dir)
    for s in snapshots:
        seen[(s["commitUser"], s["commitKind"], s["commitIdentifier"])].append(s["id"])
    twice = {k: ids for k, ids in seen.items() if len(ids) > 1}
    assert not twice, f"{table_dir.name}: commit identifiers committed twice: {twice}"
    return len(snapshots)


def remove_orphans(warehouse: str, database: str) -> str:
    """``lakecdc remove-orphan-files`` on every table of the database, with a cut-off one second
    ahead (every file is old enough). Returns its per-table summary lines."""
    later = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 1))
    time.sleep(1.1)  # the cut-off is in the past when the files are listed
    done = subprocess.run(
        [sys.executable, "-m", "ingest", "remove-orphan-files", "--warehouse", warehouse, "--database", database,
         "--older-than", later],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return "; ".join(line.removeprefix("lakecdc: ") for line in done.stdout.splitlines() if line.startswith("lakecdc:"))


def assert_every_file_referenced(warehouse: str, identifier: str) -> int:
    """Every file in the table's bucket, manifest and index directories is named by a snapshot
    (read here with pypaimon's manifest readers, not lakecdc's), and every named file exists.
    Returns the number of files."""
    from pypaimon import CatalogFactory
    from pypaimon.manifest.index_manifest_file import IndexManifestFile
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table: Any = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    root = Path(table.table_path)
    lists, manifests, index = ManifestListManager(table), ManifestFileManager(table), IndexManifestFile(table)
    named: set[str] = set()
    data: set[str] = set()
    read: set[str] = set()
    for s in snapshot_files(root):
        for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
            if not s.get(key):
                continue
            named.add(s[key])
            for meta in lists.read(s[key]):
                named.add(meta.file_name)
                if meta.file_name in read:
                    continue
                read.add(meta.file_name)
                for entry in manifests.read(meta.file_name, drop_stats=True):
                    data.add(entry.file.file_name)
                    data.update(entry.file.extra_files or ())
        if s.get("indexManifest"):
            named.add(s["indexManifest"])
            data.update(e.index_file.file_name for e in index.read(s["indexManifest"]))
    on_disk = {
        p.name
        for p in root.rglob("*")
        if p.is_file() and (p.parent.name.startswith("bucket-") or p.parent.name in ("manifest", "index"))
    }
    unreferenced = sorted(on_disk - named - data)
    assert not unreferenced, f"{identifier}: files no snapshot names after remove-orphan-files: {unreferenced[:20]}"
    missing = sorted((named | data) - on_disk)
    assert not missing, f"{identifier}: files named by snapshots but gone: {missing[:20]}"
    return len(on_disk)


def read_changelog_pypaimon(warehouse: str, identifier: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """Every changelog row of every snapshot, in commit order: (row kind, *columns), read with
    pypaimon. (pypaimon-rust 0.4.0's incremental changelog read fails on files written under an
    older schema — "_VALUE_KIND is null" — though the files hold it; pypaimon reads them.)"""
    from pypaimon import CatalogFactory

    table: Any = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    builder = table.new_stream_read_builder().with_include_row_kind(True)
    scan, snapshots = builder.new_streaming_scan(), table.snapshot_manager()
    latest = snapshots.get_latest_snapshot()
    out: list[tuple[Any, ...]] = []
    for snapshot_id in range(1, latest.id + 1 if latest else 1):
        plan = scan._create_changelog_plan(snapshots.get_snapshot_by_id(snapshot_id))
        rows = builder.new_read().to_arrow(plan.splits())
        for row in rows.to_pylist() if rows is not None else []:
            out.append((row["_row_kind"], *(row[c] for c in columns)))
    return out
