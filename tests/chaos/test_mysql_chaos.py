"""MySQL chaos: a mysql-sync-table job SIGKILLed at random moments over a snapshot of a large table
taken while a writer updates (primary-key changes included), deletes and inserts, then over the
binlog phase; restarted from its checkpoint each time, then caught up with ``--available-now``.

Afterwards: the table equals ``SELECT`` of the source (pypaimon-rust and pypaimon); the changelog
replays from empty to the table with every retraction retracting exactly the row its key holds
(nothing twice, nothing lost) and each key's versions in write order (every write stamps ``n``
with a counter); no commit identifier appears twice; after ``remove-orphan-files`` every file on
disk is named by a snapshot.

Sizes: ``LAKECDC_CHAOS_MYSQL_KILLS`` (default 2), ``LAKECDC_CHAOS_MYSQL_ROWS`` (default 20,000);
``make chaos`` runs 10 kills over 100,000 rows. The short form's last kill comes after a commit whenever
no earlier one did (see ``KillLoop.kill_once``)."""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from tests.chaos.harness import (
    KillLoop,
    assert_every_file_referenced,
    assert_no_commit_twice,
    env_int,
    read_changelog_pypaimon,
    remove_orphans,
    seeded_rng,
)
from tests.paimon_read import read_pypaimon, read_rust

