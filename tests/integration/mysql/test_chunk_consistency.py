"""#23: a snapshot chunk holds exactly the table's rows as of its high watermark, while writers commit
as fast as the server takes them.

A transaction reaches the binlog before its storage-engine commit makes it visible. A low watermark
read with SHOW MASTER STATUS just before the chunk's SELECT could so include a change the SELECT did
not see; the back-fill starts after the low watermark and never applied it, and the binlog phase
skipped it as already in the chunk: an update lost, exit code 0 (the CI run of 77facb7 found one
as a changelog -U whose before-image the key did not hold). With ``sync_binlog=1`` (an fsync between
the binlog write and the engine commit) the old way lost a change in 3-10% of chunk reads here (13 of 124 in one run).

Each read is checked against the binlog itself: for every key changed up to the chunk's HW, the
chunk holds the after-image of its last change at or before the HW."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.mysql.binlog_stream import binlog_rows
from ingest.mysql.client import MySqlConnection, master_status
from ingest.mysql.snapshot import _read_chunk_rows
from ingest.mysql.spec import Chunk, ChunkPartition, MySqlSourceSpec, binlog_offset
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter

KEYS, WRITERS, READS, MAX_SECONDS = 20, 12, 80, 20.0


@pytest.fixture(scope="module")
def synced_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    """A MariaDB that fsyncs its binlog at every commit: the window between a transaction's binlog
    write and its engine commit is then wide enough to be hit."""
    server = LocalMariaDB(str(tmp_path_factory.mktemp("synced")), extra_args=["--sync-binlog=1"])
    try:
        yield server
    finally:
        server.close()


def test_chunks_read_under_a_commit_storm_hold_every_change_up_to_their_high_watermark(
    synced_server: LocalMariaDB, tmp_path: Path
) -> None:
    db = synced_server
    db.execute("CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, n INT)")
    db.execute("INSERT INTO s.t VALUES " + ",".join(f"({i}, 0)" for i in range(1, KEYS + 1)))
    spec = MySqlSourceSpec(
        MySqlConnection("127.0.0.1", db.port, "root", ROOT_PASSWORD, 10),
        "s", "t", "initial", ParseSpec("mysql", TableRouter("ods")), str(tmp_path),
    )  # fmt: skip
    stop = threading.Event()

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        conn = db.connect("s")
        with conn.cursor() as cur:
            while not stop.is_set():
                cur.execute("UPDATE t SET n = n + 1 WHERE id = %s", (rng.randrange(1, KEYS + 1),))
        conn.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    reads: list[tuple[dict[int, int], int]] = []
    try:
        deadline = time.monotonic() + MAX_SECONDS
        while len(reads) < READS and time.monotonic() < deadline:
            rows, _types, high, _schema = _read_chunk_rows(spec, ChunkPartition(0, Chunk("s", "t", None, None)))
            reads.append(({key[0]: row["n"] for key, row in rows.items()}, binlog_offset(high)))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert len(reads) >= 40, f"only {len(reads)} chunk reads in {MAX_SECONDS:g} s"
    conn = db.connect()
    try:
        end = master_status(conn)
    finally:
        conn.close()
    changes = [
        (binlog_offset(position), after["id"], after["n"])
        for _op, _db, _t, _before, after, position, _ts in binlog_rows(spec, ("binlog.000001", 4), end, 77, {"s.t"})
        if after is not None
    ]
    assert len(changes) > 10 * len(reads), "the writers barely wrote: the reads were not under a commit storm"
    # One sweep over the binlog in order, the reads sorted by HW: the state of every key as of each HW.
    wrong = []
    state: dict[int, int] = {}
    pending = iter(changes)
    change = next(pending, None)
    for held, hw in sorted(reads, key=lambda r: r[1]):
        while change is not None and change[0] <= hw:
            state[change[1]] = change[2]
            change = next(pending, None)
        missed = {key: (held[key], n) for key, n in state.items() if held[key] != n}
        if missed:
            wrong.append((hw, missed))
    assert not wrong, f"{len(wrong)} of {len(reads)} chunks missed changes (HW, {{key: (held, binlog)}}): {wrong[:3]}"
