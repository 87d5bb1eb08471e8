"""MySQL DDL applied to a catalogue of table definitions: the schema history a binlog reader needs
when the server does not write column names into row events (``binlog_row_metadata`` other than
FULL: MySQL 5.7, MySQL 8's default MINIMAL, MariaDB's default NO_LOG).

Statements are parsed with sqlglot's MySQL dialect (backquotes, comments, several clauses per
ALTER), never with regular expressions; the three forms sqlglot leaves unparsed (``RENAME TABLE``,
``ALTER TABLE … ADD (a …, b …)``, ``CONVERT TO CHARACTER SET``) are read from its tokens. A
statement that touches a known table but cannot be understood raises ``DdlError``: applying
it wrongly would attach values to the wrong columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import ParseError
from sqlglot.parsers.mysql import MySQLParser
from sqlglot.tokenizer_core import Token, TokenType


class _MySqlDdl(MySQL):
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


class DdlError(ValueError):
    """A DDL statement that changes a tracked table in a way this module cannot follow."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str  # as information_schema's COLUMN_TYPE spells it: "bigint(20) unsigned", "enum('a','b')"
    nullable: bool = True
    charset: str | None = None  # of string columns, when the DDL or the table's default names it
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class TableDef:
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    charset: str | None = None  # the table's default character set
    comment: str | None = None

    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def to_json(self) -> dict[str, object]:
        return {
            "columns": [[c.name, c.type, c.nullable, c.charset, c.comment] for c in self.columns],
            "primary_key": list(self.primary_key),
            "charset": self.charset,
            "comment": self.comment,
        }

    @staticmethod
    def from_json(d: Mapping[str, object]) -> TableDef:
        columns = d["columns"]
        assert isinstance(columns, list)
        pk = d["primary_key"]
        assert isinstance(pk, list)
        charset, comment = d.get("charset"), d.get("comment")
        return TableDef(
            tuple(
                Column(str(c[0]), str(c[1]), bool(c[2]), _opt(c[3]), _opt(c[4]) if len(c) > 4 else None)
                for c in columns
            ),
            tuple(str(k) for k in pk),
            _opt(charset),
            _opt(comment),
        )


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


Catalog = Mapping[str, TableDef]  # "db.table" -> definition
Changes = dict[str, TableDef | None]  # "db.table" -> new definition, or None when dropped


def apply_ddl(catalog: Catalog, statement: str, default_db: str | None) -> Changes:
    """The tables ``statement`` creates, changes or drops, with their new definitions.

    Statements that change no table definition (DML, BEGIN, GRANT, CREATE INDEX, TRUNCATE …)
    give no changes. A statement about a table the catalogue does not know gives none either,
    unless it makes that table's definition matter (renaming it into a known name)."""
    try:
        tree = sqlglot.parse_one(statement, read=_MySqlDdl)
    except ParseError:
        tree = None
    if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "TABLE":
        return _create(catalog, tree, default_db)
    if isinstance(tree, exp.Alter) and str(tree.args.get("kind", "")).upper() == "TABLE":
        return _alter(catalog, tree, default_db)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "TABLE":
        names = [_name(t, default_db) for t in _tables_of_drop(tree)]
        return {n: None for n in names if n in catalog}
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() in ("DATABASE", "SCHEMA"):
        databases = {t.name for t in _tables_of_drop(tree)}
        return {n: None for n in catalog if n.split(".", 1)[0] in databases}
    tokens = _tokens(statement)
    words = [t.text.upper() for t in tokens[:2]]
    if words == ["RENAME", "TABLE"]:
        return _rename_tables(catalog, tokens[2:], default_db)
    if words == ["ALTER", "TABLE"]:
        return _alter_from_tokens(catalog, statement, tokens, default_db)
    if words and words[0] in ("CREATE", "ALTER", "DROP", "RENAME") and len(words) > 1 and words[1] == "TABLE":
        raise DdlError(f"cannot parse DDL: {statement[:300]}")
    return {}


