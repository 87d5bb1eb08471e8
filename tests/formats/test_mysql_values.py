"""MySQL driver values -> canal's vocabulary. The inputs are what pymysql (snapshot SELECTs in a
UTC session) and mysql-replication (binlog rows) returned for the same row on MariaDB 10.11."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from formats.mysql_values import UTC, normalize, normalize_row, server_zone

SHANGHAI = server_zone("Asia/Shanghai")

# column type, pymysql's value, mysql-replication's value, canal's text
SAME_ROW = [
    ("int(11)", 1, 1, "1"),
    ("tinyint(1)", 1, 1, "1"),
    ("bigint(20) unsigned", 18446744073709551615, 18446744073709551615, "18446744073709551615"),
    # DECIMAL beyond 38 digits is STRING in Paimon, written without trailing zeros as Paimon does
    ("decimal(65,30)", Decimal("1.500000000000000000000000000000"), Decimal("1.500000000000000000000000000000"),
     "1.5"),
    ("timestamp(3)", dt.datetime(2020, 1, 1, 10, 0, 0, 123000), dt.datetime(2020, 1, 1, 10, 0, 0, 123000),
     "2020-01-01 18:00:00.123000"),
    ("datetime(6)", dt.datetime(2020, 1, 1, 10, 0, 0, 123456), dt.datetime(2020, 1, 1, 10, 0, 0, 123456),
     "2020-01-01 10:00:00.123456"),
    ("time(3)", dt.timedelta(days=-35, seconds=3601), dt.timedelta(days=-35, seconds=3601), "-838:59:59"),
    ("json", '{"a":1}', '{"a":1}', '{"a":1}'),
    ("enum('a','b')", "b", "b", "b"),
    ("set('x','y')", "x,y", {"y", "x"}, "x,y"),
    ("bit(3)", b"\x05", "101", b"\x05"),
    ("bit(1)", b"\x01", "1", "1"),
    ("varbinary(8)", b"\x00\xff", b"\x00\xff", b"\x00\xff"),
    ("date", dt.date(2024, 2, 29), dt.date(2024, 2, 29), "2024-02-29"),
    ("double", -0.25, -0.25, "-0.25"),
]  # fmt: skip


@pytest.mark.parametrize(("column_type", "selected", "binlog", "canal"), SAME_ROW)
def test_snapshot_and_binlog_values_agree(column_type: str, selected: object, binlog: object, canal: object) -> None:
    assert normalize(selected, column_type, SHANGHAI, True) == canal
    assert normalize(binlog, column_type, SHANGHAI, True) == canal


def test_datetime_is_never_shifted_and_nulls_stay_null() -> None:
    value = dt.datetime(2024, 6, 30, 23, 0)
    assert normalize(value, "datetime", SHANGHAI, True) == "2024-06-30 23:00:00"
    assert normalize(value, "timestamp", SHANGHAI, True) == "2024-07-01 07:00:00"
    assert normalize(value, "timestamp", UTC, True) == "2024-06-30 23:00:00"
    assert normalize(None, "timestamp", SHANGHAI, True) is None


def test_time_beyond_a_day_and_fractions() -> None:
    assert normalize(dt.timedelta(hours=25, microseconds=500), "time(6)", UTC, True) == "25:00:00.000500"
    assert normalize(dt.timedelta(0), "time", UTC, True) == "00:00:00"


def test_json_from_mysql_binary_json_uses_mysql_spacing() -> None:
    assert normalize({"a": [1, "b"]}, "json", UTC, True) == '{"a": [1, "b"]}'


def test_rows_and_zones() -> None:
    row = normalize_row({"id": 7, "s": {"c", "a"}}, {"id": "int", "s": "set('a','b','c')"}, UTC, True)
    assert row == {"id": "7", "s": "a,c"}
    assert server_zone("+08:00").utcoffset(None) == dt.timedelta(hours=8)
    assert server_zone("UTC") is UTC and server_zone(None) is UTC
    with pytest.raises(ValueError, match="server-time-zone 'Mars/Olympus'"):
        server_zone("Mars/Olympus")


def test_decimals_beyond_paimons_precision_lose_trailing_zeros_only() -> None:
    big = Decimal("123456789876543212345678987654321.110")
    assert normalize(big, "decimal(40,3)", UTC, True) == "123456789876543212345678987654321.11"
    assert normalize(Decimal("100.000"), "decimal(40,3)", UTC, True) == "100"
    assert normalize(Decimal("12345.110"), "decimal(8,3)", UTC, True) == "12345.110"
