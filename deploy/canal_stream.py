"""A synthetic canal-json change stream with a known final state, for the demo, tests and benchmarks.

Each source table has an ``id`` primary key; the stream inserts keys, updates them many times
across the stream and deletes some. ``expected`` holds the final state the Paimon table must
equal, and ``changes`` every row change in order, so a test can check the changelog too.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson

MYSQL_TYPES = {"id": "int", "name": "varchar(64)", "amount": "decimal(12,2)", "updated": "datetime(3)", "qty": "int"}


@dataclass
class CanalStream:
    database: str = "shop"
    messages: list[tuple[bytes, bytes]] = field(default_factory=list)  # (key, value)
    # per message: (table, [(row kind, row image), ...]) — what the message must do to the table
    effects: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = field(default_factory=list)

    def prefix(self, n: int) -> CanalStream:
        """The stream of the first ``n`` messages."""
        return CanalStream(self.database, self.messages[:n], self.effects[:n])

    @property
    def tables(self) -> list[str]:
        return list(dict.fromkeys(t for t, _ in self.effects))

    @property
    def changes(self) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """Every row change per table, in order: the changelog the Paimon table must hold."""
        out: dict[str, list[tuple[str, dict[str, Any]]]] = {t: [] for t in self.tables}
        for table, effect in self.effects:
            out[table].extend(effect)
        return out

    @property
    def expected(self) -> dict[str, dict[int, dict[str, Any]]]:
        """The final state per table (by ``id``) after all messages."""
        state: dict[str, dict[int, dict[str, Any]]] = {t: {} for t in self.tables}
        for table, effect in self.effects:
            for kind, row in effect:
                if kind in ("+I", "+U"):
                    state[table][int(row["id"])] = row
                elif kind == "-D":
                    state[table].pop(int(row["id"]), None)
        return state

    def message(self, table: str, op: str, rows: list[dict[str, Any]], old: list[dict[str, Any]] | None) -> None:
        body = {
            "data": [{k: (None if v is None else str(v)) for k, v in r.items()} for r in rows],
            "database": self.database,
            "es": 1700000000000 + len(self.messages),
            "id": len(self.messages),
            "isDdl": False,
            "mysqlType": MYSQL_TYPES,
            "old": None if old is None else [{k: (None if v is None else str(v)) for k, v in o.items()} for o in old],
            "pkNames": ["id"],
            "sql": "",
            "table": table,
            "ts": 1700000000000 + len(self.messages),
            "type": op,
        }
        key = f"{table}:{rows[0]['id']}".encode()
        self.messages.append((key, orjson.dumps(body)))


def _row(i: int, version: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"item-{i}-v{version}",
        "amount": f"{(i * 7 + version) % 100000}.{version % 100:02d}",
        "updated": f"2024-01-01 00:00:{version % 60:02d}.{i % 1000:03d}",
        "qty": version,
    }


def generate(
    tables: tuple[str, ...] = ("orders", "customers"),
    keys: int = 200,
    updates: int = 5,
    delete_every: int = 7,
    seed: int = 7,
    database: str = "shop",
) -> CanalStream:
    """Insert ``keys`` rows per table, update each ``updates`` times (interleaved across tables and
    keys), then delete every ``delete_every``-th key."""
    rnd = random.Random(seed)
    stream = CanalStream(database=database)
    state: dict[str, dict[int, dict[str, Any]]] = {t: {} for t in tables}
    ops: list[tuple[str, int, int]] = []
    for v in range(updates + 1):
        batch = [(t, i, v) for t in tables for i in range(keys)]
        rnd.shuffle(batch)
        ops.extend(batch)
    for table, i, version in ops:
        row = _row(i, version)
        if version == 0:
            stream.message(table, "INSERT", [row], None)
            stream.effects.append((table, [("+I", row)]))
        else:
            before = state[table][i]
            changed = {k: before[k] for k in before if before[k] != row[k]}
            stream.message(table, "UPDATE", [row], [changed])
            stream.effects.append((table, [("-U", before), ("+U", row)]))
        state[table][i] = row
    for table in tables:
        for i in range(0, keys, delete_every):
            stream.message(table, "DELETE", [state[table][i]], None)
            stream.effects.append((table, [("-D", state[table][i])]))
            del state[table][i]
    return stream


def typed(row: dict[str, Any]) -> dict[str, Any]:
    """An expected row (canal's text values) as the Paimon readers return it."""
    return {
        "id": int(row["id"]),
        "name": row["name"],
        "amount": Decimal(row["amount"]).quantize(Decimal("0.01")),
        "updated": dt.datetime.fromisoformat(row["updated"]),
        "qty": int(row["qty"]),
    }


def partition_by_key(partitions: int) -> Any:
    """Route a message to a partition by its key, as canal does with a primary-key hash."""
    import zlib

    return lambda key, value: zlib.crc32(key) % partitions
