"""MySQL column types to Paimon types, row by row of Apache Paimon's MySqlTypeUtils.toDataType.

The type strings are the ones canal and binlogs really send; the canonical all-types row
(tests/data/canal/all-types.json, a column of every MySQL type) checks every type it carries.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from schema_evolution import types as t
from schema_evolution.mysql_types import UnsupportedSourceType, mysql_to_paimon
from schema_evolution.type_mapping import TypeMappingMode as M
from schema_evolution.types import PaimonType
from tests.conftest import TESTS

ALL_TYPES = TESTS / "data" / "canal" / "all-types.json"

# (MySQL type, Paimon type with no --type-mapping)
DEFAULT_MAPPING = [
    # BIT(1), BOOL, BOOLEAN -> BOOLEAN; BIT(n > 1) -> BINARY(ceil(n / 8))
    ("BIT(1)", t.boolean()),
    ("BIT", t.boolean()),
    ("BOOL", t.boolean()),
    ("BOOLEAN", t.boolean()),
    ("BIT(2)", t.binary(1)),
    ("BIT(8)", t.binary(1)),
    ("BIT(9)", t.binary(2)),
    ("BIT(64)", t.binary(8)),
    # TINYINT(1) is MySQL's boolean
    ("TINYINT(1)", t.boolean()),
    ("TINYINT", t.tinyint()),
    ("TINYINT(4)", t.tinyint()),
    ("TINYINT UNSIGNED", t.smallint()),
    ("TINYINT(2) unsigned", t.smallint()),
    ("TINYINT(2) unsigned zerofill", t.smallint()),
    ("TINYINT(1) UNSIGNED", t.smallint()),
    ("SMALLINT", t.smallint()),
    ("SMALLINT unsigned", t.int_()),
    ("SMALLINT(4) unsigned zerofill", t.int_()),
    ("INT", t.int_()),
    ("INTEGER", t.int_()),
    ("MEDIUMINT", t.int_()),
    ("YEAR", t.int_()),
    ("INT unsigned", t.bigint()),
    ("INT(8) unsigned zerofill", t.bigint()),
    ("INTEGER UNSIGNED", t.bigint()),
    ("MEDIUMINT unsigned", t.bigint()),
    ("MEDIUMINT(8) unsigned zerofill", t.bigint()),
    ("BIGINT", t.bigint()),
    ("BIGINT unsigned", t.decimal(20, 0)),
    ("BIGINT(16) unsigned zerofill", t.decimal(20, 0)),
    ("SERIAL", t.decimal(20, 0)),
    ("FLOAT", t.float_()),
    ("FLOAT unsigned", t.float_()),
    ("FLOAT(4) unsigned zerofill", t.float_()),
    ("REAL", t.double()),
    ("REAL(10,7) unsigned zerofill", t.double()),
    ("DOUBLE", t.double()),
    ("DOUBLE unsigned", t.double()),
    ("DOUBLE PRECISION", t.double()),
    ("DOUBLE PRECISION(10,7) unsigned zerofill", t.double()),
    # DECIMAL, NUMERIC, FIXED: DECIMAL(p, s) up to Paimon's 38 digits, STRING beyond
    ("DECIMAL(8, 0)", t.decimal(8, 0)),
    ("DECIMAL(2,1)", t.decimal(2, 1)),
    ("DECIMAL(10)", t.decimal(10, 0)),
    ("DECIMAL(38,10)", t.decimal(38, 10)),
    ("DECIMAL(39,2)", t.string()),
    ("DECIMAL", t.decimal(38, 18)),
    ("NUMERIC(8,3)", t.decimal(8, 3)),
    ("NUMERIC(8,3) unsigned zerofill", t.decimal(8, 3)),
    ("NUMERIC", t.decimal(38, 18)),
    ("FIXED(10,2)", t.decimal(10, 2)),
    ("FIXED(40,3)", t.string()),
    ("FIXED(40,3) unsigned zerofill", t.string()),
    ("DATE", t.date()),
    ("TIME", t.time(0)),
    ("TIME(3)", t.time(0)),
    ("DATETIME", t.timestamp(0)),
    ("DATETIME(2)", t.timestamp(2)),
    ("DATETIME(3)", t.timestamp(3)),
    ("DATETIME(6)", t.timestamp(6)),
    ("TIMESTAMP", t.timestamp(0)),
    ("TIMESTAMP(3)", t.timestamp(3)),
    ("TIMESTAMP(6)", t.timestamp(6)),
    ("CHAR(10)", t.char(10)),
    ("VARCHAR(20)", t.varchar(20)),
    ("TINYTEXT", t.string()),
    ("TEXT", t.string()),
    ("MEDIUMTEXT", t.string()),
    ("LONGTEXT", t.string()),
    ("JSON", t.string()),
    ("ENUM('value1','value2','value3')", t.string()),
    ("GEOMETRY", t.string()),
    ("POINT", t.string()),
    ("LINESTRING", t.string()),
    ("POLYGON", t.string()),
    ("MULTIPOINT", t.string()),
    ("MULTILINESTRING", t.string()),
    ("MULTIPOLYGON", t.string()),
    ("GEOMETRYCOLLECTION", t.string()),
    # MySQL BINARY and VARBINARY both keep their length as VARBINARY(n)
    ("BINARY(10)", t.varbinary(10)),
    ("VARBINARY(20)", t.varbinary(20)),
    ("TINYBLOB", t.bytes_()),
    ("BLOB", t.bytes_()),
    ("MEDIUMBLOB", t.bytes_()),
    ("LONGBLOB", t.bytes_()),
    ("SET('a','b','c','d')", t.array(t.string())),
]


@pytest.mark.parametrize(("mysql", "expected"), DEFAULT_MAPPING, ids=[m for m, _ in DEFAULT_MAPPING])
def test_default_mapping(mysql: str, expected: PaimonType) -> None:
    assert mysql_to_paimon(mysql) == expected


@pytest.mark.parametrize(("mysql", "expected"), DEFAULT_MAPPING, ids=[m.lower() for m, _ in DEFAULT_MAPPING])
def test_default_mapping_in_lower_case(mysql: str, expected: PaimonType) -> None:
    assert mysql_to_paimon(mysql.lower()) == expected


def test_the_mapping_leaves_nullability_to_the_caller() -> None:
    assert all(mysql_to_paimon(mysql).nullable for mysql, _ in DEFAULT_MAPPING)


# (MySQL type, --type-mapping option, Paimon type with it)
WITH_OPTION = [
    ("TINYINT(1)", M.TINYINT1_NOT_BOOL, t.tinyint()),
    ("tinyint(1)", M.TINYINT1_NOT_BOOL, t.tinyint()),
    ("BIGINT unsigned", M.BIGINT_UNSIGNED_TO_BIGINT, t.bigint()),
    ("BIGINT(16) unsigned zerofill", M.BIGINT_UNSIGNED_TO_BIGINT, t.bigint()),
    ("SERIAL", M.BIGINT_UNSIGNED_TO_BIGINT, t.bigint()),
    ("BIGINT", M.BIGINT_UNSIGNED_TO_BIGINT, t.bigint()),
    ("CHAR(10)", M.CHAR_TO_STRING, t.string()),
    ("VARCHAR(20)", M.CHAR_TO_STRING, t.string()),
    ("LONGTEXT", M.LONGTEXT_TO_BYTES, t.bytes_()),
    ("longtext", M.LONGTEXT_TO_BYTES, t.bytes_()),
    # each option touches only its own types
    ("TINYINT(1)", M.CHAR_TO_STRING, t.boolean()),
    ("MEDIUMTEXT", M.LONGTEXT_TO_BYTES, t.string()),
    ("BINARY(10)", M.CHAR_TO_STRING, t.varbinary(10)),
    ("DECIMAL(8, 0)", M.BIGINT_UNSIGNED_TO_BIGINT, t.decimal(8, 0)),
    ("INT unsigned", M.BIGINT_UNSIGNED_TO_BIGINT, t.bigint()),
]


@pytest.mark.parametrize(
    ("mysql", "mode", "expected"), WITH_OPTION, ids=[f"{m}-with-{mode.value}" for m, mode, _ in WITH_OPTION]
)
def test_mapping_with_option(mysql: str, mode: M, expected: PaimonType) -> None:
    assert mysql_to_paimon(mysql, frozenset({mode})) == expected


TO_STRING_SAMPLES = ["TINYINT(1)", "INT", "BIGINT unsigned", "DECIMAL(8, 3)", "DATETIME(6)", "BLOB", "SET('a','b')"]


@pytest.mark.parametrize("mysql", TO_STRING_SAMPLES)
def test_to_string_makes_everything_string(mysql: str) -> None:
    assert mysql_to_paimon(mysql) != t.string()  # the option, not the type, makes it STRING
    assert mysql_to_paimon(mysql, frozenset({M.TO_STRING})) == t.string()


def test_to_string_wins_over_the_other_options() -> None:
    modes = frozenset({M.TO_STRING, M.LONGTEXT_TO_BYTES, M.TINYINT1_NOT_BOOL})
    assert mysql_to_paimon("LONGTEXT", modes) == t.string()
    assert mysql_to_paimon("TINYINT(1)", modes) == t.string()


def test_to_string_even_takes_types_with_no_mapping() -> None:
    assert mysql_to_paimon("VECTOR(3)", frozenset({M.TO_STRING})) == t.string()


@pytest.mark.parametrize("mysql", ["VECTOR(3)", "UUID", "footype"])
def test_unknown_type_is_refused_by_name(mysql: str) -> None:
    with pytest.raises(UnsupportedSourceType) as info:
        mysql_to_paimon(mysql)
    assert f"'{mysql}'" in str(info.value)
    assert "to-string" in str(info.value)  # the way forward


@pytest.mark.parametrize("mysql", ["", "INT(abc)", "DECIMAL(8,x)", "123"])
def test_unparseable_type_is_refused(mysql: str) -> None:
    with pytest.raises(UnsupportedSourceType, match="cannot parse MySQL type"):
        mysql_to_paimon(mysql)


def test_unsupported_timestamp_precision_is_refused() -> None:
    with pytest.raises(UnsupportedSourceType, match=r"DATETIME\(12\)"):
        mysql_to_paimon("DATETIME(12)")


# --- the canonical all-types row (tests/data/canal/all-types.json) -------------------------------

# column -> the Paimon type its mysqlType maps to
ALL_TYPES_EXPECTED = {
    "id": "INT",
    "part": "DECIMAL(3, 1)",
    "tiny_bool": "BOOLEAN",
    "boolean": "BOOLEAN",
    "bool": "BOOLEAN",
    "tinyint": "TINYINT",
    "tinyint_u": "SMALLINT",
    "tinyint_uz": "SMALLINT",
    "smallint": "SMALLINT",
    "smallint_u": "INT",
    "smallint_uz": "INT",
    "mediumint": "INT",
    "mediumint_u": "BIGINT",
    "mediumint_uz": "BIGINT",
    "int": "INT",
    "int_u": "BIGINT",
    "int_uz": "BIGINT",
    "bigint": "BIGINT",
    "bigint_u": "DECIMAL(20, 0)",
    "bigint_uz": "DECIMAL(20, 0)",
    "serial": "DECIMAL(20, 0)",
    "float": "FLOAT",
    "float_u": "FLOAT",
    "float_uz": "FLOAT",
    "real": "DOUBLE",
    "real_u": "DOUBLE",
    "real_uz": "DOUBLE",
    "double": "DOUBLE",
    "double_u": "DOUBLE",
    "double_uz": "DOUBLE",
    "double_prec": "DOUBLE",
    "double_prec_u": "DOUBLE",
    "double_prec_uz": "DOUBLE",
    "numeric": "DECIMAL(9, 2)",
    "numeric_u": "DECIMAL(9, 2)",
    "numeric_uz": "DECIMAL(9, 2)",
    "fixed": "STRING",  # precision 42 > 38
    "fixed_u": "STRING",
    "fixed_uz": "STRING",
    "decimal": "DECIMAL(10, 0)",
    "decimal_u": "DECIMAL(10, 0)",
    "decimal_uz": "DECIMAL(10, 0)",
    "date": "DATE",
    "datetime": "TIMESTAMP(0)",
    "datetime3": "TIMESTAMP(3)",
    "datetime6": "TIMESTAMP(6)",
    "datetime_p": "TIMESTAMP(0)",
    "datetime_p2": "TIMESTAMP(2)",
    "timestamp6": "TIMESTAMP(6)",
    "timestamp": "TIMESTAMP(0)",
    "char": "CHAR(12)",
    "varchar": "VARCHAR(30)",
    "tinytext": "STRING",
    "text": "STRING",
    "mediumtext": "STRING",
    "longtext": "STRING",
    "binary": "VARBINARY(6)",
    "varbinary": "VARBINARY(16)",
    "tinyblob": "BYTES",
    "blob": "BYTES",
    "mediumblob": "BYTES",
    "longblob": "BYTES",
    "json": "STRING",
    "enum": "STRING",
    "year": "INT",
    "time": "TIME(0)",
    "point": "STRING",
    "geometry": "STRING",
    "linestring": "STRING",
    "polygon": "STRING",
    "multipoint": "STRING",
    "multilinestring": "STRING",
    "multipolygon": "STRING",
    "geometrycollection": "STRING",
    "set": "ARRAY<STRING>",
}


def all_types_mysql_types() -> dict[str, str]:
    """The "mysqlType" object of the all-types message."""
    message: dict[str, Any] = json.loads(ALL_TYPES.read_bytes())
    return message["mysqlType"]


def test_every_mysql_type_of_the_all_types_row_maps() -> None:
    failures = {}
    for column, mysql in all_types_mysql_types().items():
        try:
            mysql_to_paimon(mysql)
        except UnsupportedSourceType as exc:
            failures[column] = str(exc)
    assert failures == {}


def test_the_all_types_row_has_the_columns_checked_here() -> None:
    assert list(all_types_mysql_types()) == list(ALL_TYPES_EXPECTED)


@pytest.mark.parametrize(("column", "expected"), ALL_TYPES_EXPECTED.items(), ids=list(ALL_TYPES_EXPECTED))
def test_all_types_column_maps_to(column: str, expected: str) -> None:
    mysql = all_types_mysql_types()[column]
    assert mysql_to_paimon(mysql).sql() == expected


@pytest.mark.parametrize(
    ("column", "mode", "expected"),
    [
        ("tiny_bool", M.TINYINT1_NOT_BOOL, "TINYINT"),
        ("bigint_u", M.BIGINT_UNSIGNED_TO_BIGINT, "BIGINT"),
        ("serial", M.BIGINT_UNSIGNED_TO_BIGINT, "BIGINT"),
        ("char", M.CHAR_TO_STRING, "STRING"),
        ("varchar", M.CHAR_TO_STRING, "STRING"),
        ("longtext", M.LONGTEXT_TO_BYTES, "BYTES"),
        ("set", M.TO_STRING, "STRING"),
    ],
    ids=lambda v: v.value if isinstance(v, M) else v,
)
def test_all_types_column_with_option(column: str, mode: M, expected: str) -> None:
    mysql = all_types_mysql_types()[column]
    assert mysql_to_paimon(mysql, frozenset({mode})).sql() == expected
