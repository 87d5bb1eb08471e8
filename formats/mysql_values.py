"""Rows read from MySQL (snapshot SELECTs through pymysql, binlog row events through
mysql-replication) as change events in canal's vocabulary.

Both drivers hand over Python objects, and not the same ones for the same column (a SET is
``'a,b'`` from a SELECT and ``{'a', 'b'}`` from the binlog; a BIT is bytes from one and a string of
bits from the other; a TIMESTAMP is the session's wall clock from one and naive UTC from the other).
``normalize`` turns every value into what canal-json carries for that MySQL type, so the rest of
the pipeline (type mapping, exact conversion, zero dates, ENUM/SET, GeoJSON) is the one tested
against Paimon's canal cases. Pure: no driver is imported here.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import operator
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from formats.events import SourceSchema, TypeSystem

UTC = dt.UTC
# The format name MySQL rows are reported under (errors, chunk rows).
FORMAT = "mysql-binlog"


def server_zone(name: str | None) -> dt.tzinfo:
    """Paimon's ``server-time-zone``: an IANA name or a ±HH:MM offset (default UTC)."""
    if not name:
        return UTC
    text = name.strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return UTC
    if text[:1] in "+-" and ":" in text:
        hours, minutes = text[1:].split(":", 1)
        delta = dt.timedelta(hours=int(hours), minutes=int(minutes))
        return dt.timezone(delta if text[0] == "+" else -delta)
    try:
        return ZoneInfo(text)
    except Exception:  # ZoneInfoNotFoundError or a malformed key
        raise ValueError(f"server-time-zone '{name}' is not a time zone (e.g. UTC, Asia/Shanghai, +08:00)") from None


def _base(column_type: str) -> str:
    return column_type.strip().split("(")[0].split()[0].upper()


def _bits(column_type: str) -> int:
    if "(" not in column_type:
        return 1
    return int(column_type.split("(", 1)[1].split(")", 1)[0])


def _time_text(delta: dt.timedelta) -> str:
    total_us = delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds
    sign = "-" if total_us < 0 else ""
    total_us = abs(total_us)
    seconds, micros = divmod(total_us, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{text}.{micros:06d}" if micros else text


def _datetime_text(value: dt.datetime) -> str:
    # isoformat: the same text as "%Y-%m-%d %H:%M:%S[.ffffff]", but years below 1000 keep their four
    # digits (strftime writes year 1 as "1", which no timestamp parser reads)
    return value.replace(tzinfo=None).isoformat(" ")


_TEXT_BASES = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "JSON", "ENUM", "SET"})


def normalize(value: Any, column_type: str, zone: dt.tzinfo, timestamps_in_utc: bool) -> Any:
    """One column value as canal-json would carry it (text, or bytes for binary columns).

    ``timestamps_in_utc``: TIMESTAMP values arrive as naive UTC (the binlog; or a SELECT in a UTC
    session) and become the wall clock of ``zone`` (Paimon's server-time-zone rule). DATETIME is
    never shifted.
    """
    return column_normalizer(column_type, zone, timestamps_in_utc)(value)


def column_normalizer(column_type: str, zone: dt.tzinfo, timestamps_in_utc: bool) -> Callable[[Any], Any]:
    """``normalize`` for one column type, with the type read once: a snapshot chunk or a binlog
    table normalizes every value of a column the same way, and reading the type text per value
    cost as much as the conversion (8k snapshot rows of 10 columns: 120 ms before, see README)."""
    base = _base(column_type)
    if base == "BIT":
        return _bit_normalizer(_bits(column_type))
    if base == "YEAR":
        # Row events carry a YEAR as year - 1900 and the decoders add 1900 back, also to 0000's 0
        # (mysql-replication and lakecdc's own decoder); 1900 is no YEAR value, and the SELECT
        # reads 0000 as 0: without this a row of year 0000 would be 0 in the snapshot and 1900 once
        # changed, a second row where 0000 is its key.
        return lambda value: "0" if value == 1900 or value == "1900" else _year_text(value)
    # Held as STRING in Paimon; its MySQL action writes such values without trailing zeros
    # (Paimon's MySqlSyncTableActionITCase: FIXED(40,3) 1...1.110 is "1...1.11").
    wide_decimal = decimal_precision(column_type) > 38
    # (UTC wall clock is UTC: nothing to shift)
    shift = base == "TIMESTAMP" and timestamps_in_utc and zone is not UTC
    text_bytes = base in _TEXT_BASES
    binary_width = _bits(column_type) if base == "BINARY" else 0
    members = _set_members(column_type)

    def general(value: Any) -> Any:
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, Decimal):
            if wide_decimal:
                # (Decimal.normalize would round to the context's 28 digits: strip the text instead.)
                text = format(value, "f")
                return text.rstrip("0").rstrip(".") if "." in text else text
            return format(value, "f")
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, dt.datetime):
            if shift:
                value = value.replace(tzinfo=UTC).astimezone(zone).replace(tzinfo=None)
            return _datetime_text(value)
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, dt.timedelta):
            return _time_text(value)
        if isinstance(value, set | frozenset | list | tuple):
            # A SET's members in the column's definition order (the binlog gives an unordered set).
            chosen = set(value)
            ordered = [m for m in members if m in chosen] or sorted(chosen)
            return ",".join(ordered)
        if isinstance(value, dict):
            return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
        if isinstance(value, bytes | bytearray):
            if text_bytes:
                return bytes(value).decode("utf-8")
            if binary_width:
                # The binlog drops a BINARY(n) value's trailing 0x00 bytes; the column holds all n
                # (a SELECT returns them, and Debezium pads them back).
                return bytes(value).ljust(binary_width, b"\x00")
            return bytes(value)
        return value

    def value_of(value: Any) -> Any:
        # The common exact types first; anything else (subclasses included) takes ``general``.
        kind = type(value)
        if value is None or kind is str:
            return value
        if kind is int:
            return str(value)
        if kind is dt.datetime and not shift and value.tzinfo is None:
            return value.isoformat(" ")
        return general(value)

    return value_of


