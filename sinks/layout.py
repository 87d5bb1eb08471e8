"""What a writer task needs to know about a target table, small enough to ship to executors."""

from __future__ import annotations

import json
from dataclasses import dataclass

from schema_evolution.types import PaimonType, parse_type


@dataclass(frozen=True, slots=True)
class TableLayout:
    """A Paimon table's columns (schema order), keys and schema id, as the driver last saw them."""

    identifier: str  # "database.table"
    fields: tuple[tuple[str, PaimonType], ...]
    primary_keys: tuple[str, ...]
    partition_keys: tuple[str, ...]
    schema_id: int
    # Why the table's merge engine cannot take -U/-D rows (None: it can): see MergeOptions.
    refuses_retractions: str | None = None
    comments: tuple[tuple[str, str], ...] = ()  # column descriptions (non-empty ones)
    table_comment: str | None = None
    # The table's options as loaded (the driver checks --table-conf and wide-table options against
    # them without reading the table again).
    options: tuple[tuple[str, str], ...] = ()

    @property
    def has_primary_key(self) -> bool:
        return bool(self.primary_keys)

    def field_types(self) -> dict[str, PaimonType]:
        return dict(self.fields)


@dataclass(frozen=True, slots=True)
class RecordSchema:
    """The columns of the rows in one chunk (after type mapping), with the source's keys.

    Serialised as JSON into each chunk so the driver can evolve tables from a handful of
    distinct schemas without looking at any row.
    """

    fields: tuple[tuple[str, PaimonType], ...]
    primary_keys: tuple[str, ...]
    source_table: str  # "db.table" as the message named it, for messages and errors
    comments: tuple[tuple[str, str], ...] = ()  # the source's column comments (non-empty ones)
    table_comment: str | None = None

    def to_json(self) -> str:
        body: dict[str, object] = {
            "fields": [[n, t.sql()] for n, t in self.fields],
            "primary_keys": list(self.primary_keys),
            "source_table": self.source_table,
        }
        if self.comments:
            body["comments"] = [list(c) for c in self.comments]
        if self.table_comment is not None:
            body["table_comment"] = self.table_comment
        return json.dumps(body, separators=(",", ":"))

    def lowercased(self, table: str) -> RecordSchema:
        """The schema a case-insensitive catalog (``case-sensitive=false``) gets: every column and
        key name in lower case, as Paimon's CDC actions convert them; ``ValueError`` (Paimon's
        message) when two columns then share a name."""
        names = [n.lower() for n, _ in self.fields]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(
                f"Table {table} contains duplicate columns: {duplicates}.\nPossible causes are: 1. computed "
                f"columns or metadata columns contain duplicate fields; 2. the catalog is case-insensitive and "
                f"the table columns duplicate after they are all converted to lower-case."
            )
        return RecordSchema(
            tuple((n.lower(), t) for n, t in self.fields),
            tuple(k.lower() for k in self.primary_keys),
            self.source_table,
            tuple((n.lower(), c) for n, c in self.comments),
            self.table_comment,
        )

    @staticmethod
    def from_json(text: str) -> RecordSchema:
        d = json.loads(text)
        return RecordSchema(
            tuple((n, parse_type(t)) for n, t in d["fields"]),
            tuple(d["primary_keys"]),
            d["source_table"],
            tuple((n, c) for n, c in d.get("comments", ())),
            d.get("table_comment"),
        )
