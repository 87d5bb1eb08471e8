"""A rows event's rows through ``formats.mysql_row_image`` where it can decode them, else mysql-replication's.

mysql-replication parses a rows event's header, column bitmaps and table map; the rows themselves are
parsed only when ``event.rows`` is read. Here the event's remaining bytes are handed to a decoder built
once per table definition instead, when the event is one it decodes exactly as mysql-replication does:
full row images, no partial JSON update, column names known and every column of a supported type.
``LAKECDC_BINLOG_DECODER=mysql-replication`` turns this off (every event decoded by the library)."""

from __future__ import annotations

import codecs
import functools
import os
from collections.abc import Sequence
from typing import Any

from formats.mysql_row_image import BIT, ENUM, SET, TIME2, BinlogColumn, RowImageDecoder, library_time, supported

_PARTIAL_UPDATE_ROWS_EVENT = 0x27
RowImages = list[tuple[dict[str, Any], ...]]


def _codec(charset: str | None) -> tuple[str | None, bool]:
    """mysql-replication's text decoding of a column: its charset's Python codec, or the bytes kept
    where Python has none (``binary``)."""
    if charset is None:
        return None, False
    from pymysql.charset import charset_by_name

    found = charset_by_name(charset)
    name = found.encoding if found else charset
    try:
        codecs.lookup(name)
    except LookupError:
        return None, True
    return name, False


def _column(column: Any) -> BinlogColumn:
    codec, raw = _codec(getattr(column, "character_set_name", None))
    return BinlogColumn(
        name=column.name,
        type=column.type,
        unsigned=bool(getattr(column, "unsigned", False)),
        max_length=int(getattr(column, "max_length", 0) or 0),
        length_size=int(getattr(column, "length_size", 0) or 0),
        fsp=int(getattr(column, "fsp", 0) or 0),
        precision=int(getattr(column, "precision", 0) or 0),
        decimals=int(getattr(column, "decimals", 0) or 0),
        codec=codec,
        raw=raw,
        size=int(getattr(column, "size", 0) or 0) if column.type in (ENUM, SET) else 0,
        members=_members(column),
        bits=int(getattr(column, "bits", 0) or 0) if column.type == BIT else 0,
    )


def _members(column: Any) -> tuple[str, ...] | None:
    members = getattr(column, "enum_values", None) if column.type == ENUM else None
    members = getattr(column, "set_values", None) if column.type == SET else members
    return None if members is None else tuple(members)


def binlog_columns(columns: Sequence[Any]) -> tuple[BinlogColumn, ...] | None:
    """A table map's columns for the decoder, or None where any has no name (no row metadata)."""
    if not columns or any(not getattr(c, "name", None) for c in columns):
        return None
    return tuple(_column(c) for c in columns)


@functools.lru_cache(maxsize=256)
def _decoder(columns: tuple[BinlogColumn, ...]) -> RowImageDecoder | None:
    return RowImageDecoder(columns) if supported(columns) else None


# The decoder of each table map object read lately. A stream keeps one object per table id until
# the id's map is parsed again (binlog_stream opens streams with ``freeze_schema``), so a table's
# decoder is looked up once per map, not built from its columns at every rows event.
_BY_TABLE: dict[int, tuple[Any, RowImageDecoder | None]] = {}


def _table_decoder(table: Any) -> RowImageDecoder | None:
    known = _BY_TABLE.get(id(table))
    if known is not None and known[0] is table:
        return known[1]
    spec = binlog_columns(table.columns)
    decoder = _decoder(spec) if spec is not None else None
    if len(_BY_TABLE) >= 256:
        _BY_TABLE.clear()
    _BY_TABLE[id(table)] = (table, decoder)
    return decoder


def _full(bitmap: bytes, count: int) -> bool:
    return int.from_bytes(bitmap, "little") == (1 << count) - 1


def _enabled() -> bool:
    return os.environ.get("LAKECDC_BINLOG_DECODER", "lakecdc") != "mysql-replication"


def row_images(event: Any) -> RowImages:
    """The event's row images: one per row, two for an UPDATE (before and after)."""
    images = fast_rows(event)
    return images if images is not None else library_rows(event)


def library_rows(event: Any) -> RowImages:
    """``event.rows`` as images, negative fractional TIMEs repaired (``library_time``)."""
    keys = ("before_values", "after_values") if hasattr(event, "columns_present_bitmap2") else ("values",)
    images = [tuple(row[key] for key in keys) for row in event.rows]
    times = [c.name for c in getattr(event, "columns", ()) if c.type == TIME2 and getattr(c, "fsp", 0) and c.name]
    for row in images if times else ():
        for values in row:
            for name in times:
                if name in values:
                    values[name] = library_time(values[name])
    return images


def fast_rows(event: Any) -> RowImages | None:
    """The event's row images (one per row, two for an UPDATE: before and after), or None where the
    event is left to ``event.rows``. Reads the event's remaining bytes: call it before ``event.rows``."""
    if getattr(event, "_RowsEvent__rows", None) is not None or not _enabled():
        return None  # (rows the library has decoded already)
    if event.event_type == _PARTIAL_UPDATE_ROWS_EVENT or getattr(event, "_ignore_decode_errors", 0):
        return None
    if not getattr(event, "complete", True):
        return None
    packet = event.packet
    if getattr(packet, "_BinLogPacketWrapper__data_buffer", b""):
        return None  # bytes put back by an earlier read: not where the rows start
    images = 2 if hasattr(event, "columns_present_bitmap2") else 1
    count = int(event.number_of_columns)
    columns = event.columns
    if len(columns) != count or not _full(event.columns_present_bitmap, count):
        return None
    if images == 2 and not _full(event.columns_present_bitmap2, count):
        return None
    decoder = _table_decoder(event.table_map[event.table_id])
    if decoder is None:
        return None
    body = packet.read(event.event_size - packet.read_bytes)
    return decoder.rows(body, images)
