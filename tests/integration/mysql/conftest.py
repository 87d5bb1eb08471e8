"""Fixtures of the MySQL server tests."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from tests.paimon_read import assert_changelog_replays, read_pypaimon, read_rust


@pytest.fixture(scope="module")
def nolog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    """A private MariaDB per test module whose row events do not name their columns (NO_LOG, MariaDB's
    default), so the job keeps its schema history beside the checkpoint."""
    bare = LocalMariaDB(str(tmp_path_factory.mktemp("nolog")), extra_args=["--binlog-row-metadata=NO_LOG"])
    try:
        yield bare
    finally:
        bare.close()


def chunked_snapshot_settings(
    mariadb: LocalMariaDB, warehouse: str, checkpoint: Path, database: str, chunk: int
) -> SyncSettings:
    """mysql-sync-table of ``database``.t into ods.t, --available-now, in snapshot chunks of ``chunk`` rows
    and two chunks per micro-batch (the snapshot takes a while: writers meet chunks read and unread),
    with the input changelog the tests replay."""
    conf = mariadb.mysql_conf(
        **{"database-name": database, "table-name": "t", "scan.incremental.snapshot.chunk.size": str(chunk)}
    )
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=warehouse,
        database="ods",
        table="t",
        mysql_conf=conf,
        checkpoint=str(checkpoint),
        table_conf={"changelog-producer": "input"},
        available_now=True,
        max_offsets_per_trigger=2 * chunk,
    )


def writes_on(
    mariadb: LocalMariaDB, database: str, keys: list[Any], new_key: Callable[[random.Random], Any], changes: list[int]
) -> Callable[[threading.Event], None]:
    """A writer for ``snapshot_under_writes``: deletes, inserts (keys from ``new_key``), key changes (which
    may move a row to another chunk) and updates of ``database``.t (id, v, n) until stopped, counted in
    ``changes[0]``."""

    def write(stop: threading.Event) -> None:
        w = random.Random(3)
        conn = mariadb.connect(database)
        with conn.cursor() as cur:
            while not stop.is_set():
                key, roll = w.choice(keys), w.random()
                if roll < 0.1:
                    cur.execute("DELETE FROM t WHERE id = %s", (key,))
                elif roll < 0.2:
                    cur.execute("INSERT IGNORE INTO t VALUES (%s, 'new', 0)", (new_key(w),))
                elif roll < 0.3:
                    cur.execute("UPDATE IGNORE t SET id = %s WHERE id = %s", (new_key(w), key))
                else:
                    cur.execute("UPDATE t SET n = n + 1 WHERE id = %s", (key,))
                changes[0] += 1
                time.sleep(0.01)
        conn.close()

    return write


def run_beside(task: Callable[[threading.Event], None], settings: SyncSettings) -> None:
    """Runs the job while ``task`` runs on a thread of its own (until the event it is given is set,
    once the job has ended, however it ended)."""
    stop = threading.Event()
    thread = threading.Thread(target=task, args=(stop,))
    thread.start()
    try:
        run(settings)
    finally:
        stop.set()
        thread.join()


def connection_killer(
    mariadb: LocalMariaDB,
    statements: Sequence[str],
    most: int,
    killed: list[int],
    seen_running: str | None = None,
) -> Callable[[threading.Event], None]:
    """A task for ``run_beside``: kills the connections running a statement that starts with one of
    ``statements`` (``KILL CONNECTION``), up to ``most`` of them, their ids noted in ``killed``;
    with ``seen_running``, only connections seen running a statement that starts with it before (a
    read task's, not the planner's, where both run the same statements)."""
    chosen: set[int] = set()

    def kill(stop: threading.Event) -> None:
        c = mariadb.connect()
        with c.cursor() as cur:
            while not stop.is_set() and len(killed) < most:
                cur.execute("SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()")
                for pid, info in cur.fetchall():
                    text = str(info or "")
                    if seen_running is not None and text.startswith(seen_running):
                        chosen.add(int(pid))
                    if (seen_running is None or int(pid) in chosen) and text.startswith(tuple(statements)):
                        try:
                            cur.execute(f"KILL CONNECTION {int(pid)}")
                            killed.append(int(pid))
                        except Exception:
                            pass  # finished meanwhile
        c.close()

    return kill


def snapshot_under_writes(
    mariadb: LocalMariaDB,
    warehouse: str,
    checkpoint: Path,
    database: str,
    chunk: int,
    writer: Callable[[threading.Event], None],
) -> list[Any]:
    """Runs the chunked snapshot of ``database``.t while ``writer`` changes it on a thread of its own
    (until the event it is given is set), then once more over the rest of the binlog; returns the
    chunks' low bounds from the snapshot registry beside the checkpoint."""
    run_beside(writer, chunked_snapshot_settings(mariadb, warehouse, checkpoint, database, chunk))
    settings = chunked_snapshot_settings(mariadb, warehouse, checkpoint, database, chunk)
    run(settings.model_copy(update={"max_offsets_per_trigger": 500_000}))
    registry = json.loads((checkpoint / "lakecdc-mysql-snapshot.json").read_text())
    return [e["lo"] for e in registry.values() if e["lo"] is not None]


def assert_table_equals_source(mariadb: LocalMariaDB, database: str, warehouse: str, key: Callable[[Any], Any]) -> None:
    """ods.t read with pypaimon-rust equals pypaimon's read and ``database``.t's rows (id, v, n), the
    key column turned comparable by ``key``; its changelog replays to it."""
    c = mariadb.connect(database)
    with c.cursor() as cur:
        cur.execute("SELECT id, v, n FROM t")
        source = sorted(tuple(r) for r in cur.fetchall())
    c.close()
    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    assert sorted((key(r["id"]), r["v"], r["n"]) for r in rows) == source
    assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))
