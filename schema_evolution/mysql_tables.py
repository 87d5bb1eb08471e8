"""The table definitions a MySQL schema history keeps (``schema_evolution.mysql_ddl`` applies DDL
to them): columns as information_schema spells their types, the primary key, character sets and
comments, and their JSON form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


class DdlError(ValueError):
    """A DDL statement that changes a tracked table in a way ``apply_ddl`` cannot follow."""


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


def base_type(column_type: str) -> str:
    """``"bigint(20) unsigned"`` -> ``"bigint"``."""
    return column_type.strip().split("(", 1)[0].split(" ", 1)[0].lower()