# --- CREATE TABLE ----------------------------------------------------------------------------------


def _create(catalog: Catalog, tree: exp.Create, default_db: str | None) -> Changes:
    schema = tree.this
    table = schema.this if isinstance(schema, exp.Schema) else schema
    if not isinstance(table, exp.Table):
        raise DdlError(f"cannot parse CREATE TABLE: {tree.sql('mysql')[:300]}")
    name = _name(table, default_db)
    if tree.args.get("exists") and name in catalog:
        return {}  # CREATE TABLE IF NOT EXISTS of an existing table changes nothing
    like = _like_source(tree)
    if like is not None:
        source = _name(like, default_db)
        if source not in catalog:
            if name in catalog:
                raise DdlError(f"CREATE TABLE {name} LIKE {source}: {source} is not known")
            return {name: None} if name in catalog else {}
        return {name: catalog[source]}
    if not isinstance(schema, exp.Schema):
        # CREATE TABLE … SELECT without a column list: row-based binlogs log it with its columns.
        raise DdlError(f"cannot follow CREATE TABLE without a column list: {tree.sql('mysql')[:300]}")
    charset = _table_charset(tree)
    columns: list[Column] = []
    primary: tuple[str, ...] = ()
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            column, is_key = _column(item, charset)
            columns.append(column)
            if is_key:
                primary = (column.name,)
        elif isinstance(item, exp.PrimaryKey):
            primary = tuple(_ident(e) for e in item.expressions)
        elif isinstance(item, exp.Constraint) and any(isinstance(e, exp.PrimaryKey) for e in item.expressions):
            key = next(e for e in item.expressions if isinstance(e, exp.PrimaryKey))
            primary = tuple(_ident(e) for e in key.expressions)
    primary = _spelled(primary, columns)
    columns = [replace(c, nullable=False) if c.name in primary else c for c in columns]
    return {name: TableDef(tuple(columns), primary, charset, _table_comment(tree.args.get("properties")))}


def _table_comment(properties: exp.Expression | list[exp.Expression] | None) -> str | None:
    items = properties.expressions if isinstance(properties, exp.Properties) else properties or []
    for prop in items:
        if isinstance(prop, exp.SchemaCommentProperty):
            return _comment_text(prop.this)
    return None


def _comment_text(value: exp.Expression) -> str:
    """A COMMENT clause's text: a string literal as written, anything else by its name."""
    return str(value.this) if isinstance(value, exp.Literal) else value.name


def _spelled(keys: Sequence[str], columns: Sequence[Column]) -> tuple[str, ...]:
    """Key column names as the columns spell them (MySQL matches column names case-insensitively)."""
    names = {c.name.lower(): c.name for c in columns}
    return tuple(names.get(k.lower(), k) for k in keys)


def _like_source(tree: exp.Create) -> exp.Table | None:
    for prop in tree.args.get("properties", exp.Properties()).expressions if tree.args.get("properties") else []:
        if isinstance(prop, exp.LikeProperty) and isinstance(prop.this, exp.Table):
            return prop.this
    schema = tree.this
    if isinstance(schema, exp.Schema):
        for item in schema.expressions:
            if isinstance(item, exp.LikeProperty) and isinstance(item.this, exp.Table):
                return item.this
    return None


def _table_charset(tree: exp.Create) -> str | None:
    props = tree.args.get("properties")
    for prop in props.expressions if props is not None else []:
        if isinstance(prop, exp.CharacterSetProperty):
            return _ident(prop.this).lower()
    return None


# --- ALTER TABLE ------------------------------------------------------------------------------------


