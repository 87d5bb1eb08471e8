"""Schema evolution as pure rules: a diff of a record's schema against the table's, and a verdict
per changed column, ported from Apache Paimon's CDC ``canConvert``.

The applier (the only code that talks to a catalog) is ``sinks.table.catalog``; everything here is a
function of its arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from schema_evolution.errors import IncompatibleTypeChange
from schema_evolution.type_mapping import TypeMappingMode
from schema_evolution.types import PaimonType, Root
from schema_evolution.types import decimal as decimal_type


class Verdict(Enum):
    CONVERT = "convert"  # widen the table column to the new type
    IGNORE = "ignore"  # the table keeps its type (the same, or wider than the record's)
    EXCEPTION = "exception"  # no safe conversion: stop and tell the user


@dataclass(frozen=True, slots=True)
class Comments:
    """Column and table comments of a record (the source's) and of the table, for ``diff``."""

    record: Mapping[str, str] = field(default_factory=dict)
    table: Mapping[str, str] = field(default_factory=dict)
    record_table: str | None = None
    table_comment: str | None = None


@dataclass(frozen=True, slots=True)
class AddColumn:
    name: str
    type: PaimonType
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateColumnType:
    name: str
    old: PaimonType
    new: PaimonType


@dataclass(frozen=True, slots=True)
class UpdateColumnComment:
    name: str
    comment: str


@dataclass(frozen=True, slots=True)
class UpdateTableComment:
    comment: str


SchemaChange = AddColumn | UpdateColumnType | UpdateColumnComment | UpdateTableComment

_STRINGS = (Root.CHAR, Root.VARCHAR)
_BINARIES = (Root.BINARY, Root.VARBINARY)
_INTEGERS = (Root.TINYINT, Root.SMALLINT, Root.INT, Root.BIGINT)
_FLOATS = (Root.FLOAT, Root.DOUBLE)
_TIMESTAMPS = (Root.TIMESTAMP, Root.TIMESTAMP_LTZ)


def can_convert(old: PaimonType, new: PaimonType, modes: frozenset[TypeMappingMode]) -> Verdict:
    """May a table column of type ``old`` take values of type ``new``, and how."""
    if old.with_nullable(True) == new.with_nullable(True):
        return Verdict.IGNORE
    for family in (_STRINGS, _BINARIES):
        if old.root in family and new.root in family:
            return Verdict.CONVERT if (old.length or 0) <= (new.length or 0) else Verdict.IGNORE
    for ladder in (_INTEGERS, _FLOATS):
        if old.root in ladder and new.root in ladder:
            return Verdict.CONVERT if ladder.index(old.root) <= ladder.index(new.root) else Verdict.IGNORE
    if old.root is Root.DECIMAL and new.root is Root.DECIMAL:
        if TypeMappingMode.DECIMAL_NO_CHANGE in modes:
            return Verdict.IGNORE
        # As Paimon: ignore a decimal the column already holds; otherwise convert (to the type that
        # holds both, see ``decimal_union``, where Paimon would take the new type and drop digits).
        fits = (new.length or 0) - (new.scale or 0) <= (old.length or 0) - (old.scale or 0) and (new.scale or 0) <= (
            old.scale or 0
        )
        return Verdict.IGNORE if fits else Verdict.CONVERT
    if old.root in _TIMESTAMPS and new.root in _TIMESTAMPS and old.root is new.root:
        return Verdict.CONVERT if (old.length or 0) <= (new.length or 0) else Verdict.IGNORE
    if old.root is Root.TIME and new.root is Root.TIME:
        return Verdict.CONVERT if (old.length or 0) <= (new.length or 0) else Verdict.IGNORE
    if TypeMappingMode.ALLOW_NON_STRING_TO_STRING in modes and new.root in _STRINGS and old.root not in _STRINGS:
        return Verdict.CONVERT
    return Verdict.EXCEPTION


def decimal_union(a: PaimonType, b: PaimonType) -> PaimonType:
    """The narrowest DECIMAL that holds every value of both (capped at Paimon's 38 digits)."""
    scale = max(a.scale or 0, b.scale or 0)
    integer = max((a.length or 0) - (a.scale or 0), (b.length or 0) - (b.scale or 0))
    return decimal_type(min(integer + scale, 38), scale)


def diff(
    table: str,
    table_fields: Sequence[tuple[str, PaimonType]],
    record_fields: Sequence[tuple[str, PaimonType]],
    modes: frozenset[TypeMappingMode] = frozenset(),
    comments: Comments | None = None,
) -> list[SchemaChange]:
    """The changes that let ``table`` hold a record of ``record_fields``.

    Fields the table lacks are added (nullable, at the end); fields the record lacks are left
    alone (Paimon ignores DROP COLUMN); changed types follow ``can_convert``. With ``comments``,
    a comment the source gives (never an empty one) replaces the table's, as Paimon's MySQL action
    follows ``COMMENT`` clauses.
    """
    current = {name: typ for name, typ in table_fields}
    changes: list[SchemaChange] = []
    comments = comments or Comments()
    for name, new in record_fields:
        old = current.get(name)
        wanted = comments.record.get(name)
        if old is None:
            changes.append(AddColumn(name, new.with_nullable(True), wanted or None))
            current[name] = new
            continue
        if wanted and wanted != comments.table.get(name):
            changes.append(UpdateColumnComment(name, wanted))
        verdict = can_convert(old, new, modes)
        if verdict is Verdict.CONVERT:
            target = decimal_union(old, new) if old.root is new.root is Root.DECIMAL else new
            changes.append(UpdateColumnType(name, old, target.with_nullable(old.nullable)))
        elif verdict is Verdict.EXCEPTION:
            raise IncompatibleTypeChange(
                table,
                name,
                old,
                new,
                "Either keep the source type compatible, sync into a new table, or use "
                "--type-mapping to-string (or allow-non-string-to-string) so the column is kept as STRING.",
            )
    if comments.record_table and comments.record_table != comments.table_comment:
        changes.append(UpdateTableComment(comments.record_table))
    return changes
