"""Pure CDC message parsers: bytes in, ``formats.events`` out.

The boundary: this package imports only the standard library, orjson, msgspec, pyarrow,
``schema_evolution`` and itself — never pyspark, pypaimon or a network client
(``tests/test_boundary.py`` and the import-linter contracts check it).

One module per format, each exposing its name (``FORMAT``) and a pure ``parse`` function; the
registry below holds one ``Format`` entry per name. A faster path than ``parse`` is a capability of
the entry (``bulk_decoder``, see ``formats.bulk``), so callers ask the entry, never the name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from formats import aliyun, aws_dms, canal, canal_bulk, debezium, debezium_avro, debezium_bson, json_plain, maxwell, ogg
from formats.bulk import BulkDecoder
from formats.debezium_avro import SchemaSource
from formats.events import ChangeEvent, MessageContext
from schema_evolution.errors import LakeCdcError, SourcePosition

Parser = Callable[[bytes | None, bytes | None, MessageContext], list[ChangeEvent]]


@dataclass(frozen=True, slots=True)
class Format:
    """A registered message format: its ``value.format`` name, its parse function and, where the
    format has one, a factory of bulk decoders for its plain DML (one decoder per assembler).

    A format whose messages name their writer schema by id (debezium-avro) has ``with_schemas`` instead:
    given a ``SchemaSource`` (a registry client, ``ingest.kafka.schema_registry``) it returns the parser;
    its ``parse`` reads the wire format and tombstones, and refuses to look a schema up."""

    name: str
    parse: Parser
    bulk_decoder: Callable[[], BulkDecoder] | None = None
    with_schemas: Callable[[SchemaSource], Parser] | None = None


def _no_registry(schema_id: int, position: SourcePosition) -> str:
    raise LakeCdcError(
        f"{debezium_avro.FORMAT} needs a Schema Registry for schema id {schema_id} of the message at {position}: "
        "its parser is built around one (--kafka-conf schema.registry.url)"
    )


FORMATS: dict[str, Format] = {
    entry.name: entry
    for entry in (
        Format(canal.FORMAT, canal.parse, bulk_decoder=canal_bulk.CanalBulkDecoder),
        Format(debezium.FORMAT, debezium.parse),
        Format(debezium_bson.FORMAT, debezium_bson.parse),
        Format(
            debezium_avro.FORMAT,
            debezium_avro.DebeziumAvroParser(_no_registry),
            with_schemas=debezium_avro.DebeziumAvroParser,
        ),
        Format(maxwell.FORMAT, maxwell.parse),
        Format(ogg.FORMAT, ogg.parse),
        Format(aws_dms.FORMAT, aws_dms.parse),
        Format(aliyun.FORMAT, aliyun.parse),
        Format(json_plain.FORMAT, json_plain.parse),
    )
}


def get_format(name: str) -> Format:
    """The registry entry for ``value.format`` ``name``; a clear error lists the known names."""
    entry = FORMATS.get(name.lower())
    if entry is not None:
        return entry
    raise ValueError(
        f"unknown value.format '{name}' (This format: {name} is not supported.); known formats: "
        f"{', '.join(sorted(FORMATS))}"
    )


def get_parser(name: str) -> Parser:
    """The parse function of ``value.format`` ``name`` (``get_format``'s errors)."""
    return get_format(name).parse
