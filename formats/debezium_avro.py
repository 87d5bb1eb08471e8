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

Semantics follow Apache Paimon's ``DebeziumAvroRecordParser``:

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

import base64
import re
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
from formats.debezium_avro_decoder import Decoder, compile_decoder
from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op, SchemaChangeEvent, SourceSchema, TypeSystem
from schema_evolution.debezium_types import ColumnPlan, plan_column
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.mysql_types import UnsupportedSourceType, mysql_to_paimon
from schema_evolution.payloads import preview, reason

FORMAT = "debezium-avro"

MAGIC_BYTE = 0
HEADER_BYTES = 5  # magic byte + 4-byte schema id

# schema id, and the message it is needed for (errors name it) -> the writer schema's JSON text
SchemaSource = Callable[[int, SourcePosition], str]

_COLUMN_NAME = "__debezium.source.column.name"
# Debezium's column.propagate.source.type parameters: the source column's type, length and scale
_COLUMN_TYPE = "__debezium.source.column.type"
_COLUMN_LENGTH = "__debezium.source.column.length"
_COLUMN_SCALE = "__debezium.source.column.scale"
# A Source record named for another connector than these has no MySQL column types (Postgres's INT4, ...)
_SOURCE_NAME = re.compile(r"io\.debezium\.connector\.(\w+)\.Source")
_MYSQL_CONNECTORS = frozenset({"mysql", "mariadb"})
_MYSQL_TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z ]*")
_DECIMAL = "org.apache.kafka.connect.data.Decimal"
# Avro types to Kafka Connect's (an int's connect.type says int8/int16 where Debezium narrowed it)
_CONNECT_TYPES = {
    "int": "int32",
    "long": "int64",
    "float": "float32",
    "double": "float64",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "fixed": "bytes",
    "enum": "string",
    "record": "struct",
    "array": "array",
    "map": "map",
}


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
class _Column:
    field: str  # the Avro field name (where the value is)
    name: str  # the column name
    plan: ColumnPlan
    adapt: Callable[[Any], Any] | None  # Avro value -> the JSON converter's form, before plan.convert
    mysql: str | None = None  # the MySQL type Debezium's parameters give ("DECIMAL(2, 1)"), if mapped


@dataclass(frozen=True, slots=True)
class _Envelope:
    """What one value schema id gives: the parsed writer schema and the row's columns."""

    writer: Any
    columns: tuple[_Column, ...]
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


def _convert_column(column: _Column, value: Any, pos: SourcePosition) -> Any:
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
    _collect_named(raw, None, named)
    try:
        writer = fastavro.parse_schema(_without_logical_types(raw))
    except Exception as exc:  # fastavro's SchemaParseException and friends
        raise MalformedMessage(FORMAT, pos, f"schema {value_id} is not an Avro schema fastavro reads ({exc})") from None
    record = _resolve(raw, named)
    row_schema = None
    mysql_source = True
    images = []  # the record schemas of 'after' and 'before'
    if isinstance(record, dict) and record.get("type") == "record":
        fields = {f.get("name"): f for f in record.get("fields") or () if isinstance(f, dict)}
        mysql_source = _mysql_source(fields.get("source"), named)
        for name in ("after", "before"):
            if name in fields:
                candidate = _resolve(_non_null(fields[name].get("type")), named)
                if isinstance(candidate, dict) and candidate.get("type") == "record":
                    row_schema = row_schema or candidate
                    images.append(candidate)
    decode = compile_decoder(raw, named, HEADER_BYTES)
    if row_schema is None:
        return _Envelope(writer, (), (), value_id=value_id, decode=decode)
    one_record = all(image is row_schema for image in images)
    columns = []
    for f in row_schema.get("fields") or ():
        field_type = _resolve(_non_null(f.get("type")), named)
        try:
            columns.append(_column(f["name"], field_type, mysql_source))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise MalformedMessage(
                FORMAT, pos, f"schema {value_id}: bad schema of column {preview(f.get('name'))}: {exc}"
            ) from None
    in_place = (
        one_record and all(c.name == c.field for c in columns) and len({c.field for c in columns}) == len(columns)
    )
    converting = tuple(
        (c.field, _adapt_convert(c)) for c in columns if c.adapt is not None or c.plan.convert is not None
    )
    if columns and all(c.mysql is not None for c in columns):
        # every column has its MySQL type: the assembler maps them, with the job's --type-mapping
        fields_, types = tuple((c.name, c.mysql) for c in columns), TypeSystem.MYSQL
    else:
        fields_, types = tuple((c.name, _paimon_type(c)) for c in columns), TypeSystem.PAIMON
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


