"""maxwell-json: Zendesk Maxwell's JSON message (one message, one row).

    {"database": "db", "table": "t", "type": "insert" | "update" | "delete", "ts": 1683006706,
     "xid": 7125, "commit": true, "data": {...the row...}, "old": {...changed columns' old values...},
     "primary_key_columns": ["id"]}

Semantics follow Apache Paimon's ``MaxwellRecordParser``: ``data`` is the complete row (the after
image of an insert/update, the before image of a delete); ``old`` holds only the columns an update
changed, so the before image is ``data`` overlaid with ``old`` (Maxwell omits an empty ``old``: then
the before image is ``data``, where Paimon would fail on the message). Maxwell carries no column types,
so every column is STRING (``TypeSystem.STRING``); the columns are those the row names. ``ts`` is
in seconds for row messages.

Messages that are not row changes:

- DDL (``--output_ddl``) carries no ``data``; Paimon drops every such message. Table DDL
  (``table-create``/``-alter``/``-drop``) becomes a ``SchemaChangeEvent`` carrying its ``sql``
  (whose ``ts`` Maxwell writes in milliseconds); database DDL (``database-create``/``-alter``/
  ``-drop``) names no table and changes no row of any table, so it yields no event.
- Bootstrap output: ``bootstrap-insert`` rows are the table's snapshot and become inserts (as
  Debezium's snapshot reads do); ``bootstrap-start``/``-complete`` are markers without rows and
  yield no event. Paimon refuses all three ("Unknown record operation"), which makes Maxwell's
  way of loading existing rows unusable.
"""

from __future__ import annotations

from typing import Any

from formats.events import (
    ChangeEvent,
    DataChangeEvent,
    MessageContext,
    Op,
    SchemaChangeEvent,
    SourceSchema,
)
from formats.jsonutil import load_object, optional, require
from formats.string_schema import string_schema
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import preview

FORMAT = "maxwell-json"

_OPS = {"insert": Op.INSERT, "bootstrap-insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE}
_TABLE_DDL = frozenset({"table-create", "table-alter", "table-drop"})
_DATABASE_DDL = frozenset({"database-create", "database-alter", "database-drop"})
_BOOTSTRAP_MARKERS = frozenset({"bootstrap-start", "bootstrap-complete"})


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one maxwell-json message into at most one change event."""
    pos = ctx.position
    root = load_object(FORMAT, value, pos)
    kind = require(FORMAT, root, "type", str, pos)
    database = optional(FORMAT, root, "database", str, pos)
    table = optional(FORMAT, root, "table", str, pos)
    ts = optional(FORMAT, root, "ts", int, pos)

    op = _OPS.get(kind)
    if op is None:
        return _not_a_row_change(root, kind, database, table, ts, pos)

    data = root.get("data")
    if not isinstance(data, dict):
        raise MalformedMessage(FORMAT, pos, _data_problem(kind, data))
    schema = _schema(root, data, None, pos)
    op_ts_ms = ts * 1000 if ts is not None else None  # row messages: seconds

    if op is Op.INSERT:
        return [DataChangeEvent(op, database, table, schema, None, data, op_ts_ms)]
    if op is Op.DELETE:
        return [DataChangeEvent(op, database, table, schema, data, None, op_ts_ms)]
    # Maxwell writes "old" only when some column changed (it omits an empty one, e.g. when
    # exclude_columns hid every changed column), so a missing "old" means before == data.
    # Paimon requires "old" here; refusing such a real Maxwell message would stop the job for nothing.
    old = optional(FORMAT, root, "old", dict, pos)
    if not old:
        before = data
    else:
        before = data | old
        if not old.keys() <= data.keys():
            # A column that became NULL is absent from "data" when Maxwell runs without
            # output_nulls; it is still a column of the table.
            schema = _schema(root, data, old, pos)
    return [DataChangeEvent(op, database, table, schema, before, data, op_ts_ms)]


def _not_a_row_change(
    root: dict[str, Any], kind: str, database: str | None, table: str | None, ts: int | None, pos: SourcePosition
) -> list[ChangeEvent]:
    if kind in _TABLE_DDL:
        sql = optional(FORMAT, root, "sql", str, pos) or kind
        return [SchemaChangeEvent(database, table, sql, ts)]  # DDL messages: ts in milliseconds
    if kind in _DATABASE_DDL:
        return []  # no table to route it to, no row to change; Paimon ignores it too
    if kind in _BOOTSTRAP_MARKERS:
        return []  # marks the start/end of a bootstrap; its rows come as bootstrap-insert
    raise MalformedMessage(
        FORMAT,
        pos,
        f"unknown 'type' {preview(kind)} (expected insert, update, delete, or a table-/database- DDL type)",
    )


def _data_problem(kind: str, data: Any) -> str:
    if data is None:
        return f"field 'data' is missing or null in a {kind!r} message"
    if isinstance(data, str):
        # Maxwell's encrypt=data|all option replaces the row with encrypted text.
        return "field 'data' is text, not a JSON object: Maxwell's 'encrypt' option is on, which lakecdc cannot read"
    return f"field 'data' must be a JSON object, got {type(data).__name__}"


def _schema(
    root: dict[str, Any], data: dict[str, Any], old: dict[str, Any] | None, pos: SourcePosition
) -> SourceSchema:
    pk_names = optional(FORMAT, root, "primary_key_columns", list, pos) or []
    names = tuple(data) if old is None else tuple(dict.fromkeys(data) | dict.fromkeys(old))
    if not all(isinstance(k, str) for k in pk_names):
        raise MalformedMessage(FORMAT, pos, "every entry of 'primary_key_columns' must be a column name (string)")
    return string_schema(names, tuple(pk_names))