def _alter(catalog: Catalog, tree: exp.Alter, default_db: str | None) -> Changes:
    table = tree.this
    assert isinstance(table, exp.Table)
    name = _name(table, default_db)
    current = catalog.get(name)
    actions = tree.args.get("actions") or []
    if current is None:
        renamed = [a for a in actions if isinstance(a, exp.AlterRename)]
        if renamed:
            target = _name(renamed[-1].this, default_db)
            if target in catalog:
                raise DdlError(f"ALTER TABLE {name} RENAME TO {target}: the definition of {name} is not known")
        return {}
    changes: Changes = {}
    definition = current
    for action in actions:
        if isinstance(action, exp.AlterRename):
            target = _name(action.this, default_db)
            changes[name] = None
            name = target
        else:
            definition = _alter_action(definition, action, name)
    comment = _table_comment(tree.args.get("options"))
    if comment is not None:
        definition = replace(definition, comment=comment)
    changes[name] = definition
    return changes


def _alter_action(table: TableDef, action: exp.Expression, name: str) -> TableDef:
    columns = list(table.columns)
    if isinstance(action, exp.ColumnDef):  # ADD [COLUMN]
        column, is_key = _column(action, table.charset)
        if column.name.lower() in (n.lower() for n in table.names()):
            raise DdlError(f"ALTER TABLE {name} ADD COLUMN {column.name}: the column exists already")
        columns.insert(_position(action, columns, len(columns)), column)
        return replace(table, columns=tuple(columns), primary_key=(column.name,) if is_key else table.primary_key)
    if isinstance(action, exp.ModifyColumn):  # MODIFY / CHANGE
        definition = action.this
        assert isinstance(definition, exp.ColumnDef)
        old = _ident(action.args["rename_from"]) if action.args.get("rename_from") else definition.name
        index = _index(columns, old, name)
        column, is_key = _column(definition, table.charset)
        del columns[index]
        columns.insert(_position(definition, columns, index), column)
        keys = tuple(column.name if k == old else k for k in table.primary_key)
        keys = (column.name,) if is_key else keys
        columns = [replace(c, nullable=False) if c.name in keys else c for c in columns]
        return replace(table, columns=tuple(columns), primary_key=keys)
    if isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "COLUMN":
        for target in action.args.get("tables") or [action.this]:
            old = _ident(target)
            if old not in table.names() and action.args.get("exists"):
                continue
            del columns[_index(columns, old, name)]
        return replace(table, columns=tuple(columns), primary_key=tuple(k for k in table.primary_key if k in
                                                                      [c.name for c in columns]))  # fmt: skip
    if isinstance(action, exp.RenameColumn):
        old, new = _ident(action.this), _ident(action.args["to"])
        index = _index(columns, old, name)
        columns[index] = replace(columns[index], name=new)
        keys = tuple(new if k == old else k for k in table.primary_key)
        return replace(table, columns=tuple(columns), primary_key=keys)
    if isinstance(action, exp.DropPrimaryKey):
        return replace(table, primary_key=())
    if isinstance(action, exp.AddConstraint):
        for item in action.expressions:
            key = item if isinstance(item, exp.PrimaryKey) else None
            if isinstance(item, exp.Constraint):
                key = next((e for e in item.expressions if isinstance(e, exp.PrimaryKey)), None)
            if key is not None:
                keys = _spelled([_ident(e) for e in key.expressions], columns)
                columns = [replace(c, nullable=False) if c.name in keys else c for c in columns]
                table = replace(table, columns=tuple(columns), primary_key=keys)
        return table  # indexes, unique keys, foreign keys, checks: no change to the row layout
    if isinstance(action, exp.AlterColumn):
        if action.args.get("dtype") is not None:
            raise DdlError(f"ALTER TABLE {name} ALTER COLUMN … TYPE is not MySQL: {action.sql('mysql')}")
        return table  # SET / DROP DEFAULT, VISIBLE / INVISIBLE
    if isinstance(action, exp.Drop | exp.AlterSet | exp.Property | exp.Properties | exp.Comment):
        return table  # DROP INDEX / KEY / FOREIGN KEY / CONSTRAINT, table options
    raise DdlError(f"cannot follow ALTER TABLE {name} … {action.sql('mysql')[:200]}")


