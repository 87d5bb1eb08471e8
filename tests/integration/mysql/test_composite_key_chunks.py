"""#27: a table with a composite primary key is snapshotted in chunks split on the whole key, not held
whole as one chunk, even where its first column is skewed (one value holds most rows): no chunk holds
more than a chunk's rows; each chunk's SQL is an index range; every key, as the binlog decoder gives
it, is placed among the tuple bounds as the server places it; and while writers change rows of chunks
read and unread (multi-row updates, key changes within one first-column value), every binlog change
is applied exactly once: the one its chunk already holds is dropped (both when the chunk back-fills and
at the hand-off to the binlog phase)."""

from __future__ import annotations

import itertools
import json
import random
import string
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import run
from ingest.mysql.binlog_stream import binlog_rows
from ingest.mysql.client import MySqlConnection, connect, master_status, quote
from ingest.mysql.key_bounds import binlog_key
from ingest.mysql.key_chunks import key_range_test, offset_chunks, plan_chunks
from ingest.mysql.key_tuples import range_sql
from ingest.mysql.source import MySqlStreamReader
from ingest.mysql.spec import Chunk, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from tests.integration.mysql.conftest import (
    assert_table_equals_source,
    chunked_snapshot_settings,
    snapshot_under_writes,
    writes_on,
)
from tests.paimon_read import assert_changelog_replays, read_pypaimon, read_rust

ROWS, CHUNK = 1000, 90


def _word(rng: random.Random) -> str:
    # mixed case and accents under a case-insensitive Unicode collation: Python cannot prove that order,
    # so the server is asked; 'a' and 'A' are one value for the key, as for the server
    return "".join(rng.choice("aAbBzZéÉ-" + string.digits) for _ in range(rng.randrange(1, 6)))


# (first column, its skewed values; second column, its values)
KINDS: dict[str, tuple[str, Callable[[random.Random], Any], str, Callable[[random.Random], Any]]] = {
    "int_varchar": ("INT", lambda r: 1 if r.random() < 0.8 else r.randrange(2, 6), "VARCHAR(36)", _word),
    "varchar_binary": (
        "VARCHAR(8) COLLATE utf8mb4_unicode_ci",
        lambda r: "Tenant" if r.random() < 0.8 else _word(r),
        "BINARY(4)",  # (the binlog drops a value's trailing 0x00 bytes)
        lambda r: r.randbytes(4)[: r.randrange(2, 5)],  # (shorter ones padded with 0x00 by the column)
    ),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_skewed_composite_key_splits_into_bounded_chunks_that_place_binlog_keys_as_the_server(
    mariadb: LocalMariaDB, tmp_path: Path, kind: str
) -> None:
    first_type, first, second_type, second = KINDS[kind]
    database = f"composite_{kind}"
    mariadb.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (a {first_type} NOT NULL, b {second_type} NOT NULL, v INT, PRIMARY KEY (a, b))",
    )
    rng = random.Random(kind)
    spec = MySqlSourceSpec(
        MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, 10),
        database,
        "t",
        "initial",
        ParseSpec("mysql", TableRouter("ods")),
        str(tmp_path),
    )
    types = [first_type.split()[0].lower(), second_type.lower()]
    with connect(spec.connection) as c:
        start = master_status(c)
        with c.cursor() as cur:
            rows = [(first(rng), second(rng), i) for i in range(ROWS)]
            cur.executemany(f"INSERT IGNORE INTO {database}.t VALUES (%s, %s, %s)", rows)
        c.commit()
        end = master_status(c)
        with c.cursor() as cur:
            cur.execute(f"SELECT v, a, b FROM {database}.t ORDER BY a, b")
            ordered = cur.fetchall()
            cur.execute(f"SELECT COUNT(*) FROM {database}.t GROUP BY a ORDER BY COUNT(*) DESC LIMIT 1")
            assert cur.fetchone()[0] > 4 * CHUNK  # one first-column value holds several chunks' rows
        decoded = {  # each row's key as the binlog decoder gives it
            after["v"]: (after["a"], after["b"])
            for _op, _db, _t, _b, after, _p, _ts in binlog_rows(spec, start, end, 93, {f"{database}.t"})
            if after is not None
        }
        assert set(decoded) == {v for v, _a, _b in ordered}

        chunks = plan_chunks(c, database, "t", ["a", "b"], types, CHUNK)
        travelled = json.loads(json.dumps(offset_chunks(c, database, "t", ["a", "b"], types, CHUNK)))
        assert [(ch.lo, ch.hi) for ch in (Chunk(database, "t", lo, hi) for lo, hi in travelled)] == chunks
        assert len(chunks) >= len(ordered) // CHUNK and chunks[0][0] is None and chunks[-1][1] is None
        assert all(isinstance(lo, tuple) and len(lo) == 2 for lo, _hi in chunks[1:])
        assert all(x[1] == y[0] for x, y in itertools.pairwise(chunks))

        # Each chunk's WHERE, as the chunk's read builds it: bounded rows, every row exactly once, and
        # the server reads it as a range of the primary key (not a scan of the table).
        names = [quote("a"), quote("b")]
        seen: list[int] = []
        for lo, hi in chunks:
            condition, args = range_sql(names, lo, hi)
            with c.cursor() as cur:
                cur.execute(f"SELECT v FROM {database}.t" + (f" WHERE {condition}" if condition else ""), args)
                got = [r[0] for r in cur.fetchall()]
                assert 0 < len(got) <= CHUNK, (lo, hi, len(got))
                seen += got
                if lo is not None and hi is not None:
                    cur.execute(f"EXPLAIN SELECT v FROM {database}.t WHERE {condition}", args)
                    plan = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
                    assert (plan["type"], plan["key"]) == ("range", "PRIMARY"), plan
        assert sorted(seen) == sorted(v for v, _a, _b in ordered)

        # The in-range test on binlog keys agrees with the server: on the plan's chunks, and on ranges
        # between random keys and key prefixes.
        in_range = key_range_test(c, database, "t", ["a", "b"], chunks)
        width = 4 if kind == "varchar_binary" else 0
        picks = [(a, b) for _v, a, b in ordered]
        ranges = [*chunks, *((rng.choice(picks), rng.choice([*picks, None])) for _ in range(8))]
        ranges += [((rng.choice(picks)[0],), rng.choice(picks)) for _ in range(4)]
        for lo, hi in ranges:
            condition, args = range_sql(names, lo, hi)
            with c.cursor() as cur:
                cur.execute(f"SELECT v, {condition or '1'} FROM {database}.t", args)
                server = {v: bool(inside) for v, inside in cur.fetchall()}
            local = {v: in_range((decoded[v][0], binlog_key(decoded[v][1], width)), lo, hi) for v in server}
            wrong = {v: (decoded[v], server[v]) for v in server if local[v] != server[v]}
            assert not wrong, (kind, lo, hi, list(wrong.items())[:3])
        for v, _a, _b in ordered:  # each binlog key in exactly one chunk
            key = (decoded[v][0], binlog_key(decoded[v][1], width))
            assert sum(in_range(key, lo, hi) for lo, hi in chunks) == 1


