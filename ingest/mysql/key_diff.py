"""The read-task side of a re-snapshot (``ingest.mysql.resnapshot``): which of a Paimon table's keys
in a chunk's range the source no longer has, so that the chunk deletes them before it upserts its
rows.

Keys are compared in Paimon's stored form: the driver maps each of the Paimon table's primary-key
columns to the source column it is written from (``KeyScan.columns``; a key that is a computed
column or has no source column is refused there) and allows only key types whose stored value is the
source's value itself (integers, strings) or its decimal text (an integer column written as a string,
``--type-mapping to-string``). A chunk reads Paimon's keys by the Paimon column its range is on
(``split``: an integer key column written as it is); a table whose split column is not such a key is
read as one chunk and compares every key.

The chunk's deletes come before its rows, in one read task, so they reach the table's writers first:
a key compared as gone that the chunk's rows do hold (a stored form the comparison did not foresee)
is deleted and written again, never lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ingest.mysql.spec import Chunk, ChunkPartition


@dataclass(frozen=True)
class KeyScan:
    """How a re-snapshot chunk reads and compares one Paimon table's keys."""

    warehouse: str
    table: str  # the Paimon table, "database.table"
    keys: tuple[str, ...]  # its primary-key columns
    columns: tuple[str, ...]  # the source column each is written from
    as_text: tuple[bool, ...]  # stored as the decimal text of the source's integer
    split: str | None  # the Paimon column the chunks' ranges are on (None: the table is one chunk)
    # (Paimon column, source column) of every stored column written from a source column
    values: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "warehouse": self.warehouse,
            "table": self.table,
            "keys": list(self.keys),
            "columns": list(self.columns),
            "as_text": list(self.as_text),
            "split": self.split,
            "values": [list(v) for v in self.values],
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> KeyScan:
        return KeyScan(
            str(d["warehouse"]),
            str(d["table"]),
            tuple(d["keys"]),
            tuple(d["columns"]),
            tuple(bool(x) for x in d["as_text"]),
            d["split"],
            tuple((str(p), str(s)) for p, s in d.get("values", ())),
        )

    def stored_key(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        """The Paimon key a source row is written under."""
        return tuple(
            str(row[c]) if text and row[c] is not None else row[c]
            for c, text in zip(self.columns, self.as_text, strict=True)
        )

    def source_key(self, key: tuple[Any, ...]) -> dict[str, Any]:
        """A delete's before-image: the source columns of a stored key (other columns are null)."""
        pairs = zip(self.columns, key, self.as_text, strict=True)
        return {c: int(v) if text and v is not None else v for c, v, text in pairs}


@dataclass(frozen=True)
class ResnapshotChunkPartition(ChunkPartition):
    scan: KeyScan | None = None  # None: the Paimon table does not exist (no key to delete)


def gone_keys(scan: KeyScan, chunk: Chunk, rows: Mapping[Any, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The before-images (source columns, the stored values) of the rows Paimon holds in ``chunk``'s
    range whose key none of ``rows`` (the chunk's rows as of its high watermark) is written under."""
    from sinks.table.key_scan import rows_in_range

    held = set(map(scan.stored_key, rows.values()))
    lo, hi = (chunk.lo, chunk.hi) if scan.split is not None else (None, None)
    gone = []
    for row in rows_in_range(scan.warehouse, scan.table, scan.split, lo, hi):
        key = tuple(row[k] for k in scan.keys)
        if key not in held:
            gone.append({**{source: row.get(stored) for stored, source in scan.values}, **scan.source_key(key)})
    return gone
