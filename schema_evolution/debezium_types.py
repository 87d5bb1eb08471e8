"""Kafka Connect / Debezium field schemas to Paimon types, and their JSON values to convertible values.

A Debezium message with the Kafka Connect envelope describes each column as
``{"type": "int64", "name": "io.debezium.time.MicroTimestamp", "parameters": {...}, "field": "ts"}``:
``type`` is the Connect physical type, ``name`` (optional) a logical type refining it. The mapping
follows Apache Paimon's ``DebeziumSchemaUtils`` (``toDataType`` / ``transformRawValue``) wherever Paimon
names a logical type, so that a table created by lakecdc has the types Paimon's Flink action gives it:

* ``ZonedTimestamp`` is ``TIMESTAMP(6)`` holding the UTC wall clock (Paimon converts with a UTC server
  zone), ``MicroTime`` is ``TIME(0)``, a Connect ``Decimal`` without precision is ``DECIMAL(20, 0)``
  (MySQL ``BIGINT UNSIGNED``) and with a precision above 38 is ``STRING``; ``Bits`` are
  ``BINARY((length + 7) / 8)`` with the bytes reversed to big-endian.
* Logical types Paimon leaves at their physical type (``NanoTimestamp``, ``NanoTime``, ``Time``, the
  ``org.apache.kafka.connect.data`` temporals, ``VariableScaleDecimal``, ``Geography``) are given their
  meaning here instead of a bare number or a struct's ``toString``.
* ``float64`` is ``DOUBLE`` (Paimon maps it to FLOAT; Connect's JSON converter writes ``double`` anyway).
* Debezium's ``__debezium.source.column.type`` parameters are not used: Paimon reads them only for
  debezium-avro, never for debezium-json.

Values: temporal numbers become text that ``schema_evolution.conversion`` parses ("2023-03-23",
"2023-03-23 14:30:05.123000", "10:13:23.000000"), decimals exact text, ``bytes`` (base64) bytes,
geometries Paimon's GeoJSON text. Converters raise ``ValueError`` for a value that does not fit.
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from schema_evolution.geojson import mysql_geometry_to_geojson

MAX_DECIMAL_PRECISION = 38  # Paimon's DecimalType.MAX_PRECISION

Converter = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class ColumnPlan:
    """How one Connect field becomes a Paimon column: its type and the value converter (None: as is)."""

    paimon_type: str
    convert: Converter | None = None


# --- value converters -------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1)
_EPOCH_DATE = date(1970, 1, 1)


def _integer(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise ValueError(f"expected an integer, got {type(v).__name__}")
    return int(v)


def date_from_days(v: Any) -> str:
    """io.debezium.time.Date / Connect Date: days since 1970-01-01."""
    return (_EPOCH_DATE + timedelta(days=_integer(v))).isoformat()


def _epoch(per_second: int, digits: int) -> Converter:
    def convert(v: Any) -> str:
        seconds, fraction = divmod(_integer(v), per_second)
        wall = (_EPOCH + timedelta(seconds=seconds)).isoformat(sep=" ")
        return f"{wall}.{fraction * 10**digits // per_second:0{digits}d}"

    return convert


def _time_of_day(per_second: int, digits: int) -> Converter:
    # No wrap-around at 24 hours (Paimon's LocalTime silently wraps MySQL's TIME '-01:00' or '25:00');
    # the text keeps the sign and the hours so that the conversion refuses what TIME cannot hold.
    def convert(v: Any) -> str:
        n = _integer(v)
        seconds, fraction = divmod(abs(n), per_second)
        minutes, s = divmod(seconds, 60)
        h, m = divmod(minutes, 60)
        sign = "-" if n < 0 else ""
        return f"{sign}{h:02d}:{m:02d}:{s:02d}.{fraction * 10**digits // per_second:0{digits}d}"

    return convert


_ZONED = re.compile(r"^(\d{4,}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$")


def utc_wall_clock(v: Any) -> str:
    """io.debezium.time.ZonedTimestamp ("2023-03-23T14:30:05.123Z") as the UTC wall clock."""
    m = _ZONED.match(v) if isinstance(v, str) else None
    if m is None:
        raise ValueError("not an ISO-8601 timestamp with a zone (expected like 2023-03-23T14:30:05Z)")
    day, clock, fraction, zone = m.groups()
    if zone not in ("Z", "+00:00", "-00:00"):
        shifted = datetime.fromisoformat(f"{day}T{clock}{zone}").astimezone(UTC)
        day, clock = shifted.date().isoformat(), shifted.time().isoformat()
    fraction = (fraction or "").ljust(6, "0")
    # Keep digits beyond microseconds only when they carry something: the conversion refuses them
    # rather than rounding, exactly as it refuses too many digits from any other source.
    if len(fraction) > 6 and not fraction[6:].strip("0"):
        fraction = fraction[:6]
    return f"{day} {clock}.{fraction}"


def _scaled(unscaled: int, scale: int) -> str:
    digits = str(abs(unscaled))
    sign = "-" if unscaled < 0 else ""
    if scale <= 0:
        return sign + digits + "0" * -scale if unscaled else "0"
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def _unscaled(text: str) -> int:
    return int.from_bytes(base64.b64decode(text, validate=True), "big", signed=True)


def _decimal(scale: int) -> Converter:
    def convert(v: Any) -> str:
        if isinstance(v, str):  # decimal.format=BASE64 (Connect's default): unscaled two's complement
            return _scaled(_unscaled(v), scale)
        if isinstance(v, Decimal):  # decimal.format=NUMERIC, parsed exactly
            return format(v, "f")
        if isinstance(v, int | float) and not isinstance(v, bool):
            return repr(v)  # a JSON number the parser found exact in a double
        raise ValueError(f"expected a base64 string or a number for a Decimal, got {type(v).__name__}")

    return convert


def variable_scale_decimal(v: Any) -> str:
    """io.debezium.data.VariableScaleDecimal: ``{"scale": 2, "value": "<base64 unscaled>"}``."""
    if not isinstance(v, Mapping) or not isinstance(v.get("value"), str):
        raise ValueError("expected an object with 'scale' and a base64 'value'")
    return _scaled(_unscaled(v["value"]), _integer(v.get("scale") or 0))


def bytes_from_base64(v: Any) -> bytes:
    if not isinstance(v, str):
        raise ValueError(f"expected base64 text for bytes, got {type(v).__name__}")
    return base64.b64decode(v, validate=True)


def bits_to_bytes(v: Any) -> bytes:
    """io.debezium.data.Bits: little-endian bytes in base64, stored big-endian as Paimon does."""
    return bytes_from_base64(v)[::-1]


def geometry_geojson(v: Any) -> str:
    """io.debezium.data.geometry.*: ``{"wkb": "<base64>", "srid": 4326 | null}`` as Paimon's GeoJSON."""
    if not isinstance(v, Mapping) or not isinstance(v.get("wkb"), str):
        raise ValueError("expected a geometry object with a base64 'wkb'")
    # geojson.py reads MySQL's internal form: a little-endian SRID in front of the WKB.
    srid = _integer(v.get("srid") or 0)
    if not 0 <= srid <= 0xFFFFFFFF:  # MySQL's SRID is an unsigned 32-bit number
        raise ValueError(f"geometry SRID {srid} is outside 0..4294967295")
    return mysql_geometry_to_geojson(struct.pack("<I", srid) + bytes_from_base64(v["wkb"]))


