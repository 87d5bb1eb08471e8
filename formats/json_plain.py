"""json: one plain JSON object per message, which is one row.

    {"a": "a1", "b": "b1", "event_tm": "2024-05-22 09:50:40", "tags": ["x", "y"], "extra": {...}}

Semantics follow Apache Paimon's ``JsonRecordParser``: there is no operation, so every message
is an INSERT of its object (with ``--primary-keys`` the table is a primary-key table and a later
message with the same key replaces the row, i.e. an upsert). The message names no database or
table (both ``None``: routing sends it to the one target table) and carries no types, so every
column is STRING (``TypeSystem.STRING``); the columns are the object's keys in message order.
Nested objects and arrays stay Python values and are stored as their JSON text; numbers and
booleans become their text in the STRING column.

One difference from Paimon: a JSON ``null`` is a SQL NULL here, whereas Paimon's
``AbstractJsonRecordParser`` writes the four-character text ``"null"`` (an artefact of
``Objects.toString(null)``; its ``testTableFiledValNull`` ITCase shows it).

A message whose root is an array or a scalar is malformed; so is a message with no value
(a Kafka tombstone), which this format does not define.
"""

from __future__ import annotations

from formats.events import ChangeEvent, DataChangeEvent, MessageContext, Op
from formats.jsonutil import load_object
from formats.string_schema import string_schema

FORMAT = "json"

# Messages of one topic usually repeat the same keys; one SourceSchema per distinct key list keeps
# memory flat and lets the chunk builder compare schemas by identity.


def parse(value: bytes | None, key: bytes | None, ctx: MessageContext) -> list[ChangeEvent]:
    """Parse one plain JSON object into one INSERT event."""
    row = load_object(FORMAT, value, ctx.position)
    # The message carries no time of change (the Kafka timestamp is when it was produced).
    return [DataChangeEvent(Op.INSERT, None, None, string_schema(tuple(row)), None, row, None)]
