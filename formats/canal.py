"""canal-json: Alibaba Canal's flat JSON message (one message, one statement, many rows).

    {"data": [{...}, ...], "old": [{...}, ...] | null, "type": "INSERT" | "UPDATE" | "DELETE",
     "database": "db", "table": "t", "pkNames": ["id"], "mysqlType": {"id": "int", ...},
     "isDdl": false, "sql": "", "es": 1683006706000, "ts": 1683006706728}

Semantics follow Apache Paimon's ``CanalRecordParser``: ``old[i]`` holds only the changed columns
of ``data[i]``'s before image, so the before image is ``data[i]`` overlaid with ``old[i]``; ``ROW``
is an insert; DDL messages (``isDdl``) carry no rows and become ``SchemaChangeEvent``s.
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
    TypeSystem,
)
from formats.jsonutil import load_object, optional, require
from schema_evolution.errors import MalformedMessage
from schema_evolution.payloads import preview

FORMAT = "canal-json"

OPS = {"INSERT": Op.INSERT, "ROW": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE}

# Messages of one table repeat the same mysqlType/pkNames; sharing one SourceSchema per distinct
# pair keeps memory flat and lets the chunk builder compare schemas by identity.
_SCHEMA_CACHE: dict[tuple[Any, ...], SourceSchema] = {}
_SCHEMA_CACHE_LIMIT = 4096


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one canal-json message into change events, in the order of its rows."""
    pos = ctx.position
    root = load_object(FORMAT, value, pos)
    get = root.get
    database, table, es = get("database"), get("table"), get("es")
    # Inline checks instead of helper calls: this runs for every message (see shared/DESIGN.md).
    if not (database is None or type(database) is str):
        optional(FORMAT, root, "database", str, pos)
    if not (table is None or type(table) is str):
        optional(FORMAT, root, "table", str, pos)
    if not (es is None or type(es) is int):
        optional(FORMAT, root, "es", int, pos)

    if get("isDdl") is True:
        sql = optional(FORMAT, root, "sql", str, pos) or ""
        return [SchemaChangeEvent(database, table, sql, es)]

    op_name = get("type")
    op = OPS.get(op_name) if type(op_name) is str else None
    if op is None:
        op_name = require(FORMAT, root, "type", str, pos)
        op = OPS.get(op_name.upper())
        if op is None:
            raise MalformedMessage(
                FORMAT, pos, f"unknown 'type' {preview(op_name)} in a non-DDL message (expected INSERT, UPDATE, DELETE)"
            )
    data = get("data")
    if type(data) is not list:
        data = require(FORMAT, root, "data", list, pos)
    schema = _schema(root, data, pos)

    events: list[ChangeEvent] = []
    append = events.append
    if op is Op.UPDATE:
        old = require(FORMAT, root, "old", list, pos)
        if len(old) != len(data):
            raise MalformedMessage(FORMAT, pos, f"UPDATE has {len(data)} rows in 'data' but {len(old)} in 'old'")
        for after, changed in zip(data, old, strict=True):
            if type(after) is not dict:
                _bad_row(after, pos)
            if changed is None:
                changed = {}
            elif type(changed) is not dict:
                raise MalformedMessage(FORMAT, pos, "every entry of 'old' must be an object or null")
            append(DataChangeEvent(op, database, table, schema, after | changed, after, es))
    elif op is Op.INSERT:
        for after in data:
            if type(after) is not dict:
                _bad_row(after, pos)
            append(DataChangeEvent(op, database, table, schema, None, after, es))
    else:
        for before in data:
            if type(before) is not dict:
                _bad_row(before, pos)
            append(DataChangeEvent(op, database, table, schema, before, None, es))
    return events


def _bad_row(row: Any, pos: Any) -> None:
    raise MalformedMessage(FORMAT, pos, f"every entry of 'data' must be an object, got {type(row).__name__}")


def _schema(root: dict[str, Any], data: list[Any], pos: Any) -> SourceSchema:
    mysql_type = optional(FORMAT, root, "mysqlType", dict, pos)
    pk_names = optional(FORMAT, root, "pkNames", list, pos) or []
    if not all(type(k) is str for k in pk_names):
        raise MalformedMessage(FORMAT, pos, "every entry of 'pkNames' must be a column name (string)")
    if mysql_type is not None:
        for name, typ in mysql_type.items():
            if not isinstance(typ, str):
                raise MalformedMessage(FORMAT, pos, f"mysqlType of column '{name}' must be a string")
        return source_schema(mysql_type, pk_names)
    # Without mysqlType, Paimon types every column STRING; the columns are those of the rows.
    names: dict[str, None] = {}
    for row in data:
        if isinstance(row, dict):
            names.update(dict.fromkeys(row))
    return SourceSchema(tuple((n, None) for n in names), tuple(str(k) for k in pk_names), TypeSystem.STRING)


def source_schema(mysql_type: dict[str, str], pk_names: list[Any]) -> SourceSchema:
    """The schema of a message's ``mysqlType`` (all strings) and ``pkNames``; one shared object per
    distinct pair."""
    key: tuple[Any, ...] = (tuple(mysql_type.items()), tuple(pk_names))
    cached = _SCHEMA_CACHE.get(key)
    if cached is not None:
        return cached
    schema = SourceSchema(tuple(mysql_type.items()), tuple(str(k) for k in pk_names), TypeSystem.MYSQL)
    if len(_SCHEMA_CACHE) >= _SCHEMA_CACHE_LIMIT:
        _SCHEMA_CACHE.clear()
    _SCHEMA_CACHE[key] = schema
    return schema
