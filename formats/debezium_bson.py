"""debezium-bson: MongoDB change events of Debezium's MongoDB connector.

    key:   {"id": "{\\"$oid\\": \\"67ab25755c0d5ac87eb8c632\\"}"}      (or the same inside a Connect envelope)
    value: {"before": "<document as Extended JSON>" | null, "after": "<document>" | null,
            "source": {"db": "bigdata_test", "collection": "sync_test_table", "ts_ms": ...}, "op": "c", ...}

The documents travel as strings of MongoDB Extended JSON (canonical or relaxed). Semantics follow Apache
Paimon's ``DebeziumBsonRecordParser``:

* every field of the document is a STRING column (``TypeSystem.STRING``), in document order; the primary
  key is always ``_id``. Values are written as Paimon's ``BsonValueConvertor`` + Jackson write them:
  ObjectId -> its hex, ``$numberLong``/``$date`` -> the number, ``$timestamp`` -> its seconds, doubles as
  Java's ``Double.toString`` (``0.0``, ``NaN``, ``1.0E10``), ``$numberDecimal`` as the decimal (NaN and the
  infinities as the double), UUID binaries (subtype 4, ``$uuid``) as the UUID text, other binaries as
  base64, regular expressions as ``/pattern/options``, symbol and code as their text, MinKey/MaxKey as
  ``BsonMinKey``/``BsonMaxKey``, null and undefined as NULL, documents and arrays as compact JSON
  (nested doubles NaN/Infinity quoted, as Jackson writes them).
* ``c``/``r`` insert ``after``; ``d`` deletes ``before``; ``u`` deletes ``before`` and inserts ``after``
  (two events, as Paimon's -D/+I). A missing ``before`` (MongoDB before 6.0 has no pre-images) deletes
  by the message key's ``id`` (Extended JSON of the ``_id``), Paimon's way.
* database and table are ``source.db`` / ``source.collection``; the time is ``source.ts_ms``, else the
  payload's ``ts_ms``. A value inside a Kafka Connect envelope (``schema`` + ``payload``) is unwrapped.
* A Kafka tombstone (no value, sent after each delete) carries no change: ``[]``.

Differences from Paimon (which fails on these): a binary of the legacy UUID subtype 3 is stored as base64
(its byte order is not recorded in the data; Paimon's ``asUuid()`` throws), and ``$numberDecimal`` ``-0``
is written ``-0`` (Java's ``bigDecimalValue`` throws). Only Extended JSON is read, not the mongo shell's
``ObjectId("…")`` syntax, which Debezium does not write.
"""

from __future__ import annotations

import base64
import binascii
import math
import uuid
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op
from formats.jsonutil import load_object, optional, strict_loads
from formats.string_schema import string_schema
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import describe, preview

FORMAT = "debezium-bson"

PRIMARY_KEYS = ("_id",)
_INT32 = 1 << 31
_INT64 = 1 << 63


_TOO_DEEP = "nested too deeply"


