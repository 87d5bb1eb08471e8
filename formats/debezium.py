"""debezium-json: Debezium change events as Kafka Connect's JSON converter writes them.

    {"schema": {"type": "struct", "fields": [{"field": "before", ...}, {"field": "after", "fields": [...]}, ...]},
     "payload": {"before": {...} | null, "after": {...} | null, "op": "c" | "r" | "u" | "d",
                 "source": {"db": "inventory", "table": "products", "ts_ms": 1589355606000, ...}, "ts_ms": ...}}

or the bare payload (``value.converter.schemas.enable=false``). A root object with both ``schema`` and
``payload`` is the envelope, which is what Paimon's ``value.debezium-json.schema-include`` declares; the
parser detects it per message, so either setting of the option reads correctly.

Semantics follow Apache Paimon's ``DebeziumJsonRecordParser``:

* ``c`` and ``r`` (a snapshot read) are inserts of ``after``; ``d`` deletes ``before``; ``u`` updates,
  its before image being ``after`` overlaid with ``before``, which may hold only the changed columns (as in
  Paimon's samples); a null ``before`` (Postgres without REPLICA IDENTITY FULL) leaves ``after``, where
  Paimon fails.
* A Kafka tombstone (value null, sent after each delete for log compaction) carries no change: ``[]``.
* ``t`` (truncate) and ``m`` (a logical-decoding message) raise ``UnsupportedChange``: Paimon fails on
  them too, and dropping a truncate silently would leave rows the source no longer has.
* database and table come from ``source.db`` / ``source.table``; the time is ``source.ts_ms``, else the
  payload's ``ts_ms``. A message of Debezium's schema-change topic (``ddl``, no ``op``) is a
  ``SchemaChangeEvent`` (Paimon rejects it; its tables evolve from the data, as ours do).
* Primary keys: the payload's ``pkNames`` (what Paimon's JSON parser reads), else the field names of the
  Kafka key (``{"id": 1}``, with or without its own envelope; what Paimon's Avro parser reads). A key
  that is not a JSON object is ignored, as Paimon ignores it.
* Types: with a schema, each field of the ``after`` (else ``before``) struct is mapped to a Paimon type
  by ``schema_evolution.debezium_types`` and its value converted to match (``TypeSystem.PAIMON``);
  without one (bare payload, or ``"schema": null``) every column is STRING and values stay as sent.

Numbers: orjson reads JSON numbers as doubles, which cannot hold a ``decimal.format=NUMERIC`` value such
as ``123456789876543212345678987654321.110``. A message with a run of 17 digits/dots is therefore
parsed by the standard library with exact decimals instead (Paimon reads every number as a BigDecimal).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson

from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op, SchemaChangeEvent, SourceSchema, TypeSystem
from formats.jsonutil import load_object, optional, strict_loads
from schema_evolution.debezium_types import ColumnPlan, plan_column
from schema_evolution.errors import MalformedMessage, SourcePosition, UnsupportedChange
from schema_evolution.payloads import describe, preview, reason

FORMAT = "debezium-json"

# Debezium's envelope ops, shared by the debezium-avro parser
OPS = {"c": Op.INSERT, "r": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE}
UNSUPPORTED = {
    "t": "debezium truncate ('op': 't') is not supported yet: it has no row-level form. Empty the Paimon "
    "table yourself if the truncate should apply, then restart the job from the next offset; to keep "
    "truncates out of the topic, set the Debezium connector's skipped.operations=t",
    "m": "a debezium logical-decoding message ('op': 'm') is not a row change: keep them out of the topic "
    "(the Debezium connector's message.prefix.exclude.list), then restart the job from the next offset",
}

# Digits and dots map to '0', anything else to ' ': a run of 17 '0's is a number orjson may round.
_NUMERIC = bytes(48 if 48 <= b <= 57 or b == 46 else 32 for b in range(256))
_LONG_NUMBER = b"0" * 17

# One entry per distinct Connect schema (or column list) and key set: the alltype schema is 15 KB of
# JSON, so mapping it once and sharing the SourceSchema keeps per-message work to a dict lookup.
_Plan = tuple[SourceSchema, dict[str, ColumnPlan]]
_CACHE: dict[tuple[Any, ...], _Plan] = {}
_CACHE_LIMIT = 4096


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one debezium-json message into change events (one at most)."""
    if value is None:
        return []  # tombstone
    pos = ctx.position
    exact = value.translate(_NUMERIC).find(_LONG_NUMBER) >= 0
    root = _load_exact(value, pos) if exact else load_object(FORMAT, value, pos)
    connect_schema: Any = None
    if "payload" in root and "schema" in root:
        payload, connect_schema = root["payload"], root["schema"]
        if not isinstance(payload, dict):
            raise MalformedMessage(FORMAT, pos, f"'payload' must be an object, got {type(payload).__name__}")
    elif ("payload" in root or "schema" in root) and "op" not in root:
        raise MalformedMessage(FORMAT, pos, "a Kafka Connect envelope needs both 'schema' and 'payload'")
    else:
        payload = root

    source = optional(FORMAT, payload, "source", dict, pos) or {}
    database = optional(FORMAT, source, "db", str, pos)
    table = optional(FORMAT, source, "table", str, pos)
    ts = source.get("ts_ms")
    op_ts = ts if isinstance(ts, int) else optional(FORMAT, payload, "ts_ms", int, pos)

    op_name = payload.get("op")
    if op_name is None and isinstance(payload.get("ddl"), str):
        schema_database = optional(FORMAT, payload, "databaseName", str, pos)
        return [SchemaChangeEvent(schema_database or database, table, payload["ddl"], op_ts)]
    op = envelope_op(FORMAT, op_name, database, table, pos)

    after = _image(payload, "after", op is not Op.DELETE, op_name, pos)
    before = _image(payload, "before", op is Op.DELETE, op_name, pos)
    keys = _primary_keys(payload, key, pos)
    if isinstance(connect_schema, dict):
        schema, columns = _typed(connect_schema, keys, pos)
        after, before = _convert(after, columns, exact, pos), _convert(before, columns, exact, pos)
    else:
        schema = _untyped(after, before, keys)
        if exact:
            after, before = _plain_row(after, pos), _plain_row(before, pos)

    if op is Op.INSERT:
        return [DataChangeEvent(op, database, table, schema, None, after, op_ts)]
    if op is Op.DELETE:
        return [DataChangeEvent(op, database, table, schema, before, None, op_ts)]
    assert after is not None
    return [DataChangeEvent(op, database, table, schema, after | (before or {}), after, op_ts)]


