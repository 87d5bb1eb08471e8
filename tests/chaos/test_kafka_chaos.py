"""Kafka chaos: a kafka-sync-database job SIGKILLed at random moments while a producer keeps
writing canal-json changes (inserts, updates, deletes and re-inserts on a few thousand keys of two
tables, over three partitions, with a column added and a column widened mid-stream), restarted from
its checkpoint each time, then caught up with ``--available-now``.

Afterwards: both tables equal the model of the produced changes (pypaimon-rust and pypaimon), the
changelog holds every change exactly once in per-key order, no commit identifier appears twice, and
after ``remove-orphan-files`` every file on disk is named by a snapshot.

Sizes: ``LAKECDC_CHAOS_KILLS`` (default 3), ``LAKECDC_CHAOS_CHANGES`` (default 20,000 messages),
``LAKECDC_CHAOS_KEYS`` (default 3,000 per table); ``make chaos`` runs 20 kills over 200,000. The short
form's last kill comes after a commit whenever no earlier one did (see ``KillLoop.kill_once``)."""

from __future__ import annotations

import random
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from deploy.local_kafka import LocalKafka
from tests.chaos.harness import (
    KillLoop,
    assert_every_file_referenced,
    assert_no_commit_twice,
    env_int,
    read_changelog_pypaimon,
    remove_orphans,
    seeded_rng,
)
from tests.paimon_read import read_pypaimon, read_rust

TABLES = ("orders", "customers")
PARTITIONS = 3
# The source schema over the stream: a column added at one third, qty widened to BIGINT at two thirds.
PHASES = (
    {"id": "int", "name": "varchar(64)", "qty": "int"},
    {"id": "int", "name": "varchar(64)", "qty": "int", "note": "varchar(32)"},
    {"id": "int", "name": "varchar(64)", "qty": "bigint", "note": "varchar(32)"},
)
# Local mode that retries a failed task (a Python worker too slow to connect back on a loaded machine).
SPARK_MASTER = "spark.master=local[2,4]"
KILLS, CHANGES = env_int("LAKECDC_CHAOS_KILLS", 3), env_int("LAKECDC_CHAOS_CHANGES", 20_000)
Change = tuple[str, str, int, str | None]  # (row kind, name, qty, note)


