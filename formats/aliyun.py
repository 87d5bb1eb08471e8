"""aliyun-json: the JSON message Alibaba Cloud DataWorks writes to Kafka ("sync a whole database
to Kafka"); one message, one row.

    {"schema": {"dataColumn": [{"name": "id", "type": "LONG"}, {"name": "ts", "type": "DATE"}, ...],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": "db", "tableName": "t"}},
     "payload": {"before": {"dataColumn": {"id": 1, "ts": 1731661114000}} | null,
                 "after": {"dataColumn": {...}} | null,
                 "op": "INSERT" | "UPDATE_BEFORE" | "UPDATE_AFTER" | "DELETE" | "MHEARTBEAT",
                 "timestamp": {"eventTime": 1731662085000, "systemTime": ..., "checkpointTime": ...},
                 "sequenceId": "...", "ddl": null},
     "version": "0.0.1"}

Semantics follow Apache Paimon's ``AliyunRecordParser``; ``schema.source`` names the database and
table, ``schema.primaryKey`` the keys, ``schema.dataColumn`` every column and its type:

- INSERT inserts ``after``; DELETE deletes ``before``.
- UPDATE_AFTER: Paimon writes ``after`` as +U. When the message also carries ``before`` (the
  "update in one message" form) it is an UPDATE of ``before`` to ``after``; without it, an INSERT
  of ``after`` (an upsert on a primary-key table, which is what +U does there).
- UPDATE_BEFORE: Paimon writes ``before`` as -U, a retraction; the event model has no lone -U, so
  it is a DELETE of ``before`` (the same effect on a primary-key table).
- A root ``"ddl": true`` (Paimon's test) or an unknown ``op`` with a ``payload.ddl`` statement is a
  ``SchemaChangeEvent``; Paimon drops DDL. ``MHEARTBEAT`` (DataWorks' progress heartbeat) changes
  no row: no event (Paimon fails on it as an unknown operation).
- ``payload.timestamp.eventTime`` becomes ``op_ts_ms`` (DataWorks writes -1 for full-load rows).

Types: DataWorks reduces every column to BOOLEAN, DOUBLE, DATE, BYTES, LONG or STRING. Paimon passes
them through its MySQL type table (``MySqlTypeUtils``, which knows LONG and STRING as aliyun
specials). The schema is ``TypeSystem.MYSQL`` with the DataWorks-only names spelled as their MySQL
equivalents, so ``--type-mapping`` applies as for MySQL sources and other names keep Paimon's
MySQL meaning. Two deliberate differences from Paimon, whose writer rejects these values:

- DATE values are 13-digit epoch milliseconds (an instant, often of a DATETIME column). The column
  is ``DATETIME(3)`` (Paimon: DATE) and the value its UTC wall-clock text, exact to the millisecond.
- BYTES values are Base64 text. The column is ``LONGBLOB`` (BYTES; Paimon: "unsupported type") and
  the value the decoded bytes.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

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
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import preview

FORMAT = "aliyun-json"

# DataWorks' own type names as the MySQL type each is handled as (Paimon: LONG -> BIGINT, STRING ->
# STRING); other names (BOOLEAN, DOUBLE, and any MySQL name) are already MySQL spellings.
_TYPE_ALIASES = {"LONG": "BIGINT", "STRING": "TEXT", "DATE": "DATETIME(3)", "BYTES": "LONGBLOB"}
_HEARTBEAT = "MHEARTBEAT"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Converter = Callable[[Any, SourcePosition], Any]


def _date(v: Any, pos: SourcePosition) -> Any:
    if type(v) is not int:
        return v  # text is left to the column conversion, as Paimon leaves it
    try:
        at = _EPOCH + timedelta(milliseconds=v)
    except OverflowError:
        raise MalformedMessage(FORMAT, pos, f"DATE value {preview(v)} is not an epoch-millisecond instant") from None
    return f"{at:%Y-%m-%d %H:%M:%S}.{at.microsecond // 1000:03d}"


def _bytes(v: Any, pos: SourcePosition) -> Any:
    if type(v) is not str:
        return v
    try:
        return b64decode(v, validate=True)
    except binascii.Error:
        raise MalformedMessage(FORMAT, pos, f"BYTES value {preview(v, 40)} is not Base64 text") from None


_CONVERTERS: dict[str, Converter] = {"DATE": _date, "BYTES": _bytes}

# Messages of one table repeat the same schema block; one SourceSchema (and its value converters)
# per distinct block keeps memory flat and lets the chunk builder compare schemas by identity.
_SCHEMA_CACHE: dict[tuple[Any, ...], tuple[SourceSchema, tuple[tuple[str, Converter], ...]]] = {}
_SCHEMA_CACHE_LIMIT = 4096


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one DataWorks message into at most one change event."""
    pos = ctx.position
    root = load_object(FORMAT, value, pos)
    payload = require(FORMAT, root, "payload", dict, pos)
    schema_node = optional(FORMAT, root, "schema", dict, pos) or {}
    source = schema_node.get("source")
    source = source if isinstance(source, dict) else {}
    database, table = _name(source, "dbName", pos), _name(source, "tableName", pos)
    times = payload.get("timestamp")
    event_time = times.get("eventTime") if isinstance(times, dict) else None
    ts = event_time if type(event_time) is int and event_time > 0 else None

    op_name = payload.get("op")
    if root.get("ddl") is True:
        return [SchemaChangeEvent(database, table, _ddl_text(payload.get("ddl"), pos), ts)]
    if op_name == _HEARTBEAT:
        return []
    if op_name == "INSERT":
        op, side = Op.INSERT, "after"
    elif op_name == "DELETE" or op_name == "UPDATE_BEFORE":
        op, side = Op.DELETE, "before"
    elif op_name == "UPDATE_AFTER":
        op, side = (Op.INSERT if payload.get("before") is None else Op.UPDATE), "after"
    elif isinstance(op_name, str) and payload.get("ddl") is not None:
        return [SchemaChangeEvent(database, table, _ddl_text(payload["ddl"], pos), ts)]
    else:
        raise MalformedMessage(
            FORMAT,
            pos,
            f"unknown payload 'op' {preview(op_name)} (expected INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)",
        )

    if not schema_node:
        raise MalformedMessage(FORMAT, pos, "field 'schema' is missing or null")
    schema, converters = _schema(schema_node, pos)
    row = _row(payload, side, converters, pos)
    if op is Op.INSERT:
        return [DataChangeEvent(op, database, table, schema, None, row, ts)]
    if op is Op.DELETE:
        return [DataChangeEvent(op, database, table, schema, row, None, ts)]
    before = _row(payload, "before", converters, pos)
    return [DataChangeEvent(op, database, table, schema, before, row, ts)]


