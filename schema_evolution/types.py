"""Paimon's logical types as a small immutable model, with Paimon's own SQL spelling.

``PaimonType.sql()`` gives the string Paimon writes into a table schema ("VARCHAR(10)",
"DECIMAL(8, 3)", "TIMESTAMP(3)", "INT NOT NULL"), and ``parse_type`` reads it back (also the
``VARCHAR(2147483647)`` / ``VARBINARY(2147483647)`` spellings Paimon uses for STRING / BYTES).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum

MAX_LENGTH = 2147483647  # Paimon's STRING is VARCHAR(MAX_LENGTH), BYTES is VARBINARY(MAX_LENGTH)


class Root(Enum):
    BOOLEAN = "BOOLEAN"
    TINYINT = "TINYINT"
    SMALLINT = "SMALLINT"
    INT = "INT"
    BIGINT = "BIGINT"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    DECIMAL = "DECIMAL"
    CHAR = "CHAR"
    VARCHAR = "VARCHAR"
    BINARY = "BINARY"
    VARBINARY = "VARBINARY"
    DATE = "DATE"
    TIME = "TIME"
    TIMESTAMP = "TIMESTAMP"
    TIMESTAMP_LTZ = "TIMESTAMP_LTZ"
    ARRAY = "ARRAY"


@dataclass(frozen=True, slots=True)
class PaimonType:
    """A Paimon data type.

    ``length`` is the length of CHAR/VARCHAR/BINARY/VARBINARY, the precision of DECIMAL, TIME and
    the timestamps; ``scale`` the scale of DECIMAL; ``element`` the element type of ARRAY.
    """

    root: Root
    length: int | None = None
    scale: int | None = None
    nullable: bool = True
    element: PaimonType | None = None

    def sql(self) -> str:
        return self.base_sql() + ("" if self.nullable else " NOT NULL")

    def base_sql(self) -> str:
        """The type without its nullability."""
        r = self.root
        if r is Root.VARCHAR and self.length == MAX_LENGTH:
            return "STRING"
        if r is Root.VARBINARY and self.length == MAX_LENGTH:
            return "BYTES"
        if r is Root.DECIMAL:
            return f"DECIMAL({self.length}, {self.scale})"
        if r is Root.TIMESTAMP_LTZ:
            return f"TIMESTAMP({self.length}) WITH LOCAL TIME ZONE"
        if r is Root.ARRAY:
            assert self.element is not None
            return f"ARRAY<{self.element.sql()}>"
        if self.length is not None:
            return f"{r.value}({self.length})"
        return str(r.value)

    def with_nullable(self, nullable: bool) -> PaimonType:
        return self if self.nullable == nullable else replace(self, nullable=nullable)

    def __str__(self) -> str:
        return self.sql()


def boolean() -> PaimonType:
    return PaimonType(Root.BOOLEAN)


def tinyint() -> PaimonType:
    return PaimonType(Root.TINYINT)


def smallint() -> PaimonType:
    return PaimonType(Root.SMALLINT)


def int_() -> PaimonType:
    return PaimonType(Root.INT)


def bigint() -> PaimonType:
    return PaimonType(Root.BIGINT)


def float_() -> PaimonType:
    return PaimonType(Root.FLOAT)


def double() -> PaimonType:
    return PaimonType(Root.DOUBLE)


def decimal(precision: int, scale: int) -> PaimonType:
    return PaimonType(Root.DECIMAL, precision, scale)


def char(length: int) -> PaimonType:
    return PaimonType(Root.CHAR, length)


def varchar(length: int) -> PaimonType:
    return PaimonType(Root.VARCHAR, length)


def string() -> PaimonType:
    return PaimonType(Root.VARCHAR, MAX_LENGTH)


def binary(length: int) -> PaimonType:
    return PaimonType(Root.BINARY, length)


def varbinary(length: int) -> PaimonType:
    return PaimonType(Root.VARBINARY, length)


def bytes_() -> PaimonType:
    return PaimonType(Root.VARBINARY, MAX_LENGTH)


def date() -> PaimonType:
    return PaimonType(Root.DATE)


def time(precision: int = 0) -> PaimonType:
    return PaimonType(Root.TIME, precision)


def timestamp(precision: int = 6) -> PaimonType:
    return PaimonType(Root.TIMESTAMP, precision)


def timestamp_ltz(precision: int = 6) -> PaimonType:
    return PaimonType(Root.TIMESTAMP_LTZ, precision)


def array(element: PaimonType) -> PaimonType:
    return PaimonType(Root.ARRAY, element=element)


_SIMPLE = {
    "BOOLEAN": boolean,
    "TINYINT": tinyint,
    "SMALLINT": smallint,
    "INT": int_,
    "INTEGER": int_,
    "BIGINT": bigint,
    "FLOAT": float_,
    "DOUBLE": double,
    "STRING": string,
    "BYTES": bytes_,
    "DATE": date,
}
_PARAM = re.compile(r"^([A-Z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?(.*)$")


def parse_type(text: str) -> PaimonType:
    """Parse Paimon's SQL spelling of a type (as found in a table schema file)."""
    s = text.strip().upper()
    nullable = True
    if s.endswith(" NOT NULL"):
        nullable, s = False, s[: -len(" NOT NULL")].rstrip()
    elif s.endswith(" NULL"):
        s = s[: -len(" NULL")].rstrip()
    if s.startswith("ARRAY<") and s.endswith(">"):
        return array(parse_type(s[len("ARRAY<") : -1])).with_nullable(nullable)
    m = _PARAM.match(s)
    if m is None:
        raise ValueError(f"cannot parse Paimon type '{text}'")
    name, p1, p2, rest = m.group(1), m.group(2), m.group(3), m.group(4).strip()
    if name == "TIMESTAMP" and rest == "WITH LOCAL TIME ZONE":
        name, rest = "TIMESTAMP_LTZ", ""
    if rest:
        raise ValueError(f"cannot parse Paimon type '{text}'")
    if name in _SIMPLE and p1 is None:
        return _SIMPLE[name]().with_nullable(nullable)
    if name in ("DECIMAL", "NUMERIC", "DEC"):
        precision = int(p1) if p1 is not None else 10
        return decimal(precision, int(p2) if p2 is not None else 0).with_nullable(nullable)
    defaults = {"CHAR": 1, "VARCHAR": 1, "BINARY": 1, "VARBINARY": 1, "TIME": 0}
    defaults.update({"TIMESTAMP": 6, "TIMESTAMP_LTZ": 6})
    if name in defaults and p2 is None:
        length = int(p1) if p1 is not None else defaults[name]
        return PaimonType(Root[name], length, nullable=nullable)
    raise ValueError(f"cannot parse Paimon type '{text}'")
