"""#27: snapshot chunks are bounded by bytes as well as rows. A chunk is held whole by its read task
until its high watermark, so a wide table's chunk of ``chunk.size`` rows would take gigabytes: the
split uses fewer rows per chunk where the server's average stored row length says they are wide."""

from __future__ import annotations

import itertools

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.mysql import key_chunks
from ingest.mysql.key_chunks import plan_chunks

ROWS = 3000


def _count(mariadb: LocalMariaDB, table: str, lo: int | None, hi: int | None) -> int:
    conn = mariadb.connect("wide")
    try:
        with conn.cursor() as cur:
            cur.execute(
                f"SELECT COUNT(*) FROM {table} WHERE (%s IS NULL OR id >= %s) AND (%s IS NULL OR id < %s)",
                (lo, lo, hi, hi),
            )
            return int(cur.fetchone()[0])
    finally:
        conn.close()


def test_wide_rows_are_split_into_chunks_of_bounded_bytes(
    mariadb: LocalMariaDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    mariadb.execute("CREATE DATABASE IF NOT EXISTS wide", database=None)
    mariadb.execute(
        "CREATE TABLE wide.narrow (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE wide.broad (id INT PRIMARY KEY, payload VARCHAR(4000)) CHARACTER SET latin1",
    )
    conn = mariadb.connect("wide")
    try:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO narrow VALUES (%s, %s)", [(i, i) for i in range(1, ROWS + 1)])
            cur.executemany("INSERT INTO broad VALUES (%s, %s)", [(i, "x" * 3000) for i in range(1, ROWS + 1)])
            cur.execute("ANALYZE TABLE narrow, broad")  # the estimate a long-lived table has
            cur.fetchall()
        monkeypatch.setattr(key_chunks, "CHUNK_MAX_BYTES", 1 << 20)  # 1 MiB: ~300 rows of 3 KB
        narrow = plan_chunks(conn, "wide", "narrow", ["id"], ["int(11)"], 32768)
        broad = plan_chunks(conn, "wide", "broad", ["id"], ["int(11)"], 32768)
    finally:
        conn.close()
    assert narrow == [(None, None)]  # 3,000 narrow rows: one chunk, as chunk.size says
    assert len(broad) >= 8, broad  # ~9 MB of rows in chunks of ~1 MiB
    counts = [_count(mariadb, "broad", lo, hi) for lo, hi in broad]
    assert sum(counts) == ROWS  # contiguous ranges, open at both ends: every row in exactly one chunk
    assert max(counts) <= 2 * (1 << 20) // 3000, counts
    assert broad[0][0] is None and broad[-1][1] is None
    assert all(a[1] == b[0] for a, b in itertools.pairwise(broad))


def test_many_narrow_columns_are_split_into_chunks_of_bounded_values(
    mariadb: LocalMariaDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of many small columns are short as the server stores them but each value is a Python
    object in the read task: the split bounds rows x columns too."""
    columns = ", ".join(f"c{i} INT" for i in range(200))
    mariadb.execute("CREATE DATABASE IF NOT EXISTS wide", database=None)
    mariadb.execute(f"CREATE TABLE wide.many (id INT PRIMARY KEY, {columns})")
    conn = mariadb.connect("wide")
    try:
        with conn.cursor() as cur:
            values = ", ".join(["%s"] * 201)
            cur.executemany(f"INSERT INTO many VALUES ({values})", [(i, *range(200)) for i in range(1, ROWS + 1)])
            cur.execute("ANALYZE TABLE many")
            cur.fetchall()
        monkeypatch.setattr(key_chunks, "CHUNK_MAX_VALUES", 201 * 300)  # 300 rows of 201 values
        many = plan_chunks(conn, "wide", "many", ["id"], ["int(11)"], 32768, columns=201)
        unknown = plan_chunks(conn, "wide", "many", ["id"], ["int(11)"], 32768)  # columns not given
        monkeypatch.setattr(key_chunks, "CHUNK_MAX_VALUES", 1 << 40)
        unbounded = plan_chunks(conn, "wide", "many", ["id"], ["int(11)"], 32768, columns=201)
    finally:
        conn.close()
    assert unbounded == unknown == [(None, None)]  # ~2.4 MB stored: far below the byte bound
    assert len(many) == ROWS // 300, many
    counts = [_count(mariadb, "many", lo, hi) for lo, hi in many]
    assert sum(counts) == ROWS and max(counts) <= 300, counts
