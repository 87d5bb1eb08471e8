"""JSON helpers shared by the JSON-based formats (functions, not a base class)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.payloads import describe, preview, previews_enabled


def load_object(fmt: str, value: bytes | None, position: SourcePosition | None) -> dict[str, Any]:
    """Parse ``value`` as one JSON object, or raise ``MalformedMessage`` saying why not."""
    if value is None:
        raise MalformedMessage(fmt, position, "the message has no value (null)")
    try:
        root = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise MalformedMessage(fmt, position, f"not valid JSON ({exc}); {head(value)}") from None
    if not isinstance(root, dict):
        raise MalformedMessage(fmt, position, f"expected a JSON object, got {type(root).__name__}")
    return root


def require(fmt: str, root: dict[str, Any], key: str, kind: type, position: SourcePosition | None) -> Any:
    """``root[key]``, which must be present, non-null and of ``kind``."""
    value = root.get(key)
    if value is None:
        raise MalformedMessage(fmt, position, f"field '{key}' is missing or null")
    if not isinstance(value, kind):
        raise MalformedMessage(fmt, position, f"field '{key}' must be a {kind.__name__}, got {type(value).__name__}")
    return value


def optional(fmt: str, root: dict[str, Any], key: str, kind: type, position: SourcePosition | None) -> Any:
    """``root[key]`` or ``None``; when present it must be of ``kind``."""
    value = root.get(key)
    if value is not None and not isinstance(value, kind):
        raise MalformedMessage(fmt, position, f"field '{key}' must be a {kind.__name__}, got {type(value).__name__}")
    return value


def head(value: bytes) -> str:
    """A bad message for error texts: its size, or with previews on (``--log-payloads``) a short,
    printable head of it (never the whole payload)."""
    if previews_enabled():
        return f"starts with {preview(value)}"
    return f"the value is {describe(value)}"


# A JSON escape of a UTF-16 surrogate (\\uD800-\\uDFFF): Python's json takes a lone one (orjson and
# msgspec refuse it), and a string holding it cannot be written to Arrow.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def strict_loads(data: bytes | str, parse_float: Callable[[str], Any] | None = None) -> Any:
    """``json.loads`` (for what orjson cannot do: exact decimals, any nesting) refusing what orjson and
    msgspec refuse, with ``ValueError``: invalid UTF-8 (``json.loads`` of bytes decodes with
    'surrogatepass', so an encoded surrogate passed) and lone surrogate escapes. Either became a
    string pyarrow cannot encode, failing the read task instead of naming the message (found by
    tests/formats/test_fuzz.py)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if _SURROGATE_ESCAPE.search(text):
        orjson.loads(text)  # valid surrogate pairs pass; a lone surrogate raises (a ValueError)
    return json.loads(text, parse_float=parse_float)
