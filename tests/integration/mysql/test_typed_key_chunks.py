"""#27: a table keyed by BINARY (UUID bytes), VARBINARY, DATETIME(6), TIMESTAMP(6), DECIMAL or TIME(6) is
snapshotted in bounded chunks the server's order splits, and every key as the binlog decoder gives it
(a BINARY(n) value without its trailing 0x00 bytes, TIMESTAMPs as UTC wall clock) is placed among the
bounds as the server places it."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.mysql.binlog_stream import binlog_rows
from ingest.mysql.client import MySqlConnection, connect, master_status
from ingest.mysql.key_chunks import offset_chunks, plan_chunks, range_test
from ingest.mysql.spec import Chunk, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from tests.integration.mysql.conftest import (
    assert_table_equals_source,
    snapshot_under_writes,
    writes_on,
)

ROWS, CHUNK = 1000, 90


def _uuid_bytes(rng: random.Random) -> bytes:
    raw = uuid.UUID(int=rng.getrandbits(128)).bytes
    # one in eight ends in 0x00 bytes: the binlog drops them, the column keeps all 16
    return raw[: 16 - rng.randrange(1, 4)].ljust(16, b"\x00") if rng.random() < 0.125 else raw


def _varbinary(rng: random.Random) -> bytes:
    # short values, prefixes of each other and trailing zeros: memcmp, shorter first on a tie
    value = bytes(rng.choice(b"\x00\x01\x02\x10\x7f\x80\x81\xfe\xff") for _ in range(rng.randrange(1, 8)))
    return value + b"\x00" * rng.randrange(0, 3)


def _datetime(rng: random.Random) -> dt.datetime:
    base = dt.datetime(1990, 1, 1) + dt.timedelta(seconds=rng.randrange(0, 40 * 365 * 86400))
    return base.replace(microsecond=rng.choice([0, rng.randrange(0, 1_000_000)]))


def _timestamp(rng: random.Random) -> dt.datetime:
    # (as UTC wall clock: the values are written in a UTC session)
    base = dt.datetime(1971, 1, 1) + dt.timedelta(seconds=rng.randrange(0, 60 * 365 * 86400))
    return base.replace(microsecond=rng.choice([0, rng.randrange(0, 1_000_000)]))


def _decimal(rng: random.Random) -> Decimal:
    digits = rng.randrange(0, 16)
    return Decimal(rng.randrange(-(10**digits), 10**digits)).scaleb(-rng.randrange(0, 5))


def _time(rng: random.Random) -> dt.timedelta:
    # negative times with a fraction too: mysql-replication reads -00:00:00.1 as -0.9 s
    value = dt.timedelta(seconds=rng.randrange(-3 * 3600, 3 * 3600), microseconds=rng.randrange(0, 1_000_000))
    return value if rng.random() < 0.8 else dt.timedelta(microseconds=rng.randrange(-999_999, 1_000_000))


KINDS: dict[str, tuple[str, Callable[[random.Random], Any]]] = {
    "binary16": ("BINARY(16)", _uuid_bytes),
    "varbinary": ("VARBINARY(10)", _varbinary),
    "date": ("DATE", lambda rng: dt.date(1900, 1, 1) + dt.timedelta(days=rng.randrange(0, 200 * 365))),
    "datetime6": ("DATETIME(6)", _datetime),
    "timestamp6": ("TIMESTAMP(6)", _timestamp),
    "decimal": ("DECIMAL(20,4)", _decimal),
    "time6": ("TIME(6)", _time),
}


def _connection(mariadb: LocalMariaDB) -> MySqlConnection:
    return MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, 10)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_typed_keys_split_into_bounded_chunks_that_place_binlog_keys_as_the_server(
    mariadb: LocalMariaDB, tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    column_type, make = KINDS[kind]
    database = f"typed_{kind}"
    mariadb.execute(
        f"CREATE DATABASE {database}", f"CREATE TABLE {database}.t (k {column_type} NOT NULL PRIMARY KEY, v INT)"
    )
    rng = random.Random(kind)
    spec = MySqlSourceSpec(
        _connection(mariadb), database, "t", "initial", ParseSpec("mysql", TableRouter("ods")), str(tmp_path)
    )
    with connect(spec.connection) as c:  # lakecdc's own session (UTC), as planning and chunk reads use
        start = master_status(c)
        with c.cursor() as cur:
            cur.executemany(f"INSERT IGNORE INTO {database}.t VALUES (%s, %s)", [(make(rng), i) for i in range(ROWS)])
        c.commit()
        end = master_status(c)
        with c.cursor() as cur:
            cur.execute(f"SELECT v, k FROM {database}.t ORDER BY k")
            ordered = cur.fetchall()
        assert len(ordered) > ROWS * 0.7  # (short VARBINARY values repeat)
        # the keys as the binlog decoder gives them, by row
        decoded = {
            after["v"]: after["k"]
            for _op, _db, _t, _b, after, _p, _ts in binlog_rows(spec, start, end, 91, {f"{database}.t"})
            if after is not None
        }
        assert set(decoded) == {v for v, _k in ordered}
        if kind == "binary16":  # the case the padding is for is really there
            assert any(len(decoded[v]) < 16 for v, _k in ordered)
        if kind == "time6":  # negative times with a fraction are there, and the library's repaired values agree
            assert any(k < dt.timedelta(0) and k.microseconds for k in decoded.values())
            monkeypatch.setenv("LAKECDC_BINLOG_DECODER", "mysql-replication")
            library = {a["v"]: a["k"] for *_, a, _p, _ts in binlog_rows(spec, start, end, 92, {f"{database}.t"}) if a}
            monkeypatch.delenv("LAKECDC_BINLOG_DECODER")
            assert library == decoded

        # The plan: several chunks, contiguous, each bound of the key's own type, its JSON travelling
        # back to the same values (offsets and the chunk registry are JSON).
        chunks = plan_chunks(c, database, "t", ["k"], [column_type.lower() + " NOT NULL"], CHUNK)
        travelled = json.loads(json.dumps(offset_chunks(c, database, "t", ["k"], [column_type.lower()], CHUNK)))
        assert [(ch.lo, ch.hi) for ch in (Chunk(database, "t", lo, hi) for lo, hi in travelled)] == chunks
        assert len(chunks) >= len(ordered) // CHUNK and chunks[0][0] is None and chunks[-1][1] is None
        assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
        assert all(type(b) is type(ordered[0][1]) for b, _ in chunks[1:])

        # Each chunk's WHERE, as the chunk's read runs it: bounded rows, every row exactly once.
        seen: list[int] = []
        for lo, hi in chunks:
            where = ["1"] + (["k >= %s"] if lo is not None else []) + (["k < %s"] if hi is not None else [])
            with c.cursor() as cur:
                cur.execute(
                    f"SELECT v FROM {database}.t WHERE {' AND '.join(where)}", [b for b in (lo, hi) if b is not None]
                )
                rows = [r[0] for r in cur.fetchall()]
            assert 0 < len(rows) <= CHUNK, (lo, hi, len(rows))
            seen += rows
        assert sorted(seen) == sorted(v for v, _k in ordered)

        # The in-range test on binlog keys agrees with the server's own comparison: on the plan's
        # chunks, and on ranges between random keys (keys with trailing zeros among the bounds).
        ranges = list(chunks)
        picks = [k for _v, k in ordered]
        lows = [k for k in picks if isinstance(k, bytes) and k.endswith(b"\x00")][:10]
        lows += rng.sample(picks, 10)
        ranges += [(lo, hi) for lo in lows for hi in [rng.choice(picks), None]]
        in_range = range_test(c, database, "t", "k", chunks)
        for lo, hi in ranges:
            with c.cursor() as cur:
                cur.execute(
                    f"SELECT v, (%s IS NULL OR k >= %s) AND (%s IS NULL OR k < %s) FROM {database}.t", (lo, lo, hi, hi)
                )
                server = {v: bool(inside) for v, inside in cur.fetchall()}
            local = {v: in_range(decoded[v], lo, hi) for v in server}
            wrong = {v: (decoded[v], server[v]) for v in server if local[v] != server[v]}
            assert not wrong, (kind, lo, hi, list(wrong.items())[:3])
        for v, _k in ordered:  # each binlog key in exactly one chunk
            assert sum(in_range(decoded[v], lo, hi) for lo, hi in chunks) == 1


E2E_ROWS, E2E_CHUNK = 900, 120


def test_a_binary_uuid_keyed_table_is_chunked_and_changes_during_its_snapshot_arrive_once(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path
) -> None:
    mariadb.execute("CREATE DATABASE binkey", "CREATE TABLE binkey.t (id BINARY(16) PRIMARY KEY, v VARCHAR(20), n INT)")
    rng = random.Random(2027)
    keys = [_uuid_bytes(rng) for _ in range(E2E_ROWS)]
    c = mariadb.connect("binkey")
    with c.cursor() as cur:
        cur.executemany("INSERT IGNORE INTO t VALUES (%s, %s, 0)", [(k, k.hex()[:8]) for k in keys])
    c.close()
    changes = [0]
    bounds = snapshot_under_writes(
        mariadb,
        warehouse,
        tmp_path / "checkpoint",
        "binkey",
        E2E_CHUNK,
        writes_on(mariadb, "binkey", keys, _uuid_bytes, changes),
    )
    assert changes[0] >= 100, changes
    assert len(bounds) >= 6 and all(set(b) == {"bytes"} for b in bounds), bounds
    c = mariadb.connect("binkey")
    with c.cursor() as cur:  # keys the binlog gives without their trailing 0x00 are among them
        cur.execute("SELECT COUNT(*) FROM t WHERE RIGHT(id, 1) = X'00'")
        assert cur.fetchone()[0] > 0
    c.close()
    assert_table_equals_source(mariadb, "binkey", warehouse, bytes)
