"""Paimon types to the Arrow types the Paimon writers and readers exchange.

This matches pypaimon's ``PyarrowFieldParser.from_paimon_type`` (and so what pypaimon-rust reads
back), so that batches we build are accepted by ``write_arrow`` without a second cast.
"""

from __future__ import annotations

import pyarrow as pa

from schema_evolution.types import PaimonType, Root

_FIXED: dict[Root, pa.DataType] = {
    Root.BOOLEAN: pa.bool_(),
    Root.TINYINT: pa.int8(),
    Root.SMALLINT: pa.int16(),
    Root.INT: pa.int32(),
    Root.BIGINT: pa.int64(),
    Root.FLOAT: pa.float32(),
    Root.DOUBLE: pa.float64(),
    Root.CHAR: pa.string(),
    Root.VARCHAR: pa.string(),
    Root.BINARY: pa.binary(),
    Root.VARBINARY: pa.binary(),
    Root.DATE: pa.date32(),
    Root.TIME: pa.time32("ms"),
}


def timestamp_unit(precision: int) -> str:
    if precision == 0:
        return "s"
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


def to_arrow(typ: PaimonType) -> pa.DataType:
    fixed = _FIXED.get(typ.root)
    if fixed is not None:
        return fixed
    if typ.root is Root.DECIMAL:
        assert typ.length is not None and typ.scale is not None
        return pa.decimal128(typ.length, typ.scale)
    if typ.root is Root.TIMESTAMP:
        return pa.timestamp(timestamp_unit(typ.length if typ.length is not None else 6))
    if typ.root is Root.TIMESTAMP_LTZ:
        return pa.timestamp(timestamp_unit(typ.length if typ.length is not None else 6), tz="UTC")
    if typ.root is Root.ARRAY:
        assert typ.element is not None
        return pa.list_(pa.field("item", to_arrow(typ.element), nullable=typ.element.nullable))
    raise ValueError(f"no Arrow type for Paimon type {typ}")


def arrow_field(name: str, typ: PaimonType) -> pa.Field:
    return pa.field(name, to_arrow(typ), nullable=typ.nullable)
