"""The captured tables' definitions as the read tasks need them: column types, keys and comments
(from the schema history, or the server's catalogue), and the column names of binlog row events."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog

from formats import mysql_values
from formats.events import SourceSchema
from ingest.mysql.client import (
    MySqlSourceError,
    table_columns,
    table_comments,
)
from ingest.mysql.spec import MySqlSourceSpec, Position, values_as_text
from schema_evolution.mysql_dialect import member_values
from schema_evolution.mysql_tables import TableDef, base_type

log = structlog.get_logger(__name__)


class Tables:
    """Column types and keys of the captured tables, from information_schema (refreshed on DDL)."""

    def __init__(self, spec: MySqlSourceSpec, c: Any, history: dict[str, TableDef] | None = None) -> None:
        self.spec = spec
        self.c = c
        self.history = history  # the schema history's definitions, kept current by the reader
        self._types: dict[str, dict[str, str]] = {}
        self._keys: dict[str, list[str]] = {}
        self._comments: dict[str, tuple[dict[str, str], str | None]] = {}
        self._schemas: dict[tuple[str, tuple[str, ...]], SourceSchema] = {}
        self._normalizers: dict[tuple[str, tuple[str, ...]], mysql_values.RowNormalizer] = {}

    def refresh(self, database: str, table: str) -> None:
        name = f"{database}.{table}"
        definition = self.history.get(name) if self.history is not None else None
        if definition is not None:
            columns, keys = _columns_of(definition), list(definition.primary_key)
            comments = ({c.name: c.comment for c in definition.columns if c.comment}, definition.comment)
        else:  # no history, or one that gave up on this table (FULL row metadata only)
            columns, keys = table_columns(self.c, database, table)
            comments = table_comments(self.c, database, table)
        self._types[name] = dict(columns)
        self._keys[name] = keys
        self._comments[name] = comments
        self._schemas = {k: v for k, v in self._schemas.items() if k[0] != name}
        self._normalizers = {k: v for k, v in self._normalizers.items() if k[0] != name}

    def invalidate(self, name: str) -> None:
        self._types.pop(name, None)
        self._schemas = {k: v for k, v in self._schemas.items() if k[0] != name}
        self._normalizers = {k: v for k, v in self._normalizers.items() if k[0] != name}

    def types(self, database: str, table: str) -> dict[str, str]:
        name = f"{database}.{table}"
        if name not in self._types:
            self.refresh(database, table)
        return self._types[name]

    def keys(self, database: str, table: str) -> list[str]:
        self.types(database, table)
        return self._keys[f"{database}.{table}"]

    def source_schema(self, database: str, table: str, columns: Sequence[str] | None = None) -> SourceSchema:
        """The table's columns (all, or ``columns``) with types, keys and comments."""
        types = self.types(database, table)
        comments, table_comment = self._comments[f"{database}.{table}"]
        names = list(types) if columns is None else columns
        return mysql_values.source_schema(
            [(c, types[c]) for c in names], self.keys(database, table), comments, table_comment
        )

    def schema(self, database: str, table: str, columns: tuple[str, ...]) -> SourceSchema:
        name = f"{database}.{table}"
        found = self._schemas.get((name, columns))
        if found is None:
            types = self.types(database, table)
            if any(c not in types for c in columns):
                self.refresh(database, table)
                types = self.types(database, table)
            missing = [c for c in columns if c not in types]
            if missing:
                raise MySqlSourceError(f"table {name}: binlog rows name columns {missing} the table does not have")
            found = self.source_schema(database, table, columns)
            self._schemas[(name, columns)] = found
        return found

    def normalizer(self, database: str, table: str, columns: tuple[str, ...]) -> mysql_values.RowNormalizer:
        """``RowNormalizer`` for row images with ``columns`` (binlog rows: naive UTC TIMESTAMPs)."""
        key = (f"{database}.{table}", columns)
        found = self._normalizers.get(key)
        if found is None:
            schema = self.schema(database, table, columns)
            types = {name: typ or "TEXT" for name, typ in schema.fields}
            zone = mysql_values.server_zone(self.spec.server_time_zone)
            found = mysql_values.RowNormalizer(types, zone, True, values_as_text(self.spec))
            self._normalizers[key] = found
        return found


def _columns_of(definition: TableDef) -> list[tuple[str, str]]:
    """A definition's columns as ``table_columns`` gives them (NOT NULL appended to the type)."""
    return [(c.name, c.type + ("" if c.nullable else " NOT NULL")) for c in definition.columns]


_TEXT = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json"})
_BINARY = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


class RowColumns:
    """Names the columns of row events before they are decoded. With ``binlog_row_metadata=FULL``
    the server does, and this only checks it still does. Otherwise the names, signedness,
    character sets and ENUM/SET values come from ``tables`` (the schema history), set on the
    table map that precedes each row event; a column count that differs stops the reader rather
    than attach values to the wrong columns."""

    def __init__(
        self,
        tables: dict[str, TableDef] | None,
        captured: Callable[[str, str], bool],
        forget: Callable[[str, Position, str], None] | None = None,
    ) -> None:
        self.tables = tables
        self.captured = captured
        # FULL row metadata: where the history disagrees with the names the server sends, drop
        # the table from the history (its types then come from the server) instead of failing.
        self.forget = forget

    def __call__(self, event: Any, position: Position) -> None:
        database, table = str(event.schema), str(event.table)
        if not self.captured(database, table):
            return
        name = f"{database}.{table}"
        where = f"binlog {position[0]}:{position[1]}, table {name}"
        named = all(col.name is not None for col in event.columns)
        if named and self.forget is not None and self.tables is not None:
            kept = self.tables.get(name)
            if kept is not None and kept.names() != [col.name for col in event.columns]:
                self.forget(name, position, f"the server names columns {[col.name for col in event.columns]}")
            return
        if self.tables is None:
            if not named:
                raise MySqlSourceError(
                    f"{where}: row events no longer name their columns (binlog_row_metadata is no longer "
                    f"FULL); set binlog_row_metadata=FULL again, or start from a new checkpoint"
                )
            return
        definition = self.tables.get(name)
        if definition is None:
            raise MySqlSourceError(f"{where}: the table is not in the schema history; start from a new checkpoint")
        if len(definition.columns) != len(event.columns):
            raise MySqlSourceError(
                f"{where}: the row events have {len(event.columns)} columns, the schema history "
                f"{len(definition.columns)} ({', '.join(definition.names())}); set binlog_row_metadata=FULL "
                f"and start from a new checkpoint"
            )
        for col, known in zip(event.columns, definition.columns, strict=True):
            if col.name is not None and col.name != known.name:
                raise MySqlSourceError(
                    f"{where}: the server names column {col.name} where the schema history has {known.name}; "
                    f"start from a new checkpoint"
                )
            col.name = known.name
            base = base_type(known.type)
            col.unsigned = " unsigned" in known.type or " zerofill" in known.type
            if base == "enum":
                col.enum_values = ["", *member_values(known.type)]
            elif base == "set":
                col.set_values = member_values(known.type)
            if base in _TEXT and known.charset:
                col.character_set_name = known.charset
            elif base in _BINARY:
                col.character_set_name = "binary"  # raw bytes, not decoded text
