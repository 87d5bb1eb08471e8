"""The change-event model every format parser produces.

Modelled on flink-cdc's ``DataChangeEvent(before, after, op, meta)``: one event per changed row,
carrying the before and after images as the source saw them. How an update becomes Paimon row
kinds (-U/+U) is decided in exactly one place, ``sinks.write.chunk_format``; parsers never think in row kinds.

Events are created at hundreds of thousands per second, so they are slotted, frozen, and share
their ``SourceSchema`` object between all rows of one message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from schema_evolution.errors import SourcePosition


class Op(Enum):
    """What happened to a row."""

    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"


class TypeSystem(Enum):
    """Which vocabulary ``SourceSchema.fields`` types are written in."""

    MYSQL = "mysql"  # canal's mysqlType, MySQL binlog column types: "varchar(10)", "int unsigned"
    PAIMON = "paimon"  # the parser already mapped its types: Paimon SQL spelling, "DECIMAL(10, 2)"
    STRING = "string"  # the format carries no types: every column is STRING


@dataclass(frozen=True, slots=True)
class SourceSchema:
    """The columns of one source table as one message describes them.

    ``fields`` keeps source order; a type is ``None`` when the message names a column without a type.
    """

    fields: tuple[tuple[str, str | None], ...]
    primary_keys: tuple[str, ...]
    type_system: TypeSystem
    # Column comments (non-empty ones) and the table comment, where the source has them (MySQL).
    comments: tuple[tuple[str, str], ...] = ()
    table_comment: str | None = None


@dataclass(frozen=True, slots=True)
class MessageContext:
    """Kafka-side facts about one message, passed to every parser."""

    position: SourcePosition
    timestamp_ms: int | None = None


@dataclass(frozen=True, slots=True)
class DataChangeEvent:
    """One row changed in ``database.table``.

    INSERT has only ``after``; DELETE only ``before``; UPDATE both (the before image complete: a
    format that sends only changed columns has them merged over the after image by its parser).
    """

    op: Op
    database: str | None
    table: str | None
    schema: SourceSchema
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    op_ts_ms: int | None


@dataclass(frozen=True, slots=True)
class SchemaChangeEvent:
    """A DDL statement seen in the stream (canal ``isDdl``). Carries no rows."""

    database: str | None
    table: str | None
    ddl: str
    op_ts_ms: int | None


ChangeEvent = DataChangeEvent | SchemaChangeEvent
