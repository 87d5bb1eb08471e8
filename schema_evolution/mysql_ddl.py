"""MySQL DDL applied to a catalogue of table definitions: the schema history a binlog reader needs
when the server does not write column names into row events (``binlog_row_metadata`` other than
FULL: MySQL 5.7, MySQL 8's default MINIMAL, MariaDB's default NO_LOG).

Statements are parsed with sqlglot's MySQL dialect (backquotes, comments, several clauses per
ALTER), never with regular expressions; the three forms sqlglot leaves unparsed (``RENAME TABLE``,
``ALTER TABLE … ADD (a …, b …)``, ``CONVERT TO CHARACTER SET``) are read from its tokens. A
statement that touches a known table but cannot be understood raises ``DdlError``: applying
it wrongly would attach values to the wrong columns. The definitions are ``schema_evolution.mysql_tables``;
the dialect and what is read from its trees, ``schema_evolution.mysql_dialect``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokenizer_core import Token, TokenType

from schema_evolution.mysql_dialect import (
    MySqlDdl,
    column_def,
    comment_text,
    ddl_tokens,
    ident,
    is_text,
    qualified_table,
    table_name,
    tables_of_drop,
)
from schema_evolution.mysql_tables import Catalog, Changes, Column, DdlError, TableDef


def apply_ddl(catalog: Catalog, statement: str, default_db: str | None) -> Changes:
    """The tables ``statement`` creates, changes or drops, with their new definitions.

    Statements that change no table definition (DML, BEGIN, GRANT, CREATE INDEX, TRUNCATE …)
    give no changes. A statement about a table the catalogue does not know gives none either,
    unless it makes that table's definition matter (renaming it into a known name)."""
    try:
        tree = sqlglot.parse_one(statement, read=MySqlDdl)
    except ParseError:
        tree = None
    if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "TABLE":
        return _create(catalog, tree, default_db)
    if isinstance(tree, exp.Alter) and str(tree.args.get("kind", "")).upper() == "TABLE":
        return _alter(catalog, tree, default_db)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "TABLE":
        names = [table_name(t, default_db) for t in tables_of_drop(tree)]
        return {n: None for n in names if n in catalog}
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() in ("DATABASE", "SCHEMA"):
        databases = {t.name for t in tables_of_drop(tree)}
        return {n: None for n in catalog if n.split(".", 1)[0] in databases}
    tokens = ddl_tokens(statement)
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
    name = table_name(table, default_db)
    if tree.args.get("exists") and name in catalog:
        return {}  # CREATE TABLE IF NOT EXISTS of an existing table changes nothing
    like = _like_source(tree)
    if like is not None:
        source = table_name(like, default_db)
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
            column, is_key = column_def(item, charset)
            columns.append(column)
            if is_key:
                primary = (column.name,)
        elif isinstance(item, exp.PrimaryKey):
            primary = tuple(ident(e) for e in item.expressions)
        elif isinstance(item, exp.Constraint) and any(isinstance(e, exp.PrimaryKey) for e in item.expressions):
            key = next(e for e in item.expressions if isinstance(e, exp.PrimaryKey))
            primary = tuple(ident(e) for e in key.expressions)
    primary = _spelled(primary, columns)
    columns = [replace(c, nullable=False) if c.name in primary else c for c in columns]
    return {name: TableDef(tuple(columns), primary, charset, _table_comment(tree.args.get("properties")))}


def _table_comment(properties: exp.Expression | list[exp.Expression] | None) -> str | None:
    items = properties.expressions if isinstance(properties, exp.Properties) else properties or []
    for prop in items:
        if isinstance(prop, exp.SchemaCommentProperty):
            return comment_text(prop.this)
    return None


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
            return ident(prop.this).lower()
    return None


# --- ALTER TABLE ------------------------------------------------------------------------------------


