"""Which Paimon table a source table's changes go to (pure), and whether its name is safe.

Source table names are untrusted (messages, the MySQL server): a routed name that could not be a
Paimon table's directory (``schema_evolution.identifiers``) is refused with ``UnsafeNameError``, a
``MalformedMessage`` without a position (the router does not know it: the caller adds it with
``UnsafeNameError.at``). The names given on the command line are checked when the router is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from schema_evolution.identifiers import UnsafeNameError, check_name, unsafe_reason


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

    def __post_init__(self) -> None:
        """Start-up check of the names from the command line: the target database, the one table of
        a table sync, the mapped names and what the prefixes and suffixes add to every name."""
        name = self._cased
        check_name(name(self.database), "database", "--database")
        if self.table is not None:
            check_name(name(self.table), "table", "--table")
        for source, target in self.table_mapping.items():
            check_name(name(target), "table", f"--table-mapping {source}={target}")
        affixes = [("--table-prefix / --table-suffix", self.prefix, self.suffix)]
        for db in sorted({*self.prefix_db, *self.suffix_db}):
            prefix, suffix = self.prefix_db.get(db, self.prefix), self.suffix_db.get(db, self.suffix)
            affixes.append((f"--table-prefix-db / --table-suffix-db of database {db}", prefix, suffix))
        for option, prefix, suffix in affixes:
            if prefix or suffix:  # with a one-letter table name: what the affixes alone make of it
                check_name(name(f"{prefix}t{suffix}"), "table", option)

    def _cased(self, name: str) -> str:
        return name if self.case_sensitive else name.lower()

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

    @cached_property
    def _refused(self) -> dict[tuple[str | None, str | None], tuple[str, str, str]]:
        """Source tables whose target name is unsafe: (target table, reason, source table)."""
        return {}

    def route(self, source_database: str | None, source_table: str | None) -> str | None:
        """The target ``database.table``, or None when the source table is not synced;
        ``UnsafeNameError`` (no position) when the target table's name is not safe."""
        key = (source_database, source_table)
        routes = self._routes
        if key in routes:  # called per event: remember each source table's answer (safe ones only)
            return routes[key]
        refused = self._refused.get(key)
        if refused is None:
            if len(routes) > 100_000:
                routes.clear()
            target = self._route(source_database, source_table)
            if target is not None and not self.case_sensitive:
                target = target.lower()
            reason = None if target is None else unsafe_reason(target.split(".", 1)[1], "table")
            if reason is None:
                routes[key] = target
                return target
            assert target is not None
            if len(self._refused) > 10_000:  # a stream of ever new bad names must not grow it without end
                self._refused.clear()
            source = str(source_table) if source_database is None else f"{source_database}.{source_table}"
            refused = self._refused[key] = (target.split(".", 1)[1], reason, source)
        name, reason, source = refused
        raise UnsafeNameError("table", name, reason, source)

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
