"""YEAR, BIT and ENUM chunk bounds (#27): a key of either reader's form as the server's number, an
ENUM's comparisons as IN lists, a binlog key turned into the SELECT's, and the back-fill finding a
chunk's row by it (the server's own order and plans are checked in
``tests/integration/mysql/test_ordinal_key_chunks.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from formats.events import Op
from ingest.mysql.key_ordinals import (
    OrdinalKey,
    OrdinalRange,
    bound_expression,
    column_sqls,
    is_ordinal,
    plain_sql,
    select_form,
)
from ingest.mysql.key_tuples import range_sql
from ingest.mysql.snapshot import backfill
from ingest.mysql.spec import Chunk

ENUM = "enum('zeta','alpha','it''s')"


def test_which_types_are_split_on_their_number() -> None:
    assert all(map(is_ordinal, ["year", "year(4)", "bit(16)", "BIT", ENUM, " enum('a')", "float", "double", "real"]))
    assert all(map(is_ordinal, ["float(7,3) unsigned zerofill", "double precision"]))
    assert not any(map(is_ordinal, ["int", "set('a')", "varchar(3)", "bigint unsigned", "binary(4)", "decimal"]))
    assert bound_expression("`y`", "year") == "`y` + 0" and bound_expression("`i`", "int") == "`i`"
    assert bound_expression("`f`", "float") == "`f` * 1e0"  # (exactly: the text protocol sends six digits)


@pytest.mark.parametrize(
    ("column_type", "select", "binlog", "number"),
    [
        ("year", 0, 1900, 0),  # the binlog's 0000
        ("year(4)", 2024, 2024, 2024),
        ("bit(16)", b"\x01\x05", "0000000100000101", 261),
        ("bit(1)", b"\x01", "1", 1),
        (ENUM, "zeta", "zeta", 1),
        (ENUM, "alpha", "alpha", 2),  # by index, not by name
        (ENUM, "it's", "it's", 3),
        (ENUM, "", "", 0),  # the invalid value
        ("float", 1.2345677614212036, 1.2345677614212036, 1.2345677614212036),
        ("double", -0.5, -0.5, -0.5),
    ],
)
def test_both_forms_of_a_key_are_the_servers_number(column_type: str, select: Any, binlog: Any, number: int) -> None:
    key = OrdinalKey(column_type)
    assert key.number(select) == key.number(binlog) == number
    form = select_form(column_type)
    assert (binlog if form is None else form(binlog)) == select
    assert form is None or form(select) == select  # (a key in the SELECT's form stays as it is)


def test_a_set_key_from_the_binlog_is_the_selects_text() -> None:
    form = select_form("set('x','a','q')")
    assert form is not None
    assert form({"q", "x"}) == "x,q" and form(None) == "" and form("a,q") == "a,q"
    assert select_form("int") is None and select_form("varchar(10)") is None


def test_an_enums_comparisons_are_in_lists_of_its_indexes() -> None:
    key = OrdinalKey(ENUM)
    assert key.sql("`e`", ">=", 2) == ("`e` IN (%s, %s)", [2, 3])
    assert key.sql("`e`", ">", 2) == ("`e` IN (%s)", [3])
    assert key.sql("`e`", "<", 2) == ("`e` IN (%s, %s)", [0, 1])  # with the invalid value's 0
    assert key.sql("`e`", "=", 2) == ("`e` = %s", [2])
    assert key.sql("`e`", ">", 3) == ("1 = 0", [])
    assert OrdinalKey("year").sql("`y`", ">=", 2000) == plain_sql("`y`", ">=", 2000)
    # a composite (enum, id) bound: the ENUM's part as IN lists, the id's as it is
    sql, args = range_sql(["`e`", "`id`"], (2, 10), None, column_sqls({"e": ENUM, "id": "int"}, ["e", "id"]))
    assert sql == "(`e` IN (%s) OR (`e` = %s AND `id` >= %s))" and args == [3, 2, 10]


def test_a_key_of_either_form_is_placed_by_its_number() -> None:
    year = OrdinalRange(OrdinalKey("year"))
    assert year(1900, None, 1901) and not year(1900, 1901, None) and year(2024, 2000, None)
    assert year(None, None, 5) and not year(None, 0, 5)
    bits = OrdinalRange(OrdinalKey("bit(16)"))
    assert bits("0000000100000101", 261, 262) and bits(b"\x01\x05", 261, 262) and not bits("1", 261, None)
    enum = OrdinalRange(OrdinalKey(ENUM))
    assert enum("alpha", 2, 3) and not enum("zeta", 2, None) and enum("", None, 1)


def test_backfill_finds_a_rows_key_in_the_binlogs_form() -> None:
    # BIT(16) and YEAR keys as the SELECT read them; the binlog gives them as bits and 1900
    rows: dict[tuple[Any, ...], Any] = {(b"\x01\x05",): {"k": b"\x01\x05", "v": 1}, (0,): {"k": 0, "v": 1}}
    bits, year = OrdinalRange(OrdinalKey("bit(16)")), OrdinalRange(OrdinalKey("year"))
    form, year_form = select_form("bit(16)"), select_form("year")

    def in_bits(key: tuple[Any, ...], lo: Any, hi: Any) -> bool:
        return bits(key[0], lo, hi)

    chunk = Chunk("d", "t", 256, 300)
    changes = [(Op.UPDATE, {"k": "0000000100000101", "v": 1}, {"k": "0000000100000101", "v": 2})]
    backfill(rows, changes, chunk, ["k"], ("k", "v"), None, in_bits, forms=(form,))
    assert rows[(b"\x01\x05",)]["v"] == 2 and len(rows) == 2
    backfill(rows, [(Op.DELETE, {"k": "0000000100000101", "v": 2}, None)], chunk, ["k"], ("k", "v"), None, in_bits,
             forms=(form,))  # fmt: skip
    assert list(rows) == [(0,)]

    def in_year(key: tuple[Any, ...], lo: Any, hi: Any) -> bool:
        return year(key[0], lo, hi)

    first = Chunk("d", "t", None, 1950)
    backfill(
        rows, [(Op.DELETE, {"k": 1900, "v": 1}, None)], first, ["k"], ("k", "v"), None, in_year, forms=(year_form,)
    )
    assert rows == {}
