"""The value a STRING column holds for a parsed value: the conversion the sink applies (shared by the
format tests and their Paimon-sample replays)."""

from __future__ import annotations

from typing import Any

from schema_evolution.conversion import convert_column
from schema_evolution.types import string


def as_string(column: str, value: Any) -> str | None:
    result: str | None = convert_column(column, [value], string()).to_pylist()[0]
    return result
