"""aws-dms-json: AWS Database Migration Service's JSON message for a Kafka target (one row each).

    {"data": {"id": 105, "name": "hammer", "BI_id": 105, "BI_name": "mallet"},
     "metadata": {"timestamp": "2024-10-27T12:39:03.210671Z", "record-type": "data",
                  "operation": "load" | "insert" | "update" | "delete",
                  "partition-key-type": "schema-table", "schema-name": "db", "table-name": "t",
                  "transaction-id": 670014899490}}

Semantics follow Apache Paimon's ``DMSRecordParser``:

- ``metadata.record-type`` other than ``"data"`` (DMS's ``"control"`` records: create/drop table,
  column changes) changes no row: no event. Schema changes reach the table through the columns
  of later data records, as in Paimon.
- ``load`` (full-load phase) and ``insert`` are INSERTs of ``data``; ``delete`` deletes ``data``.
- ``update``: DMS's before image (task setting ``BeforeImageSettings``) arrives inside ``data`` as
  columns prefixed ``BI_``. The after image is ``data`` without them; the before image is ``data``
  with each ``BI_x`` value put in place of ``x``. Without ``BI_`` columns the before image equals
  the after image, exactly as in Paimon.
- ``schema-name``/``table-name`` are the database and table. DMS sends no types and no keys:
  every column is STRING (``TypeSystem.STRING``) and keys come from ``--primary-keys``.
- ``metadata.timestamp`` (ISO 8601, UTC) becomes ``op_ts_ms``.

Difference from Paimon: a JSON ``null`` is a SQL NULL here, where Paimon writes the text ``"null"``
(``Objects.toString(null)`` in its ``AbstractJsonRecordParser``; see its ``testTableFiledValNull``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op
from formats.jsonutil import load_object, require
from formats.string_schema import string_schema
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import preview

FORMAT = "aws-dms-json"

_OPS = {"load": Op.INSERT, "insert": Op.INSERT, "update": Op.UPDATE, "delete": Op.DELETE}
_BEFORE_PREFIX = "BI_"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)

# Rows of one table repeat the same column names; one SourceSchema per distinct name list keeps
# memory flat and lets the chunk builder compare schemas by identity.


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one AWS DMS record into at most one change event."""
    pos = ctx.position
    root = load_object(FORMAT, value, pos)
    metadata = require(FORMAT, root, "metadata", dict, pos)
    record_type = _meta(metadata, "record-type", pos)
    if record_type != "data":
        return []  # a control record (DDL or task status): no row changed
    database = _meta(metadata, "schema-name", pos)
    table = _meta(metadata, "table-name", pos)
    operation = _meta(metadata, "operation", pos)
    op = _OPS.get(operation) or _OPS.get(operation.lower())
    if op is None:
        raise MalformedMessage(
            FORMAT, pos, f"unknown metadata 'operation' {preview(operation)} (expected load, insert, update, delete)"
        )
    data = require(FORMAT, root, "data", dict, pos)
    ts = _op_ts_ms(metadata.get("timestamp"))

    if op is Op.INSERT:
        return [DataChangeEvent(op, database, table, string_schema(tuple(data)), None, data, ts)]
    if op is Op.DELETE:
        return [DataChangeEvent(op, database, table, string_schema(tuple(data)), data, None, ts)]
    after: dict[str, Any] = {}
    images: dict[str, Any] = {}
    for name, v in data.items():
        if name.startswith(_BEFORE_PREFIX):
            images[name[len(_BEFORE_PREFIX) :]] = v
        else:
            after[name] = v
    before = after | images
    # One schema for both images: the after image's columns, then any column only the before
    # image names (a BI_x whose x is absent from the new row).
    return [DataChangeEvent(op, database, table, string_schema(tuple(before)), before, after, ts)]


def _meta(metadata: dict[str, Any], name: str, pos: SourcePosition) -> str:
    v = metadata.get(name)
    if type(v) is not str:
        what = "missing or null" if v is None else f"a {type(v).__name__}, not a string"
        raise MalformedMessage(FORMAT, pos, f"field 'metadata.{name}' is {what}")
    return v


def _op_ts_ms(text: Any) -> int | None:
    # Paimon never reads this field, so a timestamp we cannot read only leaves op_ts_ms unknown;
    # it must not stop a job that Paimon would run.
    if type(text) is not str:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)  # DMS writes UTC
    return (at - _EPOCH) // _MS