class _BadDocument(ValueError):
    """A document that is not Extended JSON (the reason, never the value)."""


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one debezium-bson message into change events (two for an update: delete, then insert)."""
    if value is None:
        return []  # tombstone
    pos = ctx.position
    root = load_object(FORMAT, value, pos)
    if "payload" in root and "schema" in root:
        root = root["payload"]
        if not isinstance(root, dict):
            raise MalformedMessage(FORMAT, pos, f"'payload' must be an object, got {type(root).__name__}")
    source = optional(FORMAT, root, "source", dict, pos) or {}
    database = optional(FORMAT, source, "db", str, pos)
    table = optional(FORMAT, source, "collection", str, pos)
    ts = source.get("ts_ms")
    op_ts = ts if isinstance(ts, int) else optional(FORMAT, root, "ts_ms", int, pos)

    op = root.get("op")
    if op in ("c", "r"):
        after = _document(root, "after", pos)
        if after is None:
            raise MalformedMessage(FORMAT, pos, f"field 'after' is missing or null in an 'op': '{op}' message")
        return [_event(Op.INSERT, database, table, after, op_ts)]
    if op == "u":
        after = _document(root, "after", pos)
        if after is None:
            raise MalformedMessage(FORMAT, pos, "field 'after' is missing or null in an 'op': 'u' message")
        removed = _event(Op.DELETE, database, table, _before_or_key(root, key, op, pos), op_ts)
        return [removed, _event(Op.INSERT, database, table, after, op_ts)]
    if op == "d":
        return [_event(Op.DELETE, database, table, _before_or_key(root, key, op, pos), op_ts)]
    if not isinstance(op, str):
        raise MalformedMessage(FORMAT, pos, "field 'op' is missing or not a string")
    raise MalformedMessage(FORMAT, pos, f"unknown 'op' {preview(op)} (expected c, r, u, d)")


def document_row(text: str) -> dict[str, str | None]:
    """The STRING columns of one Extended JSON document, as Paimon writes them (``_BadDocument`` if it is
    not one)."""
    doc = _loads(text)
    if not isinstance(doc, dict):
        raise _BadDocument(f"expected a document, got {describe(doc)}")
    return {name: _value_text(v) for name, v in doc.items()}


def _loads(text: str) -> Any:
    try:
        return strict_loads(text)
    except ValueError:
        raise _BadDocument("not valid Extended JSON") from None
    except RecursionError:
        raise _BadDocument(_TOO_DEEP) from None


def _value_text(value: Any) -> str | None:
    try:
        return _text(_convert(value))
    except RecursionError:
        raise _BadDocument(_TOO_DEEP) from None


def _event(op: Op, database: str | None, table: str | None, row: dict[str, str | None], ts: int | None) -> ChangeEvent:
    schema = string_schema(tuple(row), PRIMARY_KEYS)
    if op is Op.DELETE:
        return DataChangeEvent(op, database, table, schema, row, None, ts)
    return DataChangeEvent(op, database, table, schema, None, row, ts)


def _document(root: dict[str, Any], name: str, pos: SourcePosition) -> dict[str, str | None] | None:
    text = root.get(name)
    if text is None:
        return None
    if not isinstance(text, str):
        reason = f"field '{name}' must be a string of Extended JSON (a debezium-bson document), got {describe(text)}"
        raise MalformedMessage(FORMAT, pos, reason)
    try:
        return document_row(text)
    except _BadDocument as exc:
        raise MalformedMessage(FORMAT, pos, f"field '{name}': {exc}") from None


def _before_or_key(root: dict[str, Any], key: bytes | None, op: str, pos: SourcePosition) -> dict[str, str | None]:
    before = _document(root, "before", pos)
    if before is not None:
        return before
    # No pre-image (MongoDB before 6.0): delete by the key's id, as Paimon does.
    missing = f"no 'before' and no 'id' in the message key for an 'op': '{op}' message"
    try:
        key_root = orjson.loads(key) if key else None
    except orjson.JSONDecodeError:
        raise MalformedMessage(FORMAT, pos, f"{missing} (the key is not JSON)") from None
    if isinstance(key_root, dict) and "payload" in key_root and "schema" in key_root:
        key_root = key_root["payload"]
    ident = key_root.get("id") if isinstance(key_root, dict) else None
    if ident is None:
        raise MalformedMessage(FORMAT, pos, missing)
    try:
        return {"_id": _value_text(_loads(ident) if isinstance(ident, str) else ident)}
    except _BadDocument as exc:
        raise MalformedMessage(FORMAT, pos, f"the message key's 'id': {exc}") from None


def _convert(value: Any) -> Any:
    """One Extended JSON value as Paimon's ``BsonValueConvertor`` returns it: None, str, bool, int,
    float (a Java double), Decimal (a BigDecimal), dict or list."""
    if isinstance(value, dict):
        if value and next(iter(value)).startswith("$"):
            return _extended(value)
        return {k: _convert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return float(value)  # beyond a long: the BSON reader makes it a double
    return value


def _extended(value: dict[str, Any]) -> Any:
    keys = set(value)
    try:
        if keys == {"$oid"}:
            return _string(value["$oid"]).lower()
        if keys == {"$numberLong"} or keys == {"$numberInt"}:
            return int(_string(next(iter(value.values()))))
        if keys == {"$numberDouble"}:
            return float(_string(value["$numberDouble"]))
        if keys == {"$numberDecimal"}:
            return _decimal(_string(value["$numberDecimal"]))
        if keys == {"$date"}:
            return _date(value["$date"])
        if keys == {"$timestamp"}:
            return int(value["$timestamp"]["t"])
        if keys == {"$regularExpression"}:
            regex = value["$regularExpression"]
            return _regex(_string(regex["pattern"]), _string(regex.get("options", "")))
        if keys <= {"$regex", "$options"} and "$regex" in keys and isinstance(value["$regex"], str):
            return _regex(value["$regex"], _string(value.get("$options", "")))
        if keys == {"$symbol"}:
            return _string(value["$symbol"])
        if keys == {"$code"}:
            return _string(value["$code"])
        if keys == {"$code", "$scope"}:
            return {"$code": _string(value["$code"]), "$scope": _convert(value["$scope"])}
        if keys == {"$minKey"}:
            return "BsonMinKey"
        if keys == {"$maxKey"}:
            return "BsonMaxKey"
        if keys == {"$undefined"}:
            return None
        if keys == {"$uuid"}:
            return str(uuid.UUID(_string(value["$uuid"])))
        if keys == {"$binary"} and isinstance(value["$binary"], dict):
            return _binary(value["$binary"]["base64"], value["$binary"]["subType"])
        if keys == {"$binary", "$type"}:
            return _binary(value["$binary"], value["$type"])
        if keys == {"$dbPointer"}:
            pointer = value["$dbPointer"]
            return f"BsonDbPointer{{namespace='{_string(pointer['$ref'])}', id={_extended(pointer['$id'])}}}"
    except (KeyError, TypeError, ValueError, AttributeError, InvalidOperation, binascii.Error):
        raise _BadDocument(f"a malformed Extended JSON value {'/'.join(sorted(keys))}") from None
    # Not an Extended JSON type ($ref/$id of a DBRef, a field named "$x"): a plain document.
    return {k: _convert(v) for k, v in value.items()}


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def _decimal(text: str) -> Decimal | float:
    number = Decimal(text)
    if number.is_nan():
        return math.nan
    if number.is_infinite():
        return -math.inf if number < 0 else math.inf
    return number


def _date(value: Any) -> int:
    if isinstance(value, dict):
        return int(_string(value["$numberLong"]))
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):  # relaxed form: ISO-8601 with an offset or Z
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            raise ValueError("a $date needs an offset")
        epoch = datetime(1970, 1, 1, tzinfo=moment.tzinfo)
        delta = moment - epoch
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    raise TypeError("bad $date")


def _regex(pattern: str, options: str) -> str:
    escaped = pattern.replace("/", "\\/") if pattern else "(?:)"
    return f"/{escaped}/{options}"


def _binary(data: Any, sub_type: Any) -> str:
    raw = base64.b64decode(_string(data), validate=True)
    kind = int(_string(sub_type), 16)
    if kind == 4 and len(raw) == 16:
        return str(uuid.UUID(bytes=raw))
    return base64.b64encode(raw).decode("ascii")


def _text(value: Any) -> str | None:
    """A converted value as Paimon's column text: basic values by ``Objects.toString``, the rest as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double(value)
    return _json(value)


def _json(value: Any) -> str:
    """``value`` as Jackson's default ``writeValueAsString`` writes it (compact; NaN/Infinity quoted)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = java_double(value)
        return f'"{text}"' if math.isnan(value) or math.isinf(value) else text
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(k)}:{_json(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(_json(v) for v in value) + "]"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _json_string(text: str) -> str:
    escaped = (_ESCAPES.get(ch) or (f"\\u{ord(ch):04X}" if ord(ch) < 0x20 else ch) for ch in text)
    return '"' + "".join(escaped) + '"'


def java_double(x: float) -> str:
    """Java's ``Double.toString`` (shortest round-trip digits, JDK 19+): ``0.0``, ``3.14``, ``1.0E7``,
    ``1.0E-4``, ``NaN``, ``-Infinity``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    assert isinstance(exponent, int)
    point = len(digits) + exponent  # digits before the decimal point
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole, frac = digits[:point].ljust(point, "0"), digits[point:]
        return f"{sign}{whole}.{frac or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"
