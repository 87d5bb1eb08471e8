"""A text-protocol row packet split as pymysql splits it (``ingest.mysql.snapshot_text._text_row``):
every length encoding, NULL, binary columns, and a row shorter than its columns; and which column
types are kept as the server sends them."""

from __future__ import annotations

import datetime as dt

from formats import mysql_values
from ingest.mysql.snapshot_text import _text_row, kept_as_sent


def _length(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def _pymysql_row(data: bytes, encodings: list[str | None]) -> tuple[object, ...]:
    from pymysql.connections import MySQLResult
    from pymysql.protocol import MysqlPacket

    result = MySQLResult.__new__(MySQLResult)
    result.unbuffered_active = False
    result.converters = [(e, None) for e in encodings]
    return tuple(result._read_row_from_packet(MysqlPacket(data, "utf8")))


def test_rows_split_as_pymysql_splits_them() -> None:
    values: list[bytes | None] = [b"1", None, b"", "é".encode() * 125, b"x" * 251, b"y" * 70_000, b"\x00\xff", None]
    encodings: list[str | None] = ["ascii", "utf8", "utf8", "utf8", "utf8", "utf8", None, None]
    data = b"".join(b"\xfb" if v is None else _length(len(v)) + v for v in values)
    row = _text_row(data, encodings)
    assert row == _pymysql_row(data, encodings)
    assert row[0] == "1" and row[1] is None and row[3] == "é" * 125 and row[6] == b"\x00\xff"
    # fewer values than columns: the row ends there, as in pymysql
    assert _text_row(data, [*encodings, "utf8"]) == _pymysql_row(data, [*encodings, "utf8"])


def test_columns_kept_as_sent() -> None:
    utc, plus2 = mysql_values.UTC, dt.timezone(dt.timedelta(hours=2))
    assert kept_as_sent("bigint(20) unsigned", False, utc, False)
    assert not kept_as_sent("int(10) unsigned zerofill", False, utc, False)
    assert kept_as_sent("decimal(38,10)", False, utc, False) and not kept_as_sent("decimal(65,30)", False, utc, False)
    assert kept_as_sent("timestamp(3)", False, utc, False) and not kept_as_sent("timestamp(3)", False, plus2, False)
    assert kept_as_sent("varchar(10)", False, utc, True) and not kept_as_sent("enum('a')", True, utc, False)
    assert not kept_as_sent("datetime(3)", False, utc, True) and not kept_as_sent("double", False, utc, True)
    for column_type in ("time", "year(4)", "bit(1)", "float", "geometry"):
        assert not kept_as_sent(column_type, False, utc, False)
