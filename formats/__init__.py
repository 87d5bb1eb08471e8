"""Pure CDC message parsers: bytes in, ``formats.events`` out.

The boundary: this package imports only the standard library, orjson, msgspec, pyarrow and itself —
never pyspark, pypaimon or a network client (``tests/test_boundary.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Callable

from formats import aliyun, aws_dms, canal, debezium, json_plain, maxwell, ogg
from formats.events import ChangeEvent, MessageContext

Parser = Callable[[bytes | None, bytes | None, MessageContext], list[ChangeEvent]]

PARSERS: dict[str, Parser] = {
    module.FORMAT: module.parse for module in (canal, debezium, maxwell, ogg, aws_dms, aliyun, json_plain)
}

# Formats Paimon's Kafka actions accept that a later release of lakecdc will parse.
PLANNED_FORMATS = ("debezium-avro", "debezium-bson")


def get_parser(name: str) -> Parser:
    """The parser for ``value.format`` ``name``; a clear error lists the known names."""
    parser = PARSERS.get(name.lower())
    if parser is not None:
        return parser
    if name.lower() in PLANNED_FORMATS:
        raise ValueError(
            f"value.format '{name}' is not yet supported by lakecdc (supported: {', '.join(sorted(PARSERS))})"
        )
    raise ValueError(f"unknown value.format '{name}'; known formats: {', '.join(sorted(PARSERS))}")
