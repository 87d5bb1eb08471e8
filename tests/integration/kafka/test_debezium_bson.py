"""debezium-bson end to end: MongoDB change events (Debezium's MongoDB connector shape) through the real
broker and Spark into Paimon tables of STRING columns keyed by ``_id``, read back with pypaimon-rust and
pypaimon."""

from __future__ import annotations

import json
import random
from typing import Any

from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import run
from tests.integration.kafka.test_sync import _settings as sync_settings
from tests.paimon_read import paimon_schema, read_pypaimon, read_rust


def _message(op: str, collection: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> bytes:
    source = {"version": "2.7.3.Final", "connector": "mongodb", "name": "mongo1", "ts_ms": 1764201600000}
    source |= {"snapshot": "false", "db": "shop", "collection": collection, "ord": 1}
    payload = {
        "before": None if before is None else json.dumps(before),
        "after": None if after is None else json.dumps(after),
        "updateDescription": None,
        "source": source,
        "op": op,
        "ts_ms": 1764201600100,
        "transaction": None,
    }
    return json.dumps(payload).encode()


def _oid(n: int) -> str:
    return f"6746f2a05c0d5ac87eb8{n:04x}"


def _stream(seed: int) -> tuple[list[tuple[bytes | None, bytes | None]], dict[str, dict[str, dict[str, str]]]]:
    """(key, value) messages over two collections and the rows Paimon should end with per collection."""
    rng = random.Random(seed)
    messages: list[tuple[bytes | None, bytes | None]] = []
    docs: dict[str, dict[int, dict[str, Any]]] = {"orders": {}, "users": {}}
    for step in range(300):
        collection = rng.choice(("orders", "users"))
        live = docs[collection]
        n = rng.randrange(40)
        key = json.dumps({"id": json.dumps({"$oid": _oid(n)})}).encode()
        if n not in live:
            doc: dict[str, Any] = {"_id": {"$oid": _oid(n)}, "qty": rng.randrange(100)}
            doc["price"] = {"$numberDecimal": f"{n}.50"}
            live[n] = doc
            messages.append((key, _message("c", collection, None, doc)))
        elif rng.random() < 0.25:
            before = live.pop(n)
            with_pre_image = rng.random() < 0.5
            messages.append((key, _message("d", collection, before if with_pre_image else None, None)))
        else:
            before = live[n]
            after = dict(before, qty=rng.randrange(100), note=f"step {step}")
            if rng.random() < 0.3:
                after["at"] = {"$date": {"$numberLong": str(1764201600000 + step)}}
            live[n] = after
            with_pre_image = rng.random() < 0.5
            messages.append((key, _message("u", collection, before if with_pre_image else None, after)))
    expected: dict[str, dict[str, dict[str, str]]] = {}
    for collection, live in docs.items():
        expected[collection] = {}
        for n, doc in live.items():
            row = {"_id": _oid(n), "qty": str(doc["qty"]), "price": f"{n}.50"}
            if "note" in doc:
                row["note"] = doc["note"]
            if "at" in doc:
                row["at"] = doc["at"]["$date"]["$numberLong"]
            expected[collection][_oid(n)] = row
    return messages, expected


def _settings(warehouse: str, kafka: LocalKafka, topic: str, **extra: Any) -> SyncSettings:
    extra.setdefault("max_offsets_per_trigger", 70)
    return sync_settings(warehouse, kafka, topic, "debezium-bson", **extra)


def _rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {r["_id"]: {k: v for k, v in r.items() if v is not None} for r in rows}


def test_database_sync_applies_inserts_updates_and_deletes(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    messages, expected = _stream(seed=26)
    kafka.produce(topic_name, [(k, v) for k, v in messages if v is not None])
    result = run(_settings(warehouse, kafka, topic_name))
    assert result.stats.batches >= 3
    for collection in ("orders", "users"):
        table = f"ods.{collection}"
        assert _rows(read_rust(warehouse, table)) == expected[collection]
        assert _rows(read_pypaimon(warehouse, table)) == expected[collection]
        schema = dict(paimon_schema(warehouse, table))
        assert set(schema) == {"_id", "qty", "price", "note", "at"}
        assert schema["_id"].startswith("STRING") and "NOT NULL" in schema["_id"]
        assert all(t.startswith("STRING") for t in schema.values())


def test_table_sync_into_one_table(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    messages, expected = _stream(seed=7)
    orders = [(k, v) for k, v in messages if v is not None and b'"collection": "orders"' in v]
    kafka.produce(topic_name, orders)
    run(_settings(warehouse, kafka, topic_name, action="kafka-sync-table", table="orders_copy"))
    assert _rows(read_rust(warehouse, "ods.orders_copy")) == expected["orders"]