def _adapt_convert(column: _Column) -> Callable[[Any], Any]:
    adapt, convert = column.adapt, column.plan.convert
    if adapt is None:
        assert convert is not None
        return convert
    if convert is None:
        return adapt
    return lambda value: convert(adapt(value))


def _paimon_type(column: _Column) -> str:
    """A column's Paimon type where not every column has its MySQL type (MySQL's default mapping, as
    Paimon; a SET stays the Connect type's STRING here: a Paimon-typed ARRAY column takes no SET text)."""
    if column.mysql is None:
        return column.plan.paimon_type
    mapped = mysql_to_paimon(column.mysql).sql()
    return column.plan.paimon_type if mapped.startswith("ARRAY") else mapped


def _mysql_source(source_field: Any, named: dict[str, dict[str, Any]]) -> bool:
    """Whether the envelope's ``source`` record is a MySQL (or MariaDB) connector's, or unnamed."""
    source = _resolve(_non_null(source_field.get("type")), named) if isinstance(source_field, dict) else None
    name = source.get("connect.name") if isinstance(source, dict) else None
    match = _SOURCE_NAME.fullmatch(name) if isinstance(name, str) else None
    return match is None or match.group(1) in _MYSQL_CONNECTORS


def _mysql_type(params: dict[str, str]) -> str | None:
    """The MySQL column type Debezium's ``__debezium.source.column.*`` parameters describe, as
    ``schema_evolution.mysql_types`` reads it ("TINYINT(1)", "DECIMAL(8, 3) UNSIGNED"), or None when there
    is none or MySQL's mapping does not know it."""
    name = params.get(_COLUMN_TYPE)
    if name is None or _MYSQL_TYPE_NAME.fullmatch(name) is None:
        return None
    name = " ".join(name.upper().split())
    words = name.split()
    while words and words[-1] in ("UNSIGNED", "ZEROFILL", "SIGNED"):
        words.pop()
    base, modifiers = " ".join(words), name[len(" ".join(words)) :]
    length, scale = params.get(_COLUMN_LENGTH), params.get(_COLUMN_SCALE)
    text = base
    # ENUM and SET: their length is not a member list (the members are Debezium's 'allowed' parameter)
    if base not in ("ENUM", "SET") and length is not None and length.isdigit():
        text += f"({length}, {scale})" if scale is not None and scale.isdigit() else f"({length})"
    text += modifiers
    try:
        mysql_to_paimon(text)
    except UnsupportedSourceType:
        return None
    return text


def _key_names(text: str, key_id: int, pos: SourcePosition) -> tuple[str, ...]:
    raw = _load_schema(text, key_id, pos)
    named: dict[str, dict[str, Any]] = {}
    _collect_named(raw, None, named)
    record = _resolve(_non_null(raw), named)
    if not isinstance(record, dict) or record.get("type") != "record":
        return ()
    names = []
    for f in record.get("fields") or ():
        props = _resolve(_non_null(f.get("type")), named)
        params = props.get("connect.parameters") if isinstance(props, dict) else None
        column = params.get(_COLUMN_NAME) if isinstance(params, dict) else None
        names.append(column if isinstance(column, str) else str(f.get("name")))
    return tuple(names)


def _column(field: str, avro: Any, mysql_source: bool = True) -> _Column:
    column = _connect_column(field, avro)
    props = _innermost(avro)
    params = props.get("connect.parameters") if isinstance(props, dict) else None
    mysql = _mysql_type({str(k): str(v) for k, v in params.items()}) if mysql_source and params else None
    if mysql is None:
        return column
    adapt = column.adapt
    if props.get("type") == "float" and column.plan.convert is None and adapt is None:
        adapt = _float32_text  # REAL as an Avro float: Java's Float.toString digits, not the double's
    return _Column(column.field, column.name, column.plan, adapt, mysql)


def _innermost(avro: Any) -> Any:
    while isinstance(avro, dict) and isinstance(avro.get("type"), dict):
        avro = avro["type"]
    return avro


def _float32_text(value: Any) -> Any:
    """A 32-bit float as the shortest decimal that reads back as the same float32 (1.000001, not
    1.0000009536743164): what Paimon casts from ``Float.toString`` when the column is a DOUBLE."""
    if not isinstance(value, float):
        return value
    for digits in range(6, 10):
        shortest = float(f"{value:.{digits}g}")
        if struct.unpack("<f", struct.pack("<f", shortest))[0] == value:
            return shortest
    return value


