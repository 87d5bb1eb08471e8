"""Connect/Debezium field schemas to Paimon types, and Debezium JSON values to convertible values."""

from __future__ import annotations

import base64
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from schema_evolution.conversion import convert_column
from schema_evolution.debezium_types import (
    Converter,
    bits_to_bytes,
    bytes_from_base64,
    date_from_days,
    geometry_geojson,
    plan_column,
    utc_wall_clock,
    variable_scale_decimal,
)
from schema_evolution.types import parse_type


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def _unscaled(n: int) -> str:
    return _b64(n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True))


@pytest.mark.parametrize(
    ("connect_type", "name", "params", "expected"),
    [
        ("int8", None, {}, "TINYINT"),
        ("int16", None, {}, "SMALLINT"),
        ("int32", None, {}, "INT"),
        ("int64", None, {}, "BIGINT"),
        ("float", None, {}, "FLOAT"),
        ("float32", None, {}, "FLOAT"),
        ("double", None, {}, "DOUBLE"),
        ("float64", None, {}, "DOUBLE"),
        ("boolean", None, {}, "BOOLEAN"),
        ("string", None, {}, "STRING"),
        ("bytes", None, {}, "BYTES"),
        ("struct", None, {}, "STRING"),
        ("array", None, {}, "STRING"),
        ("map", None, {}, "STRING"),
        (None, None, {}, "STRING"),
        (
            "bytes",
            "org.apache.kafka.connect.data.Decimal",
            {"scale": "3", "connect.decimal.precision": "8"},
            "DECIMAL(8, 3)",
        ),
        (
            "bytes",
            "org.apache.kafka.connect.data.Decimal",
            {"scale": "10", "connect.decimal.precision": "38"},
            "DECIMAL(38, 10)",
        ),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "3", "connect.decimal.precision": "40"}, "STRING"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "0"}, "DECIMAL(20, 0)"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "4"}, "DECIMAL(38, 4)"),
        (
            "bytes",
            "shaded.org.apache.kafka.connect.data.Decimal",
            {"scale": "1", "connect.decimal.precision": "2"},
            "DECIMAL(2, 1)",
        ),
        ("struct", "io.debezium.data.VariableScaleDecimal", {}, "STRING"),
        ("bytes", "io.debezium.data.Bits", {"length": "64"}, "BINARY(8)"),
        ("bytes", "io.debezium.data.Bits", {"length": "10"}, "BINARY(2)"),
        ("bytes", "io.debezium.data.Bits", {}, "BYTES"),
        ("int32", "io.debezium.time.Date", {}, "DATE"),
        ("int32", "org.apache.kafka.connect.data.Date", {}, "DATE"),
        ("int32", "io.debezium.time.Time", {}, "TIME(3)"),
        ("int32", "org.apache.kafka.connect.data.Time", {}, "TIME(3)"),
        ("int64", "io.debezium.time.MicroTime", {}, "TIME(0)"),
        ("int64", "io.debezium.time.NanoTime", {}, "TIME(9)"),
        ("int64", "io.debezium.time.Timestamp", {}, "TIMESTAMP(3)"),
        ("int64", "org.apache.kafka.connect.data.Timestamp", {}, "TIMESTAMP(3)"),
        ("int64", "io.debezium.time.MicroTimestamp", {}, "TIMESTAMP(6)"),
        ("int64", "io.debezium.time.NanoTimestamp", {}, "TIMESTAMP(9)"),
        ("string", "io.debezium.time.ZonedTimestamp", {}, "TIMESTAMP(6)"),
        ("int32", "io.debezium.time.Year", {}, "INT"),
        ("string", "io.debezium.time.ZonedTime", {}, "STRING"),
        ("int64", "io.debezium.time.MicroDuration", {}, "BIGINT"),
        ("string", "io.debezium.data.Json", {}, "STRING"),
        ("string", "io.debezium.data.Enum", {"allowed": "a,b"}, "STRING"),
        ("string", "io.debezium.data.EnumSet", {"allowed": "a,b"}, "STRING"),
        ("string", "io.debezium.data.Uuid", {}, "STRING"),
        ("struct", "io.debezium.data.geometry.Geometry", {}, "STRING"),
        ("struct", "io.debezium.data.geometry.Point", {}, "STRING"),
        ("struct", "io.debezium.data.geometry.Geography", {}, "STRING"),
        ("int16", "some.unknown.Logical", {}, "SMALLINT"),
    ],
)
def test_type_mapping(connect_type: str | None, name: str | None, params: dict[str, str], expected: str) -> None:
    plan = plan_column(connect_type, name, params)
    assert plan.paimon_type == expected
    parse_type(plan.paimon_type)  # Paimon's spelling, readable back


