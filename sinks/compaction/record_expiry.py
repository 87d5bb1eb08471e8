"""Record-level expiry of primary-key tables: ``record-level.expire-time`` and
``record-level.time-field``, as Java's ``RecordLevelExpire``.

Expiry happens in compaction only: a row whose time field is older than the expire time is left
out of what a compaction reads (so, as in Paimon, an older version of its key in a level the
compaction did not take can show again, and readers see expired rows until a compaction reached
them). A full compaction also rewrites a top-level file whose statistics say it holds expired rows.
The time field is INT (epoch seconds), BIGINT (seconds, or milliseconds from 10^12 on) or a
TIMESTAMP (with or without local time zone); rows with a NULL time never expire.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sinks.option_values import parse_duration_ms

_MILLIS_FROM = 1_000_000_000_000  # Java: a BIGINT at or above this is milliseconds
_TYPES = ("INT", "BIGINT", "TIMESTAMP")


@dataclass(frozen=True, slots=True)
class RecordExpiry:
    expire_seconds: int
    time_field: str

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> RecordExpiry | None:
        text = options.get("record-level.expire-time")
        if text is None:
            return None
        seconds = parse_duration_ms(str(text), "record-level.expire-time") // 1000
        field = options.get("record-level.time-field")
        if not field:
            raise ValueError("You should set time field for record-level expire (record-level.time-field).")
        return cls(seconds, str(field).strip())

    def check_field(self, fields: Sequence[tuple[str, str]]) -> None:
        """Java's checks of the time field against a table's (name, Paimon type) columns."""
        types = dict(fields)
        if self.time_field not in types:
            raise ValueError(f"Can not find time field {self.time_field} for record level expire.")
        base = types[self.time_field].upper().replace(" NOT NULL", "").split("(")[0].strip()
        if base not in _TYPES and not base.startswith("TIMESTAMP"):
            raise ValueError(
                f"The record level time field type should be one of INT, BIGINT, or TIMESTAMP, "
                f"but field type is {types[self.time_field]}."
            )

    def keep(self, column: pa.ChunkedArray | pa.Array, now_seconds: int) -> pa.Array:
        """Rows to keep: a NULL time, or ``now <= time + expire-time`` (Java's reader filter)."""
        seconds = _seconds(column)
        fresh = pc.less_equal(pa.scalar(now_seconds - self.expire_seconds, pa.int64()), seconds)
        mask = pc.or_kleene(pc.is_null(seconds), fresh)
        return mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask

    def expired(self, minimum: Any, now_seconds: int) -> bool:
        """Whether a file whose time field's minimum is ``minimum`` holds expired rows
        (``isExpireFile``); an unknown minimum does not."""
        value = _value_seconds(minimum)
        return value is not None and now_seconds - self.expire_seconds > value


def _seconds(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    typ = column.type
    if pa.types.is_timestamp(typ):
        per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[typ.unit]
        millis = pc.divide(pc.cast(column, pa.int64()), max(1, per_second // 1000))
        return pc.divide(millis, 1000) if per_second >= 1000 else pc.cast(column, pa.int64())
    ints = pc.cast(column, pa.int64())
    if pa.types.is_int64(typ):
        return pc.if_else(pc.greater_equal(ints, _MILLIS_FROM), pc.divide(ints, 1000), ints)
    return ints


def _value_seconds(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:  # TIMESTAMP: its wall-clock time as UTC epoch, as Java's millis
            return calendar.timegm(value.timetuple())
        return int(value.timestamp())
    if isinstance(value, int):
        return value // 1000 if value >= _MILLIS_FROM else value
    return None
