"""ogg-json: Oracle GoldenGate's JSON formatter message (one message, one row).

    {"table": "SCHEMA.TABLE", "op_type": "I" | "U" | "D" | "T", "op_ts": "2020-05-13 15:40:06.000000",
     "current_ts": "2020-05-13T13:39:35.766000", "pos": "00000000000000000000143",
     "primary_keys": ["ID"], "before": {...} | null, "after": {...} | null}

Semantics follow Apache Paimon's ``OggRecordParser``: ``table`` is split at its first dot into
database and table ("CDB.SCHEMA.T" gives database "CDB", table "SCHEMA.T"); ``I`` inserts
``after``, ``D`` deletes ``before``, ``U`` carries both. OGG carries no column types, so every
column is STRING (``TypeSystem.STRING``). ``op_ts`` (the commit time in the source, written
without a zone) is read as UTC wall-clock time.

Where we differ from Paimon, on purpose:

- With compressed updates (no full supplemental logging) OGG sends only the key and the changed
  columns; a column *absent* from one image (not one that is null) is taken from the other image,
  so neither image loses unchanged columns. Complete images, as in every sample, pass unchanged.
- ``T`` (truncate) has no row image; Paimon fails on it with "Unknown record operation", we say
  why. A message without ``primary_keys`` has no keys (later Paimon versions read it the same way).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op, SourceSchema
from formats.jsonutil import load_object, optional, require
from formats.string_schema import string_schema
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import preview

FORMAT = "ogg-json"

_OPS = {"I": Op.INSERT, "U": Op.UPDATE, "D": Op.DELETE}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one ogg-json message into one change event."""
    pos = ctx.position
    root = load_object(FORMAT, value, pos)
    op_name = require(FORMAT, root, "op_type", str, pos)
    op = _OPS.get(op_name)
    if op is None:
        if op_name == "T":
            raise MalformedMessage(
                FORMAT,
                pos,
                "op_type 'T' (TRUNCATE) removes every row without naming them, so it cannot be replayed as "
                "row changes (Paimon's ogg-json rejects it too); truncate the Paimon table yourself",
            )
        raise MalformedMessage(FORMAT, pos, f"unknown 'op_type' {preview(op_name)} (expected I, U or D)")
    database, table = _names(root, pos)
    op_ts_ms = _op_ts_ms(root, pos)

    if op is Op.INSERT:
        after = _image(root, "after", op_name, pos)
        return [DataChangeEvent(op, database, table, _schema(root, after, pos), None, after, op_ts_ms)]
    before = _image(root, "before", op_name, pos)
    if op is Op.DELETE:
        return [DataChangeEvent(op, database, table, _schema(root, before, pos), before, None, op_ts_ms)]
    after = _image(root, "after", op_name, pos)
    if not after.keys() <= before.keys():
        before = after | before  # columns the before image lacks were unchanged: take them from after
    if not before.keys() <= after.keys():
        after = after | {k: v for k, v in before.items() if k not in after}
    return [DataChangeEvent(op, database, table, _schema(root, after, pos), before, after, op_ts_ms)]


def _image(root: dict[str, Any], field: str, op_name: str, pos: SourcePosition) -> dict[str, Any]:
    image = root.get(field)
    if image is None:
        raise MalformedMessage(FORMAT, pos, f"field '{field}' is missing or null, but op_type '{op_name}' needs it")
    if not isinstance(image, dict):
        raise MalformedMessage(FORMAT, pos, f"field '{field}' must be a JSON object, got {type(image).__name__}")
    return image


def _names(root: dict[str, Any], pos: SourcePosition) -> tuple[str | None, str | None]:
    qualified = optional(FORMAT, root, "table", str, pos)
    if qualified is None:
        return None, None  # routing decides whether a topic of one table needs no name
    database, dot, table = qualified.partition(".")
    if not dot or not database or not table:
        raise MalformedMessage(FORMAT, pos, f"field 'table' must be 'SCHEMA.TABLE', got {preview(qualified)}")
    return database, table


def _op_ts_ms(root: dict[str, Any], pos: SourcePosition) -> int | None:
    op_ts = optional(FORMAT, root, "op_ts", str, pos)
    if op_ts is None:
        return None
    try:
        moment = datetime.fromisoformat(op_ts)
    except ValueError:
        raise MalformedMessage(
            FORMAT, pos, f"field 'op_ts' is not a timestamp like '2020-05-13 15:40:06.000000': {preview(op_ts)}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # OGG writes the source's time without a zone: read it as UTC
    return (moment - _EPOCH) // _MS


def _schema(root: dict[str, Any], row: dict[str, Any], pos: SourcePosition) -> SourceSchema:
    pk_names = optional(FORMAT, root, "primary_keys", list, pos) or []
    if not all(isinstance(k, str) for k in pk_names):
        raise MalformedMessage(FORMAT, pos, "every entry of 'primary_keys' must be a column name (string)")
    return string_schema(tuple(row), tuple(pk_names))