def _convert(connect_type: str, name: str | None, value: object, params: dict[str, str] | None = None) -> object:
    plan = plan_column(connect_type, name, params or {})
    assert plan.convert is not None
    return plan.convert(value)


@pytest.mark.parametrize(
    ("connect_type", "name", "params", "value", "expected"),
    [
        ("int32", "io.debezium.time.Date", {}, 19439, "2023-03-23"),
        ("int32", "io.debezium.time.Date", {}, -1, "1969-12-31"),
        ("int32", "org.apache.kafka.connect.data.Date", {}, 0, "1970-01-01"),
        ("int64", "io.debezium.time.Timestamp", {}, 1679581805123, "2023-03-23 14:30:05.123000"),
        ("int64", "io.debezium.time.Timestamp", {}, -1, "1969-12-31 23:59:59.999000"),
        ("int64", "org.apache.kafka.connect.data.Timestamp", {}, 0, "1970-01-01 00:00:00.000000"),
        ("int64", "io.debezium.time.MicroTimestamp", {}, 1679581805123456, "2023-03-23 14:30:05.123456"),
        ("int64", "io.debezium.time.NanoTimestamp", {}, 1679581805123456789, "2023-03-23 14:30:05.123456789"),
        ("int64", "io.debezium.time.MicroTime", {}, 36803000000, "10:13:23.000000"),
        ("int64", "io.debezium.time.MicroTime", {}, 36803500001, "10:13:23.500001"),
        ("int64", "io.debezium.time.MicroTime", {}, -3600000000, "-01:00:00.000000"),
        ("int64", "io.debezium.time.MicroTime", {}, 90000000000, "25:00:00.000000"),
        ("int32", "io.debezium.time.Time", {}, 36803123, "10:13:23.123"),
        ("int32", "org.apache.kafka.connect.data.Time", {}, 1, "00:00:00.001"),
        ("int64", "io.debezium.time.NanoTime", {}, 36803000000001, "10:13:23.000000001"),
        ("string", "io.debezium.time.ZonedTimestamp", {}, "2023-03-23T22:00:10.123456Z", "2023-03-23 22:00:10.123456"),
        ("string", "io.debezium.time.ZonedTimestamp", {}, "2023-03-23T07:10:00Z", "2023-03-23 07:10:00.000000"),
        ("string", "io.debezium.time.ZonedTimestamp", {}, "2023-03-24T01:10:00.5+02:00", "2023-03-23 23:10:00.500000"),
        (
            "string",
            "io.debezium.time.ZonedTimestamp",
            {},
            "2023-03-23T07:10:00.123456000Z",
            "2023-03-23 07:10:00.123456",
        ),
        (
            "string",
            "io.debezium.time.ZonedTimestamp",
            {},
            "2023-03-23T07:10:00.1234567Z",
            "2023-03-23 07:10:00.1234567",
        ),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2"}, _unscaled(12345), "123.45"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2"}, _unscaled(-150), "-1.50"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "3"}, _unscaled(5), "0.005"),
        (
            "bytes",
            "org.apache.kafka.connect.data.Decimal",
            {"scale": "0"},
            _unscaled(2**64 - 1),
            "18446744073709551615",
        ),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "-2"}, _unscaled(7), "700"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "1"}, 11111, "11111"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "1"}, 1.1, "1.1"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "3"}, Decimal("12345.110"), "12345.110"),
        ("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "0"}, Decimal("1E+3"), "1000"),
        ("struct", "io.debezium.data.VariableScaleDecimal", {}, {"scale": 3, "value": _unscaled(-12345)}, "-12.345"),
        ("bytes", "io.debezium.data.Bits", {"length": "64"}, "xwcAAAAAAAA=", b"\x00\x00\x00\x00\x00\x00\x07\xc7"),
        ("bytes", None, {}, "Ynl0ZXMAAAAAAA==", b"bytes\x00\x00\x00\x00\x00"),
        ("bytes", None, {}, _b64(b"\xff\x00\xfe"), b"\xff\x00\xfe"),
    ],
)
def test_value_conversion(
    connect_type: str, name: str | None, params: dict[str, str], value: object, expected: object
) -> None:
    assert _convert(connect_type, name, value, params) == expected


def test_types_without_converter_keep_values() -> None:
    for connect_type, name in [("int32", None), ("string", "io.debezium.data.Json"), ("double", None)]:
        assert plan_column(connect_type, name, {}).convert is None


