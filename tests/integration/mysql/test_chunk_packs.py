"""Small tables' snapshot chunks read several to a task on one connection (``ingest.mysql.chunk_packs``),
end to end against MariaDB: under concurrent writes to every table, and with the packs' connections
killed mid-read, every table ends equal to the source (both readers) and its changelog replays."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from ingest.mysql.chunk_packs import ChunkPack, chunk_partitions
from ingest.mysql.client import MySqlConnection
from ingest.mysql.snapshot import read_pack
from ingest.mysql.spec import MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from tests.integration.mysql.conftest import connection_killer, run_beside
from tests.paimon_read import assert_changelog_replays, read_pypaimon, read_rust

TABLES = 30
BIG_ROWS = 20_000


@pytest.fixture
def small_tables(mariadb: LocalMariaDB) -> str:
    name = f"packs{random.randrange(1 << 30)}"
    mariadb.execute(f"CREATE DATABASE {name}")
    conn = mariadb.connect(name)
    with conn.cursor() as cur:
        for t in range(TABLES):
            cur.execute(f"CREATE TABLE t{t:02d} (id INT PRIMARY KEY, v TEXT, n INT)")
            rows = 40 + 20 * (t % 3)
            cur.executemany(f"INSERT INTO t{t:02d} VALUES (%s, %s, 0)", [(i, f"v{i}") for i in range(rows)])
    conn.commit()
    conn.close()
    return name


def _settings(mariadb: LocalMariaDB, warehouse: str, database: str, **conf: str) -> SyncSettings:
    mysql_conf = mariadb.mysql_conf(**{"database-name": database, **conf})
    return SyncSettings(
        action="mysql-sync-database",
        warehouse=warehouse,
        database="ods",
        mysql_conf=mysql_conf,
        available_now=True,
    )


def _assert_equal(mariadb: LocalMariaDB, database: str, warehouse: str) -> None:
    conn = mariadb.connect(database)
    try:
        with conn.cursor() as cur:
            for t in range(TABLES):
                cur.execute(f"SELECT id, v, n FROM t{t:02d} ORDER BY id")
                expected = [{"id": i, "v": v, "n": n} for i, v, n in cur.fetchall()]
                rows = read_rust(warehouse, f"ods.t{t:02d}")
                assert rows == expected, f"t{t:02d}"
                assert read_pypaimon(warehouse, f"ods.t{t:02d}") == expected
                assert_changelog_replays(warehouse, f"ods.t{t:02d}", ("id", "v", "n"))
    finally:
        conn.close()


def test_small_tables_packed_under_concurrent_writes_end_equal_to_the_source(
    mariadb: LocalMariaDB, small_tables: str, warehouse: str
) -> None:
    writes = [0]

    def writer(stop: threading.Event) -> None:
        rng = random.Random(7)
        c = mariadb.connect(small_tables)
        c.autocommit(True)
        with c.cursor() as cur:
            while not stop.is_set():
                table, key = f"t{rng.randrange(TABLES):02d}", rng.randrange(90)
                choice = rng.random()
                if choice < 0.5:
                    cur.execute(f"UPDATE {table} SET n = n + 1, v = %s WHERE id = %s", (f"u{writes[0]}", key))
                elif choice < 0.7:
                    cur.execute(f"DELETE FROM {table} WHERE id = %s", (key,))
                elif choice < 0.8:  # a key-changing update inside one table
                    cur.execute(f"UPDATE IGNORE {table} SET id = id + 90 WHERE id = %s", (key,))
                else:
                    cur.execute(f"INSERT IGNORE INTO {table} VALUES (%s, %s, 0)", (key, f"i{writes[0]}"))
                writes[0] += 1
        c.close()

    run_beside(writer, _settings(mariadb, warehouse, small_tables))
    assert writes[0] > 50
    run(_settings(mariadb, warehouse, small_tables))  # the binlog up to now
    _assert_equal(mariadb, small_tables, warehouse)


def test_a_packs_connection_killed_between_or_during_its_chunks_is_replaced(
    mariadb: LocalMariaDB, small_tables: str, warehouse: str
) -> None:
    """Every connection reading a snapshot chunk (its SELECT, its watermark queries) is killed, a
    few times: the pack's chunk on it is read again on a new connection, and the chunks after it
    use that one."""
    killed: list[int] = []
    # Ten-row chunks are read in milliseconds: the killer's polls missed all of them once in CI under
    # load. The last table of each half (each of the two packs) gets rows enough (~20 MB) that its
    # SELECT runs while the client takes them in, still a small chunk (under the chunk size) packed
    # with the others.
    conn = mariadb.connect(small_tables)
    with conn.cursor() as cur:
        for t in (TABLES // 2 - 1, TABLES - 1):
            rows = [(i, "x" * 1000) for i in range(100, 100 + BIG_ROWS)]
            cur.executemany(f"INSERT INTO t{t:02d} VALUES (%s, %s, 0)", rows)
    conn.commit()
    conn.close()
    # a pack's connection (seen reading a chunk: the planner runs SHOW MASTER STATUS too) killed during a
    # chunk's SELECT or between its chunks
    chunk = f"SELECT `id`, `v`, `n` FROM `{small_tables}`."
    kill = connection_killer(mariadb, [chunk, "SHOW MASTER STATUS", "START TRANSACTION"], 6, killed, chunk)
    size = {"scan.incremental.snapshot.chunk.size": str(4 * BIG_ROWS)}
    run_beside(kill, _settings(mariadb, warehouse, small_tables, **size))
    assert killed, "no chunk's statement was caught running"
    _assert_equal(mariadb, small_tables, warehouse)


def test_a_pack_reads_its_chunks_on_one_connection_and_replaces_it_when_it_is_killed(
    mariadb: LocalMariaDB, small_tables: str, tmp_path: Path
) -> None:
    """Directly: the chunks after a killed connection are read on a new one (with the dead one kept,
    each would fail until connect.timeout and the task with them)."""
    spec = MySqlSourceSpec(
        MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, 5),
        small_tables, "t.*", "initial", ParseSpec("mysql", TableRouter("ods")), str(tmp_path),
    )  # fmt: skip
    pack = ChunkPack(
        tuple(chunk_partitions([[small_tables, f"t{t:02d}", None, None] for t in range(4)], 0, False, None))
    )
    seen: list[int] = []
    admin = mariadb.connect()
    try:
        with admin.cursor() as cur:

            def readers() -> set[int]:
                cur.execute(
                    "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND USER = 'root' "
                    "AND COMMAND = 'Sleep' AND DB IS NULL"
                )
                return {int(r[0]) for r in cur.fetchall()}

            before = readers()
            killed = False
            for _batch in read_pack(spec, pack):
                now = readers() - before
                seen.extend(sorted(now - set(seen)))
                if not killed:  # after the first chunk's first batch: kill the pack's connection
                    cur.execute(f"KILL CONNECTION {seen[0]}")
                    killed = True
    finally:
        admin.close()
    # one connection for the first chunk, one more after the kill for all the others
    assert len(seen) == 2