KILLS, ROWS = env_int("LAKECDC_CHAOS_MYSQL_KILLS", 2), env_int("LAKECDC_CHAOS_MYSQL_ROWS", 20_000)
CHUNK = max(500, ROWS // 50)


class Writer(threading.Thread):
    """Changes the source table until stopped: updates, key changes (a row moved to a key in
    another chunk), deletes and inserts, each stamping ``n`` with the next counter value."""

    def __init__(self, mariadb: LocalMariaDB, database: str, rng: random.Random) -> None:
        super().__init__()
        self.mariadb, self.database, self.rng = mariadb, database, rng
        self.keys = set(range(ROWS))
        self.counts = {"update": 0, "key change": 0, "delete": 0, "insert": 0}
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def _free_key(self) -> int:
        while True:
            key = self.rng.randrange(2 * ROWS)
            if key not in self.keys:
                return key

    def run(self) -> None:
        conn = self.mariadb.connect(self.database)
        n = 0
        try:
            with conn.cursor() as cur:
                while not self.stop.is_set():
                    n += 1
                    key, roll = self.rng.choice(tuple(self.keys)), self.rng.random()
                    if roll < 0.5:
                        cur.execute("UPDATE t SET v = %s, n = %s WHERE id = %s", (f"u{n}", n, key))
                        op = "update"
                    elif roll < 0.65:
                        new = self._free_key()
                        cur.execute("UPDATE t SET id = %s, n = %s WHERE id = %s", (new, n, key))
                        self.keys.remove(key)
                        self.keys.add(new)
                        op = "key change"
                    elif roll < 0.8:
                        cur.execute("DELETE FROM t WHERE id = %s", (key,))
                        self.keys.remove(key)
                        op = "delete"
                    else:
                        new = self._free_key()
                        cur.execute("INSERT INTO t VALUES (%s, %s, %s)", (new, f"i{n}", n))
                        self.keys.add(new)
                        op = "insert"
                    self.counts[op] += 1
                    time.sleep(0.003)  # a steady stream the job can keep up with on two busy cores
        except BaseException as e:  # reported by the test
            self.error = e
        finally:
            conn.close()


def _argv(mariadb: LocalMariaDB, warehouse: str, database: str) -> list[str]:
    conf = mariadb.mysql_conf(
        **{"database-name": database, "table-name": "t", "scan.incremental.snapshot.chunk.size": str(CHUNK)}
    )
    argv = [sys.executable, "-m", "ingest", "mysql_sync_table", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--table", "t", "--spark-conf", "spark.master=local[2,4]", "--trigger-interval", "1s"]
    argv += ["--max-offsets-per-trigger", str(2 * CHUNK)]
    for k, v in conf.items():
        if k != "password":
            argv += ["--mysql_conf", f"{k}={v}"]
    return argv


def _assert_changelog_replays(warehouse: str) -> int:
    """Replaying the changelog from empty gives the table; every retraction retracts exactly the
    row its key holds; each key's ``n`` only grows. Returns the rows checked."""
    state: dict[int, tuple[Any, ...]] = {}
    last_n: dict[int, int] = {}
    rows = read_changelog_pypaimon(warehouse, "ods.t", ("id", "v", "n"))
    for kind, key, *values in rows:
        if kind in ("-U", "-D"):
            assert state.get(key) == tuple(values), f"{kind} of {key} {values} but the key holds {state.get(key)}"
            del state[key]
        else:
            assert key not in state, f"{kind} of {key} {values} while it holds {state[key]}"
            assert values[1] > last_n.get(key, -1) or values[1] == 0, f"{key}: n {values[1]} after {last_n[key]}"
            state[key], last_n[key] = tuple(values), values[1]
    assert state == {r["id"]: (r["v"], r["n"]) for r in read_rust(warehouse, "ods.t")}
    return len(rows)


@pytest.mark.timeout(900 + 300 * KILLS + ROWS // 100)
def test_mysql_job_killed_at_random_moments_over_snapshot_and_binlog_ends_exact(
    mariadb: LocalMariaDB, tmp_path: Path
) -> None:
    started = time.monotonic()
    rng, seed = seeded_rng("mysql")
    database = f"chaos{os.getpid()}_{seed}"
    mariadb.execute(
        f"CREATE DATABASE {database}", f"CREATE TABLE {database}.t (id INT PRIMARY KEY, v VARCHAR(32), n INT)"
    )
    conn = mariadb.connect(database)
    with conn.cursor() as cur:
        for start in range(0, ROWS, 5000):
            cur.executemany(
                "INSERT INTO t VALUES (%s, %s, 0)", [(i, f"v{i}") for i in range(start, min(ROWS, start + 5000))]
            )
    conn.close()
    warehouse = str(tmp_path / "warehouse")
    table = Path(warehouse) / "ods.db" / "t"
    logs = tmp_path / "logs"
    logs.mkdir()
    loop = KillLoop(
        _argv(mariadb, warehouse, database), logs, lambda: len(list((table / "snapshot").glob("snapshot-*")))
    )
    loop.env["LAKECDC_MYSQL_PASSWORD"] = ROOT_PASSWORD
    writer = Writer(mariadb, database, random.Random(rng.random()))
    writer.start()
    try:
        for i in range(KILLS):
            loop.kill_once(rng, (0.0, 20.0), last=i == KILLS - 1)
    finally:
        writer.stop.set()
        writer.join()
    assert writer.error is None, writer.error
    done = loop.finish("--available-now", "true")
    assert loop.progress_at_kill[-1] > 0, "no kill came after a commit"
    orphans = remove_orphans(warehouse, "ods")
    conn = mariadb.connect(database)
    with conn.cursor() as cur:
        cur.execute("SELECT id, v, n FROM t ORDER BY id")
        source = [dict(zip(("id", "v", "n"), r, strict=True)) for r in cur.fetchall()]
    conn.close()
    assert read_rust(warehouse, "ods.t") == source
    assert read_pypaimon(warehouse, "ods.t") == source
    checked = _assert_changelog_replays(warehouse)
    snapshots = assert_no_commit_twice(table)
    files = assert_every_file_referenced(warehouse, "ods.t")
    print(
        f"chaos mysql: {loop.kills} SIGKILLs survived ({loop.flakes} load-flake restarts) over a {ROWS:,}-row "
        f"snapshot (chunks of {CHUNK:,}) and the binlog, writer changes {writer.counts}, {len(source):,} rows "
        f"equal, {checked:,} changelog rows replayed, {snapshots} snapshots (at each kill {loop.progress_at_kill}), "
        f"{files} files; remove-orphan-files: {orphans}; last run: {done.stdout.strip().splitlines()[-1:]}; "
        f"{time.monotonic() - started:.0f} s"
    )