def _bit_normalizer(width: int) -> Callable[[Any], Any]:
    """A BIT(``width``) column's values: "0"/"1" for BIT(1), big-endian bytes for wider ones."""

    def bit(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bytes | bytearray):
            number = int.from_bytes(value, "big")
        elif isinstance(value, str):
            number = int(value, 2) if value else 0  # mysql-replication: the bits as text
        else:
            number = int(value)
        if width == 1:
            return "1" if number else "0"
        return number.to_bytes((width + 7) // 8, "big")

    return bit


class RowNormalizer:
    """``normalize_row`` for rows of one set of column types, each column's normalizer made once."""

    def __init__(
        self, types: Mapping[str, str], zone: dt.tzinfo, timestamps_in_utc: bool, to_string: bool = False
    ) -> None:
        self.types = types
        self.zone = zone
        self.timestamps_in_utc = timestamps_in_utc
        self.to_string = to_string
        self._columns: dict[str, Callable[[Any], Any]] = {}
        # the normalizers of the last row's columns, in its order
        self._names: list[str] = []
        self._row: list[Callable[[Any], Any]] = []

    def _column(self, name: str) -> Callable[[Any], Any]:
        column_type = self.types.get(name, "TEXT")
        convert = column_normalizer(column_type, self.zone, self.timestamps_in_utc)
        if self.to_string:
            convert = functools.partial(_normalized_text, convert, column_type)
        self._columns[name] = convert
        return convert

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        names = list(row)
        if names != self._names:  # rows of a chunk or a table's row events share their columns
            self._names = names
            self._row = [self._columns.get(name) or self._column(name) for name in names]
        return dict(zip(names, map(operator.call, self._row, row.values()), strict=True))


def _float32_text(value: float) -> str:
    """A FLOAT's value as the shortest text that reads back as the same 32-bit float (the digits of
    Java's ``Float.toString``, in Python's notation): 1.2345678 where the binlog and the snapshot (which
    reads FLOATs as ``column * 1e0``) give the stored float widened to a double, 1.2345677614212036.
    ~4 us a value against repr's 0.3, so only for ``--type-mapping to-string``: a FLOAT column parses
    either text into the same float."""
    try:
        packed = struct.pack("<f", value)
    except OverflowError:  # (no FLOAT holds it: a double's digits)
        return repr(value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if struct.pack("<f", float(text)) == packed:
            return repr(float(text))
    return repr(value)  # (not reached: 9 digits always read back)


def _year_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def decimal_precision(column_type: str) -> int:
    """A DECIMAL column type's precision (MySQL's default 10 where none is written)."""
    if "(" not in column_type:
        return 10
    try:
        return int(column_type.split("(", 1)[1].split(",")[0].split(")")[0])
    except ValueError:
        return 10


def _set_members(column_type: str) -> list[str]:
    if "(" not in column_type:
        return []
    inner = column_type.split("(", 1)[1].rsplit(")", 1)[0]
    return [m.strip().strip("'\"") for m in inner.split(",")]


def _normalized_text(convert: Callable[[Any], Any], column_type: str, value: Any) -> Any:
    return as_text(convert(value), column_type)


def normalize_row(
    row: Mapping[str, Any],
    types: Mapping[str, str],
    zone: dt.tzinfo,
    timestamps_in_utc: bool,
    to_string: bool = False,
) -> dict[str, Any]:
    """``normalize`` for each column; ``to_string`` (``--type-mapping to-string``): then ``as_text``.
    For many rows of the same types, make one ``RowNormalizer``."""
    return RowNormalizer(types, zone, timestamps_in_utc, to_string)(row)


_BINARIES = frozenset({"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})
_DECIMALS = frozenset({"DECIMAL", "NUMERIC", "FIXED", "DEC"})
_DATETIME_TEXT = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?$")
_TIME_TEXT = re.compile(r"^(-)?(\d+):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")


def as_text(value: Any, column_type: str) -> Any:
    """A ``normalize``d value as Paimon's MySQL action writes it into a STRING column under
    ``--type-mapping to-string``: the text of Debezium's value (``DebeziumSchemaUtils.transformRawValue``),
    which for some types is not canal's text. BIT(1) is ``true``/``false`` and BIT(n) its bits
    (8 per byte); decimals lose trailing zeros (in plain notation); DATETIME(0-3) has 3 fractional digits,
    DATETIME(4-6) and TIMESTAMP 6; TIME is Java's ``LocalTime`` text (``10:13``, ``10:13:23.500``);
    binary columns are their bytes read as UTF-8; a FLOAT its shortest 32-bit digits (``1.2345678``, not
    its widened double's). Spatial values stay WKB (made GeoJSON later),
    ENUM, SET, JSON, numbers and text are canal's text already.
    """
    if value is None:
        return None
    base = _base(column_type)
    if base == "BIT":
        if isinstance(value, bytes | bytearray):
            return "".join(f"{b:08b}" for b in value)
        return "true" if value == "1" else "false"
    if base in _DECIMALS and isinstance(value, str) and "." in value:
        # Jackson reads Debezium's numeric decimals with trailing zeros stripped.
        return value.rstrip("0").rstrip(".")
    if base in ("DATETIME", "TIMESTAMP") and isinstance(value, str):
        m = _DATETIME_TEXT.match(value)
        if m is None or value.startswith("0000-00-00"):
            return value  # a zero date (Debezium: NULL or the epoch) is kept as MySQL's text
        digits = 6 if base == "TIMESTAMP" or _precision_of(column_type) > 3 else 3
        return f"{m.group(1)}.{(m.group(2) or '').ljust(digits, '0')[:digits]}"
    if base == "TIME" and isinstance(value, str):
        return _local_time_text(value)
    if base == "FLOAT" and isinstance(value, str):
        try:
            return _float32_text(float(value))
        except ValueError:
            return value
    if base in _BINARIES and isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def _precision_of(column_type: str) -> int:
    """The fractional-second precision of ``datetime(3)`` (0 without brackets)."""
    if "(" not in column_type:
        return 0
    try:
        return int(column_type.split("(", 1)[1].split(")", 1)[0])
    except ValueError:
        return 0


def _local_time_text(text: str) -> str:
    """Debezium's MicroTime read back through ``Instant.atZone(UTC).toLocalTime().toString()``:
    the time of day (wrapping outside 00:00..24:00), seconds only when not zero, the fraction in
    3 or 6 digits."""
    m = _TIME_TEXT.match(text.strip())
    if m is None:
        return text
    sign, h, mi, s, frac = m.groups()
    micros = ((int(h) * 60 + int(mi)) * 60 + int(s)) * 1_000_000 + int((frac or "0").ljust(6, "0")[:6])
    micros = (-micros if sign else micros) % 86_400_000_000
    seconds, us = divmod(micros, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = f"{hours:02d}:{minutes:02d}"
    if secs or us:
        out += f":{secs:02d}"
    if us:
        out += f".{us // 1000:03d}" if us % 1000 == 0 else f".{us:06d}"
    return out


def source_schema(
    columns: Sequence[tuple[str, str]],
    primary_keys: Sequence[str],
    comments: Mapping[str, str] | None = None,
    table_comment: str | None = None,
) -> SourceSchema:
    """A table's columns with their MySQL column types (information_schema's COLUMN_TYPE), and
    its column and table comments."""
    kept = tuple((n, c) for n, c in (comments or {}).items() if c)
    # "" (a table without a comment) is kept apart from None (unknown): Paimon writes MySQL's "".
    return SourceSchema(tuple(columns), tuple(primary_keys), TypeSystem.MYSQL, kept, table_comment)
