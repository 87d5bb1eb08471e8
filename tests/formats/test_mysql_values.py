"""MySQL driver values -> canal's vocabulary. The inputs are what pymysql (snapshot SELECTs in a
UTC session) and mysql-replication (binlog rows) returned for the same row on MariaDB 10.11."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from formats.mysql_values import UTC, RowNormalizer, as_text, normalize, normalize_row, server_zone

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
    # the binlog drops BINARY(n)'s trailing zero bytes (not VARBINARY's)
    ("binary(4)", b"ab\x00\x00", b"ab", b"ab\x00\x00"),
    ("varbinary(4)", b"ab\x00", b"ab\x00", b"ab\x00"),
    ("date", dt.date(2024, 2, 29), dt.date(2024, 2, 29), "2024-02-29"),
    ("double", -0.25, -0.25, "-0.25"),
    ("year(4)", 2024, 2024, "2024"),
    ("year", 0, 1900, "0"),  # 0000: the binlog decoders add 1900 to its 0, and 1900 is no YEAR
    # a FLOAT's exact value, widened to a double (the snapshot reads it as f * 1e0): to-string shortens it
    ("float", 1.2345677614212036, 1.2345677614212036, "1.2345677614212036"),
    ("float unsigned", 16777216.0, 16777216.0, "16777216.0"),
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


def test_years_below_1000_keep_four_digits() -> None:
    # strftime wrote year 1 as "1-01-01 …", which Arrow's timestamp parser refuses
    assert normalize(dt.datetime(1, 1, 1, 0, 0, 5), "datetime", UTC, True) == "0001-01-01 00:00:05"
    assert normalize(dt.datetime(999, 12, 31, 23, 59, 59, 5), "timestamp(6)", server_zone("+08:00"), True) == (
        "1000-01-01 07:59:59.000005"
    )


def test_row_normalizer_gives_normalize_for_every_value_and_column_order() -> None:
    types = {column_type: column_type for column_type, *_ in SAME_ROW}
    # values of every driver, bool and int subclasses, aware datetimes: the fast paths must agree
    extra = [
        ("int(11)", True),
        ("tinyint(1)", False),
        ("datetime(6)", dt.datetime(2020, 1, 1, 10, 0, tzinfo=SHANGHAI)),
        ("timestamp(3)", dt.datetime(2020, 1, 1, 10, 0, tzinfo=UTC)),
        ("json", None),
    ]
    rows = [{t: selected for t, selected, _, _ in SAME_ROW}, {t: binlog for t, _, binlog, _ in SAME_ROW}]
    rows += [{**rows[0], t: v} for t, v in extra]
    rows += [dict(reversed(list(row.items()))) for row in rows]  # another column order, same normalizer
    for zone in (SHANGHAI, UTC):
        for to_string in (False, True):
            normalized = RowNormalizer(types, zone, True, to_string)
            for row in rows:
                expected = {
                    name: as_text(normalize(v, types[name], zone, True), types[name])
                    if to_string
                    else normalize(v, types[name], zone, True)
                    for name, v in row.items()
                }
                got = normalized(row)
                assert got == expected and list(got) == list(row)
    # a column the types do not name is TEXT
    assert RowNormalizer({}, UTC, True)({"x": b"caf\xc3\xa9"}) == {"x": "café"}


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


# --type-mapping to-string: column type, pymysql's value, mysql-replication's value, the text Paimon's
# MySQL action writes (MySqlCdcTypeMappingITCase.testReadAllTypes, and Debezium's types behind it)
TO_STRING_ROW = [
    ("bit(1)", b"\x01", "1", "true"),
    ("bit(1)", b"\x00", "0", "false"),
    ("bit(64)", b"\x00\x00\x00\x00\x00\x00\x07\xc7", "11111000111", "0" * 53 + "11111000111"),
    ("bit(10)", b"\x02\x01", "1000000001", "0000001000000001"),
    ("tinyint(1)", 1, 1, "1"),
    ("decimal(8,3)", Decimal("12345.110"), Decimal("12345.110"), "12345.11"),
    ("decimal(8,0)", Decimal("11111"), Decimal("11111"), "11111"),
    ("decimal(38,10)", Decimal("2222222222222222300000001111.1234567890"),
     Decimal("2222222222222222300000001111.1234567890"), "2222222222222222300000001111.123456789"),
    ("decimal(40,3)", Decimal("123456789876543212345678987654321.110"),
     Decimal("123456789876543212345678987654321.110"), "123456789876543212345678987654321.11"),
    ("datetime", dt.datetime(2023, 3, 23, 14, 30, 5), dt.datetime(2023, 3, 23, 14, 30, 5), "2023-03-23 14:30:05.000"),
    ("datetime(2)", dt.datetime(2023, 3, 24, 14, 30, 5, 120000), dt.datetime(2023, 3, 24, 14, 30, 5, 120000),
     "2023-03-24 14:30:05.120"),
    ("datetime(6)", dt.datetime(2023, 3, 23, 14, 30, 5, 123456), dt.datetime(2023, 3, 23, 14, 30, 5, 123456),
     "2023-03-23 14:30:05.123456"),
    # TIMESTAMP: the server zone's wall clock, always 6 digits
    ("timestamp", dt.datetime(2023, 3, 23, 7, 10), dt.datetime(2023, 3, 23, 7, 10), "2023-03-23 15:10:00.000000"),
    ("time", dt.timedelta(hours=10, minutes=13, seconds=23), dt.timedelta(hours=10, minutes=13, seconds=23),
     "10:13:23"),
    # Java's LocalTime text: no zero seconds, 3/6-digit fractions, wrapped into one day
    ("time", dt.timedelta(hours=10, minutes=13), dt.timedelta(hours=10, minutes=13), "10:13"),
    ("time(3)", dt.timedelta(hours=1, microseconds=500000), dt.timedelta(hours=1, microseconds=500000),
     "01:00:00.500"),
    ("time(6)", dt.timedelta(seconds=1, microseconds=5), dt.timedelta(seconds=1, microseconds=5), "00:00:01.000005"),
    ("time", dt.timedelta(hours=25), dt.timedelta(hours=25), "01:00"),
    ("time", dt.timedelta(seconds=-1), dt.timedelta(seconds=-1), "23:59:59"),
    ("binary(10)", b"bytes\x00\x00\x00\x00\x00", b"bytes\x00\x00\x00\x00\x00", "bytes\x00\x00\x00\x00\x00"),
    ("longblob", b"\xff", b"\xff", "\ufffd"),
    ("json", '{"a":"b"}', '{"a":"b"}', '{"a":"b"}'),
    ("set('a','b','c','d')", "a,b", {"b", "a"}, "a,b"),
    ("enum('value1','value2')", "value1", "value1", "value1"),
    ("year(4)", 2023, 2023, "2023"),
    ("point", b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x01"),  # GeoJSON later
]  # fmt: skip


@pytest.mark.parametrize(("column_type", "selected", "binlog", "text"), TO_STRING_ROW)
def test_to_string_values_are_paimons_text(column_type: str, selected: object, binlog: object, text: object) -> None:
    assert as_text(normalize(selected, column_type, SHANGHAI, True), column_type) == text
    assert as_text(normalize(binlog, column_type, SHANGHAI, True), column_type) == text
    assert normalize_row({"c": selected}, {"c": column_type}, SHANGHAI, True, to_string=True) == {"c": text}
    assert as_text(None, column_type) is None


def test_to_string_keeps_zero_dates_as_mysqls_text() -> None:
    assert as_text("0000-00-00 00:00:00", "datetime(3)") == "0000-00-00 00:00:00"


@pytest.mark.parametrize(
    ("stored", "text"),
    [(1.2345677614212036, "1.2345678"), (16777216.0, "16777216.0"), (3.3999999521443642e38, "3.4e+38"),
     (0.10000000149011612, "0.1"), (1.401298464324817e-45, "1e-45"), (-0.0, "-0.0")],
)  # fmt: skip
def test_to_string_gives_a_float_its_shortest_32_bit_digits(stored: float, text: str) -> None:
    # (the stored float widened to a double, as the binlog and the snapshot's f * 1e0 give it)
    for column_type in ("float", "float(7,3) unsigned zerofill"):
        assert as_text(normalize(stored, column_type, SHANGHAI, True), column_type) == text
    assert as_text(repr(stored), "double") == repr(stored)  # a DOUBLE keeps its own digits
