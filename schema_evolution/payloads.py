"""What an error text may say about a message's values: their shape, never their content, unless
the operator asked for previews (``--log-payloads``).

Kafka Connect keeps message contents out of its logs by default, and so does lakecdc: an error
names the position, the field or column and the reason, and describes a value by its kind and
size ("a string of 12 characters", "a JSON object of 3 fields"). ``enable_previews(True)`` (the
driver at start-up, each read task from its parse spec) turns short previews of the values back on.

One flag per process: the formats and the conversion raise their errors deep inside parsing, where
no option is in reach, and a process serves one job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

PREVIEW_CHARS = 80

_previews = False


def enable_previews(on: bool) -> None:
    """Let ``preview`` show values (``--log-payloads``) or, with ``False``, only their shape."""
    global _previews
    _previews = bool(on)


def previews_enabled() -> bool:
    """Whether error texts may show values."""
    return _previews


@contextmanager
def previews(on: bool = True) -> Iterator[None]:
    """``enable_previews(on)`` for a block, then the setting as it was (tests, one-off tools)."""
    was = _previews
    enable_previews(on)
    try:
        yield
    finally:
        enable_previews(was)


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A value for an error text: its shape (``describe``), or with previews on, a short printable
    head of it (never more than ``limit`` characters of it)."""
    if not _previews:
        return describe(value)
    if isinstance(value, bytes | bytearray):
        shown = repr(bytes(value[:limit]).decode("utf-8", errors="replace"))
        return shown[:-1] + "…" + shown[-1] if len(value) > limit else shown
    try:
        shown = repr(value)
    except (RecursionError, ValueError):  # nested deeper than repr goes, an int longer than str() writes
        return describe(value)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def describe(value: Any) -> str:
    """The kind and size of ``value``, without any of its content: "a string of 12 characters",
    "40 bytes", "a JSON object of 3 fields", "a number", "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"a string of {_count(len(value), 'character')}"
    if isinstance(value, bytes | bytearray | memoryview):
        return _count(len(value), "byte")
    if isinstance(value, dict):
        return f"a JSON object of {_count(len(value), 'field')}"
    if isinstance(value, list | tuple):
        return f"a list of {_count(len(value), 'item')}"
    return f"a {type(value).__name__}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# A quoted run as Python's repr and Arrow's messages write values: '...' or "..." (escapes kept).
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def reason(exc: BaseException, value: Any = None) -> str:
    """The first line of ``exc``'s text for an error that ``value`` caused. Library errors quote the
    value they could not read ("invalid literal for int() with base 10: 'abc'", Arrow's "Failed to
    parse string: 'abc' as a scalar of type int32"); without previews the value's text and every
    quoted run are replaced by '…', so the reason stays and the value goes; with previews a quoted
    run is cut after ``PREVIEW_CHARS``."""
    text = str(exc).split("\n", 1)[0]
    if _previews:  # values shown, each cut as ``preview`` cuts them
        return _QUOTED.sub(lambda m: m[0] if len(m[0]) <= PREVIEW_CHARS else m[0][:PREVIEW_CHARS] + "…", text)
    if isinstance(value, str | bytes | bytearray | int | float | Decimal) and not isinstance(value, bool):
        # (a list or an object is quoted in the text, if at all, as its items are)
        try:
            shown = value.decode("utf-8", "replace") if isinstance(value, bytes | bytearray) else str(value)
        except ValueError:  # an int of more digits than str() writes
            shown = ""
        for part in {shown, shown.strip()}:
            if part:
                text = re.sub(rf"(?<![\w.]){re.escape(part)}(?![\w.])", "…", text, flags=re.IGNORECASE)
    return _QUOTED.sub("'…'", text)


_DDL_WORDS = frozenset(
    {"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "TABLE", "DATABASE", "SCHEMA", "INDEX", "VIEW", "TEMPORARY"}
)
_LEADING_COMMENT = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*|#[^\n]*\n\s*)*", re.DOTALL)


def ddl_fields(text: str) -> dict[str, Any]:
    """Log fields for a DDL statement: its kind ("ALTER TABLE", from MySQL's keywords only) and
    length, or with previews on the statement itself (``ddl``)."""
    if _previews:
        return {"ddl": text}
    words = _LEADING_COMMENT.sub("", text, count=1).split(None, 3)[:3]
    kind = []
    for word in words:
        if word.upper() not in _DDL_WORDS:
            break
        kind.append(word.upper())
    return {"ddl_kind": " ".join(kind) or "other", "ddl_chars": len(text)}
