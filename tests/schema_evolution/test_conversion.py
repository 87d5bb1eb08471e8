"""convert_column: source values (mostly canal's text) to exact Arrow columns, or a clear error."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from schema_evolution import types as t
from schema_evolution.arrow_types import to_arrow
from schema_evolution.conversion import ConversionNotes, ValueConversionError, convert_column
from schema_evolution.mysql_types import mysql_to_paimon
from schema_evolution.payloads import previews
from schema_evolution.types import PaimonType
from tests.conftest import TESTS

ALL_TYPES = TESTS / "data" / "canal" / "all-types.json"
ENUM = "ENUM('value1','value2','value3')"
SET = "SET('a','b','c','d')"


def converted(values: list[Any], target: PaimonType, source_type: str | None = None) -> list[Any]:
    array = convert_column("c", values, target, source_type)
    assert array.type == to_arrow(target)
    return array.to_pylist()


def conversion_error(values: list[Any], target: PaimonType, source_type: str | None = None) -> ValueConversionError:
    with pytest.raises(ValueConversionError) as info:
        convert_column("c", values, target, source_type)
    return info.value


# (values, target, expected Python values)
GOOD = [
    pytest.param(["-128", "0", "127"], t.tinyint(), [-128, 0, 127], id="tinyint-range"),
    pytest.param(["-32768", "32767"], t.smallint(), [-32768, 32767], id="smallint-range"),
    pytest.param(["1000000", "-2147483648"], t.int_(), [1000000, -2147483648], id="int"),
    pytest.param(["2023"], t.int_(), [2023], id="year-as-int"),
    pytest.param(["9223372036854775807"], t.bigint(), [9223372036854775807], id="bigint-max"),
    pytest.param([1, -2, None], t.bigint(), [1, -2, None], id="bigint-from-json-ints"),
    pytest.param(["1", "0", "true", "false"], t.boolean(), [True, False, True, False], id="boolean-text"),
    pytest.param(["TRUE", " False "], t.boolean(), [True, False], id="boolean-case-and-spaces"),
    pytest.param([True, False], t.boolean(), [True, False], id="boolean-from-json-bools"),
    pytest.param(["1.5", "2.25"], t.float_(), [1.5, 2.25], id="float"),
    pytest.param(["1.000011", "-3e10"], t.double(), [1.000011, -3e10], id="double"),
    pytest.param(
        ["12345.110", "1.5", "-0.001"],
        t.decimal(8, 3),
        [Decimal("12345.110"), Decimal("1.500"), Decimal("-0.001")],
        id="decimal-8-3",
    ),
    pytest.param(
        ["18446744073709551615", "0"],
        t.decimal(20, 0),
        [Decimal("18446744073709551615"), Decimal(0)],
        id="bigint-unsigned-max-exact",
    ),
    pytest.param(
        [18446744073709551615], t.decimal(20, 0), [Decimal("18446744073709551615")], id="decimal-from-json-int"
    ),
    pytest.param([1.1, 2], t.decimal(10, 2), [Decimal("1.10"), Decimal("2.00")], id="decimal-from-json-numbers"),
    pytest.param(["2023-03-23"], t.date(), [dt.date(2023, 3, 23)], id="date"),
    pytest.param(["2023-03-23 14:30:05"], t.timestamp(0), [dt.datetime(2023, 3, 23, 14, 30, 5)], id="timestamp-0"),
    pytest.param(
        ["2023-03-23 14:30:05.123", "2023-03-23 14:30:05"],
        t.timestamp(3),
        [dt.datetime(2023, 3, 23, 14, 30, 5, 123000), dt.datetime(2023, 3, 23, 14, 30, 5)],
        id="timestamp-3",
    ),
    pytest.param(
        ["2023-03-23 15:00:10.123456"],
        t.timestamp(6),
        [dt.datetime(2023, 3, 23, 15, 0, 10, 123456)],
        id="timestamp-6",
    ),
    pytest.param(
        ["10:13:23", "00:00:00", "23:59:59.999", "10:13:23.5"],
        t.time(),
        [dt.time(10, 13, 23), dt.time(0, 0), dt.time(23, 59, 59, 999000), dt.time(10, 13, 23, 500000)],
        id="time-ms",
    ),
    pytest.param(["bytes", "\u00f0?\u0000"], t.bytes_(), [b"bytes", b"\xf0?\x00"], id="binary-text-latin1"),
    pytest.param(["more bytes"], t.varbinary(20), [b"more bytes"], id="varbinary"),
    pytest.param([b"\x00\xff"], t.bytes_(), [b"\x00\xff"], id="bytes-stay-bytes"),
    pytest.param(["Apache Paimon"], t.varchar(20), ["Apache Paimon"], id="varchar"),
    pytest.param(["Paimon"], t.char(10), ["Paimon"], id="char"),
]


@pytest.mark.parametrize(("values", "target", "expected"), GOOD)
def test_converts(values: list[Any], target: PaimonType, expected: list[Any]) -> None:
    assert converted(values, target) == expected


# (values, target): each holds a value that does not fit and must not be rounded or nulled
BAD = [
    pytest.param(["128"], t.tinyint(), id="tinyint-overflow"),
    pytest.param(["-32769"], t.smallint(), id="smallint-underflow"),
    pytest.param(["2147483648"], t.int_(), id="int-overflow"),
    pytest.param(["18446744073709551615"], t.bigint(), id="bigint-unsigned-max-into-bigint"),
    pytest.param(["1.5"], t.int_(), id="int-with-fraction"),
    pytest.param(["abc"], t.int_(), id="int-not-a-number"),
    pytest.param(["yes"], t.boolean(), id="boolean-yes"),
    pytest.param(["2"], t.boolean(), id="boolean-2"),
    pytest.param(["1.2345"], t.decimal(8, 3), id="decimal-more-fraction-digits-than-scale"),
    pytest.param(["0.30000000000000004"], t.decimal(10, 2), id="decimal-float-noise"),
    pytest.param(["123456"], t.decimal(8, 3), id="decimal-too-many-integer-digits"),
    pytest.param(["184467440737095516150"], t.decimal(20, 0), id="decimal-20-overflow"),
    pytest.param(["2023-13-01"], t.date(), id="date-month-13"),
    pytest.param(["2023-03-23 14:30:05.5"], t.timestamp(0), id="timestamp-0-with-fraction"),
    pytest.param(["2023-03-23 14:30:05.1234"], t.timestamp(3), id="timestamp-3-with-4-digits"),
    pytest.param(["-01:00:00"], t.time(), id="time-negative"),
    pytest.param(["24:00:00"], t.time(), id="time-24h"),
    pytest.param(["838:59:59"], t.time(), id="time-mysql-max"),
    pytest.param(["10:13"], t.time(), id="time-no-seconds"),
    pytest.param(["\u20ac"], t.bytes_(), id="binary-text-outside-latin1"),
    pytest.param([1], t.bytes_(), id="binary-from-int"),
]


@pytest.mark.parametrize(("values", "target"), BAD)
def test_refuses(values: list[Any], target: PaimonType) -> None:
    error = conversion_error(values, target)
    assert error.column == "c"
    assert error.row == 0
    assert error.value == values[0]
    assert f"column 'c' ({target})" in str(error)


def test_error_points_at_the_first_bad_value() -> None:
    error = conversion_error(["1", "2", "x", "4", "y"], t.int_())
    assert (error.row, error.value) == (2, "x")
    assert "cannot convert value a string of 1 character: Failed to parse string: '…'" in str(error)
    with previews(True):
        error = conversion_error(["1", "2", "x", "4", "y"], t.int_())
    assert "'x'" in str(error)


def test_error_points_at_the_first_inexact_decimal() -> None:
    error = conversion_error(["1.5", "2.25", "3.125", "4"], t.decimal(5, 2))
    assert (error.row, error.value) == (2, "3.125")


def test_error_points_at_the_first_bad_time() -> None:
    error = conversion_error(["10:00:00", None, "25:00:00", "-1:00:00"], t.time())
    assert (error.row, error.value) == (2, "25:00:00")


def test_error_shortens_a_long_value() -> None:
    with previews(True):
        error = conversion_error(["x" * 500], t.int_())
    assert "cannot convert value '" + "x" * 79 + "…:" in str(error)  # repr() cut to 80 characters
    assert "x" * 80 not in str(error)
    assert error.value == "x" * 500


def test_error_reason_is_about_the_value_it_names() -> None:
    error = conversion_error(["1", "2", "x", "y"], t.int_())
    assert "'y'" not in str(error)


# --- MySQL zero dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "target", "expected"),
    [
        pytest.param(["0000-00-00", "2023-03-23"], t.date(), [None, dt.date(2023, 3, 23)], id="date"),
        pytest.param(
            ["2023-03-23 14:30:05", "0000-00-00 00:00:00"],
            t.timestamp(0),
            [dt.datetime(2023, 3, 23, 14, 30, 5), None],
            id="datetime",
        ),
        pytest.param(["0000-00-00 00:00:00.000"], t.timestamp(3), [None], id="datetime-3"),
    ],
)
def test_zero_dates_become_null_and_are_counted(values: list[Any], target: PaimonType, expected: list[Any]) -> None:
    notes = ConversionNotes()
    assert convert_column("d", values, target, notes=notes).to_pylist() == expected
    assert notes.zero_dates == {"d": 1}


def test_zero_dates_are_counted_per_column_across_calls() -> None:
    notes = ConversionNotes()
    convert_column("d", ["0000-00-00", "0000-00-00", "2020-01-01"], t.date(), notes=notes)
    convert_column("d", ["0000-00-00"], t.date(), notes=notes)
    convert_column("ts", ["0000-00-00 00:00:00", None], t.timestamp(0), notes=notes)
    convert_column("other", ["2020-01-01"], t.date(), notes=notes)
    assert notes.zero_dates == {"d": 3, "ts": 1}


def test_zero_dates_without_notes_still_become_null() -> None:
    assert converted(["0000-00-00"], t.date()) == [None]


# --- ENUM and SET -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", "value1"), ("2", "value2"), ("3", "value3"), ("0", ""), ("value2", "value2"), (2, "value2"), (None, None)],
    ids=["index-1", "index-2", "index-3", "index-0-is-mysqls-empty-member", "name", "json-int-index", "null"],
)
def test_enum(value: Any, expected: str | None) -> None:
    assert converted([value], t.string(), ENUM) == [expected]


def test_enum_index_out_of_range_is_refused() -> None:
    error = conversion_error(["1", "4"], t.string(), ENUM)
    assert (error.row, error.value) == (1, "4")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", ["a", "b"]),
        ("1", ["a"]),
        ("10", ["b", "d"]),
        ("15", ["a", "b", "c", "d"]),
        ("0", []),
        ("a,c", ["a", "c"]),
        (["b", "d"], ["b", "d"]),
        (None, None),
    ],
    ids=["mask-3", "mask-1", "mask-10", "mask-15", "mask-0", "names", "list", "null"],
)
def test_set(value: Any, expected: list[str] | None) -> None:
    assert converted([value], t.array(t.string()), SET) == [expected]


# --- nulls and non-string JSON values -----------------------------------------------------------

NULLABLE_TARGETS = [
    (t.boolean(), None),
    (t.tinyint(), None),
    (t.int_(), None),
    (t.bigint(), None),
    (t.double(), None),
    (t.decimal(20, 0), None),
    (t.date(), None),
    (t.timestamp(0), None),
    (t.timestamp(6), None),
    (t.time(), None),
    (t.string(), None),
    (t.string(), ENUM),
    (t.string(), "POINT"),
    (t.varchar(10), None),
    (t.bytes_(), None),
    (t.array(t.string()), SET),
]


@pytest.mark.parametrize(
    ("target", "source_type"),
    NULLABLE_TARGETS,
    ids=[f"{typ}" + (f"-{src}" if src else "") for typ, src in NULLABLE_TARGETS],
)
def test_nulls_stay_null(target: PaimonType, source_type: str | None) -> None:
    assert converted([None, None], target, source_type) == [None, None]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, "1"),
        (-7, "-7"),
        (1.5, "1.5"),
        (True, "true"),
        (False, "false"),
        ({"a": "b"}, '{"a":"b"}'),
        ([1, 2], "[1,2]"),
    ],
    ids=["int", "negative-int", "float", "true", "false", "dict", "list"],
)
def test_non_string_json_values_into_string(value: Any, expected: str) -> None:
    assert converted([value, "text", None], t.string()) == [expected, "text", None]


def test_empty_column() -> None:
    assert converted([], t.int_()) == []


# --- the canonical all-types row (tests/data/canal/all-types.json) -------------------------------


def test_every_value_of_the_all_types_row_converts() -> None:
    message = json.loads(ALL_TYPES.read_bytes())
    rows = message["data"]
    out: dict[str, list[Any]] = {}
    for column, mysql in message["mysqlType"].items():
        out[column] = convert_column(column, [row[column] for row in rows], mysql_to_paimon(mysql), mysql).to_pylist()
    first = {column: values[0] for column, values in out.items()}
    assert first == ALL_TYPES_ROW
    # the second row sets only id, part and serial: every other type's NULL converts too
    assert {c: v[1] for c, v in out.items() if v[1] is not None} == {
        "id": 8,
        "part": Decimal("0.5"),
        "serial": Decimal(9000000002),
    }
    assert out["serial"] == [Decimal(9000000001), Decimal(9000000002)]


def _geo(kind: str, coordinates: Any) -> str:
    return json.dumps({"coordinates": coordinates, "type": kind, "srid": 0}, separators=(",", ":"))


SQUARE = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]
ALL_TYPES_ROW = {
    "id": 7,
    "part": Decimal("12.5"),
    "tiny_bool": True,
    "boolean": False,
    "bool": True,
    "tinyint": -128,
    "tinyint_u": 255,
    "tinyint_uz": 9,
    "smallint": -32768,
    "smallint_u": 65535,
    "smallint_uz": 42,
    "mediumint": -8388608,
    "mediumint_u": 16777215,
    "mediumint_uz": 4242,
    "int": -2147483648,
    "int_u": 4294967295,
    "int_uz": 77,
    "bigint": -9223372036854775808,
    "bigint_u": Decimal(18446744073709551615),
    "bigint_uz": Decimal(123),
    "serial": Decimal(9000000001),
    "float": -0.25,
    "float_u": 0.75,
    "float_uz": 6.5,
    "real": -1.125,
    "real_u": 2.0625,
    "real_uz": 3.000001,
    "double": -4.5e-10,
    "double_u": 5.000005,
    "double_uz": 6.000006,
    "double_prec": 7.25,
    "double_prec_u": 8.5,
    "double_prec_uz": 9.000009,
    "numeric": Decimal("-1234567.89"),
    "numeric_u": Decimal("7654321.00"),
    "numeric_uz": Decimal("0.01"),
    "fixed": "-98765432109876543210987654321098765432.1234",
    "fixed_u": "1.0000",
    "fixed_uz": "20.5000",
    "decimal": Decimal(-9999999999),
    "decimal_u": Decimal(31),
    "decimal_uz": Decimal(5),
    "date": dt.date(1999, 12, 31),
    "datetime": dt.datetime(2000, 2, 29, 23, 59, 59),
    "datetime3": dt.datetime(2024, 7, 1, 8, 9, 10, 250000),
    "datetime6": dt.datetime(2024, 7, 1, 8, 9, 10, 1),
    "datetime_p": dt.datetime(1970, 1, 1),
    "datetime_p2": dt.datetime(2038, 1, 19, 3, 14, 7, 990000),
    "timestamp6": dt.datetime(2021, 10, 31, 1, 30, 0, 654321),
    "timestamp": dt.datetime(2021, 3, 28, 2, 30),
    "char": "lakecdc",
    "varchar": "grüße, 世界",
    "tinytext": "a tiny text",
    "text": "line one\nline two",
    "mediumtext": 'a "quoted" medium text',
    "longtext": "a long text with a tab\tinside",
    "binary": b"\x00\x01\x02\xfe\xff\x00",
    "varbinary": b"raw\x00bytes",
    "tinyblob": b"tiny blob",
    "blob": b"\xc0\xc1 blob",
    "mediumblob": b"medium blob",
    "longblob": b"long blob",
    "json": '{"k": [1, 2, {"n": null}]}',
    "enum": "blue",  # canal sends ENUM as its 1-based index
    "year": 1999,
    "time": dt.time(23, 59, 58),
    "point": _geo("Point", [2.5, -1]),
    "geometry": _geo("Polygon", [SQUARE]),
    "linestring": _geo("LineString", [[0, 0], [1, 1], [2, 0]]),
    "polygon": _geo("Polygon", [SQUARE, [[1, 1], [2, 1], [2, 2], [1, 1]]]),
    "multipoint": _geo("MultiPoint", [[0, 1], [1, 0]]),
    "multilinestring": _geo("MultiLineString", [[[0, 0], [0, 5]], [[5, 5], [6, 6], [7, 5]]]),
    "multipolygon": _geo("MultiPolygon", [[SQUARE], [[[10, 10], [12, 10], [11, 13], [10, 10]]]]),
    "geometrycollection": json.dumps(
        {
            "geometries": [
                {"type": "Point", "coordinates": [3, 3]},
                {"type": "LineString", "coordinates": [[8, 8], [9, 9]]},
            ],
            "type": "GeometryCollection",
            "srid": 0,
        },
        separators=(",", ":"),
    ),
    "set": ["x", "z"],  # canal sends SET as its bit mask: 5 = x and z
}


def test_result_is_an_arrow_array_of_the_target_type() -> None:
    array = convert_column("c", ["1"], t.decimal(20, 0))
    assert isinstance(array, pa.Array)
    assert array.type == pa.decimal128(20, 0)


def test_nanosecond_timestamps_keep_their_nine_digits() -> None:
    """debezium's NanoTimestamp becomes TIMESTAMP(9) text with nine fraction digits: parsed at nanoseconds,
    not refused as digits the (microsecond) parse would drop."""
    import pandas as pd

    values = ["2023-09-01 10:20:30.123456789", None, "1970-01-01 00:00:00.000000001"]
    array = convert_column("c", values, t.timestamp(9))
    assert array.type == pa.timestamp("ns")
    assert array.to_pylist()[0] == pd.Timestamp("2023-09-01 10:20:30.123456789")
    assert array.to_pylist()[1] is None
    assert array.to_pylist()[2].value == 1
    # microsecond columns still refuse a digit they cannot hold
    assert "c" in str(conversion_error(["2023-09-01 10:20:30.1234567"], t.timestamp(6)))