def envelope_op(fmt: str, op_name: Any, database: str | None, table: str | None, pos: SourcePosition) -> Op:
    """A Debezium envelope's ``op`` (debezium-json and debezium-avro): c/r/u/d, or why not."""
    if not isinstance(op_name, str):
        raise MalformedMessage(fmt, pos, "field 'op' is missing or not a string")
    op = OPS.get(op_name)
    if op is None:
        if op_name in UNSUPPORTED:
            raise UnsupportedChange(f"{database}.{table}", pos, UNSUPPORTED[op_name])
        raise MalformedMessage(fmt, pos, f"unknown 'op' {preview(op_name)} (expected c, r, u, d)")
    return op


def _load_exact(value: bytes, pos: SourcePosition) -> dict[str, Any]:
    try:
        root = strict_loads(value, parse_float=Decimal)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return load_object(FORMAT, value, pos)  # the same input, for the same error text
    if not isinstance(root, dict):
        raise MalformedMessage(FORMAT, pos, f"expected a JSON object, got {type(root).__name__}")
    return root


def _image(payload: dict[str, Any], name: str, required: bool, op: str, pos: SourcePosition) -> dict[str, Any] | None:
    row = payload.get(name)
    if row is None and required:
        raise MalformedMessage(FORMAT, pos, f"field '{name}' is missing or null in an 'op': '{op}' message")
    if row is not None and not isinstance(row, dict):
        raise MalformedMessage(FORMAT, pos, f"field '{name}' must be an object, got {type(row).__name__}")
    return row


def _primary_keys(payload: dict[str, Any], key: bytes | None, pos: SourcePosition) -> tuple[str, ...]:
    pk_names = optional(FORMAT, payload, "pkNames", list, pos)
    if pk_names is not None:
        return tuple(str(k) for k in pk_names)
    if not key:
        return ()
    try:
        parsed = orjson.loads(key)
    except orjson.JSONDecodeError:
        return ()
    if isinstance(parsed, dict) and "payload" in parsed and "schema" in parsed:
        parsed = parsed["payload"]
    return tuple(parsed) if isinstance(parsed, dict) else ()


