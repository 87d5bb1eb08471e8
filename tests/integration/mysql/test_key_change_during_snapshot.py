"""#23 item 1: primary-key-changing UPDATEs while a MySQL snapshot runs. A key moved from a chunk
already read to one read later (and back) must end as in the source: no ghost row under the old key,
no missing row under the new one, and the changelog holds each move once (a delete of the old key,
an insert of the new one), never twice.

The interleaving is made deterministic enough by the snapshot registry the job keeps beside its
checkpoint: a chunk named there is read and committed, so the writer moves keys out of such chunks
into the last chunk (read in the last snapshot micro-batch) and keys of chunks not named there yet
into the first chunk (read in the first one); it counts the moves made while that held."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from tests.integration.mysql.conftest import chunked_snapshot_settings
from tests.paimon_read import assert_changelog_replays, read_pypaimon, read_rust

ROWS, CHUNK, MOVE = 20_000, 500, 100_000


def _settings(mariadb: LocalMariaDB, warehouse: str, checkpoint: Path) -> SyncSettings:
    return chunked_snapshot_settings(mariadb, warehouse, checkpoint, "keymove", CHUNK)


def _read_chunks(registry: Path) -> list[tuple[int | None, int | None]]:
    try:
        entries = json.loads(registry.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return []
    return [(e["lo"], e["hi"]) for e in entries.values()]


def _within(key: int, chunks: list[tuple[int | None, int | None]]) -> bool:
    return any((lo is None or key >= lo) and (hi is None or key < hi) for lo, hi in chunks)


class _Mover(threading.Thread):
    """Moves keys between chunks while the snapshot runs: up out of read chunks (id + MOVE, into the
    last chunk) and down out of unread ones (-id, into the first chunk)."""

    def __init__(self, mariadb: LocalMariaDB, registry: Path) -> None:
        super().__init__()
        self.mariadb, self.registry = mariadb, registry
        self.stop = threading.Event()
        self.up = self.down = 0  # moves made while the source chunk was read and the target was not
        self.moves = 0

    def run(self) -> None:
        c = self.mariadb.connect("keymove")
        up, down = 1, ROWS
        with c.cursor() as cur:
            while not self.stop.is_set():
                read = _read_chunks(self.registry)
                if not read:
                    time.sleep(0.01)
                    continue
                if len(read) * CHUNK >= ROWS:
                    break  # every chunk read
                last_unread = not _within(MOVE + 1, read)
                if _within(up, read) and up < ROWS // 2:
                    cur.execute("UPDATE t SET id = id + %s, v = 'up' WHERE id = %s", (MOVE, up))
                    self.up += last_unread
                    up += 1
                    self.moves += 1
                if not _within(down, read) and down > ROWS // 2:
                    cur.execute("UPDATE t SET id = -id, v = 'down' WHERE id = %s", (down,))
                    self.down += _within(-down, read)
                    down -= 1
                    self.moves += 1
                if up % 50 == 0:
                    # A moved row moved again: its value changes under its new key.
                    cur.execute("UPDATE t SET n = n + 1 WHERE id = %s", (up - 1 + MOVE,))
        c.close()


def _source(mariadb: LocalMariaDB) -> list[tuple[Any, ...]]:
    c = mariadb.connect("keymove")
    with c.cursor() as cur:
        cur.execute("SELECT id, v, n FROM t ORDER BY id")
        rows = [tuple(r) for r in cur.fetchall()]
    c.close()
    return rows


def test_key_changes_during_the_snapshot_leave_no_ghost_rows(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path
) -> None:
    mariadb.execute("CREATE DATABASE keymove", "CREATE TABLE keymove.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
    c = mariadb.connect("keymove")
    with c.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, 0)", [(i, f"v{i}") for i in range(1, ROWS + 1)])
    c.close()
    checkpoint = tmp_path / "checkpoint"
    mover = _Mover(mariadb, checkpoint / "lakecdc-mysql-snapshot.json")
    mover.start()
    try:
        run(_settings(mariadb, warehouse, checkpoint))
    finally:
        mover.stop.set()
        mover.join()
    # Both kinds of crossing happened, many times over.
    assert mover.up >= 20 and mover.down >= 20, (mover.up, mover.down, mover.moves)
    # the catch-up run: the binlog up to now, in micro-batches of the default size (the small bound
    # above would cut it into batches of 1,000 binlog events)
    run(_settings(mariadb, warehouse, checkpoint).model_copy(update={"max_offsets_per_trigger": 500_000}))

    expected = _source(mariadb)
    assert len(expected) == ROWS
    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    got = [(r["id"], r["v"], r["n"]) for r in rows]
    assert len(got) == len(expected), f"{len(got) - len(expected)} rows too many (ghosts) or missing"
    assert got == expected

    # The changelog replays to the table, each change exactly once: +I only of an absent key, a
    # retraction only of the row the key holds.
    state = assert_changelog_replays(warehouse, "ods.t", ("id", "v", "n"))
    assert sorted((k, *v) for k, v in state.items()) == expected