class Source:
    """The changes made to the two source tables, as canal-json messages, with the state and the
    per-key changelog they must give."""

    def __init__(self, rng: random.Random, keys: int, total: int) -> None:
        self.rng, self.keys, self.total, self.made = rng, keys, total, 0
        self.state: dict[str, dict[int, dict[str, Any]]] = {t: {} for t in TABLES}
        self.changes: dict[str, dict[int, list[Change]]] = {t: defaultdict(list) for t in TABLES}

    def next(self) -> tuple[bytes, bytes]:
        n = self.made
        self.made += 1
        phase = PHASES[min(2, n * 3 // self.total)]
        table, key = self.rng.choice(TABLES), self.rng.randrange(self.keys)
        before = self.state[table].get(key)
        row = {
            "id": key,
            "name": f"{table[0]}{key}-{n}",
            "qty": n + (3_000_000_000 if phase["qty"] == "bigint" else 0),
            "note": f"n{n}" if "note" in phase and self.rng.random() < 0.9 else None,
        }
        if "note" not in phase:
            del row["note"]
        changes = self.changes[table][key]
        if before is None:
            op, data, old = "INSERT", row, None
            changes.append(("+I", *_image(row)))
            self.state[table][key] = row
        elif self.rng.random() < 0.8:
            op, data = "UPDATE", row
            old = {c: before.get(c) for c in phase if c != "id" and before.get(c) != row.get(c)}
            changes += [("-U", *_image(before)), ("+U", *_image(row))]
            self.state[table][key] = row
        else:
            op, data, old = "DELETE", {c: before.get(c) for c in phase}, None
            changes.append(("-D", *_image(before)))
            del self.state[table][key]
        body = {
            "data": [_text(data)], "database": "shop", "es": 1700000000000 + n, "id": n, "isDdl": False,
            "mysqlType": phase, "old": None if old is None else [_text(old)], "pkNames": ["id"], "sql": "",
            "table": table, "ts": 1700000000000 + n, "type": op,
        }  # fmt: skip
        return f"{table}:{key}".encode(), orjson.dumps(body)

    def expected(self, table: str) -> list[dict[str, Any]]:
        state = self.state[table]
        return [{"id": k, **dict(zip(("name", "qty", "note"), _image(state[k]), strict=True))} for k in sorted(state)]


def _image(row: dict[str, Any]) -> tuple[str, int, str | None]:
    return row["name"], row["qty"], row.get("note")


def _text(row: dict[str, Any]) -> dict[str, str | None]:
    return {k: None if v is None else str(v) for k, v in row.items()}


def _partition(key: bytes | None, value: bytes) -> int:
    return zlib.crc32(key or b"") % PARTITIONS


def _produce(
    kafka: LocalKafka, topic: str, source: Source, runs: int, started: Callable[[], int], errors: list[BaseException]
) -> None:
    """All the changes, in ten chunks per job run, a second or two apart, while that run is up
    (``started()`` runs so far); whatever is left once the kills are done (``started() > runs``)."""
    try:
        chunks = runs * 10
        for i in range(chunks):
            while i >= started() * 10 and started() <= runs:
                time.sleep(0.2)
            size = source.total * (i + 1) // chunks - source.made
            kafka.produce(topic, [source.next() for _ in range(size)], _partition)
            if started() <= runs:
                time.sleep(1.5)
    except BaseException as e:  # reported by the test
        errors.append(e)


def _argv(warehouse: str, kafka: LocalKafka, topic: str) -> list[str]:
    import sys

    return [
        sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", warehouse, "--database", "ods",
        "--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}", "--kafka_conf", f"topic={topic}",
        "--kafka_conf", "value.format=canal-json", "--trigger-interval", "1s", "--max-offsets-per-trigger", "3000",
        "--parallel-write-min-rows", "0", "--spark-conf", SPARK_MASTER,
    ]  # fmt: skip


@pytest.mark.timeout(900 + 240 * KILLS + CHANGES // 100)
def test_kafka_job_killed_at_random_moments_ends_exact(kafka: LocalKafka, tmp_path: Path, topic_name: str) -> None:
    started = time.monotonic()
    kills, total = KILLS, CHANGES
    rng, _ = seeded_rng("kafka")
    source = Source(random.Random(rng.random()), env_int("LAKECDC_CHAOS_KEYS", 3000), total)
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, PARTITIONS)
    tables = [Path(warehouse) / "ods.db" / t for t in TABLES]
    logs = tmp_path / "logs"
    logs.mkdir()
    loop = KillLoop(
        _argv(warehouse, kafka, topic_name),
        logs,
        lambda: sum(len(list((t / "snapshot").glob("snapshot-*"))) for t in tables),
    )
    errors: list[BaseException] = []
    runs = [0]
    producer = threading.Thread(target=_produce, args=(kafka, topic_name, source, kills, lambda: runs[0], errors))
    producer.start()
    try:
        for i in range(kills):
            runs[0] += 1
            loop.kill_once(rng, (0.0, 15.0), last=i == kills - 1)
    finally:
        runs[0] = kills + 1
        producer.join()
    assert not errors, errors
    done = loop.finish("--available-now", "true")
    assert loop.progress_at_kill[-1] > 0, "no kill came after a commit"
    orphans = remove_orphans(warehouse, "ods")
    checked = 0
    for table in TABLES:
        expected = source.expected(table)
        assert read_rust(warehouse, f"ods.{table}") == expected
        assert read_pypaimon(warehouse, f"ods.{table}") == expected
        got: dict[int, list[Change]] = defaultdict(list)
        for kind, key, *image in read_changelog_pypaimon(warehouse, f"ods.{table}", ("id", "name", "qty", "note")):
            got[key].append((kind, *image))
        assert dict(got) == dict(source.changes[table])
        checked += sum(len(c) for c in got.values())
    snapshots = [assert_no_commit_twice(t) for t in tables]
    files = [assert_every_file_referenced(warehouse, f"ods.{t}") for t in TABLES]
    print(
        f"chaos kafka: {loop.kills} SIGKILLs survived ({loop.flakes} load-flake restarts), {source.made:,} changes "
        f"produced, {checked:,} changelog rows checked, snapshots per table {snapshots} (at each kill "
        f"{loop.progress_at_kill}), files {files}; remove-orphan-files: {orphans}; "
        f"last run: {done.stdout.strip().splitlines()[-1:]}; {time.monotonic() - started:.0f} s"
    )
