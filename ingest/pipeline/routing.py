"""Which Paimon table a source table's changes go to (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class TableRouter:
    """Routes a source ``database.table`` to a Paimon table, with Paimon's precedence.

    ``kafka-sync-table`` (``table`` set) sends every change to one table. ``kafka-sync-database``
    keeps tables whose name ``including`` matches and ``excluding`` does not, and databases likewise
    (``including_dbs`` / ``excluding_dbs``) — all full-match regular expressions, excluding winning —
    and names the target ``table_mapping[t]`` if given, else ``prefix + t + suffix`` where a
    per-database prefix/suffix (``prefix_db`` / ``suffix_db``) replaces the global one.
    """

    database: str
    table: str | None = None  # set for kafka-sync-table
    prefix: str = ""
    suffix: str = ""
    including: str = ".*"
    excluding: str | None = None
    including_dbs: str = ".*"
    excluding_dbs: str | None = None
    table_mapping: dict[str, str] = field(default_factory=dict)
    prefix_db: dict[str, str] = field(default_factory=dict)
    suffix_db: dict[str, str] = field(default_factory=dict)
    # mysql-sync-database --merge-shards false: the same table name in several databases stays
    # apart, as ``<db>_<table>``
    merge_shards: bool = True
    # A case-insensitive catalog (--catalog-conf case-sensitive=false) gets lower-case table names.
    case_sensitive: bool = True

    @cached_property
    def _patterns(self) -> tuple[re.Pattern[str], re.Pattern[str] | None, re.Pattern[str], re.Pattern[str] | None]:
        return (
            re.compile(self.including),
            re.compile(self.excluding) if self.excluding else None,
            re.compile(self.including_dbs),
            re.compile(self.excluding_dbs) if self.excluding_dbs else None,
        )

    @cached_property
    def _routes(self) -> dict[tuple[str | None, str | None], str | None]:
        return {}

    def route(self, source_database: str | None, source_table: str | None) -> str | None:
        """The target ``database.table``, or None when the source table is not synced."""
        key = (source_database, source_table)
        routes = self._routes
        if key in routes:  # called per event: remember each source table's answer
            return routes[key]
        if len(routes) > 100_000:
            routes.clear()
        target = self._route(source_database, source_table)
        if target is not None and not self.case_sensitive:
            target = target.lower()
        routes[key] = target
        return target

    def _route(self, source_database: str | None, source_table: str | None) -> str | None:
        if self.table is not None:
            return f"{self.database}.{self.table}"
        if not source_table:
            return None
        including, excluding, including_dbs, excluding_dbs = self._patterns
        if not including.fullmatch(source_table) or (excluding is not None and excluding.fullmatch(source_table)):
            return None
        db = source_database or ""
        if not including_dbs.fullmatch(db) or (excluding_dbs is not None and excluding_dbs.fullmatch(db)):
            return None
        mapped = self.table_mapping.get(source_table)
        if mapped is not None:
            return f"{self.database}.{mapped}"
        prefix = self.prefix_db.get(db, self.prefix)
        suffix = self.suffix_db.get(db, self.suffix)
        name = source_table if self.merge_shards else f"{db}_{source_table}"
        return f"{self.database}.{prefix}{name}{suffix}"
