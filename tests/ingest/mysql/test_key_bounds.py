"""Typed chunk bounds (#27): their JSON, their Python types, and a binlog key placed among them (the
server's order itself is checked in ``tests/integration/mysql/test_typed_key_chunks.py``)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from formats.events import Op
from ingest.mysql.key_bounds import (
    TypedRange,
    binary_width,
    bounds_typed,
    decode_bound,
    encode_bound,
    key_widths,
    typed_key,
)
from ingest.mysql.key_ordinals import select_form
from ingest.mysql.snapshot import backfill
from ingest.mysql.spec import Chunk

BOUNDS = [
    None,
    7,
    "a-b",
    b"\x00\x01\xff\x00",
    dt.datetime(2024, 3, 1, 12, 0, 0, 250),
    dt.datetime(2024, 3, 1),
    dt.date(2024, 3, 1),
    Decimal("-12.3400"),
    Decimal("1E+3"),
    dt.timedelta(seconds=-0.1),
    dt.timedelta(hours=838, minutes=59, seconds=59),
    (7, "a-b"),  # a composite key's bound (key_tuples)
    (b"\x00\x01", dt.datetime(2024, 3, 1, 12, 0, 0, 250), Decimal("-12.3400")),
]


def test_bounds_travel_as_json_and_come_back_equal_and_of_their_type() -> None:
    for bound in BOUNDS:
        back = decode_bound(json.loads(json.dumps(encode_bound(bound))))
        assert back == bound and type(back) is type(bound)
        assert decode_bound(bound) == bound  # decoding twice changes nothing
    chunk = Chunk("d", "t", encode_bound(b"\x01"), {"datetime": "2024-03-01T00:00:00"})
    assert chunk.lo == b"\x01" and chunk.hi == dt.datetime(2024, 3, 1)


def test_which_key_types_are_split_and_their_bounds_types() -> None:
    split = ("binary(16) NOT NULL", "VARBINARY(64)", "date", "datetime(6)", "timestamp", "decimal(20,4)", "numeric")
    assert all(map(typed_key, (*split, "time(3)", "TIME")))
    assert bounds_typed("time(3)", [dt.timedelta(seconds=-1)]) and not bounds_typed("time", [dt.datetime(2024, 1, 1)])
    kept = ("year(4)", "double", "float", "bit(8)", "enum('a')", "set('a')", "json", "blob", "varchar(3)")
    assert not any(map(typed_key, kept))
    assert bounds_typed("datetime(6)", [dt.datetime(2024, 1, 1)])
    assert not bounds_typed("datetime", ["0000-00-00 00:00:00"])  # pymysql's zero date
    assert not bounds_typed("date", [dt.datetime(2024, 1, 1)])
    assert bounds_typed("decimal(5,2)", [Decimal("1.50")]) and bounds_typed("binary(2)", [b"\x00\x00"])


def test_a_binlog_binary_key_is_padded_back_before_it_is_compared() -> None:
    assert binary_width("binary(16) NOT NULL") == 16 and binary_width("BINARY") == 1
    assert binary_width("varbinary(16)") == 0 and key_widths({"k": "binary(4)", "n": "int"}, ["k", "n"]) == (4, 0)
    padded = TypedRange(4)
    # the binlog's b"\x01" is the column's b"\x01\x00\x00\x00": equal to the bound, so in [bound, ...)
    assert padded(b"\x01", b"\x01\x00\x00\x00", None) and not padded(b"\x01", None, b"\x01\x00\x00\x00")
    assert not TypedRange(0)(b"\x01", b"\x01\x00\x00\x00", None)  # VARBINARY: shorter is lower
    assert padded(None, None, b"\x00") and not padded(None, b"\x00", None)  # a zero date: the lowest key
    assert not padded("altered", b"\x00", None)  # another type than the bounds: in no range
    assert TypedRange(0)(Decimal("1.5"), Decimal("1.50"), Decimal("2"))
    assert TypedRange(0)(dt.datetime(2024, 1, 1, 0, 0, 0, 1), dt.datetime(2024, 1, 1), None)


def test_backfill_finds_a_binary_keys_row_by_its_padded_key() -> None:
    key = b"\x01\x02\x00\x00"
    rows = {(key,): {"k": key, "v": 1}}
    chunk = Chunk("d", "t", b"\x01\x00\x00\x00", b"\x02\x00\x00\x00")
    # the binlog gives the key without its trailing zeros
    changes = [(Op.UPDATE, {"k": b"\x01\x02", "v": 1}, {"k": b"\x01\x02", "v": 2})]
    padded = TypedRange(4)

    def in_range(key: tuple[object, ...], lo: object, hi: object) -> bool:  # (key_range_test's, on one column)
        return padded(key[0], lo, hi)

    backfill(rows, changes, chunk, ["k"], ("k", "v"), None, in_range, (select_form("binary(4)"),))
    assert list(rows) == [(key,)] and rows[(key,)]["v"] == 2
    padded_form = (select_form("binary(4)"),)
    backfill(
        rows, [(Op.DELETE, {"k": b"\x01\x02", "v": 2}, None)], chunk, ["k"], ("k", "v"), None, in_range, padded_form
    )
    assert rows == {}
