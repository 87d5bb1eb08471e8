"""debezium-avro's columns: how each field of a writer schema's row record becomes a column (its name, its
type from Debezium's ``__debezium.source.column.*`` parameters or its Connect type, and the converters its
values go through), and the schema walking that needs (named types, optional unions). The rules are
described in ``formats.debezium_avro``; this module holds them, derived once per schema id."""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from schema_evolution.debezium_types import ColumnPlan, plan_column
from schema_evolution.mysql_types import UnsupportedSourceType, mysql_to_paimon

COLUMN_NAME = "__debezium.source.column.name"
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


@dataclass(frozen=True, slots=True)
class Column:
    field: str  # the Avro field name (where the value is)
    name: str  # the column name
    plan: ColumnPlan
    adapt: Callable[[Any], Any] | None  # Avro value -> the JSON converter's form, before plan.convert
    mysql: str | None = None  # the MySQL type Debezium's parameters give ("DECIMAL(2, 1)"), if mapped


def adapt_convert(column: Column) -> Callable[[Any], Any]:
    adapt, convert = column.adapt, column.plan.convert
    if adapt is None:
        assert convert is not None
        return convert
    if convert is None:
        return adapt
    return lambda value: convert(adapt(value))


def paimon_type(column: Column) -> str:
    """A column's Paimon type where not every column has its MySQL type (MySQL's default mapping, as
    Paimon; a SET stays the Connect type's STRING here: a Paimon-typed ARRAY column takes no SET text)."""
    if column.mysql is None:
        return column.plan.paimon_type
    mapped = mysql_to_paimon(column.mysql).sql()
    return column.plan.paimon_type if mapped.startswith("ARRAY") else mapped


def is_mysql_source(source_field: Any, named: dict[str, dict[str, Any]]) -> bool:
    """Whether the envelope's ``source`` record is a MySQL (or MariaDB) connector's, or unnamed."""
    source = resolve(non_null(source_field.get("type")), named) if isinstance(source_field, dict) else None
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


def field_column(field: str, avro: Any, from_mysql: bool = True) -> Column:
    column = _connect_column(field, avro)
    props = _innermost(avro)
    params = props.get("connect.parameters") if isinstance(props, dict) else None
    mysql = _mysql_type({str(k): str(v) for k, v in params.items()}) if from_mysql and params else None
    if mysql is None:
        return column
    adapt = column.adapt
    if props.get("type") == "float" and column.plan.convert is None and adapt is None:
        adapt = _float32_text  # REAL as an Avro float: Java's Float.toString digits, not the double's
    return Column(column.field, column.name, column.plan, adapt, mysql)


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


def _connect_column(field: str, avro: Any) -> Column:
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
    name = field if avro_type == "record" else params.get(COLUMN_NAME) or field
    if plan.convert is None:
        adapt = _json_text if avro_type in ("record", "array", "map") else None
        return Column(field, name, plan, adapt)
    if connect_type == "bytes" and logical is None:
        return Column(field, name, ColumnPlan(plan.paimon_type), None)  # the bytes as they are
    if logical == _DECIMAL and avro_type == "bytes" and plan.paimon_type.startswith(("DECIMAL", "STRING")):
        # the unscaled bytes read directly (the JSON converter's base64 text would be decoded at once)
        return Column(field, name, ColumnPlan(plan.paimon_type, decimal_text(int(params.get("scale") or 0))), None)
    return Column(field, name, plan, _connect_json)


def decimal_text(scale: int) -> Callable[[Any], str]:
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


def non_null(avro: Any) -> Any:
    """The non-null branch of an optional ``["null", X]`` union."""
    if isinstance(avro, list):
        rest = [t for t in avro if t != "null"]
        if len(rest) == 1:
            return rest[0]
    return avro


def resolve(avro: Any, named: dict[str, dict[str, Any]]) -> Any:
    """A reference to a named type (``"io.debezium.data.geometry.Geometry"``) as the type it names."""
    if isinstance(avro, str) and avro in named:
        return named[avro]
    return avro


def collect_named(avro: Any, namespace: str | None, named: dict[str, dict[str, Any]]) -> None:
    """Every named type of a schema (records, enums, fixed) by its full and its short name."""
    if isinstance(avro, list):
        for branch in avro:
            collect_named(branch, namespace, named)
        return
    if not isinstance(avro, dict):
        return
    kind = avro.get("type")
    if isinstance(kind, dict | list):
        collect_named(kind, namespace, named)
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
            collect_named(f.get("type"), namespace, named)
    for part in ("items", "values"):
        if part in avro:
            collect_named(avro[part], namespace, named)


def without_logical_types(avro: Any) -> Any:
    """The schema with Avro ``logicalType`` annotations removed: the binary is the same, and fastavro
    then returns the raw numbers and bytes that the Connect names convert."""
    if isinstance(avro, dict):
        return {k: without_logical_types(v) for k, v in avro.items() if k != "logicalType"}
    if isinstance(avro, list):
        return [without_logical_types(v) for v in avro]
    return avro
