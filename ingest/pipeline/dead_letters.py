"""Dead letters: messages a tolerant job (``--errors-tolerance all``) could not parse, convert or route,
and messages an operator skipped (``--skip-offsets``), as rows of the dead-letter table.

A dead letter travels as an ordinary chunk (``sinks.write.chunk_format``) whose target is the
dead-letter table and whose record schema is ``DEAD_LETTER_SCHEMA``, so the driver writes it with the
micro-batch's other chunks and commits it with the same batch id: exactly once, like any row.

The table's primary key is the message's position (``topic, partition, offset``; for MySQL see
``DEAD_LETTER_FIELDS``): a replayed micro-batch whose commit was already made is skipped by Paimon's
commit identifier, and one that was not re-writes the same keys, so a position is never in the table
twice. For MySQL a dead letter is a binlog row event (all its rows in the job's tables) or a snapshot row,
its ``value`` the rows as JSON text (``rows_json``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa

from schema_evolution.arrow_types import to_arrow
from schema_evolution.errors import LakeCdcError, MalformedMessage
from schema_evolution.types import PaimonType, bigint, bytes_, int_, string, timestamp_ltz
from sinks.layout import RecordSchema
from sinks.write.chunk_format import INSERT, VALUE_KIND

# error_class of a message skipped with --skip-offsets
SKIPPED_BY_OPERATOR = "SkippedByOperator"

_KEY = ("topic", "partition", "offset")
DEAD_LETTER_FIELDS: tuple[tuple[str, PaimonType], ...] = (
    # Kafka: topic, partition, offset. MySQL binlog: the binlog file, 0, the row event's position;
    # MySQL snapshot: 'snapshot', the snapshot chunk's index, the row's index in the chunk.
    ("topic", string().with_nullable(False)),
    ("partition", int_().with_nullable(False)),
    ("offset", bigint().with_nullable(False)),
    ("source_table", string()),  # database.table as the message named it, when known
    ("key", bytes_()),  # the raw message key
    ("value", bytes_()),  # the raw message value; MySQL: the row as JSON text
    ("format", string()),
    ("error_class", string()),
    ("error_message", string()),
    ("dead_lettered_at", timestamp_ltz(3)),
)
DEAD_LETTER_SCHEMA = RecordSchema(DEAD_LETTER_FIELDS, _KEY, "lakecdc.dead_letters")
DEAD_LETTER_SCHEMA_JSON = DEAD_LETTER_SCHEMA.to_json()

# The dead-letter table's options, whatever --table-conf says (a job-wide merge engine, sequence
# field, partitioning or bucket key made for the data tables would not fit this table): a primary-key
# table (deduplicate, the default merge engine) with one fixed bucket, a few rows.
DEAD_LETTER_OPTIONS = {"bucket": "1", "changelog-producer": "none"}

_ARROW_SCHEMA = pa.schema(
    [pa.field(name, to_arrow(typ), nullable=typ.nullable) for name, typ in DEAD_LETTER_FIELDS]
    + [pa.field(VALUE_KIND, pa.int8(), nullable=False)]
)


def message_errors() -> tuple[type[BaseException], ...]:
    """The errors that are about one message, which a tolerant job dead-letters: the project's
    malformed-message errors (parsing, conversion, routing). A raw ``UnicodeDecodeError`` from a
    parser's fast path is about the message's bytes too. Infrastructure errors (a lost broker, a
    table that cannot be written) are not: they stop the job as before."""
    return (MalformedMessage, UnicodeDecodeError)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """One message that did not make it into its table, and why."""

    topic: str
    partition: int
    offset: int
    source_table: str | None
    key: bytes | None
    value: bytes | None
    format: str
    error_class: str
    error_message: str
    at_ms: int

    @staticmethod
    def of(
        topic: str,
        partition: int,
        offset: int,
        fmt: str,
        error: BaseException | str,
        key: bytes | None,
        value: bytes | None,
        source_table: str | None = None,
    ) -> DeadLetter:
        """A dead letter for ``error`` (an exception, or ``SKIPPED_BY_OPERATOR``)."""
        if isinstance(error, str):
            error_class, message = error, "skipped by --skip-offsets"
        else:
            error_class = type(error).__name__
            # the reason only: MalformedMessage's text adds advice for the operator of a stopped job
            message = error.reason if isinstance(error, MalformedMessage) else str(error)
        return DeadLetter(
            topic, partition, offset, source_table, key, value, fmt, error_class, message, int(time.time() * 1000)
        )


def dead_letter_batch(letters: Sequence[DeadLetter]) -> pa.RecordBatch:
    """Dead letters as a chunk's typed rows (inserts)."""
    columns = [
        [d.topic for d in letters],
        [d.partition for d in letters],
        [d.offset for d in letters],
        [d.source_table for d in letters],
        [d.key for d in letters],
        [d.value for d in letters],
        [d.format for d in letters],
        [d.error_class for d in letters],
        [d.error_message for d in letters],
        [d.at_ms for d in letters],
        [INSERT] * len(letters),
    ]
    arrays = [pa.array(values, field.type) for values, field in zip(columns, _ARROW_SCHEMA, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=_ARROW_SCHEMA)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)  # Decimal, timedelta, ...


