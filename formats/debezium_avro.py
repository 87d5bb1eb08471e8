"""debezium-avro: Debezium change events as Kafka Connect's AvroConverter writes them, with a Confluent
Schema Registry.

    value: 0x00 | schema id (4 bytes, big-endian) | Avro binary of the Envelope record
           {before: Value | null, after: Value | null, source: {db, table, ts_ms, ...}, op, ts_ms, ...}
    key:   0x00 | schema id | Avro binary of the Key record (its fields are the primary keys)

This module is pure: it reads the wire format and decodes the Avro body against the writer schema (parsed
and checked by fastavro, decoded by a decoder compiled for it in ``formats.debezium_avro_decoder``, which
gives fastavro's values), which it asks of a ``SchemaSource`` (schema id -> the schema's JSON text). The registry client
that answers lives in ``ingest.kafka.schema_registry``; a parser is built per process around one
(``DebeziumAvroParser``), and caches what it derives from each schema id. Schemas are looked up by the
id each message carries, never by a subject, so topics with different schemas read side by side (Paimon
#7859 looked every topic's records up under one topic's subject).

Semantics follow Apache Paimon's ``DebeziumAvroRecordParser`` (the column rules live in
``formats.debezium_avro_columns``):

* ``c``/``r`` insert ``after``, ``d`` deletes ``before``, ``u`` updates ``before`` to ``after`` (Paimon's
  -D/+I; a null ``before`` leaves ``after``). A Kafka tombstone (no value) carries no change: ``[]``.
* database and table are ``source.db`` / ``source.table``; the time is ``source.ts_ms``, else ``ts_ms``.
* Primary keys are the fields of the key's record schema (read from the key's schema alone; a key that
  is not in the wire format gives none, as a non-JSON key does for debezium-json).
* A column is named by its ``__debezium.source.column.name`` parameter where Debezium gives one, else by
  its Avro field name; a record-typed column (a geometry, whose named type later columns share) always by
  its field name (Paimon's rule).
* Types, as Paimon's ``DebeziumSchemaUtils.avroToPaimonDataType``: a column whose ``connect.parameters``
  hold Debezium's ``__debezium.source.column.type`` (the connector's ``column.propagate.source.type``) is
  typed from that MySQL type, with ``__debezium.source.column.length``/``scale``, by MySQL's mapping
  (``schema_evolution.mysql_types``, Paimon's ``MySqlTypeUtils.toDataType``): TINYINT(1) is BOOLEAN,
  DECIMAL(2, 1) sent as a string is DECIMAL(2, 1), CHAR(10) is CHAR(10), SET is ARRAY<STRING>, ... When
  every column has one, the schema is in MySQL's vocabulary (``TypeSystem.MYSQL``), so ``--type-mapping``
  (tinyint1-not-bool, char-to-string, bigint-unsigned-to-bigint, to-string, ...) applies as for canal-json
  (Paimon always maps these with its default mapping); otherwise they are mapped with the default
  mapping here. Values keep the converters below (a MySQL REAL sent as an Avro float is its float32's
  shortest decimal, as Java's ``Float.toString`` gives Paimon). Differences from Paimon, on purpose: a
  column without the parameters (or whose type MySQL's mapping does not know, which Paimon refuses), and
  every column of another connector than MySQL's or MariaDB's (its ``Source`` record's ``connect.name``;
  Paimon feeds Postgres's INT4 to the MySQL mapping, which refuses it), is typed as below rather than by
  Paimon's fallback, which reads only Avro ``logicalType``s (a Debezium ``Date`` would be an INT there).
* Otherwise each field's Connect type (``connect.type``, else the Avro type), logical name
  (``connect.name``) and parameters go through ``schema_evolution.debezium_types.plan_column``, the
  mapping the debezium-json schema envelope uses (Paimon's debezium-json path never reads the column-type
  parameters), so such a table reads the same from either format; values are handed to its converters in
  the JSON converter's form (bytes as base64), so they convert alike. Avro ``logicalType`` annotations are
  not applied when decoding: the Connect name decides, as in JSON.
* Unlike Paimon, which logs and skips them, ``t`` (truncate) and ``m`` (message) stop the job as they do
  for debezium-json (``UnsupportedChange``): skipping a truncate would leave rows the source no longer has.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from io import BytesIO
from typing import Any

import fastavro
import orjson
from fastavro import schemaless_reader as _schemaless_reader

from formats.debezium import OPS, envelope_op
from formats.debezium_avro_columns import (
    COLUMN_NAME,
    Column,
    adapt_convert,
    collect_named,
    field_column,
    is_mysql_source,
    non_null,
    paimon_type,
    resolve,
    without_logical_types,
)
from formats.debezium_avro_decoder import Decoder, compile_decoder
from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op, SchemaChangeEvent, SourceSchema, TypeSystem
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import preview, reason

FORMAT = "debezium-avro"

MAGIC_BYTE = 0
HEADER_BYTES = 5  # magic byte + 4-byte schema id

# schema id, and the message it is needed for (errors name it) -> the writer schema's JSON text
SchemaSource = Callable[[int, SourcePosition], str]


def schema_id(data: bytes, pos: SourcePosition, what: str = "value") -> int:
    """The schema id of one message value or key in the Confluent wire format (``MalformedMessage``
    if it is not in it)."""
    if len(data) < HEADER_BYTES or data[0] != MAGIC_BYTE:
        raise MalformedMessage(
            FORMAT,
            pos,
            f"the {what} is not in the Confluent Schema Registry wire format (magic byte 0, a 4-byte schema id, "
            f"the Avro body); {len(data)} bytes starting with byte {data[0] if data else 'none'}",
        )
    return int.from_bytes(data[1:HEADER_BYTES], "big")


@dataclass(frozen=True, slots=True)
class _Envelope:
    """What one value schema id gives: the parsed writer schema and the row's columns."""

    writer: Any
    columns: tuple[Column, ...]
    fields: tuple[tuple[str, str | None], ...]
    types: TypeSystem = TypeSystem.PAIMON  # the vocabulary of ``fields``' types
    value_id: int = 0
    # The decoded record is the row itself (each column named by its field, 'after' and 'before' one
    # record type): only these columns' values are replaced, by adapt and convert in one.
    in_place: bool = False
    # the writer schema's compiled decoder (``formats.debezium_avro_decoder``), None: fastavro's reader
    decode: Decoder | None = None
    converting: tuple[tuple[str, Callable[[Any], Any]], ...] = ()
    # key header (or None) -> the SourceSchema of this value schema with that key's primary keys
    schemas: dict[bytes | None, SourceSchema] = dataclass_field(default_factory=dict)


