"""#27: a table whose first key column is a YEAR, a BIT(n), an ENUM, a FLOAT or a DOUBLE is snapshotted
in bounded chunks, and the changes made while it is read arrive exactly once: the binlog gives these
keys otherwise than the SELECT (year 0 as 1900, a BIT as a string of 0s and 1s, an ENUM as its member
where the server orders by its index, a FLOAT exactly where the text protocol sends six digits), and
the snapshot places and matches them as the server's values."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.job import run
from ingest.mysql.binlog_stream import binlog_rows
from ingest.mysql.client import MySqlConnection, connect, master_status
from ingest.mysql.key_chunks import key_range_test, plan_chunks
from ingest.mysql.key_ordinals import column_sqls
from ingest.mysql.key_tuples import range_sql
from ingest.mysql.spec import MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from tests.integration.mysql.conftest import (
    assert_table_equals_source,
    chunked_snapshot_settings,
    snapshot_under_writes,
    writes_on,
)

# members whose order by name is not their order by index (the server orders an ENUM by its index)
MEMBERS = [f"m{(i * 37) % 200:03d}" for i in range(200)]


def _year(rng: random.Random) -> int:
    return rng.choice([0, *range(1901, 2156)])


def _bits(rng: random.Random) -> int:
    return rng.randrange(0, 1 << 16)  # (a BIT is written as a number: bytes are compared as a decimal)


def _member(rng: random.Random) -> str:
    return rng.choice(MEMBERS)


def _double(rng: random.Random) -> float:
    return rng.choice([-1.0, 1.0]) * rng.random() * 10.0 ** rng.randrange(-5, 6)


def _float(rng: random.Random) -> float:
    return _double(rng) * 1.0000001  # (seven digits: the text protocol's six are another float)


def _paimon_bits(value: Any) -> bytes:
    return bytes(value)


# column type, how many rows, rows a chunk, a new key, the Paimon value as the SELECT reads it
KINDS: dict[str, tuple[str, int, int, Callable[[random.Random], Any], Callable[[Any], Any]]] = {
    "year": ("YEAR", 250, 30, _year, int),
    "bit16": ("BIT(16)", 900, 120, _bits, _paimon_bits),
    "enum": ("ENUM(" + ", ".join(f"'{m}'" for m in MEMBERS) + ")", 190, 25, _member, str),
    "double": ("DOUBLE", 900, 120, _double, float),
}
# placed only: the end-to-end check reads the source with pymysql, which gets a FLOAT's six digits
PLACED_KINDS = {**KINDS, "float": ("FLOAT", 900, 120, _float, float)}


def _connection(mariadb: LocalMariaDB) -> MySqlConnection:
    return MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, 10)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_ordinal_keyed_table_is_chunked_and_changes_during_its_snapshot_arrive_once(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path, kind: str
) -> None:
    column_type, rows, chunk, new_key, paimon_key = KINDS[kind]
    database = f"ordinal_{kind}"
    mariadb.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (id {column_type} NOT NULL PRIMARY KEY, v VARCHAR(20), n INT)",
    )
    rng = random.Random(kind)
    keys: list[Any] = []
    while len(keys) < rows:
        key = new_key(rng)
        if key not in keys:
            keys.append(key)
    c = mariadb.connect(database)
    with c.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, 0)", [(k, str(i)) for i, k in enumerate(keys)])
    c.close()
    changes = [0]
    bounds = snapshot_under_writes(
        mariadb,
        warehouse,
        tmp_path / "checkpoint",
        database,
        chunk,
        writes_on(mariadb, database, keys, new_key, changes),
    )
    assert changes[0] >= 30, changes
    assert len(bounds) >= 4, bounds
    assert_table_equals_source(mariadb, database, warehouse, paimon_key)


def test_year_0000_from_the_binlog_is_the_snapshots_0(mariadb: LocalMariaDB, warehouse: str, tmp_path: Path) -> None:
    # The binlog carries a YEAR as its year - 1900, and the decoders give 0000 as 1900 (mysql-replication
    # and lakecdc's own): the snapshot's row 0 must stay row 0, not gain a twin 1900.
    database = "ordinal_year_zero"
    mariadb.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (id YEAR NOT NULL PRIMARY KEY, v VARCHAR(20), n INT)",
        f"INSERT INTO {database}.t VALUES (0, 'zero', 0), (1901, 'first', 0), (2155, 'last', 0)",
    )
    settings = chunked_snapshot_settings(mariadb, warehouse, tmp_path / "checkpoint", database, 1)
    run(settings)
    mariadb.execute(f"UPDATE {database}.t SET n = 7 WHERE id = 0", f"INSERT INTO {database}.t VALUES (2000, 'new', 1)")
    run(settings)
    assert_table_equals_source(mariadb, database, warehouse, int)
    mariadb.execute(f"DELETE FROM {database}.t WHERE id = 0")
    run(settings)
    assert_table_equals_source(mariadb, database, warehouse, int)


PLACED_ROWS, PLACED_CHUNK = 600, 70


@pytest.mark.parametrize("kind", ["bit16", "enum", "enum-id", "year-id", "float", "double-id"])
def test_ordinal_keys_split_into_bounded_chunks_that_place_binlog_keys_as_the_server(
    mariadb: LocalMariaDB, tmp_path: Path, kind: str
) -> None:
    database = f"placed_{kind.replace('-', '_')}"
    composite = kind.endswith("-id")
    column_type = PLACED_KINDS[kind.removesuffix("-id")][0]
    key = "PRIMARY KEY (k, id)" if composite else "PRIMARY KEY (k)"
    mariadb.execute(
        f"CREATE DATABASE {database}", f"CREATE TABLE {database}.t (k {column_type} NOT NULL, id INT NOT NULL, {key})"
    )
    make = PLACED_KINDS[kind.removesuffix("-id")][3]
    rng = random.Random(kind)
    keys = ["k", "id"] if composite else ["k"]
    spec = MySqlSourceSpec(
        _connection(mariadb), database, "t", "initial", ParseSpec("mysql", TableRouter("ods")), str(tmp_path)
    )
    with connect(spec.connection) as c:
        start = master_status(c)
        with c.cursor() as cur:
            # a composite key's first column repeats: a value of many rows spans chunks
            values = [(make(rng), i) for i in range(PLACED_ROWS)]
            cur.executemany(f"INSERT IGNORE INTO {database}.t VALUES (%s, %s)", values)
        c.commit()
        end = master_status(c)
        with c.cursor() as cur:
            cur.execute(f"SELECT id, k + 0 FROM {database}.t")
            numbers = dict(cur.fetchall())
        decoded = {
            after["id"]: tuple(after[k] for k in keys)
            for _op, _db, _t, _b, after, _p, _ts in binlog_rows(spec, start, end, 91, {f"{database}.t"})
            if after is not None
        }
        assert set(decoded) == set(numbers)
        types = {"k": column_type.lower(), "id": "int"}
        chunks = plan_chunks(c, database, "t", keys, [types[k] for k in keys], PLACED_CHUNK)
        assert len(chunks) >= len(numbers) // PLACED_CHUNK >= 2, chunks
        assert all(isinstance(b, tuple) if composite else isinstance(b, int | float) for b, _ in chunks[1:])

        # each chunk's WHERE as its read runs it: bounded, every row once, and an index range
        sqls = column_sqls(types, keys)
        in_range = key_range_test(c, database, "t", keys, chunks, types)
        seen: list[int] = []
        for lo, hi in chunks:
            where, args = range_sql([f"`{k}`" for k in keys], lo, hi, sqls)
            with c.cursor() as cur:
                cur.execute(f"SELECT id FROM {database}.t WHERE {where or '1'}", args)
                rows = [r[0] for r in cur.fetchall()]
                # (forced: on a few hundred rows the optimizer may rightly prefer a scan)
                cur.execute(f"EXPLAIN SELECT * FROM {database}.t FORCE INDEX (PRIMARY) WHERE {where or '1'}", args)
                plan = cur.fetchall()
            assert 0 < len(rows) <= PLACED_CHUNK, (lo, hi, len(rows))
            assert not where or plan[0][3] == "range", (where, plan)
            # the binlog's keys of these very rows, and only those, lie in the chunk
            assert {i for i in numbers if in_range(decoded[i], lo, hi)} == set(rows), (lo, hi)
            seen += rows
        assert sorted(seen) == sorted(numbers)
