"""PaimonType: Paimon's SQL spelling of each type, and parse_type reading it back."""

from __future__ import annotations

import pytest

from schema_evolution import types as t
from schema_evolution.types import MAX_LENGTH, PaimonType, Root, parse_type

# (type, Paimon's spelling of it)
SPELLINGS = [
    (t.boolean(), "BOOLEAN"),
    (t.tinyint(), "TINYINT"),
    (t.smallint(), "SMALLINT"),
    (t.int_(), "INT"),
    (t.bigint(), "BIGINT"),
    (t.float_(), "FLOAT"),
    (t.double(), "DOUBLE"),
    (t.decimal(8, 3), "DECIMAL(8, 3)"),
    (t.decimal(20, 0), "DECIMAL(20, 0)"),
    (t.char(10), "CHAR(10)"),
    (t.varchar(20), "VARCHAR(20)"),
    (t.string(), "STRING"),
    (t.binary(2), "BINARY(2)"),
    (t.varbinary(10), "VARBINARY(10)"),
    (t.bytes_(), "BYTES"),
    (t.date(), "DATE"),
    (t.time(), "TIME(0)"),
    (t.time(3), "TIME(3)"),
    (t.timestamp(0), "TIMESTAMP(0)"),
    (t.timestamp(), "TIMESTAMP(6)"),
    (t.timestamp_ltz(3), "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    (t.array(t.string()), "ARRAY<STRING>"),
    (t.array(t.int_().with_nullable(False)), "ARRAY<INT NOT NULL>"),
    (t.int_().with_nullable(False), "INT NOT NULL"),
    (t.decimal(8, 3).with_nullable(False), "DECIMAL(8, 3) NOT NULL"),
    (t.string().with_nullable(False), "STRING NOT NULL"),
    (t.array(t.string()).with_nullable(False), "ARRAY<STRING> NOT NULL"),
]


@pytest.mark.parametrize(("typ", "expected"), SPELLINGS, ids=[s for _, s in SPELLINGS])
def test_sql_spelling(typ: PaimonType, expected: str) -> None:
    assert typ.sql() == expected
    assert str(typ) == expected


@pytest.mark.parametrize(("typ", "expected"), SPELLINGS, ids=[s for _, s in SPELLINGS])
def test_parse_type_reads_back_its_own_spelling(typ: PaimonType, expected: str) -> None:
    assert parse_type(expected) == typ
    assert parse_type(typ.sql()).sql() == expected


def test_base_sql_leaves_out_nullability() -> None:
    assert t.varchar(5).with_nullable(False).base_sql() == "VARCHAR(5)"


# (text as found in a schema file, the type it means)
PARSED = [
    ("VARCHAR(2147483647)", t.string()),
    ("VARBINARY(2147483647)", t.bytes_()),
    ("VARCHAR(2147483647) NOT NULL", t.string().with_nullable(False)),
    ("DECIMAL(8, 3) NOT NULL", PaimonType(Root.DECIMAL, 8, 3, nullable=False)),
    ("DECIMAL(8,3)", t.decimal(8, 3)),
    ("NUMERIC(5, 2)", t.decimal(5, 2)),
    ("DECIMAL", t.decimal(10, 0)),
    ("DECIMAL(12)", t.decimal(12, 0)),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", PaimonType(Root.TIMESTAMP_LTZ, 3)),
    ("TIMESTAMP WITH LOCAL TIME ZONE", t.timestamp_ltz(6)),
    ("TIMESTAMP", t.timestamp(6)),
    ("TIMESTAMP(0) NOT NULL", t.timestamp(0).with_nullable(False)),
    ("TIME", t.time(0)),
    ("ARRAY<STRING>", PaimonType(Root.ARRAY, element=PaimonType(Root.VARCHAR, MAX_LENGTH))),
    ("ARRAY<INT NOT NULL> NOT NULL", t.array(t.int_().with_nullable(False)).with_nullable(False)),
    ("INTEGER", t.int_()),
    ("INT NULL", t.int_()),
    ("CHAR", t.char(1)),
    ("varchar(10)", t.varchar(10)),
    ("  bigint not null  ", t.bigint().with_nullable(False)),
]


@pytest.mark.parametrize(("text", "expected"), PARSED, ids=[s.strip() for s, _ in PARSED])
def test_parse_type(text: str, expected: PaimonType) -> None:
    assert parse_type(text) == expected


def test_parse_type_keeps_lengths_and_precisions() -> None:
    parsed = parse_type("DECIMAL(8, 3) NOT NULL")
    assert (parsed.root, parsed.length, parsed.scale, parsed.nullable) == (Root.DECIMAL, 8, 3, False)
    ltz = parse_type("TIMESTAMP(3) WITH LOCAL TIME ZONE")
    assert (ltz.root, ltz.length) == (Root.TIMESTAMP_LTZ, 3)


GARBAGE = [
    "",
    "NOT NULL",
    "FOO",
    "VARCHAR(abc)",
    "VARCHAR(10, 2)",
    "DECIMAL(10, 2, 3)",
    "INT(5)",
    "STRING(5)",
    "VARCHAR(10) garbage",
    "TIMESTAMP(3) WITH TIME ZONE",
    "ARRAY<FOO>",
    "ARRAY<>",
    "MAP<STRING, INT>",
]


@pytest.mark.parametrize("text", GARBAGE, ids=[repr(g) for g in GARBAGE])
def test_parse_type_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError, match="cannot parse Paimon type"):
        parse_type(text)


def test_parse_error_quotes_the_input() -> None:
    with pytest.raises(ValueError, match=r"'VARCHAR\(abc\)'"):
        parse_type("VARCHAR(abc)")


def test_with_nullable() -> None:
    typ = t.varchar(5)
    assert typ.with_nullable(True) is typ
    not_null = typ.with_nullable(False)
    assert not_null.nullable is False
    assert (not_null.root, not_null.length) == (Root.VARCHAR, 5)
    assert not_null != typ
    assert not_null.with_nullable(True) == typ
