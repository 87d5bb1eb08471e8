"""canal-json: Alibaba Canal's flat JSON message (one message, one statement, many rows).

    {"data": [{...}, ...], "old": [{...}, ...] | null, "type": "INSERT" | "UPDATE" | "DELETE",
     "database": "db", "table": "t", "pkNames": ["id"], "mysqlType": {"id": "int", ...},
     "isDdl": false, "sql": "", "es": 1683006706000, "ts": 1683006706728}

Semantics follow Apache Paimon's ``CanalRecordParser``: ``old[i]`` holds only the changed columns
of ``data[i]``'s before image, so the before image is ``data[i]`` overlaid with ``old[i]``; ``ROW``
is an insert; DDL messages (``isDdl``) carry no rows and become ``SchemaChangeEvent``s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from formats.errors import MalformedMessage
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

FORMAT = "canal-json"

_OPS = {"INSERT": Op.INSERT, "ROW": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE}

# Messages of one table repeat the same mysqlType/pkNames; sharing one SourceSchema per distinct
# pair keeps memory flat and lets the chunk builder compare schemas by identity.
_SCHEMA_CACHE: dict[tuple[Any, ...], SourceSchema] = {}
_SCHEMA_CACHE_LIMIT = 4096
_LAST: dict[str | None, tuple[dict[str, Any], list[Any], SourceSchema]] = {}


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
    op = _OPS.get(op_name) if type(op_name) is str else None
    if op is None:
        op_name = require(FORMAT, root, "type", str, pos)
        op = _OPS.get(op_name.upper())
        if op is None:
            raise MalformedMessage(
                FORMAT, pos, f"unknown 'type' {op_name!r} in a non-DDL message (expected INSERT, UPDATE, DELETE)"
            )
    data = get("data")
    if type(data) is not list:
        data = require(FORMAT, root, "data", list, pos)
    schema = _schema(root, data, table, pos)

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


def _schema(root: dict[str, Any], data: list[Any], table: str | None, pos: Any) -> SourceSchema:
    mysql_type = optional(FORMAT, root, "mysqlType", dict, pos)
    pk_names = optional(FORMAT, root, "pkNames", list, pos) or []
    if mysql_type is not None:
        # Fast path: the same types as this table's previous message (a C-level dict comparison,
        # cheaper than building the cache key).
        last = _LAST.get(table)
        if last is not None and last[0] == mysql_type and last[1] == pk_names:
            return last[2]
        key: tuple[Any, ...] = (tuple(mysql_type.items()), tuple(pk_names))
        cached = _SCHEMA_CACHE.get(key)
        if cached is not None:
            _LAST[table] = (mysql_type, pk_names, cached)
            return cached
        fields: list[tuple[str, str | None]] = []
        for name, typ in mysql_type.items():
            if not isinstance(typ, str):
                raise MalformedMessage(FORMAT, pos, f"mysqlType of column '{name}' must be a string")
            fields.append((name, typ))
        schema = SourceSchema(tuple(fields), tuple(str(k) for k in pk_names), TypeSystem.MYSQL)
        if len(_SCHEMA_CACHE) >= _SCHEMA_CACHE_LIMIT:
            _SCHEMA_CACHE.clear()
            _LAST.clear()
        _SCHEMA_CACHE[key] = schema
        _LAST[table] = (mysql_type, pk_names, schema)
        return schema
    # Without mysqlType, Paimon types every column STRING; the columns are those of the rows.
    names: dict[str, None] = {}
    for row in data:
        if isinstance(row, dict):
            names.update(dict.fromkeys(row))
    return SourceSchema(tuple((n, None) for n in names), tuple(str(k) for k in pk_names), TypeSystem.STRING)


@dataclass(slots=True)
class PlainDml:
    """The raw parts of a well-formed canal DML message, for the bulk path (``plain_dml``)."""

    database: str | None
    table: str | None
    mysql_type: dict[str, Any]
    pk_names: list[Any] | None
    op: Op
    data: list[dict[str, Any]]
    old: list[dict[str, Any] | None] | None


def plain_dml(value: bytes | None) -> PlainDml | None:
    """The message's parts if it is plain, well-formed DML that carries ``mysqlType``; else None.

    A consumer that already holds a chunk for this table with the same ``mysqlType`` and
    ``pkNames`` can append the rows directly, skipping the per-row events of ``parse`` (which is 2-3 times
    slower per message); everything else — DDL, messages without types, anything unusual or malformed —
    returns None and goes through ``parse``, which keeps every rule and every error message. The
    semantics are the same: see ``tests/formats/test_canal.py`` and the assembler's equivalence test.
    """
    if value is None:
        return None
    try:
        root = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if type(root) is not dict:
        return None
    get = root.get
    if get("isDdl") is True:
        return None
    op_name, data, mysql_type, pk_names = get("type"), get("data"), get("mysqlType"), get("pkNames")
    database, table, es = get("database"), get("table"), get("es")
    op = _OPS.get(op_name) if type(op_name) is str else None
    if (
        op is None
        or type(data) is not list
        or type(mysql_type) is not dict
        or not (pk_names is None or type(pk_names) is list)
        or not (database is None or type(database) is str)
        or not (table is None or type(table) is str)
        or not (es is None or type(es) is int)
    ):
        return None
    for row in data:
        if type(row) is not dict:
            return None
    old = None
    if op is Op.UPDATE:
        old = get("old")
        if type(old) is not list or len(old) != len(data):
            return None
        for changed in old:
            if not (changed is None or type(changed) is dict):
                return None
    return PlainDml(database, table, mysql_type, pk_names, op, data, old)