def _position(definition: exp.ColumnDef, columns: Sequence[Column], default: int) -> int:
    position = definition.args.get("position")
    if position is None:
        return default
    if str(position.args.get("position", "")).upper() == "FIRST":
        return 0
    after = _ident(position.this)
    for i, c in enumerate(columns):
        if c.name.lower() == after.lower():
            return i + 1
    raise DdlError(f"AFTER {after}: no such column")


def _index(columns: Sequence[Column], name: str, table: str) -> int:
    for i, c in enumerate(columns):
        if c.name.lower() == name.lower():  # MySQL column names are case-insensitive
            return i
    raise DdlError(f"table {table} has no column {name}")


# --- the forms sqlglot leaves as commands, read from tokens -----------------------------------------


def _tokens(statement: str) -> list[Token]:
    try:
        return [t for t in sqlglot.tokenize(statement, read=_MySqlDdl) if t.token_type != TokenType.SEMICOLON]
    except Exception as exc:  # sqlglot's TokenError
        raise DdlError(f"cannot tokenize DDL: {statement[:300]}") from exc


def _qualified(tokens: Sequence[Token], i: int, default_db: str | None) -> tuple[str, int]:
    """A possibly database-qualified table name starting at ``tokens[i]``; the index after it."""
    first = tokens[i].text
    if i + 2 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT:
        return f"{first}.{tokens[i + 2].text}", i + 3
    if default_db is None:
        raise DdlError(f"table {first} has no database and the statement ran without a default one")
    return f"{default_db}.{first}", i + 1


def _rename_tables(catalog: Catalog, tokens: Sequence[Token], default_db: str | None) -> Changes:
    """RENAME TABLE a TO b [, c TO d …]: applied in order, as MySQL does (gh-ost and pt-osc swap
    tables this way)."""
    current = dict(catalog)
    changes: Changes = {}
    i = 0
    while i < len(tokens):
        old, i = _qualified(tokens, i, default_db)
        if i >= len(tokens) or tokens[i].text.upper() != "TO":
            raise DdlError("cannot parse RENAME TABLE")
        new, i = _qualified(tokens, i + 1, default_db)
        definition = current.pop(old, None)
        if old in catalog or old in changes:
            changes[old] = None
        if definition is None:
            if new in current or new in catalog:
                raise DdlError(f"RENAME TABLE {old} TO {new}: the definition of {old} is not known")
        else:
            current[new] = definition
            changes[new] = definition
        if i < len(tokens) and tokens[i].token_type == TokenType.COMMA:
            i += 1
    return changes


def _alter_from_tokens(catalog: Catalog, statement: str, tokens: Sequence[Token], default_db: str | None) -> Changes:
    """An ALTER TABLE sqlglot cannot parse whole: its clauses (split at top-level commas) one by
    one — ``ADD [COLUMN] (a …, b …)`` and ``CONVERT TO CHARACTER SET`` read here, every other
    clause parsed by sqlglot on its own."""
    i = 2
    while i < len(tokens) and tokens[i].text.upper() in ("ONLINE", "IGNORE", "IF", "EXISTS"):
        i += 1
    name, i = _qualified(tokens, i, default_db)
    if name not in catalog:
        return {}
    changes: Changes = {}
    table = catalog[name]
    for clause in _clauses(tokens[i:]):
        words = [t.text.upper() for t in clause]
        text = statement[clause[0].start : clause[-1].end + 1]
        if words[:4] == ["CONVERT", "TO", "CHARACTER", "SET"] and len(words) > 4:
            charset = clause[4].text.lower()
            columns = tuple(replace(c, charset=charset) if _is_text(c.type) else c for c in table.columns)
            table = replace(table, columns=columns, charset=charset)
        elif words[:2] == ["ADD", "("] or words[:3] == ["ADD", "COLUMN", "("]:
            inner = clause[words.index("(") :]
            body = statement[inner[0].start : inner[-1].end + 1]
            parsed = sqlglot.parse_one(f"CREATE TABLE _x {body}", read=_MySqlDdl)
            if not isinstance(parsed, exp.Create) or not isinstance(parsed.this, exp.Schema):
                raise DdlError(f"cannot follow ALTER TABLE {name} {text[:200]}")
            for item in parsed.this.expressions:
                if not isinstance(item, exp.ColumnDef):
                    raise DdlError(f"cannot follow ALTER TABLE {name} {text[:200]}")
                table = _alter_action(table, item, name)
        else:
            try:
                parsed = sqlglot.parse_one(f"ALTER TABLE _x {text}", read=_MySqlDdl)
            except ParseError:
                parsed = None
            if not isinstance(parsed, exp.Alter):
                raise DdlError(f"cannot parse ALTER TABLE {name} … {text[:200]}")
            for action in parsed.args.get("actions") or []:
                if isinstance(action, exp.AlterRename):
                    changes[name] = None
                    name = _name(action.this, default_db)
                else:
                    table = _alter_action(table, action, name)
    changes[name] = table
    return changes


