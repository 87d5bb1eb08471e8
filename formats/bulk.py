"""The bulk-decoding capability a format's registry entry may offer (``formats.Format.bulk_decoder``).

A format whose plain DML messages can be decoded without building an event per row (canal-json,
``formats.canal_bulk``) offers a ``BulkDecoder``: after the event path took a message of a table, it
``learn``s the table's columns; then ``decode`` hands back a message's row images as tuples in the
columns' order (``PlainRows``), or None for anything it cannot take *exactly as* the format's parse
function would, which the caller then parses the usual way. A ``Lane`` appends the next messages of
the same table straight to a chunk's row, row-kind and offset lists.

The assembler (``ingest.pipeline.assembler``) asks the registry entry for this capability; it never
compares format names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from formats.events import Op, SourceSchema


@dataclass(slots=True)
class PlainRows:
    """The row images of one plain DML message, in ``source``'s column order.

    ``before`` is set for updates only: ``before[i]`` is the row's before image. For deletes the
    images are in ``after``."""

    database: str | None
    table: str | None
    source: SourceSchema
    op: Op
    after: list[tuple[Any, ...]]
    before: list[tuple[Any, ...]] | None


@dataclass(frozen=True, slots=True)
class KindCodes:
    """The row-kind values a lane appends (the sink's own, e.g. Paimon's row-kind bytes)."""

    insert: int
    update_before: int
    update_after: int
    delete: int


class Lane(Protocol):
    """Appends the row images of one table's plain DML straight to a chunk's lists."""

    def take(self, value: bytes, offset: int) -> int:
        """Append the message's row images and return how many changes it held; 0 when it is not
        plain DML of this lane (then nothing was appended)."""
        ...

    def add(self, op: Op, after: list[tuple[Any, ...]], before: list[tuple[Any, ...]] | None, offset: int) -> int:
        """Append row images of one message (``PlainRows``' fields); returns the number of changes."""
        ...


class BulkDecoder(Protocol):
    """Decodes a format's plain DML messages of learned tables into row tuples."""

    def learn(self, source: SourceSchema) -> None:
        """Prepare for messages with ``source``'s columns (after the parse function took one)."""
        ...

    def decode(self, value: bytes) -> PlainRows | None:
        """The message's row images, or None: the caller parses it with the format's parse function."""
        ...

    def lane(self, plain: PlainRows, rows: list[Any], kinds: list[int], offsets: list[int], codes: KindCodes) -> Lane:
        """A lane for the messages that follow ``plain`` (which ``decode`` just returned) into the
        given chunk lists."""
        ...