# --- the mapping table ------------------------------------------------------------------------

_PHYSICAL = {
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INT",
    "int64": "BIGINT",
    "float": "FLOAT",
    "float32": "FLOAT",
    "double": "DOUBLE",
    "float64": "DOUBLE",
    "boolean": "BOOLEAN",
    "string": "STRING",
    "bytes": "BYTES",
}  # struct, array, map and anything unknown: STRING, the value as JSON text

_PHYSICAL_CONVERT: dict[str, Converter] = {"bytes": bytes_from_base64}


def _decimal_plan(params: Mapping[str, str]) -> ColumnPlan:
    scale = int(params.get("scale") or 0)
    precision = params.get("connect.decimal.precision")
    if precision is None:
        # MySQL BIGINT UNSIGNED (Paimon: DECIMAL(20, 0)); a scale there would lose the fraction.
        return ColumnPlan(
            "DECIMAL(20, 0)" if scale == 0 else f"DECIMAL({MAX_DECIMAL_PRECISION}, {scale})", _decimal(scale)
        )
    p = int(precision)
    if p > MAX_DECIMAL_PRECISION:
        return ColumnPlan("STRING", _decimal(scale))
    return ColumnPlan(f"DECIMAL({p}, {scale})", _decimal(scale))


def _bits_plan(params: Mapping[str, str]) -> ColumnPlan:
    length = params.get("length")
    return ColumnPlan("BYTES" if length is None else f"BINARY({(int(length) + 7) // 8})", bits_to_bytes)


