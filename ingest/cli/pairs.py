"""``--xxx-conf key=value`` arguments as a mapping (the last value of a repeated key wins)."""

from __future__ import annotations


def key_values(values: list[str] | None, option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--{option} expects key=value, got '{item}'")
        out[key.strip()] = value
    return out
