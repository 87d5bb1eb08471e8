"""Chunk bounds of binary, temporal and decimal keys (#27): how they travel and how a key is placed
among them.

``key_chunks.query_chunks`` reads a chunk's bounds through pymysql on a session in UTC
(``client.connect``): BINARY/VARBINARY as ``bytes`` (a BINARY(n) value with all its n bytes, right-padded
with 0x00), DATE as ``date``, DATETIME and TIMESTAMP as naive ``datetime`` (a TIMESTAMP's UTC wall
clock), DECIMAL as ``Decimal``, TIME as ``timedelta``. A chunk's SELECT reads its keys the same way
(``snapshot_text`` decodes key columns with pymysql's decoders). The binlog decoder gives the same types
with one difference: a BINARY(n) value without its trailing 0x00 bytes, and TIMESTAMPs as naive UTC
(``utcfromtimestamp``); a negative TIME with a fraction, which the library gets wrong, is read as the
server packs it (``formats.mysql_row_image``). ``TypedRange`` pads BINARY values back, so Python's order
of the values is the server's: bytes by memcmp, datetimes, times and decimals by value. Passed back as
``WHERE key >= %s``, pymysql writes bytes as ``_binary X'…'``, a datetime or a time as its text to the
microsecond (read in the UTC session, so a TIMESTAMP bound names the same instant) and a Decimal as its
plain digits.

Offsets and the chunk registry are JSON: ``encode_bound`` tags these bounds (``{"bytes": hex}``,
``{"datetime": iso}``, ``{"date": iso}``, ``{"decimal": text}``, ``{"time": [days, seconds,
microseconds]}``, a composite key's tuple as ``{"key": [...]}`` of those); ``decode_bound`` turns them back.
Integers and strings travel as they are.

YEAR, BIT, ENUM, FLOAT and DOUBLE keys are split on their numbers (``key_ordinals``). Not split (one
chunk, as before): SET, and any other type. A zero or invalid DATE or
DATETIME (non-strict SQL modes) is a ``str`` from pymysql and None from the binlog: a table whose
bounds would be one is read as one chunk; a binlog key None is placed as the lowest key (right for a
zero date, the lowest value; an invalid date such as 2024-02-30 under ALLOW_INVALID_DATES may so be
placed in the wrong chunk).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

# first key columns split query-driven with typed bounds, and the Python type of their bounds
_TYPED = re.compile(r"^(binary|varbinary|date|datetime|timestamp|time|decimal|numeric|dec|fixed)\b", re.IGNORECASE)
_BOUND_TYPES: dict[str, type] = {
    "binary": bytes,
    "varbinary": bytes,
    "date": dt.date,
    "datetime": dt.datetime,
    "timestamp": dt.datetime,
    "time": dt.timedelta,
    "decimal": Decimal,
    "numeric": Decimal,
    "dec": Decimal,
    "fixed": Decimal,
}


def typed_key(column_type: str) -> bool:
    """Whether a first key column of ``column_type`` is split with typed bounds (see the module)."""
    return _TYPED.match(column_type.strip()) is not None


def bounds_typed(column_type: str, bounds: Sequence[Any]) -> bool:
    """Whether every bound is of the Python type pymysql gives the column (not a zero date's ``str``)."""
    match = _TYPED.match(column_type.strip())
    if match is None:
        return False
    want = _BOUND_TYPES[match.group(1).lower()]
    # (exact types: a datetime is a date too, and a DATE bound must be no datetime)
    return all(type(b) is want for b in bounds)


def binary_width(column_type: str) -> int:
    """n for a BINARY(n) column (its values are padded to n bytes with 0x00), else 0."""
    match = re.match(r"^binary\s*(?:\((\d+)\))?", column_type.strip(), re.IGNORECASE)
    return int(match.group(1) or 1) if match else 0


def binlog_key(value: Any, width: int) -> Any:
    """A binlog image's key value as the snapshot reads it: a BINARY(n) value padded back to n bytes."""
    if width and isinstance(value, bytes | bytearray):
        return bytes(value).ljust(width, b"\x00")
    return value


def key_widths(types: Mapping[str, str], keys: Sequence[str]) -> tuple[int, ...]:
    """``binary_width`` of each key column (0: kept as it is)."""
    return tuple(binary_width(types.get(k, "")) for k in keys)


def encode_bound(bound: Any) -> Any:
    """A bound as JSON (offsets, the chunk registry): ints, strings and None as they are; a composite
    key's bound (a tuple, ``key_chunks``) as ``{"key": [each value encoded]}``."""
    if isinstance(bound, tuple):
        return {"key": [encode_bound(v) for v in bound]}
    if isinstance(bound, bytes | bytearray):
        return {"bytes": bytes(bound).hex()}
    if isinstance(bound, dt.datetime):
        return {"datetime": bound.isoformat()}
    if isinstance(bound, dt.date):
        return {"date": bound.isoformat()}
    if isinstance(bound, Decimal):
        return {"decimal": str(bound)}
    if isinstance(bound, dt.timedelta):
        return {"time": [bound.days, bound.seconds, bound.microseconds]}
    return bound


def decode_bound(bound: Any) -> Any:
    """``encode_bound``'s inverse (a bound already decoded is returned as it is)."""
    if not isinstance(bound, dict):
        return bound
    ((kind, text),) = bound.items()
    if kind == "key":
        return tuple(decode_bound(v) for v in text)
    if kind == "bytes":
        return bytes.fromhex(text)
    if kind == "datetime":
        return dt.datetime.fromisoformat(text)
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind == "decimal":
        return Decimal(text)
    if kind == "time":
        return dt.timedelta(days=text[0], seconds=text[1], microseconds=text[2])
    raise ValueError(f"unknown chunk bound {bound!r}")


class TypedRange:
    """Whether a key lies in [lo, hi) of typed bounds in the server's order (``__call__``): a binlog
    BINARY(n) key padded back to n bytes, then Python's order (memcmp for bytes, by value for
    datetimes and decimals). A key None (a zero date the binlog cannot decode) is the lowest key; a key
    of another type than the bounds (the column altered meanwhile) lies in no range."""

    def __init__(self, width: int) -> None:
        self.width = width

    def __call__(self, key: Any, lo: Any, hi: Any) -> bool:
        if key is None:
            return lo is None
        key = binlog_key(key, self.width)
        try:
            return (lo is None or key >= lo) and (hi is None or key < hi)
        except TypeError:
            return False