def _fixed(paimon_type: str, convert: Converter | None = None) -> Callable[[Mapping[str, str]], ColumnPlan]:
    plan = ColumnPlan(paimon_type, convert)
    return lambda _params: plan


_STRING = _fixed("STRING")
_GEOMETRY = _fixed("STRING", geometry_geojson)

_LOGICAL: dict[str, Callable[[Mapping[str, str]], ColumnPlan]] = {
    "org.apache.kafka.connect.data.Decimal": _decimal_plan,
    "io.debezium.data.VariableScaleDecimal": _fixed("STRING", variable_scale_decimal),
    "io.debezium.data.Bits": _bits_plan,
    "io.debezium.time.Date": _fixed("DATE", date_from_days),
    "org.apache.kafka.connect.data.Date": _fixed("DATE", date_from_days),
    "io.debezium.time.Time": _fixed("TIME(3)", _time_of_day(1000, 3)),
    "org.apache.kafka.connect.data.Time": _fixed("TIME(3)", _time_of_day(1000, 3)),
    "io.debezium.time.MicroTime": _fixed("TIME(0)", _time_of_day(1_000_000, 6)),
    "io.debezium.time.NanoTime": _fixed("TIME(9)", _time_of_day(1_000_000_000, 9)),
    "io.debezium.time.Timestamp": _fixed("TIMESTAMP(3)", _epoch(1000, 6)),
    "org.apache.kafka.connect.data.Timestamp": _fixed("TIMESTAMP(3)", _epoch(1000, 6)),
    "io.debezium.time.MicroTimestamp": _fixed("TIMESTAMP(6)", _epoch(1_000_000, 6)),
    "io.debezium.time.NanoTimestamp": _fixed("TIMESTAMP(9)", _epoch(1_000_000_000, 9)),
    "io.debezium.time.ZonedTimestamp": _fixed("TIMESTAMP(6)", utc_wall_clock),
    "io.debezium.data.Json": _STRING,
    "io.debezium.data.Enum": _STRING,
    "io.debezium.data.EnumSet": _STRING,
    "io.debezium.data.geometry.Geometry": _GEOMETRY,
    "io.debezium.data.geometry.Point": _GEOMETRY,
    "io.debezium.data.geometry.Geography": _GEOMETRY,
}


def plan_column(connect_type: str | None, logical_name: str | None, parameters: Mapping[str, str]) -> ColumnPlan:
    """The Paimon type (Paimon's SQL spelling) and value converter of one Connect field."""
    if logical_name is not None:
        # Paimon matches the Decimal name by suffix: shading may prefix the Kafka package.
        if logical_name.endswith("org.apache.kafka.connect.data.Decimal"):
            logical_name = "org.apache.kafka.connect.data.Decimal"
        planner = _LOGICAL.get(logical_name)
        if planner is not None:
            return planner(parameters)
    physical = connect_type or "string"
    return ColumnPlan(_PHYSICAL.get(physical, "STRING"), _PHYSICAL_CONVERT.get(physical))
