"""sqlglot's MySQL dialect as the schema history reads DDL with it, and what it reads from its trees:
column definitions (types spelled as information_schema's COLUMN_TYPE), identifiers and table names,
tokens for the forms sqlglot leaves unparsed, ENUM/SET members."""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.parsers.mysql import MySQLParser
from sqlglot.tokenizer_core import Token, TokenType

from schema_evolution.mysql_tables import Column, DdlError


class MySqlDdl(MySQL):
    """sqlglot's MySQL dialect, plus the spatial column types it lacks, and RENAME TABLE as tokens
    rather than an opaque command."""

    class Tokenizer(MySQL.Tokenizer):
        KEYWORDS = {
            **MySQL.Tokenizer.KEYWORDS,
            "POINT": TokenType.POINT,
            "LINESTRING": TokenType.LINESTRING,
            "POLYGON": TokenType.POLYGON,
            "MULTILINESTRING": TokenType.MULTILINESTRING,
            "MULTIPOLYGON": TokenType.MULTIPOLYGON,
            # No token of their own: GEOMETRY maps to the same Paimon type and the binlog's WKB
            # carries the shape.
            "MULTIPOINT": TokenType.GEOMETRY,
            "GEOMETRYCOLLECTION": TokenType.GEOMETRY,
            "GEOMCOLLECTION": TokenType.GEOMETRY,
            "REAL": TokenType.DOUBLE,  # MySQL's REAL is DOUBLE (unless the REAL_AS_FLOAT SQL mode)
        }
        COMMANDS = MySQL.Tokenizer.COMMANDS - {TokenType.RENAME}

    class Parser(MySQLParser):
        # FLOAT UNSIGNED is valid (if deprecated) MySQL; the sign does not change a FLOAT's type.
        SIGNED_TO_UNSIGNED_TYPE_TOKEN = {**MySQLParser.SIGNED_TO_UNSIGNED_TYPE_TOKEN, TokenType.FLOAT: TokenType.FLOAT}


def ddl_tokens(statement: str) -> list[Token]:
    try:
        return [t for t in sqlglot.tokenize(statement, read=MySqlDdl) if t.token_type != TokenType.SEMICOLON]
    except Exception as exc:  # sqlglot's TokenError
        raise DdlError(f"cannot tokenize DDL: {statement[:300]}") from exc


_TEXT_TYPES = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set")
# sqlglot's type names -> MySQL's, where they differ
_TYPE_NAMES = {
    "UTINYINT": "tinyint",
    "USMALLINT": "smallint",
    "UMEDIUMINT": "mediumint",
    "UINT": "int",
    "UBIGINT": "bigint",
    "UDECIMAL": "decimal",
    "UDOUBLE": "double",
    "UFLOAT": "float",
    "BOOLEAN": "tinyint",
    "TIMESTAMPTZ": "timestamp",
    "TIMESTAMPLTZ": "timestamp",
    "GEOGRAPHY": "geometry",
}


def is_text(column_type: str) -> bool:
    return column_type.split("(", 1)[0].split(" ", 1)[0] in _TEXT_TYPES


def column_def(definition: exp.ColumnDef, table_charset: str | None) -> tuple[Column, bool]:
    """A column definition as (Column, declared PRIMARY KEY inline)."""
    kind = definition.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise DdlError(f"column {definition.name} has no type")
    nullable, key, charset, zerofill = True, False, None, False
    comment: str | None = None
    for constraint in definition.args.get("constraints") or []:
        c = constraint.args.get("kind")
        if isinstance(c, exp.NotNullColumnConstraint):
            nullable = bool(c.args.get("allow_null"))
        elif isinstance(c, exp.PrimaryKeyColumnConstraint):
            key, nullable = True, False
        elif isinstance(c, exp.CharacterSetColumnConstraint):
            charset = ident(c.this).lower()
        elif isinstance(c, exp.ZeroFillColumnConstraint):
            zerofill = True
        elif isinstance(c, exp.CommentColumnConstraint):
            comment = comment_text(c.this)
    text = type_text(kind)
    if text == "serial":  # BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
        text, nullable = "bigint(20) unsigned", False
    if zerofill:
        text += " unsigned zerofill" if " unsigned" not in text else " zerofill"
    if is_text(text):
        charset = charset or table_charset
    return Column(definition.name, text, nullable, charset, comment or None), key


def type_text(kind: exp.DataType) -> str:
    name = kind.this.name if hasattr(kind.this, "name") else str(kind.this)
    unsigned = (name.startswith("U") and name in _TYPE_NAMES) or bool(kind.args.get("unsigned"))
    base = _TYPE_NAMES.get(name, name.lower())
    params = kind.expressions
    if name == "BOOLEAN":
        return "tinyint(1)"
    if base in ("enum", "set"):
        values = ",".join("'" + str(p.this).replace("'", "''") + "'" for p in params)
        return f"{base}({values})"
    if base == "nested" or kind.args.get("nested"):
        raise DdlError(f"unsupported column type {kind.sql('mysql')}")
    text = base
    if params:
        text += "(" + ",".join(str(p.this.this if isinstance(p.this, exp.Literal) else p.name) for p in params) + ")"
    return text + (" unsigned" if unsigned else "")


def ident(node: exp.Expression | str) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, exp.Column | exp.Identifier | exp.Var):
        return node.name
    if isinstance(node, exp.Ordered):
        return ident(node.this)
    return node.name or node.sql("mysql").strip("`")


def table_name(table: exp.Expression, default_db: str | None) -> str:
    if not isinstance(table, exp.Table):
        raise DdlError(f"not a table name: {table.sql('mysql')}")
    database = table.db or default_db
    if not database:
        raise DdlError(f"table {table.name} has no database and the statement ran without a default one")
    return f"{database}.{table.name}"


def tables_of_drop(tree: exp.Drop) -> list[exp.Table]:
    tables = list(tree.args.get("tables") or tree.args.get("expressions") or [])
    if isinstance(tree.this, exp.Table):
        tables = [tree.this, *tables]
    return [t for t in tables if isinstance(t, exp.Table)]


def comment_text(value: exp.Expression) -> str:
    """A COMMENT clause's text: a string literal as written, anything else by its name."""
    return str(value.this) if isinstance(value, exp.Literal) else value.name


def member_values(column_type: str) -> list[str]:
    """The values of an ``enum(…)`` / ``set(…)`` column type, in definition order (quotes, commas
    and doubled quotes inside values handled by sqlglot's tokenizer)."""
    inner = column_type[column_type.index("(") + 1 : column_type.rindex(")")] if "(" in column_type else ""
    return [t.text for t in ddl_tokens(inner) if t.token_type == TokenType.STRING]


def qualified_table(tokens: Sequence[Token], i: int, default_db: str | None) -> tuple[str, int]:
    """A possibly database-qualified table name starting at ``tokens[i]``; the index after it."""
    first = tokens[i].text
    if i + 2 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT:
        return f"{first}.{tokens[i + 2].text}", i + 3
    if default_db is None:
        raise DdlError(f"table {first} has no database and the statement ran without a default one")
    return f"{default_db}.{first}", i + 1