E2E_ROWS, E2E_CHUNK = 900, 120


def test_a_table_keyed_by_a_skewed_first_column_and_an_id_arrives_once_when_written_during_its_snapshot(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path
) -> None:
    # PRIMARY KEY (v, id): nine rows in ten share v = 'a'; the writer deletes, inserts ('new'), changes
    # ids within a v value and updates (conftest.writes_on)
    mariadb.execute(
        "CREATE DATABASE compkey",
        "CREATE TABLE compkey.t (id INT NOT NULL, v VARCHAR(20) NOT NULL, n INT, PRIMARY KEY (v, id))",
    )
    rng = random.Random(2028)
    keys = rng.sample(range(1, 10**6), E2E_ROWS)
    c = mariadb.connect("compkey")
    with c.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, 0)", [(k, "a" if rng.random() < 0.9 else "b") for k in keys])
    c.close()
    changes = [0]
    bounds = snapshot_under_writes(
        mariadb,
        warehouse,
        tmp_path / "checkpoint",
        "compkey",
        E2E_CHUNK,
        writes_on(mariadb, "compkey", keys, lambda w: w.randrange(1, 10**6), changes),
    )
    assert changes[0] >= 100, changes
    assert len(bounds) >= 6 and all(set(b) == {"key"} for b in bounds), bounds
    assert sum(b["key"][0] == "a" for b in bounds) >= 5  # v = 'a' alone is split into several chunks
    assert_table_equals_source(mariadb, "compkey", warehouse, int)


TENANTS, PER_TENANT, TENANT_CHUNK = 400, 5, 200


def _settings(mariadb: LocalMariaDB, warehouse: str, checkpoint: Path) -> SyncSettings:
    return chunked_snapshot_settings(mariadb, warehouse, checkpoint, "composite", TENANT_CHUNK)


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
    lows = [e["lo"] for e in registry.values() if e["lo"] is not None]
    assert len(lows) >= 8 and all(set(lo) == {"key"} for lo in lows), registry  # ~2,000 rows, chunks of ~200

    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    assert sorted((r["tenant"], r["id"], r["v"], r["n"]) for r in rows) == _source(mariadb)
    # The changelog replays to the table: +I only of an absent key, a retraction only of the row it holds.
    assert_changelog_replays(warehouse, "ods.t", ("tenant", "id", "v", "n"), keys=2)


def test_the_whole_key_is_split_only_where_it_is_the_tables_own_primary_key(
    mariadb: LocalMariaDB, tmp_path: Path
) -> None:
    # A table without a primary key synced with --primary-keys has no index on them: each tuple bound would
    # sort the whole table, so it keeps the first-column split (scalar bounds); the keyed one is split whole.
    mariadb.execute(
        "CREATE DATABASE ownkey",
        "CREATE TABLE ownkey.keyed (a INT NOT NULL, b INT NOT NULL, PRIMARY KEY (a, b))",
        "CREATE TABLE ownkey.bare (a INT NOT NULL, b INT NOT NULL)",
    )
    c = mariadb.connect("ownkey")
    with c.cursor() as cur:
        for name in ("keyed", "bare"):
            cur.executemany(f"INSERT INTO {name} VALUES (%s, %s)", [(i % 3, i) for i in range(600)])
    c.commit()
    c.close()
    spec = MySqlSourceSpec(
        MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, 10),
        "ownkey",
        "keyed|bare",
        "initial",
        ParseSpec("mysql", TableRouter("ods"), primary_keys=("a", "b")),
        str(tmp_path),
        chunk_size=100,
    )
    chunks: dict[str, list[Any]] = {}
    for database, table, lo, _hi in MySqlStreamReader(spec, 0).initialOffset()["chunks"]:
        assert database == "ownkey"
        chunks.setdefault(table, []).append(lo)
    assert len(chunks["keyed"]) == 6 and all(set(lo) == {"key"} for lo in chunks["keyed"][1:]), chunks
    assert chunks["bare"] == [None, 1, 2], chunks  # (a in 0..2, by key arithmetic on the first column)