class DebeziumAvroParser:
    """A ``formats.Parser`` for debezium-avro over one ``SchemaSource``; caches per schema id.

    The per-message path is a dict lookup by the value's 5-byte header (magic byte and schema id), one
    decode by the writer schema's compiled decoder (``formats.debezium_avro_decoder``; fastavro's reader
    for a schema it does not compile), and the decoded record used as the row with only the columns that
    need it converted in place; everything else is derived once per schema id."""

    def __init__(self, schemas: SchemaSource) -> None:
        self._schemas = schemas
        self._envelopes: dict[int, _Envelope] = {}
        self._by_header: dict[bytes, _Envelope] = {}
        self._keys: dict[int, tuple[str, ...]] = {}

    def __call__(self, value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
        if value is None:
            return []  # tombstone
        pos = ctx.position
        envelope = self._by_header.get(value[:HEADER_BYTES])
        if envelope is None:
            envelope = self._envelope(value, pos)
        try:
            decode = envelope.decode
            if decode is not None:
                root = decode(value)
            else:
                root = _schemaless_reader(BytesIO(value[HEADER_BYTES:]), envelope.writer, None)
        except RecursionError:
            raise MalformedMessage(
                FORMAT, pos, f"the Avro body nests too deeply for schema {envelope.value_id}"
            ) from None
        except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, ... on bytes that do not fit
            raise MalformedMessage(
                FORMAT, pos, f"the Avro body does not decode with schema {envelope.value_id} ({type(exc).__name__})"
            ) from None
        if root.__class__ is not dict:
            raise MalformedMessage(
                FORMAT, pos, f"schema {envelope.value_id} is not a record schema (a Debezium Envelope)"
            )

        source = root.get("source")
        if source.__class__ is dict:
            database, table, ts = source.get("db"), source.get("table"), source.get("ts_ms")
            database = database if database.__class__ is str else None
            table = table if table.__class__ is str else None
        else:
            database = table = ts = None
        if ts.__class__ is not int:
            ts = root.get("ts_ms")
            ts = ts if ts.__class__ is int else None

        op_name = root.get("op")
        op = OPS.get(op_name) if op_name.__class__ is str else None
        if op is None:
            if op_name is None and isinstance(root.get("ddl"), str):
                return [SchemaChangeEvent(_text(root.get("databaseName")) or database, table, root["ddl"], ts)]
            op = envelope_op(FORMAT, op_name, database, table, pos)  # raises
        if not envelope.columns and not envelope.fields:
            raise MalformedMessage(FORMAT, pos, f"schema {envelope.value_id} has no 'after' or 'before' record")

        key_header = key[:HEADER_BYTES] if key else None
        schema = envelope.schemas.get(key_header)
        if schema is None:
            schema = self._source_schema(envelope, key, key_header, pos)
        if op is Op.INSERT:
            return [
                DataChangeEvent(
                    op, database, table, schema, None, _image(root, "after", True, op_name, envelope, pos), ts
                )
            ]
        if op is Op.DELETE:
            return [
                DataChangeEvent(
                    op, database, table, schema, _image(root, "before", True, op_name, envelope, pos), None, ts
                )
            ]
        after = _image(root, "after", True, op_name, envelope, pos)
        before = _image(root, "before", False, op_name, envelope, pos)
        return [DataChangeEvent(op, database, table, schema, before if before is not None else after, after, ts)]

    def _envelope(self, value: bytes, pos: SourcePosition) -> _Envelope:
        value_id = schema_id(value, pos)
        envelope = self._envelopes.get(value_id)
        if envelope is None:
            envelope = self._envelopes[value_id] = _envelope(self._schemas(value_id, pos), value_id, pos)
        self._by_header[value[:HEADER_BYTES]] = envelope
        return envelope

    def _source_schema(
        self, envelope: _Envelope, key: bytes | None, key_header: bytes | None, pos: SourcePosition
    ) -> SourceSchema:
        key_id = _key_id(key)
        keys: tuple[str, ...] = ()
        if key_id is not None:
            keys = self._keys.get(key_id) or ()
            if key_id not in self._keys:
                keys = self._keys[key_id] = _key_names(self._schemas(key_id, pos), key_id, pos)
        schema = SourceSchema(envelope.fields, keys, envelope.types)
        if len(envelope.schemas) >= 4096:  # keys outside the wire format: a header each
            envelope.schemas.clear()
        envelope.schemas[key_header] = schema
        return schema


def _image(
    root: dict[str, Any], name: str, required: bool, op: Any, envelope: _Envelope, pos: SourcePosition
) -> dict[str, Any] | None:
    """The row of ``root[name]``: the decoded record itself, its converting columns replaced."""
    record = root.get(name)
    if record.__class__ is not dict or not envelope.in_place:
        if record is None and not required:
            return None
        return _row(root, name, required, op, envelope, pos)
    for field_name, convert in envelope.converting:
        value = record.get(field_name)
        if value is not None:
            try:
                record[field_name] = convert(value)
            except (ValueError, TypeError, OverflowError, struct.error):
                column = next(c for c in envelope.columns if c.field == field_name)
                _convert_column(column, value, pos)  # raises the error _row gives
                raise
    return record


def _convert_column(column: Column, value: Any, pos: SourcePosition) -> Any:
    """One value through a column's adapt and convert, or ``MalformedMessage`` naming the column."""
    try:
        if column.adapt is not None:
            value = column.adapt(value)
        if column.plan.convert is not None:
            value = column.plan.convert(value)
    except (ValueError, TypeError, OverflowError, struct.error) as exc:  # struct: a geometry's SRID
        raise MalformedMessage(
            FORMAT,
            pos,
            f"column '{column.name}' ({column.plan.paimon_type}): cannot read {preview(value, 60)}: "
            f"{reason(exc, value)}",
        ) from None
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _key_id(key: bytes | None) -> int | None:
    if not key or len(key) < HEADER_BYTES or key[0] != MAGIC_BYTE:
        return None  # not an Avro key: no primary keys from it (debezium-json ignores a non-JSON key too)
    return int.from_bytes(key[1:HEADER_BYTES], "big")


def _load_schema(text: str, schema_id_: int, pos: SourcePosition) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise MalformedMessage(FORMAT, pos, f"schema {schema_id_} from the registry is not JSON") from None


def _envelope(text: str, value_id: int, pos: SourcePosition) -> _Envelope:
    raw = _load_schema(text, value_id, pos)
    named: dict[str, dict[str, Any]] = {}
    collect_named(raw, None, named)
    try:
        writer = fastavro.parse_schema(without_logical_types(raw))
    except Exception as exc:  # fastavro's SchemaParseException and friends
        raise MalformedMessage(FORMAT, pos, f"schema {value_id} is not an Avro schema fastavro reads ({exc})") from None
    record = resolve(raw, named)
    row_schema = None
    from_mysql = True
    images = []  # the record schemas of 'after' and 'before'
    if isinstance(record, dict) and record.get("type") == "record":
        fields = {f.get("name"): f for f in record.get("fields") or () if isinstance(f, dict)}
        from_mysql = is_mysql_source(fields.get("source"), named)
        for name in ("after", "before"):
            if name in fields:
                candidate = resolve(non_null(fields[name].get("type")), named)
                if isinstance(candidate, dict) and candidate.get("type") == "record":
                    row_schema = row_schema or candidate
                    images.append(candidate)
    decode = compile_decoder(raw, named, HEADER_BYTES)
    if row_schema is None:
        return _Envelope(writer, (), (), value_id=value_id, decode=decode)
    one_record = all(image is row_schema for image in images)
    columns = []
    for f in row_schema.get("fields") or ():
        field_type = resolve(non_null(f.get("type")), named)
        try:
            columns.append(field_column(f["name"], field_type, from_mysql))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise MalformedMessage(
                FORMAT, pos, f"schema {value_id}: bad schema of column {preview(f.get('name'))}: {exc}"
            ) from None
    in_place = (
        one_record and all(c.name == c.field for c in columns) and len({c.field for c in columns}) == len(columns)
    )
    converting = tuple(
        (c.field, adapt_convert(c)) for c in columns if c.adapt is not None or c.plan.convert is not None
    )
    if columns and all(c.mysql is not None for c in columns):
        # every column has its MySQL type: the assembler maps them, with the job's --type-mapping
        fields_, types = tuple((c.name, c.mysql) for c in columns), TypeSystem.MYSQL
    else:
        fields_, types = tuple((c.name, paimon_type(c)) for c in columns), TypeSystem.PAIMON
    return _Envelope(
        writer,
        tuple(columns),
        fields_,
        types=types,
        value_id=value_id,
        in_place=in_place,
        converting=converting,
        decode=decode,
    )


def _key_names(text: str, key_id: int, pos: SourcePosition) -> tuple[str, ...]:
    raw = _load_schema(text, key_id, pos)
    named: dict[str, dict[str, Any]] = {}
    collect_named(raw, None, named)
    record = resolve(non_null(raw), named)
    if not isinstance(record, dict) or record.get("type") != "record":
        return ()
    names = []
    for f in record.get("fields") or ():
        props = resolve(non_null(f.get("type")), named)
        params = props.get("connect.parameters") if isinstance(props, dict) else None
        column = params.get(COLUMN_NAME) if isinstance(params, dict) else None
        names.append(column if isinstance(column, str) else str(f.get("name")))
    return tuple(names)


def _row(
    root: dict[str, Any], name: str, required: bool, op: Any, envelope: _Envelope, pos: SourcePosition
) -> dict[str, Any] | None:
    record = root.get(name)
    if record is None:
        if required:
            raise MalformedMessage(FORMAT, pos, f"field '{name}' is missing or null in an 'op': '{op}' message")
        return None
    if not isinstance(record, dict):
        raise MalformedMessage(FORMAT, pos, f"field '{name}' is not a record")
    row: dict[str, Any] = {}
    for column in envelope.columns:
        value = record.get(column.field)
        if value is not None and (column.adapt is not None or column.plan.convert is not None):
            value = _convert_column(column, value, pos)
        row[column.name] = value
    return row