def _alter(catalog: Catalog, tree: exp.Alter, default_db: str | None) -> Changes:
    table = tree.this
    assert isinstance(table, exp.Table)
    name = table_name(table, default_db)
    current = catalog.get(name)
    actions = tree.args.get("actions") or []
    if current is None:
        renamed = [a for a in actions if isinstance(a, exp.AlterRename)]
        if renamed:
            target = table_name(renamed[-1].this, default_db)
            if target in catalog:
                raise DdlError(f"ALTER TABLE {name} RENAME TO {target}: the definition of {name} is not known")
        return {}
    changes: Changes = {}
    definition = current
    for action in actions:
        if isinstance(action, exp.AlterRename):
            target = table_name(action.this, default_db)
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
        column, is_key = column_def(action, table.charset)
        if column.name.lower() in (n.lower() for n in table.names()):
            raise DdlError(f"ALTER TABLE {name} ADD COLUMN {column.name}: the column exists already")
        columns.insert(_position(action, columns, len(columns)), column)
        return replace(table, columns=tuple(columns), primary_key=(column.name,) if is_key else table.primary_key)
    if isinstance(action, exp.ModifyColumn):  # MODIFY / CHANGE
        definition = action.this
        assert isinstance(definition, exp.ColumnDef)
        old = ident(action.args["rename_from"]) if action.args.get("rename_from") else definition.name
        index = _index(columns, old, name)
        column, is_key = column_def(definition, table.charset)
        del columns[index]
        columns.insert(_position(definition, columns, index), column)
        keys = tuple(column.name if k == old else k for k in table.primary_key)
        keys = (column.name,) if is_key else keys
        columns = [replace(c, nullable=False) if c.name in keys else c for c in columns]
        return replace(table, columns=tuple(columns), primary_key=keys)
    if isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "COLUMN":
        for target in action.args.get("tables") or [action.this]:
            old = ident(target)
            if old not in table.names() and action.args.get("exists"):
                continue
            del columns[_index(columns, old, name)]
        return replace(table, columns=tuple(columns), primary_key=tuple(k for k in table.primary_key if k in
                                                                      [c.name for c in columns]))  # fmt: skip
    if isinstance(action, exp.RenameColumn):
        old, new = ident(action.this), ident(action.args["to"])
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
                keys = _spelled([ident(e) for e in key.expressions], columns)
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
    after = ident(position.this)
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


def _rename_tables(catalog: Catalog, tokens: Sequence[Token], default_db: str | None) -> Changes:
    """RENAME TABLE a TO b [, c TO d …]: applied in order, as MySQL does (gh-ost and pt-osc swap
    tables this way)."""
    current = dict(catalog)
    changes: Changes = {}
    i = 0
    while i < len(tokens):
        old, i = qualified_table(tokens, i, default_db)
        if i >= len(tokens) or tokens[i].text.upper() != "TO":
            raise DdlError("cannot parse RENAME TABLE")
        new, i = qualified_table(tokens, i + 1, default_db)
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
    name, i = qualified_table(tokens, i, default_db)
    if name not in catalog:
        return {}
    changes: Changes = {}
    table = catalog[name]
    for clause in _clauses(tokens[i:]):
        words = [t.text.upper() for t in clause]
        text = statement[clause[0].start : clause[-1].end + 1]
        if words[:4] == ["CONVERT", "TO", "CHARACTER", "SET"] and len(words) > 4:
            charset = clause[4].text.lower()
            columns = tuple(replace(c, charset=charset) if is_text(c.type) else c for c in table.columns)
            table = replace(table, columns=columns, charset=charset)
        elif words[:2] == ["ADD", "("] or words[:3] == ["ADD", "COLUMN", "("]:
            inner = clause[words.index("(") :]
            body = statement[inner[0].start : inner[-1].end + 1]
            parsed = sqlglot.parse_one(f"CREATE TABLE _x {body}", read=MySqlDdl)
            if not isinstance(parsed, exp.Create) or not isinstance(parsed.this, exp.Schema):
                raise DdlError(f"cannot follow ALTER TABLE {name} {text[:200]}")
            for item in parsed.this.expressions:
                if not isinstance(item, exp.ColumnDef):
                    raise DdlError(f"cannot follow ALTER TABLE {name} {text[:200]}")
                table = _alter_action(table, item, name)
        else:
            try:
                parsed = sqlglot.parse_one(f"ALTER TABLE _x {text}", read=MySqlDdl)
            except ParseError:
                parsed = None
            if not isinstance(parsed, exp.Alter):
                raise DdlError(f"cannot parse ALTER TABLE {name} … {text[:200]}")
            for action in parsed.args.get("actions") or []:
                if isinstance(action, exp.AlterRename):
                    changes[name] = None
                    name = table_name(action.this, default_db)
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
