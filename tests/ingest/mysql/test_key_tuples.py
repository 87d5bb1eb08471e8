"""Composite-key chunk bounds (#27): their SQL and the order a key is placed in (the server's own
agreement is checked in ``tests/integration/mysql/test_composite_key_chunks.py``)."""

from __future__ import annotations

import itertools
import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from formats.events import Op
from ingest.mysql.key_tuples import TupleRange, after_sql, natural, range_sql
from ingest.mysql.snapshot import backfill
from ingest.mysql.spec import Chunk

COLUMNS = ["`a`", "`b`", "`c`"]


def test_range_sql_spells_out_the_lexicographic_order() -> None:
    assert range_sql(COLUMNS, None, None) == ("", [])
    assert range_sql(COLUMNS, 5, None) == ("`a` >= %s", [5])  # a scalar bound: the first column
    sql, args = range_sql(COLUMNS, (1, "x"), (2, "y", 3))
    lower = "(`a` > %s OR (`a` = %s AND `b` >= %s))"
    assert sql == lower + " AND (`a` < %s OR (`a` = %s AND (`b` < %s OR (`b` = %s AND `c` < %s))))"
    assert args == [1, 1, "x", 2, 2, "y", "y", 3]
    assert after_sql(COLUMNS[:2], (1, 2)) == ("(`a` > %s OR (`a` = %s AND `b` > %s))", [1, 1, 2])


keys = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3))
bounds = st.one_of(st.none(), st.integers(0, 3), keys, st.tuples(st.integers(0, 3), st.integers(0, 3)))


@given(st.lists(keys, min_size=1, max_size=30), bounds, bounds)
def test_the_sql_and_the_python_order_select_the_same_keys(
    rows: list[tuple[int, int, int]], lo: object, hi: object
) -> None:
    # SQLite evaluates the generated condition (the same SQL MariaDB gets, with ? for %s) on integers
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (a INT, b INT, c INT)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    condition, args = range_sql(["a", "b", "c"], lo, hi)
    query = "SELECT a, b, c FROM t" + (f" WHERE {condition.replace('%s', '?')}" if condition else "")
    server = sorted(db.execute(query, args).fetchall())
    in_range = TupleRange([natural] * 3)
    assert server == sorted(k for k in rows if in_range(k, lo, hi))
    assert server == sorted(k for k in rows if Chunk("d", "t", lo, hi).contains(k))  # (no range test: Python's order)


def test_chunks_between_tuple_bounds_hold_each_key_once() -> None:
    edges = [None, (1, 5), (1, 9), (2,), 4, None]  # tuple, prefix and scalar bounds mixed
    chunks = list(itertools.pairwise(edges))
    in_range = TupleRange([natural, natural])
    for key in itertools.product(range(6), range(12)):
        assert sum(in_range(key, lo, hi) for lo, hi in chunks) == 1, key
    assert in_range((1, 5), (1, 5), (1, 9)) and not in_range((1, 9), (1, 5), (1, 9))
    assert in_range((None, 3), None, (0, 0))  # a zero date: below every bound
    assert not in_range(("altered", 3), (1, 5), None)  # another type than the bound: in no range


def test_backfill_moves_a_row_between_chunks_of_one_first_column_value() -> None:
    # (tenant, id): the chunk [(1, 100), (1, 200)) holds tenant 1's ids 100..199 only
    rows = {(1, 150): {"tenant": 1, "id": 150, "v": 0}}
    chunk = Chunk("d", "t", (1, 100), (1, 200))
    in_range = TupleRange([natural, natural])
    changes = [
        (Op.UPDATE, {"tenant": 1, "id": 150, "v": 0}, {"tenant": 1, "id": 250, "v": 0}),  # out of the chunk
        (Op.INSERT, None, {"tenant": 1, "id": 120, "v": 1}),
        (Op.INSERT, None, {"tenant": 1, "id": 220, "v": 1}),  # same tenant, another chunk
        (Op.INSERT, None, {"tenant": 2, "id": 120, "v": 1}),  # same id, another tenant
    ]
    backfill(rows, changes, chunk, ["tenant", "id"], ("tenant", "id", "v"), None, in_range)
    assert rows == {(1, 120): {"tenant": 1, "id": 120, "v": 1}}