def _typed(connect_schema: dict[str, Any], keys: tuple[str, ...], pos: SourcePosition) -> _Plan:
    fields = None
    for part in connect_schema.get("fields") or ():
        if isinstance(part, dict) and part.get("field") == "after":
            fields = part.get("fields")
            break
        if isinstance(part, dict) and part.get("field") == "before" and fields is None:
            fields = part.get("fields")
    if not isinstance(fields, list):
        raise MalformedMessage(FORMAT, pos, "the 'schema' has no 'after' or 'before' struct with 'fields'")
    try:
        cache_key = (orjson.dumps(fields, default=str), keys)
    except orjson.JSONEncodeError as exc:  # deeper than 254 levels, an integer past 64 bits
        raise MalformedMessage(FORMAT, pos, f"the 'schema' fields cannot be read ({exc})") from None
    cached = _CACHE.get(cache_key)
    if cached is not None:
        return cached
    columns: dict[str, ColumnPlan] = {}
    for f in fields:
        name = f.get("field") if isinstance(f, dict) else None
        if not isinstance(name, str):
            raise MalformedMessage(FORMAT, pos, "every field of the 'after' schema needs a 'field' name")
        params = f.get("parameters") or {}
        if not all(isinstance(f.get(k), str | None) for k in ("type", "name")):
            raise MalformedMessage(FORMAT, pos, f"column '{name}': its schema's 'type' or 'name' is not text")
        try:
            columns[name] = plan_column(f.get("type"), f.get("name"), {str(k): str(v) for k, v in params.items()})
        except (ValueError, AttributeError) as exc:
            raise MalformedMessage(FORMAT, pos, f"bad schema of column '{name}': {exc}") from None
    schema = SourceSchema(tuple((n, c.paimon_type) for n, c in columns.items()), keys, TypeSystem.PAIMON)
    return _remember(cache_key, (schema, columns))


def _untyped(after: dict[str, Any] | None, before: dict[str, Any] | None, keys: tuple[str, ...]) -> SourceSchema:
    names = tuple(dict.fromkeys([*(after or ()), *(before or ())]))
    cache_key = (names, keys)
    cached = _CACHE.get(cache_key)
    if cached is not None:
        return cached[0]
    return _remember(cache_key, (SourceSchema(tuple((n, None) for n in names), keys, TypeSystem.STRING), {}))[0]


def _remember(cache_key: tuple[Any, ...], plan: _Plan) -> _Plan:
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[cache_key] = plan
    return plan


def _convert(
    row: dict[str, Any] | None, columns: dict[str, ColumnPlan], exact: bool, pos: SourcePosition
) -> dict[str, Any] | None:
    if row is None:
        return None
    for name, value in row.items():
        column = columns.get(name)
        if column is None:
            raise MalformedMessage(FORMAT, pos, f"column '{name}' is not in the message's 'schema'")
        if value is None:
            continue
        if column.convert is not None:
            try:
                row[name] = column.convert(value)
            except (ValueError, TypeError, OverflowError) as exc:
                raise MalformedMessage(
                    FORMAT,
                    pos,
                    f"column '{name}' ({column.paimon_type}): cannot read {preview(value, 60)}: {reason(exc, value)}",
                ) from None
        elif exact:
            row[name] = _plain(value, name, pos)
    return row


def _plain_row(row: dict[str, Any] | None, pos: SourcePosition) -> dict[str, Any] | None:
    return None if row is None else {k: _plain(v, k, pos) for k, v in row.items()}


def _plain(value: Any, name: str, pos: SourcePosition) -> Any:
    """An exactly parsed value in the types the rest of lakecdc takes (no ``Decimal``)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict | list):
        try:
            return orjson.dumps(value, default=lambda d: orjson.Fragment(str(d))).decode()
        except orjson.JSONEncodeError as exc:  # deeper than 254 levels, an integer past 64 bits
            raise MalformedMessage(
                FORMAT, pos, f"column '{name}': {describe(value)} that cannot be written as JSON text ({exc})"
            ) from None
    return value