def _clauses(tokens: Sequence[Token]) -> list[list[Token]]:
    """Tokens split at commas outside parentheses."""
    clauses: list[list[Token]] = [[]]
    depth = 0
    for t in tokens:
        if t.token_type == TokenType.COMMA and depth == 0:
            clauses.append([])
            continue
        depth += (t.token_type == TokenType.L_PAREN) - (t.token_type == TokenType.R_PAREN)
        clauses[-1].append(t)
    return [c for c in clauses if c]


# --- columns and names ------------------------------------------------------------------------------

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


def _is_text(column_type: str) -> bool:
    return column_type.split("(", 1)[0].split(" ", 1)[0] in _TEXT_TYPES


def _column(definition: exp.ColumnDef, table_charset: str | None) -> tuple[Column, bool]:
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
            charset = _ident(c.this).lower()
        elif isinstance(c, exp.ZeroFillColumnConstraint):
            zerofill = True
        elif isinstance(c, exp.CommentColumnConstraint):
            comment = _comment_text(c.this)
    text = _type_text(kind)
    if text == "serial":  # BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
        text, nullable = "bigint(20) unsigned", False
    if zerofill:
        text += " unsigned zerofill" if " unsigned" not in text else " zerofill"
    if _is_text(text):
        charset = charset or table_charset
    return Column(definition.name, text, nullable, charset, comment or None), key


def _type_text(kind: exp.DataType) -> str:
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


def _ident(node: exp.Expression | str) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, exp.Column | exp.Identifier | exp.Var):
        return node.name
    if isinstance(node, exp.Ordered):
        return _ident(node.this)
    return node.name or node.sql("mysql").strip("`")


def _name(table: exp.Expression, default_db: str | None) -> str:
    if not isinstance(table, exp.Table):
        raise DdlError(f"not a table name: {table.sql('mysql')}")
    database = table.db or default_db
    if not database:
        raise DdlError(f"table {table.name} has no database and the statement ran without a default one")
    return f"{database}.{table.name}"


def _tables_of_drop(tree: exp.Drop) -> list[exp.Table]:
    tables = list(tree.args.get("tables") or tree.args.get("expressions") or [])
    if isinstance(tree.this, exp.Table):
        tables = [tree.this, *tables]
    return [t for t in tables if isinstance(t, exp.Table)]


def member_values(column_type: str) -> list[str]:
    """The values of an ``enum(…)`` / ``set(…)`` column type, in definition order (quotes, commas
    and doubled quotes inside values handled by sqlglot's tokenizer)."""
    inner = column_type[column_type.index("(") + 1 : column_type.rindex(")")] if "(" in column_type else ""
    return [t.text for t in _tokens(inner) if t.token_type == TokenType.STRING]


def base_type(column_type: str) -> str:
    """``"bigint(20) unsigned"`` -> ``"bigint"``."""
    return column_type.strip().split("(", 1)[0].split(" ", 1)[0].lower()