def _row(
    payload: dict[str, Any], side: str, converters: tuple[tuple[str, Converter], ...], pos: SourcePosition
) -> dict[str, Any]:
    container = payload.get(side)
    if not isinstance(container, dict):
        raise MalformedMessage(FORMAT, pos, f"field 'payload.{side}' is missing or not an object for this 'op'")
    row = container.get("dataColumn")
    if not isinstance(row, dict):
        raise MalformedMessage(FORMAT, pos, f"field 'payload.{side}.dataColumn' is missing or not an object")
    for name, convert in converters:
        v = row.get(name)
        if v is not None:
            row[name] = convert(v, pos)
    return row


def _schema(node: dict[str, Any], pos: SourcePosition) -> tuple[SourceSchema, tuple[tuple[str, Converter], ...]]:
    columns = require(FORMAT, node, "dataColumn", list, pos)
    keys = optional(FORMAT, node, "primaryKey", list, pos) or []
    if None in keys:
        raise MalformedMessage(FORMAT, pos, "'schema.primaryKey' contains null")
    try:
        cache_key = (orjson.dumps(columns), tuple(map(str, keys)))
    except orjson.JSONEncodeError:  # nested deeper than orjson writes: no column list
        raise MalformedMessage(FORMAT, pos, "'schema.dataColumn' is nested too deeply") from None
    cached = _SCHEMA_CACHE.get(cache_key)
    if cached is not None:
        return cached
    fields: list[tuple[str, str | None]] = []
    converters: list[tuple[str, Converter]] = []
    for column in columns:
        name = column.get("name") if isinstance(column, dict) else None
        typ = column.get("type") if isinstance(column, dict) else None
        if type(name) is not str or type(typ) is not str:
            raise MalformedMessage(FORMAT, pos, "every entry of 'schema.dataColumn' needs a string 'name' and 'type'")
        upper = typ.strip().upper()
        fields.append((name, _TYPE_ALIASES.get(upper, typ)))
        if upper in _CONVERTERS:
            converters.append((name, _CONVERTERS[upper]))
    entry = (SourceSchema(tuple(fields), cache_key[1], TypeSystem.MYSQL), tuple(converters))
    if len(_SCHEMA_CACHE) >= _SCHEMA_CACHE_LIMIT:
        _SCHEMA_CACHE.clear()
    _SCHEMA_CACHE[cache_key] = entry
    return entry


def _name(source: dict[str, Any], field: str, pos: SourcePosition) -> str | None:
    v = source.get(field)
    if v is None or type(v) is str:
        return v
    if isinstance(v, dict | list):  # (a number is taken as its text, as Paimon's asText() does)
        raise MalformedMessage(FORMAT, pos, f"field 'schema.source.{field}' must be a name, got {type(v).__name__}")
    return str(v)


def _ddl_text(v: Any, pos: SourcePosition) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    try:
        return orjson.dumps(v).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        raise MalformedMessage(FORMAT, pos, "field 'payload.ddl' is nested too deeply") from None