def rows_json(rows: Sequence[Any]) -> bytes:
    """A MySQL dead letter's ``value``: its row changes as a JSON array (values that JSON has no type
    for as text; binary values as UTF-8 with backslash escapes)."""
    return orjson.dumps(list(rows), default=_json_default, option=orjson.OPT_NON_STR_KEYS)


class DeadLetterLimit(LakeCdcError):
    """More dead letters in one micro-batch than ``--max-dead-letters`` allows."""


def parse_skip_offsets(text: str | Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """``topic:partition:offset[,...]`` (Kafka topic names hold no ``:``) as tuples; ``ValueError``
    naming the bad item."""
    items = [text] if isinstance(text, str) else list(text)
    out: list[tuple[str, int, int]] = []
    for item in (part.strip() for chunk in items for part in chunk.split(",")):
        if not item:
            continue
        topic, sep, rest = item.partition(":")
        partition, sep2, offset = rest.partition(":")
        try:
            if not (sep and sep2 and topic):
                raise ValueError
            p, o = int(partition), int(offset)
            if p < 0 or o < 0:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"--skip-offsets: '{item}' is not topic:partition:offset (for MySQL: binlog-file:position)"
            ) from None
        out.append((topic, p, o))
    return tuple(out)


def parse_binlog_skips(text: str | Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """MySQL's ``--skip-offsets``: ``binlog-file:position[,...]`` (the position of a row event, as a
    dead letter's ``topic`` and ``offset`` name it) as ``(file, -1, position)``: every row of that event."""
    items = [text] if isinstance(text, str) else list(text)
    out: list[tuple[str, int, int]] = []
    for item in (part.strip() for chunk in items for part in chunk.split(",")):
        if not item:
            continue
        file, sep, position = item.rpartition(":")
        if not (sep and file) or not position.isdigit():
            raise ValueError(f"--skip-offsets: '{item}' is not binlog-file:position (e.g. mysql-bin.000003:4711)")
        out.append((file, -1, int(position)))
    return tuple(out)


def check_dead_letter_options(
    tolerance: str,
    table: str | None,
    max_letters: int | None,
    skips: Sequence[str],
    mysql: bool,
    sync_target: str | None,
) -> tuple[tuple[str, int, int], ...]:
    """Start-up validation of --errors-tolerance, --dead-letter-table, --max-dead-letters and
    --skip-offsets (``ValueError`` saying what to change); the parsed skips."""
    if tolerance == "all" and not table:
        raise ValueError("--errors-tolerance all needs --dead-letter-table <database.table>: bad messages go there")
    if table and tolerance != "all":
        raise ValueError(
            "--dead-letter-table is used with --errors-tolerance all only (with the default, none, bad input "
            "stops the job); give both, or neither"
        )
    if max_letters is not None and tolerance != "all":
        raise ValueError("--max-dead-letters is used with --errors-tolerance all only")
    if table:
        database, dot, name = table.partition(".")
        if not (dot and database and name) or "." in name:
            raise ValueError(f"--dead-letter-table '{table}': give database.table")
        if sync_target is not None and table == sync_target:
            raise ValueError(f"--dead-letter-table '{table}' is the table the job syncs into: choose another")
    return parse_binlog_skips(skips) if mysql else parse_skip_offsets(skips)


def skipped_offsets(skips: Sequence[tuple[str, int, int]], topic: str, partition: int) -> frozenset[int]:
    """The offsets of one partition that the operator asked to skip."""
    return frozenset(o for t, p, o in skips if t == topic and p == partition)
