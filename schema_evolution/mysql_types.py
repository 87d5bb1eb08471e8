"""MySQL column types (as canal's ``mysqlType`` or a binlog's column metadata spell them) to
Paimon types, following Apache Paimon's ``MySqlTypeUtils.toDataType`` table.
"""

from __future__ import annotations

import re

from schema_evolution import types as t
from schema_evolution.type_mapping import TypeMappingMode

# The length JDBC reports for DATETIME/TIMESTAMP is the width of their text ("2023-03-23 17:20:00"
# is 19 characters); TiDB sends that instead of the fractional precision.
_JDBC_TIMESTAMP_BASE_LENGTH = 19

_TYPE = re.compile(r"^\s*([a-zA-Z ]+)\s*(?:\((.*?)\))?\s*([a-zA-Z ]*)\s*$")

_SPATIAL = frozenset(
    {
        "GEOMETRY",
        "POINT",
        "LINESTRING",
        "POLYGON",
        "MULTIPOINT",
        "MULTILINESTRING",
        "MULTIPOLYGON",
        "GEOMETRYCOLLECTION",
        "GEOMCOLLECTION",
    }
)
_DECIMALS = frozenset({"DECIMAL", "NUMERIC", "FIXED", "DEC"})
_TEXTS = frozenset({"TINYTEXT", "TEXT", "MEDIUMTEXT", "JSON", "ENUM"})
_BLOBS = frozenset({"TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})


class UnsupportedSourceType(ValueError):
    """A source column type with no Paimon counterpart."""


_NOT_NULL = re.compile(r"\s+NOT\s+NULL\s*$", re.IGNORECASE)


def not_null(type_name: str) -> tuple[str, bool]:
    """A column type with a trailing ``NOT NULL`` (the MySQL source appends it for NOT NULL
    columns) split into the bare type and whether it was there."""
    bare = _NOT_NULL.sub("", type_name)
    return bare, bare != type_name


def split_mysql_type(type_name: str) -> tuple[str, int | None, int | None, bool, str]:
    """Split ``"DECIMAL(8, 3) unsigned zerofill"`` into ``("DECIMAL", 8, 3, True, "(8, 3)")``.

    Returns (base name in upper case, length, scale, unsigned, raw bracket text). ENUM and SET keep
    their value list only in the raw bracket text.
    """
    m = _TYPE.match(not_null(type_name)[0])
    if m is None:
        raise UnsupportedSourceType(f"cannot parse MySQL type '{type_name}'")
    base = " ".join(m.group(1).upper().split())
    inside = m.group(2)
    modifiers = m.group(3).upper().split()
    # "int unsigned" has no brackets: the modifiers stay attached to the name.
    words = base.split()
    while words and words[-1] in ("UNSIGNED", "ZEROFILL", "SIGNED"):
        modifiers.append(words.pop())
    base = " ".join(words)
    unsigned = "UNSIGNED" in modifiers or "ZEROFILL" in modifiers  # ZEROFILL implies UNSIGNED
    length: int | None = None
    scale: int | None = None
    if inside is not None and base not in ("ENUM", "SET"):
        parts = [p.strip() for p in inside.split(",")]
        try:
            length = int(parts[0]) if parts[0] else None
            scale = int(parts[1]) if len(parts) > 1 and parts[1] else None
        except ValueError:
            raise UnsupportedSourceType(f"cannot parse MySQL type '{type_name}'") from None
    return base, length, scale, unsigned, f"({inside})" if inside is not None else ""


def mysql_to_paimon(type_name: str, modes: frozenset[TypeMappingMode] = frozenset()) -> t.PaimonType:
    """The Paimon type of a MySQL column type, honouring ``--type-mapping`` modes.

    A trailing ``NOT NULL`` makes the type NOT NULL, as Paimon's MySQL action does, unless
    ``to-nullable`` is given; primary keys are made NOT NULL by the caller.
    """
    bare, required = not_null(type_name)
    typ = _mysql_to_paimon(bare, modes)
    if required and TypeMappingMode.TO_NULLABLE not in modes:
        return typ.with_nullable(False)
    return typ


def _mysql_to_paimon(type_name: str, modes: frozenset[TypeMappingMode] = frozenset()) -> t.PaimonType:
    base, length, scale, unsigned, _ = split_mysql_type(type_name)
    if TypeMappingMode.TO_STRING in modes:
        return t.string()
    if base == "BIT":
        return t.boolean() if length in (None, 1) else t.binary((length + 7) // 8)
    if base in ("BOOLEAN", "BOOL"):
        return t.boolean()
    if base == "TINYINT":
        if unsigned:
            return t.smallint()
        if length == 1 and TypeMappingMode.TINYINT1_NOT_BOOL not in modes:
            return t.boolean()
        return t.tinyint()
    if base == "SMALLINT":
        return t.int_() if unsigned else t.smallint()
    if base in ("INT", "INTEGER", "MEDIUMINT"):
        return t.bigint() if unsigned else t.int_()
    if base == "YEAR":
        return t.int_()
    if base in ("BIGINT", "SERIAL"):
        if unsigned or base == "SERIAL":
            return t.bigint() if TypeMappingMode.BIGINT_UNSIGNED_TO_BIGINT in modes else t.decimal(20, 0)
        return t.bigint()
    if base == "FLOAT":
        return t.float_()
    if base in ("REAL", "DOUBLE", "DOUBLE PRECISION"):
        return t.double()
    if base in _DECIMALS:
        if length is None:  # no precision given: the widest, as Paimon does
            return t.decimal(38, 18)
        return t.decimal(length, scale or 0) if length <= 38 else t.string()
    if base == "DATE":
        return t.date()
    if base == "TIME":
        return t.time(0)
    if base in ("DATETIME", "TIMESTAMP"):
        return t.timestamp(_timestamp_precision(length, type_name))
    if base in ("CHAR", "VARCHAR", "CHARACTER", "CHARACTER VARYING", "NCHAR", "NVARCHAR"):
        if not length or TypeMappingMode.CHAR_TO_STRING in modes:
            return t.string()
        return t.char(length) if base in ("CHAR", "CHARACTER", "NCHAR") else t.varchar(length)
    if base in _TEXTS or base in _SPATIAL:
        return t.string()
    if base == "LONGTEXT":
        return t.bytes_() if TypeMappingMode.LONGTEXT_TO_BYTES in modes else t.string()
    if base in ("BINARY", "VARBINARY"):
        # MySQL BINARY and VARBINARY both become VARBINARY(n), keeping the length (as Paimon does).
        return t.varbinary(length) if length else t.bytes_()
    if base in _BLOBS:
        return t.bytes_()
    if base == "SET":
        return t.array(t.string())
    raise UnsupportedSourceType(
        f"MySQL type '{type_name}' has no Paimon mapping; use --type-mapping to-string to sync it as STRING"
    )


def is_spatial(type_name: str) -> bool:
    return split_mysql_type(type_name)[0] in _SPATIAL


def _timestamp_precision(length: int | None, type_name: str) -> int:
    if length is None or length <= 0:
        return 0
    if length >= _JDBC_TIMESTAMP_BASE_LENGTH:
        return max(length - _JDBC_TIMESTAMP_BASE_LENGTH - 1, 0)
    if length <= 9:
        return length
    raise UnsupportedSourceType(f"unsupported precision in MySQL type '{type_name}'")
