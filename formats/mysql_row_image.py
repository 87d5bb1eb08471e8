"""MySQL binlog row images (the rows of WRITE/UPDATE/DELETE_ROWS events) decoded per table, not per value.

mysql-replication decodes a row event's rows value by value: a chain of type tests, two layers of
packet reads and a ``struct.unpack`` for every column of every image, which a profile of the binlog
phase put at over half of a read task's CPU. ``RowImageDecoder`` builds one reader per column from
a table map once, then reads each image from the event's bytes with ``unpack_from`` at an offset. It
gives the very Python values mysql-replication gives for the same bytes (the tests compare them on
events captured from MariaDB), so everything after it is unchanged.

Only full row images (``binlog_row_image=FULL``) of the column types below are decoded here;
``supported`` says whether a table's columns are, and the caller leaves any other event to
mysql-replication. Pure: no driver is imported here.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# MySQL field type codes (include/field_types.h), as a table map carries them.
TINY, SHORT, LONG, FLOAT, DOUBLE, LONGLONG, INT24, DATE, YEAR = 1, 2, 3, 4, 5, 8, 9, 10, 13
VARCHAR, BIT, TIMESTAMP2, DATETIME2, TIME2 = 15, 16, 17, 18, 19
NEWDECIMAL, ENUM, SET, BLOB, STRING = 246, 247, 248, 252, 254

Reader = Callable[[bytes, int], tuple[Any, int]]


@dataclass(frozen=True)
class BinlogColumn:
    """What a table map says of one column that decoding needs. ``codec`` is the Python codec of a
    character column (``None``: UTF-8, as mysql-replication assumes without row metadata), ``raw``
    a column whose charset Python has no codec for (``binary``): its bytes are kept (an empty value
    is ``""``, as there)."""

    name: str
    type: int
    unsigned: bool = False
    max_length: int = 0
    length_size: int = 0
    fsp: int = 0
    precision: int = 0
    decimals: int = 0
    codec: str | None = None
    raw: bool = False
    size: int = 0  # bytes of an ENUM's index or a SET's bit mask
    members: tuple[str, ...] | None = None  # an ENUM's values (with "" first) or a SET's
    bits: int = 0  # a BIT's width


SUPPORTED_TYPES = frozenset(
    {TINY, SHORT, LONG, FLOAT, DOUBLE, LONGLONG, INT24, DATE, YEAR, VARCHAR, TIMESTAMP2, DATETIME2, TIME2}
    | {NEWDECIMAL, BLOB, STRING, ENUM, SET, BIT}
)


def supported(columns: Sequence[BinlogColumn]) -> bool:
    return bool(columns) and all(c.type in SUPPORTED_TYPES for c in columns)


def _fixed(fmt: str, size: int) -> Reader:
    unpack = struct.Struct(fmt).unpack_from

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        return unpack(buf, pos)[0], pos + size

    return read


def _int24(unsigned: bool) -> Reader:
    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        value = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
        if not unsigned and value >= 0x800000:
            value -= 0x1000000
        return value, pos + 3

    return read


def _string(size: int, column: BinlogColumn) -> Reader:
    codec, raw = column.codec or "utf-8", column.raw

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        if size == 1:
            n = buf[pos]
        elif size == 2:
            n = buf[pos] | (buf[pos + 1] << 8)
        else:
            n = int.from_bytes(buf[pos : pos + size], "little")
        start = pos + size
        data = buf[start : start + n]
        # mysql-replication's ``b"".decode("binary")`` is "": CPython decodes empty bytes without a codec
        return (data if raw and n else data.decode(codec)), start + n

    return read


def _be(buf: bytes, pos: int, size: int) -> int:
    """``read_int_be_by_size``: big-endian, signed for 1-4 bytes, unsigned for 5."""
    return int.from_bytes(buf[pos : pos + size], "big", signed=size != 5)


def _fsp_reader(fsp: int) -> tuple[int, Callable[[bytes, int], int]]:
    """The fractional seconds' width and their value in microseconds (mysql-replication's ``__read_fsp``)."""
    size = (fsp + 1) // 2
    scale: int = 10 ** (6 - fsp)

    def micros(buf: bytes, pos: int) -> int:
        if size == 0:
            return 0
        value = _be(buf, pos, size)
        if fsp % 2:
            value = int(value / 10)
        return value * scale

    return size, micros


def _datetime2(column: BinlogColumn) -> Reader:
    width, micros = _fsp_reader(column.fsp)

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        data = int.from_bytes(buf[pos : pos + 5], "big")
        year_month = (data >> 22) & 0x1FFFF
        fields = (year_month // 13, year_month % 13, (data >> 17) & 0x1F, (data >> 12) & 0x1F)
        try:
            value = dt.datetime(*fields, (data >> 6) & 0x3F, data & 0x3F, max(micros(buf, pos + 5), 0))
        except ValueError:  # a zero or partial date: mysql-replication's None
            return None, pos + 5 + width
        return value, pos + 5 + width

    return read


_EPOCH = dt.datetime(1970, 1, 1)


def _timestamp2(column: BinlogColumn) -> Reader:
    width, micros = _fsp_reader(column.fsp)

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        seconds = int.from_bytes(buf[pos : pos + 4], "big", signed=True)
        return _EPOCH + dt.timedelta(seconds=seconds, microseconds=max(micros(buf, pos + 4), 0)), pos + 4 + width

    return read


def _time2(column: BinlogColumn) -> Reader:
    """MySQL's TIME2 (``my_time_packed_from_binary``): a 24-bit integral part and 0-3 bytes of fraction
    stored as one offset number, so a negative time with a fraction borrows one second from the integral
    part. mysql-replication reads the two parts apart and gets such times wrong (``-00:00:00.1`` as
    -0.9 s); this reads them as the server wrote them (``library_time`` repairs the library's values)."""
    width = (column.fsp + 1) // 2

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        if width == 3:
            packed = int.from_bytes(buf[pos : pos + 6], "big") - 0x800000000000
        else:
            whole = int.from_bytes(buf[pos : pos + 3], "big") - 0x800000
            frac = int.from_bytes(buf[pos + 3 : pos + 3 + width], "big")
            if whole < 0 and frac:
                whole, frac = whole + 1, frac - (1 << (8 * width))
            packed = (whole << 24) + frac * (10000 if width == 1 else 100)
        magnitude = abs(packed)
        hms, micros = magnitude >> 24, magnitude & 0xFFFFFF
        delta = dt.timedelta(
            hours=(hms >> 12) & 0x3FF, minutes=(hms >> 6) & 0x3F, seconds=hms & 0x3F, microseconds=micros
        )
        return (-delta if packed < 0 else delta), pos + 3 + width

    return read


_SECOND = dt.timedelta(seconds=1)


def library_time(value: Any) -> Any:
    """mysql-replication's value of a negative TIME with a fraction, repaired: it gives -(T + f) with
    T one second more than the time's whole seconds and f the negative fraction, so -(T + f) has the
    right whole seconds less one and the fraction mirrored (``-00:00:00.1`` came as -0.9 s)."""
    if not isinstance(value, dt.timedelta) or value >= dt.timedelta(0):
        return value
    magnitude = -value
    fraction = dt.timedelta(microseconds=magnitude.microseconds)
    if not fraction:
        return value
    return -(magnitude - fraction + (_SECOND - fraction))


def _date(buf: bytes, pos: int) -> tuple[Any, int]:
    value = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
    year, month, day = value >> 9, (value >> 5) & 0xF, value & 0x1F
    if not (year and month and day):
        return None, pos + 3
    return dt.date(year, month, day), pos + 3


def _year(buf: bytes, pos: int) -> tuple[Any, int]:
    return buf[pos] + 1900, pos + 1


_DIGITS_SIZE = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def _decimal(column: BinlogColumn) -> Reader:
    """MySQL's packed decimal: groups of nine digits in four bytes, leading and trailing digits in
    fewer; the sign in the top bit, a negative value with every bit inverted. Read as one big-endian
    integer, then cut into the integral and fractional digits."""
    integral = column.precision - column.decimals
    whole_int, whole_frac = integral // 9, column.decimals // 9
    lead_digits, trail_digits = integral - whole_int * 9, column.decimals - whole_frac * 9
    lead, trail = _DIGITS_SIZE[lead_digits], _DIGITS_SIZE[trail_digits]
    size = lead + 4 * (whole_int + whole_frac) + trail
    sign_bit, all_bits = 1 << (8 * size - 1), (1 << (8 * size)) - 1
    # (bits, decimal digits) of the fractional fields from the right, then of the integral ones
    frac_fields = ([(8 * trail, trail_digits)] if trail else []) + [(32, 9)] * whole_frac
    int_fields = [(32, 9)] * whole_int + ([(8 * lead, lead_digits)] if lead else [])
    decimals = column.decimals

    def digits(value: int, fields: list[tuple[int, int]]) -> tuple[int, int]:
        number, scale = 0, 1
        for bits, width in fields:
            number += (value & ((1 << bits) - 1)) * scale
            value >>= bits
            scale *= 10**width
        return number, value

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        value = int.from_bytes(buf[pos : pos + size], "big")
        negative = not value & sign_bit
        value ^= (all_bits ^ sign_bit) if negative else sign_bit
        fraction, value = digits(value, frac_fields)
        whole, _ = digits(value, int_fields)
        text = f"{'-' if negative else ''}{whole}.{fraction:0{decimals}d}" if decimals else f"{'-' * negative}{whole}"
        return Decimal(text), pos + size

    return read


def _enum(column: BinlogColumn) -> Reader:
    size, members = column.size, column.members

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        index = int.from_bytes(buf[pos : pos + size], "little")
        return (members[index] if members else None), pos + size

    return read


def _set(column: BinlogColumn) -> Reader:
    size, members = column.size, column.members or ()

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        mask = int.from_bytes(buf[pos : pos + size], "little")
        chosen = {member for i, member in enumerate(members) if mask & (1 << i)}
        return (chosen or None), pos + size  # no member: mysql-replication's None

    return read


def _bit(column: BinlogColumn) -> Reader:
    """A BIT(n) as mysql-replication gives it: its n bits as a string of 0s and 1s."""
    width = column.bits
    size = (width + 7) // 8

    def read(buf: bytes, pos: int) -> tuple[Any, int]:
        value = int.from_bytes(buf[pos : pos + size], "big") & ((1 << width) - 1)
        return format(value, f"0{width}b"), pos + size

    return read


# struct codes of the fixed-width columns (an integer's code in upper case when unsigned)
_INTEGERS = {TINY: ("b", 1), SHORT: ("h", 2), LONG: ("i", 4), LONGLONG: ("q", 8)}
_FLOATS = {FLOAT: ("<f", 4), DOUBLE: ("<d", 8)}


# the readers made from the column's own metadata alone, by type
_BUILDERS: dict[int, Callable[[BinlogColumn], Reader]] = {
    NEWDECIMAL: _decimal,
    DATETIME2: _datetime2,
    TIMESTAMP2: _timestamp2,
    TIME2: _time2,
    ENUM: _enum,
    SET: _set,
    BIT: _bit,
    DATE: lambda _column: _date,
    YEAR: lambda _column: _year,
}


def reader(column: BinlogColumn) -> Reader:
    """The reader of one column's value (not NULL) in a row image."""
    kind = column.type
    if kind in _INTEGERS:
        code, size = _INTEGERS[kind]
        return _fixed("<" + (code.upper() if column.unsigned else code), size)
    if kind in _FLOATS:
        return _fixed(*_FLOATS[kind])
    if kind == INT24:
        return _int24(column.unsigned)
    if kind in (VARCHAR, STRING):
        return _string(2 if column.max_length > 255 else 1, column)
    if kind == BLOB:
        return _string(column.length_size, column)
    if kind in _BUILDERS:
        return _BUILDERS[kind](column)
    raise ValueError(f"column {column.name!r}: binlog type {kind} is not decoded here")


class RowImageDecoder:
    """Every row of one rows event of a table (all columns present), as mysql-replication's dicts
    of column name to value; ``images`` is 2 for an UPDATE (before, after), else 1."""

    def __init__(self, columns: Sequence[BinlogColumn]) -> None:
        self.names = tuple(c.name for c in columns)
        self.readers = tuple(reader(c) for c in columns)
        self.pairs = tuple(zip(self.names, self.readers, strict=True))
        self.null_bytes = (len(columns) + 7) // 8
        self.no_nulls = bytes(self.null_bytes)

    def image(self, buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
        null = buf[pos : pos + self.null_bytes]
        pos += self.null_bytes
        values: dict[str, Any] = {}
        if null == self.no_nulls:
            for name, read in self.pairs:
                values[name], pos = read(buf, pos)
            return values, pos
        for i, (name, read) in enumerate(self.pairs):
            if null[i >> 3] & (1 << (i & 7)):
                values[name] = None
            else:
                values[name], pos = read(buf, pos)
        return values, pos

    def rows(self, buf: bytes, images: int) -> list[tuple[dict[str, Any], ...]]:
        """The rows in ``buf`` (the event's bytes after its column bitmaps, without the checksum)."""
        out: list[tuple[dict[str, Any], ...]] = []
        pos, end, image = 0, len(buf), self.image
        while pos < end:
            first, pos = image(buf, pos)
            if images == 2:
                second, pos = image(buf, pos)
                out.append((first, second))
            else:
                out.append((first,))
        if pos != end:
            raise ValueError(f"a row image ran {pos - end} bytes past the end of its rows event")
        return out