def test_geometry_uses_the_srid_and_paimons_geojson() -> None:
    wkb = struct.pack("<BIdd", 1, 1, 1.0, 1.0)
    assert geometry_geojson({"wkb": _b64(wkb), "srid": None}) == '{"coordinates":[1,1],"type":"Point","srid":0}'
    assert geometry_geojson({"x": 1.5, "y": 2.0, "wkb": _b64(struct.pack("<BIdd", 1, 1, 1.5, 2.0)), "srid": 4326}) == (
        '{"coordinates":[1.5,2],"type":"Point","srid":4326}'
    )


@pytest.mark.parametrize(
    ("func", "value", "reason"),
    [
        (date_from_days, "x", "invalid literal"),
        (date_from_days, True, "expected an integer"),
        (date_from_days, 10**9, "magnitude"),
        (date_from_days, 10**8, "out of range"),
        (utc_wall_clock, "2023-03-23 07:10:00", "not an ISO-8601 timestamp"),
        (utc_wall_clock, 5, "not an ISO-8601 timestamp"),
        (variable_scale_decimal, {"scale": 1}, "base64 'value'"),
        (bytes_from_base64, "not base64!", "base64"),
        (bytes_from_base64, 12, "expected base64 text"),
        (bits_to_bytes, None, "expected base64 text"),
        (geometry_geojson, {"srid": 0}, "base64 'wkb'"),
        (geometry_geojson, {"wkb": _b64(b"\x01\x01")}, "too short"),
        (geometry_geojson, {"wkb": _b64(struct.pack("<BIdd", 1, 1, 1.5, 2.0)), "srid": -1}, "SRID -1 is outside"),
        (geometry_geojson, {"wkb": _b64(struct.pack("<BIdd", 1, 1, 1.5, 2.0)), "srid": 2**32}, "outside 0..4294967295"),
    ],
)
def test_bad_values_raise_value_errors(func: Converter, value: object, reason: str) -> None:
    with pytest.raises((ValueError, OverflowError), match=reason):
        func(value)


def test_decimal_rejects_other_json_kinds() -> None:
    with pytest.raises(ValueError, match="base64 string or a number"):
        _convert("bytes", "org.apache.kafka.connect.data.Decimal", [1], {"scale": "0"})
    with pytest.raises(ValueError):
        _convert("bytes", "org.apache.kafka.connect.data.Decimal", "12.5", {"scale": "1"})


@pytest.mark.parametrize(
    ("connect_type", "name", "params", "value", "arrow_value"),
    [
        ("int64", "io.debezium.time.Timestamp", {}, 1679581805123, "2023-03-23 14:30:05.123000"),
        ("int64", "io.debezium.time.MicroTimestamp", {}, 1679581805123456, "2023-03-23 14:30:05.123456"),
        ("string", "io.debezium.time.ZonedTimestamp", {}, "2023-03-23T22:00:10.123456Z", "2023-03-23 22:00:10.123456"),
        ("int32", "io.debezium.time.Date", {}, 19439, "2023-03-23"),
        ("int64", "io.debezium.time.MicroTime", {}, 36803123000, "10:13:23.123000"),
        ("int32", "io.debezium.time.Time", {}, 36803123, "10:13:23.123000"),
        (
            "bytes",
            "org.apache.kafka.connect.data.Decimal",
            {"scale": "2", "connect.decimal.precision": "5"},
            _unscaled(-150),
            "-1.50",
        ),
        ("bytes", "io.debezium.data.Bits", {"length": "16"}, _b64(b"\x01\x02"), b"\x02\x01"),
    ],
)
def test_converted_values_are_accepted_by_convert_column(
    connect_type: str, name: str | None, params: dict[str, str], value: object, arrow_value: object
) -> None:
    plan = plan_column(connect_type, name, params)
    assert plan.convert is not None
    array = convert_column("c", [plan.convert(value), None], parse_type(plan.paimon_type))
    first = array[0].as_py()
    shown = first if isinstance(first, bytes) else str(first)
    assert shown == arrow_value
    assert array[1].as_py() is None
    assert isinstance(array, pa.Array)


def test_time_beyond_a_day_is_refused_by_the_conversion_not_wrapped() -> None:
    plan = plan_column("int64", "io.debezium.time.MicroTime", {})
    assert plan.convert is not None
    with pytest.raises(ValueError, match="TIME outside"):
        convert_column("c", [plan.convert(90000000000)], parse_type(plan.paimon_type))
