"""The canal message of Apache Paimon's "alltype" test (read in place): every MySQL type it carries maps to
the Paimon type Paimon's ITCase expects, and every value converts. The project's own all-types row is
tests/data/canal/all-types.json (tests/schema_evolution)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest

from schema_evolution.conversion import convert_column
from schema_evolution.mysql_types import UnsupportedSourceType, mysql_to_paimon
from schema_evolution.type_mapping import TypeMappingMode as M
from tests.paimon_compat.samples import SAMPLES

ALLTYPE_CANAL = SAMPLES / "canal" / "table" / "alltype" / "canal-data.txt"


# column of the sample -> the Paimon type its mysqlType maps to
ALLTYPE_EXPECTED = {
    "_id": "INT",
    "pt": "DECIMAL(2, 1)",
    "_tinyint1": "BOOLEAN",
    "_boolean": "BOOLEAN",
    "_bool": "BOOLEAN",
    "_tinyint": "TINYINT",
    "_tinyint_unsigned": "SMALLINT",
    "_tinyint_unsigned_zerofill": "SMALLINT",
    "_smallint": "SMALLINT",
    "_smallint_unsigned": "INT",
    "_smallint_unsigned_zerofill": "INT",
    "_mediumint": "INT",
    "_mediumint_unsigned": "BIGINT",
    "_mediumint_unsigned_zerofill": "BIGINT",
    "_int": "INT",
    "_int_unsigned": "BIGINT",
    "_int_unsigned_zerofill": "BIGINT",
    "_bigint": "BIGINT",
    "_bigint_unsigned": "DECIMAL(20, 0)",
    "_bigint_unsigned_zerofill": "DECIMAL(20, 0)",
    "_serial": "DECIMAL(20, 0)",
    "_float": "FLOAT",
    "_float_unsigned": "FLOAT",
    "_float_unsigned_zerofill": "FLOAT",
    "_real": "DOUBLE",
    "_real_unsigned": "DOUBLE",
    "_real_unsigned_zerofill": "DOUBLE",
    "_double": "DOUBLE",
    "_double_unsigned": "DOUBLE",
    "_double_unsigned_zerofill": "DOUBLE",
    "_double_precision": "DOUBLE",
    "_double_precision_unsigned": "DOUBLE",
    "_double_precision_unsigned_zerofill": "DOUBLE",
    "_numeric": "DECIMAL(8, 3)",
    "_numeric_unsigned": "DECIMAL(8, 3)",
    "_numeric_unsigned_zerofill": "DECIMAL(8, 3)",
    "_fixed": "STRING",
    "_fixed_unsigned": "STRING",
    "_fixed_unsigned_zerofill": "STRING",
    "_decimal": "DECIMAL(8, 0)",
    "_decimal_unsigned": "DECIMAL(8, 0)",
    "_decimal_unsigned_zerofill": "DECIMAL(8, 0)",
    "_date": "DATE",
    "_datetime": "TIMESTAMP(0)",
    "_datetime3": "TIMESTAMP(3)",
    "_datetime6": "TIMESTAMP(6)",
    "_datetime_p": "TIMESTAMP(0)",
    "_datetime_p2": "TIMESTAMP(2)",
    "_timestamp": "TIMESTAMP(6)",
    "_timestamp0": "TIMESTAMP(0)",
    "_char": "CHAR(10)",
    "_varchar": "VARCHAR(20)",
    "_tinytext": "STRING",
    "_text": "STRING",
    "_mediumtext": "STRING",
    "_longtext": "STRING",
    "_bin": "VARBINARY(10)",
    "_varbin": "VARBINARY(20)",
    "_tinyblob": "BYTES",
    "_blob": "BYTES",
    "_mediumblob": "BYTES",
    "_longblob": "BYTES",
    "_json": "STRING",
    "_enum": "STRING",
    "_year": "INT",
    "_time": "TIME(0)",
    "_point": "STRING",
    "_geometry": "STRING",
    "_linestring": "STRING",
    "_polygon": "STRING",
    "_multipoint": "STRING",
    "_multiline": "STRING",
    "_multipolygon": "STRING",
    "_geometrycollection": "STRING",
    "_set": "ARRAY<STRING>",
}


def alltype_mysql_types() -> dict[str, str]:
    """The "mysqlType" object of the captured canal message (the file's one JSON line)."""
    lines = [line for line in ALLTYPE_CANAL.read_text().splitlines() if line.startswith("{")]
    assert len(lines) == 1
    message: dict[str, Any] = json.loads(lines[0])
    return message["mysqlType"]


def test_every_mysql_type_of_the_canal_sample_maps() -> None:
    failures = {}
    for column, mysql in alltype_mysql_types().items():
        try:
            mysql_to_paimon(mysql)
        except UnsupportedSourceType as exc:
            failures[column] = str(exc)
    assert failures == {}


def test_the_canal_sample_has_the_columns_checked_here() -> None:
    assert set(alltype_mysql_types()) == set(ALLTYPE_EXPECTED)


@pytest.mark.parametrize(("column", "expected"), ALLTYPE_EXPECTED.items(), ids=list(ALLTYPE_EXPECTED))
def test_canal_sample_column_maps_to(column: str, expected: str) -> None:
    mysql = alltype_mysql_types()[column]
    assert mysql_to_paimon(mysql).sql() == expected


@pytest.mark.parametrize(
    ("column", "mode", "expected"),
    [
        ("_tinyint1", M.TINYINT1_NOT_BOOL, "TINYINT"),
        ("_bigint_unsigned", M.BIGINT_UNSIGNED_TO_BIGINT, "BIGINT"),
        ("_serial", M.BIGINT_UNSIGNED_TO_BIGINT, "BIGINT"),
        ("_char", M.CHAR_TO_STRING, "STRING"),
        ("_varchar", M.CHAR_TO_STRING, "STRING"),
        ("_longtext", M.LONGTEXT_TO_BYTES, "BYTES"),
        ("_set", M.TO_STRING, "STRING"),
    ],
    ids=lambda v: v.value if isinstance(v, M) else v,
)
def test_canal_sample_column_with_option(column: str, mode: M, expected: str) -> None:
    mysql = alltype_mysql_types()[column]
    assert mysql_to_paimon(mysql, frozenset({mode})).sql() == expected


def test_every_value_of_the_canal_sample_converts() -> None:
    lines = [line for line in ALLTYPE_CANAL.read_text().splitlines() if line.startswith("{")]
    message = json.loads(lines[0])
    rows = message["data"]
    out: dict[str, list[Any]] = {}
    for column, mysql in message["mysqlType"].items():
        out[column] = convert_column(column, [row[column] for row in rows], mysql_to_paimon(mysql), mysql).to_pylist()
    first = {column: values[0] for column, values in out.items()}
    assert first["_enum"] == "value1"
    assert first["_set"] == ["a", "b"]
    assert first["_tinyint1"] is True
    assert first["_bool"] is False
    assert first["_bigint_unsigned"] == Decimal(20000000000)
    assert first["_numeric"] == Decimal("12345.110")
    assert first["_fixed"] == "123456789876543212345678987654321.110"
    assert first["_datetime3"] == dt.datetime(2023, 3, 23, 14, 30, 5, 123000)
    assert first["_datetime_p2"] == dt.datetime(2023, 3, 24, 14, 30, 5, 120000)
    assert first["_time"] == dt.time(10, 13, 23)
    assert first["_bin"] == b"bytes"
    assert json.loads(first["_point"])["type"] == "Point"
    assert out["_serial"] == [Decimal(40000000000), Decimal(50000000000)]
