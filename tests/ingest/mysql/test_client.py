"""Identifiers in the SQL lakecdc sends to MySQL are backquoted (ingest.mysql.client.quote)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from ingest.mysql.client import quote

HOSTILE = ["a`b", "a``b", "`", "x'y", 'x"y', "t; DROP TABLE t; --", "with space", "a.b", "a/*c*/b", "订单", "\\"]


@pytest.mark.parametrize("name", HOSTILE, ids=repr)
def test_a_quoted_identifier_is_one_identifier_with_the_exact_name(name: str) -> None:
    quoted = quote(name)
    assert quoted == "`" + name.replace("`", "``") + "`"
    statement = sqlglot.parse_one(f"SELECT {quote(name)} FROM {quote('db' + name)}.{quote(name)}", read="mysql")
    tables = list(statement.find_all(exp.Table))
    assert [(t.db, t.name) for t in tables] == [("db" + name, name)]
    assert [c.name for c in statement.find_all(exp.Column)] == [name]
