"""The benchmark workload: canal-json change messages of one 10-column table, ~600 bytes each,
50% inserts / 40% updates / 10% deletes over a fixed key space, deterministic for a seed."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

import orjson

MYSQL_TYPES = {
    "id": "bigint",
    "customer": "varchar(64)",
    "status": "varchar(16)",
    "amount": "decimal(12,2)",
    "quantity": "int",
    "price": "double",
    "created": "datetime(3)",
    "updated": "timestamp(3)",
    "is_paid": "tinyint(1)",
    "note": "varchar(255)",
}
_STATUS = ("new", "paid", "shipped", "delivered", "returned")


def _row(key: int, version: int, rnd: random.Random) -> dict[str, str]:
    return {
        "id": str(key),
        "customer": f"customer-{rnd.randrange(1_000_000):07d}@example.com",
        "status": _STATUS[version % len(_STATUS)],
        "amount": f"{rnd.randrange(10_000_000) / 100:.2f}",
        "quantity": str(rnd.randrange(1, 1000)),
        "price": repr(rnd.random() * 1000),
        "created": f"2024-0{1 + key % 9}-1{key % 10} 1{key % 10}:2{version % 10}:3{key % 10}.{key % 1000:03d}",
        "updated": f"2024-0{1 + version % 9}-2{version % 10} 0{version % 10}:4{key % 10}:5{version % 10}.123",
        "is_paid": str(version % 2),
        "note": "lorem ipsum dolor sit amet, consectetur adipiscing elit " + str(version),
    }


def messages(count: int, keys: int = 200_000, seed: int = 42) -> Iterator[tuple[bytes, bytes]]:
    """``count`` (key, value) messages: inserts of new keys, updates and deletes of live ones."""
    rnd = random.Random(seed)
    live: list[int] = []
    position: dict[int, int] = {}
    rows: dict[int, dict[str, str]] = {}
    versions: dict[int, int] = {}
    next_key = 0
    for i in range(count):
        roll = rnd.random()
        if ((roll < 0.5 or len(live) < 100) and next_key < keys) or not live:
            key = next_key
            next_key += 1
            versions[key] = 0
            row = _row(key, 0, rnd)
            body = {"type": "INSERT", "data": [row], "old": None}
            position[key] = len(live)
            live.append(key)
        elif roll < 0.9:
            key = live[rnd.randrange(len(live))]
            versions[key] += 1
            row = _row(key, versions[key], rnd)
            before = rows[key]
            body = {"type": "UPDATE", "data": [row], "old": [{k: v for k, v in before.items() if row[k] != v}]}
        else:
            key = live[rnd.randrange(len(live))]
            row = rows.pop(key)
            last = live.pop()
            if last != key:
                live[position[key]] = last
                position[last] = position[key]
            del position[key]
            body = {"type": "DELETE", "data": [row], "old": None}
            yield str(key).encode(), _message(body, i)
            continue
        rows[key] = row
        yield str(key).encode(), _message(body, i)


def _message(body: Mapping[str, object], i: int) -> bytes:
    return orjson.dumps(
        {
            **body,
            "database": "shop",
            "table": "orders",
            "es": 1_700_000_000_000 + i,
            "ts": 1_700_000_000_000 + i,
            "id": i,
            "isDdl": False,
            "mysqlType": MYSQL_TYPES,
            "pkNames": ["id"],
            "sql": "",
        }
    )