def _connect_column(field: str, avro: Any) -> _Column:
    props: dict[str, Any] = avro if isinstance(avro, dict) else {"type": avro}
    avro_type = props.get("type")
    if isinstance(avro_type, dict | list):  # {"type": {"type": "int", ...}}: the inner schema
        return _connect_column(field, avro_type)
    if not isinstance(avro_type, str):
        raise ValueError("no Avro type")
    params = props.get("connect.parameters")
    params = {str(k): str(v) for k, v in params.items()} if isinstance(params, dict) else {}
    connect_type = props.get("connect.type") or _CONNECT_TYPES.get(avro_type, "string")
    logical = props.get("connect.name")
    plan = plan_column(connect_type, logical if isinstance(logical, str) else None, params)
    # A record (a geometry) may be a named type shared by several columns, whose parameters name the first
    # one: its field name names it (Paimon's rule too).
    name = field if avro_type == "record" else params.get(_COLUMN_NAME) or field
    if plan.convert is None:
        adapt = _json_text if avro_type in ("record", "array", "map") else None
        return _Column(field, name, plan, adapt)
    if connect_type == "bytes" and logical is None:
        return _Column(field, name, ColumnPlan(plan.paimon_type), None)  # the bytes as they are
    if logical == _DECIMAL and avro_type == "bytes" and plan.paimon_type.startswith(("DECIMAL", "STRING")):
        # the unscaled bytes read directly (the JSON converter's base64 text would be decoded at once)
        return _Column(field, name, ColumnPlan(plan.paimon_type, _decimal_text(int(params.get("scale") or 0))), None)
    return _Column(field, name, plan, _connect_json)


def _decimal_text(scale: int) -> Callable[[Any], str]:
    """Connect's Decimal from its unscaled two's-complement bytes, as exact text (what the debezium-json
    path's converter makes of the same bytes in base64)."""
    if scale <= 0:
        zeros = "0" * -scale

        def whole(value: Any) -> str:
            if value.__class__ is not bytes:
                raise ValueError(f"expected bytes for a Decimal, got {type(value).__name__}")
            unscaled = int.from_bytes(value, "big", signed=True)
            return f"{unscaled}{zeros}" if unscaled else "0"

        return whole
    unit = 10**scale

    def convert(value: Any) -> str:
        if value.__class__ is not bytes:
            raise ValueError(f"expected bytes for a Decimal, got {type(value).__name__}")
        unscaled = int.from_bytes(value, "big", signed=True)
        if unscaled < 0:
            units, fraction = divmod(-unscaled, unit)
            return f"-{units}.{fraction:0{scale}d}"
        units, fraction = divmod(unscaled, unit)
        return f"{units}.{fraction:0{scale}d}"

    return convert


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


def _connect_json(value: Any) -> Any:
    """An Avro value in the form Kafka Connect's JSON converter writes: bytes as base64, records as objects."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: _connect_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_connect_json(v) for v in value]
    return value


def _json_text(value: Any) -> str:
    return orjson.dumps(_connect_json(value)).decode()


def _non_null(avro: Any) -> Any:
    """The non-null branch of an optional ``["null", X]`` union."""
    if isinstance(avro, list):
        rest = [t for t in avro if t != "null"]
        if len(rest) == 1:
            return rest[0]
    return avro


def _resolve(avro: Any, named: dict[str, dict[str, Any]]) -> Any:
    """A reference to a named type (``"io.debezium.data.geometry.Geometry"``) as the type it names."""
    if isinstance(avro, str) and avro in named:
        return named[avro]
    return avro


def _collect_named(avro: Any, namespace: str | None, named: dict[str, dict[str, Any]]) -> None:
    """Every named type of a schema (records, enums, fixed) by its full and its short name."""
    if isinstance(avro, list):
        for branch in avro:
            _collect_named(branch, namespace, named)
        return
    if not isinstance(avro, dict):
        return
    kind = avro.get("type")
    if isinstance(kind, dict | list):
        _collect_named(kind, namespace, named)
        return
    name = avro.get("name")
    if kind in ("record", "enum", "fixed", "error") and isinstance(name, str):
        space = avro.get("namespace") if isinstance(avro.get("namespace"), str) else namespace
        full = name if "." in name or not space else f"{space}.{name}"
        named[full] = avro
        named.setdefault(name, avro)
        namespace = full.rsplit(".", 1)[0] if "." in full else space
    for f in avro.get("fields") or ():
        if isinstance(f, dict):
            _collect_named(f.get("type"), namespace, named)
    for part in ("items", "values"):
        if part in avro:
            _collect_named(avro[part], namespace, named)


def _without_logical_types(avro: Any) -> Any:
    """The schema with Avro ``logicalType`` annotations removed: the binary is the same, and fastavro
    then returns the raw numbers and bytes that the Connect names convert."""
    if isinstance(avro, dict):
        return {k: _without_logical_types(v) for k, v in avro.items() if k != "logicalType"}
    if isinstance(avro, list):
        return [_without_logical_types(v) for v in avro]
    return avro
