"""Shared source schemas for formats that carry no types (every column STRING).

Messages of one table repeat the same column names and keys; one ``SourceSchema`` object per
distinct pair keeps memory flat and lets the chunk builder compare schemas by identity.
"""

from __future__ import annotations

from formats.events import SourceSchema, TypeSystem

_CACHE: dict[tuple[tuple[str, ...], tuple[str, ...]], SourceSchema] = {}
_CACHE_LIMIT = 4096


def string_schema(names: tuple[str, ...], primary_keys: tuple[str, ...] = ()) -> SourceSchema:
    """The (shared) STRING-typed schema of columns ``names`` with ``primary_keys``."""
    key = (names, primary_keys)
    schema = _CACHE.get(key)
    if schema is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        schema = _CACHE[key] = SourceSchema(tuple((n, None) for n in names), primary_keys, TypeSystem.STRING)
    return schema
