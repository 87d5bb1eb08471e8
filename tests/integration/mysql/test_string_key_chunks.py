"""#27: a table keyed by a string (a UUID) or by a sparse integer is snapshotted in bounded chunks split
where the server's own order puts them, and every binlog change meets the chunk that holds its key in
the column's collation: Python's order where ``collation_order`` proves it the server's, else the
server's answer."""

from __future__ import annotations

import itertools
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.mysql.key_chunks import TextRange, plan_chunks
from schema_evolution.collation_order import local_order
from tests.integration.mysql.conftest import assert_table_equals_source, snapshot_under_writes, writes_on

COLLATIONS = (
    "utf8mb4_general_ci",
    "utf8mb4_general_nopad_ci",
    "utf8mb4_bin",
    "utf8mb4_nopad_bin",
    "utf8mb4_unicode_ci",
    "utf8mb4_unicode_520_ci",
    "utf8mb4_uca1400_ai_ci",
    "utf8mb3_general_ci",
    "latin1_swedish_ci",
    "ascii_bin",
    "utf8mb4_danish_ci",  # contractions: never proven, always the server's answer
)
# proven characters, case variants, and some that are not (punctuation, spaces, accents, a tab)
ALPHABET = "0123456789abcdefABCDEF-_xyzXYZ" + " .~[]`{}" + "éÉßåÅæøÆ" + "\t"


def _strings(rng: random.Random, n: int, ascii_only: bool) -> list[str]:
    alphabet = ALPHABET if not ascii_only else "".join(ch for ch in ALPHABET if ch.isascii())
    out = []
    for _ in range(n):
        if rng.random() < 0.5:  # mostly proven-alphabet values: UUID-like ids and their prefixes
            out.append(str(uuid.UUID(int=rng.getrandbits(128)))[: rng.randrange(1, 37)])
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 8))))
    return out


@pytest.mark.parametrize("collation", COLLATIONS)
def test_keys_are_placed_in_the_collations_order(mariadb: LocalMariaDB, collation: str) -> None:
    charset = collation.split("_")[0]
    database = f"coll_{collation}"
    mariadb.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (v VARCHAR(40) CHARACTER SET {charset} COLLATE {collation} PRIMARY KEY)",
    )
    rng = random.Random(collation)
    c = mariadb.connect(database)
    try:
        with c.cursor() as cur:
            cur.executemany("INSERT IGNORE INTO t VALUES (%s)", [(s,) for s in _strings(rng, 600, charset == "ascii")])
            cur.execute("SELECT v FROM t ORDER BY v")
            ordered = [r[0] for r in cur.fetchall()]
        assert len(ordered) > 300
        # Where Python's order is claimed, it is the server's (strictly: server-equal values cannot both
        # be keys of the table).
        proven = [local_order(collation, v) for v in ordered]
        claimed = [p for p in proven if p is not None]
        assert claimed == sorted(claimed) and len(set(claimed)) == len(claimed), collation
        if collation != "utf8mb4_danish_ci":
            assert len(claimed) > len(ordered) // 3, collation  # the UUID-like values at least
        # TextRange, which asks the server for the rest, agrees with the server's order on every pair.
        in_order = TextRange(c, database, "t", "v")
        rank = {v: i for i, v in enumerate(ordered)}
        for a, b in (rng.sample(ordered, 2) for _ in range(300)):
            want = (rank[a] > rank[b]) - (rank[a] < rank[b])
            assert in_order.compare(a, b) == want, (collation, a, b)
        lo, hi = sorted(rng.sample(ordered, 2), key=rank.__getitem__)
        assert [v for v in ordered if in_order(v, lo, hi)] == ordered[rank[lo] : rank[hi]]
    finally:
        c.close()


def _count(c: Any, database: str, lo: Any, hi: Any) -> int:
    where = ["1"] + (["id >= %s"] if lo is not None else []) + (["id < %s"] if hi is not None else [])
    args = [b for b in (lo, hi) if b is not None]
    with c.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM {database}.t WHERE {' AND '.join(where)}", args)
        return int(cur.fetchone()[0])


def test_a_sparse_integer_key_is_split_by_the_servers_order_into_bounded_chunks(mariadb: LocalMariaDB) -> None:
    mariadb.execute("CREATE DATABASE sparse", "CREATE TABLE sparse.t (id BIGINT PRIMARY KEY, v INT)")
    c = mariadb.connect("sparse")
    try:
        with c.cursor() as cur:  # 2,000 dense keys and a few far away: key arithmetic puts all in one chunk
            cur.executemany("INSERT INTO t VALUES (%s, 0)", [(i,) for i in range(1, 2001)])
            cur.executemany("INSERT INTO t VALUES (%s, 0)", [(10**15 + i,) for i in range(3)])
        chunks = plan_chunks(c, "sparse", "t", ["id"], ["bigint(20)"], 300)
        counts = [_count(c, "sparse", lo, hi) for lo, hi in chunks]
        assert sum(counts) == 2003 and max(counts) <= 300 and len(chunks) >= 7, (chunks, counts)
        assert chunks[0][0] is None and chunks[-1][1] is None
        assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
    finally:
        c.close()


ROWS, CHUNK = 1200, 150


def test_a_uuid_keyed_table_is_chunked_and_changes_during_its_snapshot_arrive_once(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path
) -> None:
    mariadb.execute(
        "CREATE DATABASE uuidkey DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
        "CREATE TABLE uuidkey.t (id VARCHAR(36) PRIMARY KEY, v VARCHAR(20), n INT)",
    )
    rng = random.Random(27)
    keys = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(ROWS)]
    # a few keys whose order only the server knows (accents under a case-insensitive collation)
    keys += [f"é{i}-Zß" for i in range(20)]
    c = mariadb.connect("uuidkey")
    with c.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, 0)", [(k, k[:8]) for k in keys])
    c.close()
    changes = [0]

    def new_key(w: random.Random) -> str:  # upper case now and then: the same order, case folded
        key = str(uuid.UUID(int=w.getrandbits(128)))
        return key.upper() if w.random() < 0.5 else key

    writer = writes_on(mariadb, "uuidkey", keys, new_key, changes)
    bounds = snapshot_under_writes(mariadb, warehouse, tmp_path / "checkpoint", "uuidkey", CHUNK, writer)
    assert changes[0] >= 100, changes
    assert len(bounds) >= 8 and all(isinstance(b, str) for b in bounds), bounds
    assert_table_equals_source(mariadb, "uuidkey", warehouse, str)
