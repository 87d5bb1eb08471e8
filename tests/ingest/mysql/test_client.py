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


class _Server84:
    """Answers as MySQL 8.4 does: SHOW MASTER STATUS is gone (a syntax error), SHOW BINARY LOG STATUS
    has the same columns. No MySQL 8.4 server can be installed here (Debian's is MariaDB), so the
    spelling choice is checked against the server's documented answers."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def cursor(self) -> _Server84:
        return self

    def __enter__(self) -> _Server84:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def execute(self, sql: str, _args: object = None) -> None:
        import pymysql

        self.asked.append(sql)
        if sql == "SHOW MASTER STATUS":
            raise pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax")

    def fetchall(self) -> list[tuple[object, ...]]:
        return [("binlog.000007", 1234, "", "", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")]


def test_the_binlog_position_is_read_from_a_server_without_show_master_status() -> None:
    from ingest.mysql.client import master_status

    server = _Server84()
    assert master_status(server) == ("binlog.000007", 1234)
    assert server.asked == ["SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"]
