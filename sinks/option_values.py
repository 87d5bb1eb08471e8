"""Paimon's option value texts: whole numbers, and whole numbers with a unit ("128 mb", "30 min"); the one
duration parser (Paimon/Flink spellings) and the one memory-size parser."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import overload

_QUANTITY = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")


def parse_quantity(text: str, units: Mapping[str, int], option: str, kind: str, example: str) -> int:
    """``text`` times its unit's factor; a ValueError naming the option otherwise."""
    match = _QUANTITY.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in units:
        raise ValueError(f"table option {option}='{text}' is not a {kind}; write e.g. {example}")
    return int(match.group(1)) * units[unit]


@overload
def whole_number(options: Mapping[str, str], key: str, default: int, minimum: int | None = None) -> int: ...
@overload
def whole_number(options: Mapping[str, str], key: str, default: None, minimum: int | None = None) -> int | None: ...
def whole_number(options: Mapping[str, str], key: str, default: int | None, minimum: int | None = None) -> int | None:
    """The option's whole-number value (``default`` when unset); a ValueError naming it otherwise."""
    text = options.get(key)
    if text is None:
        return default
    try:
        value = int(str(text).strip())
    except ValueError:
        raise ValueError(f"table option {key}='{text}' is not a whole number") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"table option {key} must be at least {minimum}, got {value}")
    return value


_DURATION_UNITS_MS = {
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "secs": 1000,
    "second": 1000,
    "seconds": 1000,
    "": 1,  # Paimon: a bare number is milliseconds
    "m": 60_000,
    "min": 60_000,
    "mins": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}


def parse_duration_ms(text: str, option: str) -> int:
    """Paimon's duration text ("1 h", "30min", "10 s", "7d", "500ms") in milliseconds."""
    return parse_quantity(text, _DURATION_UNITS_MS, option, "duration", "'1 h', '30 min' or '7 d'")


_MEMORY_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def parse_memory_size(text: str, option: str) -> int:
    """Paimon's MemorySize text ("128 mb", "64kb", "1048576") as bytes."""
    return parse_quantity(text, _MEMORY_UNITS, option, "size", "'128 mb' or '64kb'")
