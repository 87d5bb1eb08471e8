"""Paimon's option value texts: whole numbers, and whole numbers with a unit ("128 mb", "30 min")."""

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
