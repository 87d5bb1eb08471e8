"""#27: a table with a composite primary key is snapshotted in chunks split on its first key column (Flink
CDC's chunk key column), not held whole as one chunk; while writers change rows of chunks read and
unread, every binlog change is applied exactly once: the one its chunk already holds is dropped (both
when the chunk back-fills and at the hand-off to the binlog phase, each by the first key column)."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from tests.integration.mysql.conftest import chunked_snapshot_settings
from tests.paimon_read import assert_changelog_replays, read_pypaimon, read_rust

TENANTS, PER_TENANT, CHUNK = 400, 5, 200


def _settings(mariadb: LocalMariaDB, warehouse: str, checkpoint: Path) -> SyncSettings:
    return chunked_snapshot_settings(mariadb, warehouse, checkpoint, "composite", CHUNK)


def _source(mariadb: LocalMariaDB) -> list[tuple[Any, ...]]:
    c = mariadb.connect("composite")
    with c.cursor() as cur:
        cur.execute("SELECT tenant, id, v, n FROM t ORDER BY tenant, id")
        rows = [tuple(r) for r in cur.fetchall()]
    c.close()
    return rows


def test_a_composite_key_table_is_chunked_and_changes_during_its_snapshot_arrive_once(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path
) -> None:
    mariadb.execute(
        "CREATE DATABASE composite",
        "CREATE TABLE composite.t (tenant INT, id VARCHAR(10), v VARCHAR(20), n INT, PRIMARY KEY (tenant, id))",
    )
    c = mariadb.connect("composite")
    with c.cursor() as cur:
        cur.executemany(
            "INSERT INTO t VALUES (%s, %s, %s, 0)",
            [(t, f"k{i}", f"v{t}.{i}") for t in range(1, TENANTS + 1) for i in range(PER_TENANT)],
        )
    c.close()
    stop = threading.Event()
    changes = [0]

    def writer() -> None:
        rng = random.Random(5)
        conn = mariadb.connect("composite")
        with conn.cursor() as cur:
            while not stop.is_set():
                tenant = rng.randrange(1, TENANTS + 1)
                if rng.random() < 0.1:
                    cur.execute(
                        "DELETE FROM t WHERE tenant = %s AND id = %s", (tenant, f"k{rng.randrange(PER_TENANT)}")
                    )
                elif rng.random() < 0.2:
                    cur.execute("INSERT IGNORE INTO t VALUES (%s, %s, 'new', 0)", (tenant, f"x{rng.randrange(50)}"))
                else:
                    cur.execute("UPDATE t SET n = n + 1 WHERE tenant = %s", (tenant,))  # a multi-row change
                changes[0] += 1
                time.sleep(0.005)  # a steady stream the catch-up run reads in seconds, not minutes
        conn.close()

    checkpoint = tmp_path / "checkpoint"
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        run(_settings(mariadb, warehouse, checkpoint))
    finally:
        stop.set()
        thread.join()
    assert changes[0] >= 100, changes
    # the catch-up run: the binlog up to now, in micro-batches of the default size (the small bound
    # above would cut it into batches of 1,000 binlog events)
    run(_settings(mariadb, warehouse, checkpoint).model_copy(update={"max_offsets_per_trigger": 500_000}))

    registry = json.loads((checkpoint / "lakecdc-mysql-snapshot.json").read_text())
    ranges = sorted((e["lo"] is not None, e["lo"] or 0) for e in registry.values())
    assert len(ranges) >= 8, registry  # ~2,000 rows in chunks of ~200, split on tenant

    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    assert sorted((r["tenant"], r["id"], r["v"], r["n"]) for r in rows) == _source(mariadb)
    # The changelog replays to the table: +I only of an absent key, a retraction only of the row it holds.
    assert_changelog_replays(warehouse, "ods.t", ("tenant", "id", "v", "n"), keys=2)
