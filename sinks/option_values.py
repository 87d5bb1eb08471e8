"""Paimon's option value texts: a whole number with a unit, as in "128 mb" or "30 min"."""

from __future__ import annotations

import re
from collections.abc import Mapping

_QUANTITY = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")


def parse_quantity(text: str, units: Mapping[str, int], option: str, kind: str, example: str) -> int:
    """``text`` times its unit's factor; a ValueError naming the option otherwise."""
    match = _QUANTITY.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in units:
        raise ValueError(f"table option {option}='{text}' is not a {kind}; write e.g. {example}")
    return int(match.group(1)) * units[unit]
