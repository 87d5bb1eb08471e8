"""Which Paimon table a source table's changes go to (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class TableRouter:
    """``kafka-sync-table`` sends every change to one table; ``kafka-sync-database`` maps source
    table ``t`` to ``<database>.<prefix>t<suffix>``, keeping those ``including`` matches and
    ``excluding`` does not (full-match regular expressions, as in Paimon)."""

    database: str
    table: str | None = None  # set for kafka-sync-table
    prefix: str = ""
    suffix: str = ""
    including: str = ".*"
    excluding: str | None = None

    @cached_property
    def _including(self) -> re.Pattern[str]:
        return re.compile(self.including)

    @cached_property
    def _excluding(self) -> re.Pattern[str] | None:
        return re.compile(self.excluding) if self.excluding else None

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
        target = routes[key] = self._route(source_database, source_table)
        return target

    def _route(self, source_database: str | None, source_table: str | None) -> str | None:
        if self.table is not None:
            return f"{self.database}.{self.table}"
        if not source_table:
            return None
        if not self._including.fullmatch(source_table):
            return None
        if self._excluding is not None and self._excluding.fullmatch(source_table):
            return None
        return f"{self.database}.{self.prefix}{source_table}{self.suffix}"
