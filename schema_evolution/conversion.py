"""Source values (as CDC formats deliver them, mostly text) to typed Arrow columns.

Conversions are exact — except TIME, which Paimon stores as milliseconds of the day, so digits
below the millisecond are dropped: a value that does not fit its column type (a DECIMAL with more digits than
its scale, an INT out of range, text that is no number) raises ``ValueConversionError`` naming
the row, instead of being rounded or nulled. The only values nulled are MySQL's zero dates
('0000-00-00'), which no date type can hold; they are counted so the caller can warn.

Work is columnar: a column's text is cast by Arrow in one call; Python only handles the types
Arrow cannot cast from text (TIME, ENUM indexes, SET bitmasks, binary text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from schema_evolution.arrow_types import to_arrow
from schema_evolution.geojson import mysql_geometry_to_geojson
from schema_evolution.mysql_types import is_spatial, split_mysql_type
from schema_evolution.payloads import preview, reason
from schema_evolution.types import PaimonType, Root


class ValueConversionError(ValueError):
    """A value that cannot be converted to its column's type; ``row`` indexes the input column. The
    text describes the value by its shape unless previews are on (``schema_evolution.payloads``)."""

    def __init__(self, column: str, typ: PaimonType, row: int, value: Any, why: str) -> None:
        self.column = column
        self.row = row
        self.value = value
        super().__init__(f"column '{column}' ({typ}): cannot convert value {preview(value)}: {why}")


@dataclass
class ConversionNotes:
    """What a conversion had to do that a person should hear about (logged by the caller)."""

    zero_dates: dict[str, int] = field(default_factory=dict)


_INTS = frozenset({Root.TINYINT, Root.SMALLINT, Root.INT, Root.BIGINT})
_TIME = re.compile(r"^(-)?(\d+):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?$")


def convert_column(
    column: str,
    values: Sequence[Any],
    target: PaimonType,
    source_type: str | None = None,
    notes: ConversionNotes | None = None,
) -> pa.Array:
    """Convert one column's source values to an Arrow array of ``target``'s Arrow type."""
    try:
        return _convert(column, values, target, source_type, notes)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, TypeError, OverflowError) as exc:
        row, value, why = _first_bad(column, values, target, source_type)
        raise ValueConversionError(column, target, row, value, why or reason(exc, value)) from None


def _convert(
    column: str,
    values: Sequence[Any],
    target: PaimonType,
    source_type: str | None,
    notes: ConversionNotes | None,
) -> pa.Array:
    arrow_type = to_arrow(target)
    root = target.root
    if root in (Root.VARCHAR, Root.CHAR):
        return _text(values, source_type)
    if root in (Root.BINARY, Root.VARBINARY):
        return pa.array([_to_bytes(v) for v in values], pa.binary())
    if root is Root.TIME:
        return pa.array([_time_ms(v) for v in values], pa.time32("ms"))
    if root is Root.ARRAY:
        return pa.array(_set_values(values, source_type), arrow_type)
    text = _as_text_array(values)
    if root in (Root.DATE, Root.TIMESTAMP, Root.TIMESTAMP_LTZ):
        text = _null_zero_dates(column, text, notes)
        if root is not Root.DATE:
            # Parse at microseconds (MySQL's finest), then narrow: a safe cast refuses to
            # drop digits the column cannot hold. TIMESTAMP(7..9) (debezium's NanoTimestamp)
            # parses at nanoseconds: its nine digits do not fit microseconds.
            unit = "ns" if arrow_type.unit == "ns" else "us"
            parsed = pc.cast(text, pa.timestamp(unit, tz=arrow_type.tz))
            return pc.cast(parsed, arrow_type)
    if root is Root.BOOLEAN:
        text = pc.utf8_lower(pc.utf8_trim_whitespace(text))
    return pc.cast(text, arrow_type)


def _as_text_array(values: Sequence[Any]) -> pa.Array:
    try:
        return pa.array(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([_to_text(v) for v in values], pa.string())


def _to_text(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return orjson.dumps(v).decode()


def _text(values: Sequence[Any], source_type: str | None) -> pa.Array:
    if source_type is not None and is_spatial(source_type):
        return pa.array([None if v is None else _geojson(v) for v in values], pa.string())
    if source_type is not None and source_type.strip().upper().startswith("ENUM"):
        names = _enum_names(source_type)
        return pa.array([_enum_value(v, names) for v in values], pa.string())
    return _as_text_array(values)


def _geojson(v: Any) -> str:
    if isinstance(v, str) and v.lstrip().startswith("{"):
        return v  # already GeoJSON (a source that converts itself)
    return mysql_geometry_to_geojson(_to_bytes(v) or b"")


def _enum_names(source_type: str) -> list[str]:
    raw = split_mysql_type(source_type)[4].strip("()")
    return [n.strip().strip("'\"") for n in raw.split(",")] if raw else []


def _enum_value(v: Any, names: list[str]) -> str | None:
    # canal sends an ENUM as its 1-based index; other sources send the name itself.
    text = _to_text(v)
    if text is not None and text.isdigit() and names:
        idx = int(text)
        if idx == 0:
            return ""  # MySQL's "invalid value" member
        if idx <= len(names):
            return names[idx - 1]
        raise ValueError(f"ENUM index {preview(idx)} out of range for the column's {len(names)} members")
    return text


def _set_values(values: Sequence[Any], source_type: str | None) -> list[list[str] | None]:
    names = _enum_names(source_type) if source_type else []
    out: list[list[str] | None] = []
    for v in values:
        if v is None:
            out.append(None)
        elif isinstance(v, list):
            out.append([str(x) for x in v])
        else:
            text = str(v)
            if text.isdigit() and names:  # canal: the SET as a bitmask of its members
                mask = int(text)
                out.append([n for i, n in enumerate(names) if mask >> i & 1])
            else:
                out.append([p for p in text.split(",") if p])
    return out


def _to_bytes(v: Any) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    if isinstance(v, str):
        # canal writes binary columns as ISO-8859-1 text: one character per byte.
        return v.encode("latin-1")
    raise TypeError(f"expected text for a binary column, got {type(v).__name__}")


def _time_ms(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, int):
        return v
    m = _TIME.match(str(v).strip())
    if m is None:
        raise ValueError("not a TIME value (expected HH:MM:SS[.fraction])")
    sign, h, mi, s, frac = m.groups()
    ms = ((int(h) * 60 + int(mi)) * 60 + int(s)) * 1000 + (int((frac or "0").ljust(3, "0")[:3]))
    if sign or ms >= 86_400_000:
        raise ValueError("TIME outside 00:00:00..23:59:59.999 cannot be stored in Paimon's TIME")
    return ms


def _null_zero_dates(column: str, text: pa.Array, notes: ConversionNotes | None) -> pa.Array:
    zero = pc.starts_with(text, "0000-00-00")
    count = pc.sum(zero).as_py() or 0
    if not count:
        return text
    if notes is not None:
        notes.zero_dates[column] = notes.zero_dates.get(column, 0) + count
    return pc.if_else(zero, pa.scalar(None, pa.string()), text)


def _first_bad(
    column: str, values: Sequence[Any], target: PaimonType, source_type: str | None
) -> tuple[int, Any, str | None]:
    """The first value that fails on its own, and why (values are re-converted one at a time)."""
    for i, v in enumerate(values):
        try:
            _convert(column, [v], target, source_type, None)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, TypeError, OverflowError) as exc:
            return i, v, reason(exc, v)
    return 0, values[0] if values else None, None
