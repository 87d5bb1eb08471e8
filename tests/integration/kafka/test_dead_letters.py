"""Bad input with a real broker, real Spark and real Paimon files (#24, dead letters):

- --errors-tolerance all --dead-letter-table ods.dlq: ten poison messages of different kinds among
  100,000 good ones; the job (every micro-batch written by two tasks, one per core) is SIGKILLed
  mid-stream and restarted: every good row in its table and every change once in its changelog,
  exactly the ten bad ones in the dead-letter table with their positions, raw bytes and reasons, none
  twice. (This is also the SIGKILL test of a plain kafka-sync-database job: test_sync.py had its own,
  the same checks on a smaller stream, merged here.)
- The default stops at the first bad message, naming its position and the two ways on; --skip-offsets
  moves past it on the same checkpoint, and the skip is recorded in the dead-letter table when there is
  one; --max-dead-letters stops a batch with too many before it commits.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from deploy.canal_stream import MYSQL_TYPES, CanalStream, generate, partition_by_key, typed
from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from ingest.streaming.checkpoint import SKIPS_FILE
from tests.chaos.harness import LOAD_FLAKE
from tests.conftest import ROOT
from tests.integration.kafka.test_sync import _assert_table_matches
from tests.paimon_read import read_pypaimon, read_rust

TABLES = ("orders", "customers")
PARTITIONS = 2


def _canal(table: str | None, row: dict[str, str], op: str = "INSERT", database: str = "shop") -> bytes:
    body: dict[str, Any] = {"type": op, "data": [row], "old": None, "database": database, "isDdl": False}
    if table is not None:
        body["table"] = table
    return orjson.dumps({**body, "pkNames": ["id"], "mysqlType": MYSQL_TYPES})


def _row(i: int, **bad: str) -> dict[str, str]:
    return {"id": str(i), "name": f"bad-{i}", "amount": "1.00", "updated": "2024-01-01 00:00:00.000", "qty": "1", **bad}


# (value, error_message fragment): ten kinds of message a tolerant job must dead-letter
POISON: list[tuple[bytes, str]] = [
    (b"\xff\xfe\x00 not json at all", ""),
    (b"[1, 2, 3]", "JSON object"),
    (_canal("orders", _row(900_001))[:40], ""),  # truncated
    (orjson.dumps({"type": "INSERT", "data": "x", "database": "shop", "table": "orders"}), "data"),
    (_canal("orders", _row(900_002), op="UPSERT"), "type"),
    (_canal("orders", _row(900_003, qty="not-a-number")), "qty"),
    (_canal("customers", _row(900_004, amount="12.x4")), "amount"),
    (_canal("orders", _row(900_005, updated="2024-13-45 99:99:99")), "updated"),
    (_canal(None, _row(900_006)), "names no source table"),
    (_canal("dlq", _row(900_007)), "dead-letter table"),
]  # fmt: skip


Placed = tuple[list[tuple[bytes, bytes]], dict[bytes, tuple[int, int]]]


def _with_poison(stream: CanalStream, poison: list[bytes]) -> Placed:
    """The stream's messages with the poison spread through them, and where each poison value lands
    ((partition, offset), as ``LocalKafka.produce`` sends each partition's records in order)."""
    messages = list(stream.messages)
    step = len(messages) // len(poison)
    for i, value in enumerate(poison):
        messages.insert(step // 2 + i * step, (f"poison:{i}".encode(), value))
    route = partition_by_key(PARTITIONS)
    next_offset = [0] * PARTITIONS
    where: dict[bytes, tuple[int, int]] = {}
    for key, value in messages:
        p = route(key, value)
        if key.startswith(b"poison:"):
            where[value] = (p, next_offset[p])
        next_offset[p] += 1
    return messages, where


def _assert_tables(warehouse: str, stream: CanalStream, changelog: bool = False) -> None:
    """Both readers give the stream's final rows; ``changelog``: every change once, in order per key."""
    for table in TABLES:
        if changelog:
            _assert_table_matches(warehouse, stream, table)
            continue
        expected = sorted((typed(r) for r in stream.expected[table].values()), key=lambda r: r["id"])
        assert read_rust(warehouse, f"ods.{table}") == expected, table
        assert read_pypaimon(warehouse, f"ods.{table}") == expected, table


def _dead_letters(warehouse: str) -> list[dict[str, Any]]:
    rust, pypaimon = read_rust(warehouse, "ods.dlq"), read_pypaimon(warehouse, "ods.dlq")
    key = lambda d: (d["topic"], d["partition"], d["offset"])  # noqa: E731
    assert sorted(rust, key=key) == sorted(pypaimon, key=key)
    return sorted(rust, key=key)


@pytest.mark.timeout(900)
def test_poison_messages_go_to_the_dead_letter_table_exactly_once_across_a_sigkill(
    kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    warehouse = str(tmp_path / "warehouse")
    kafka.create_topic(topic_name, PARTITIONS)
    stream = generate(keys=7000, updates=6, seed=24)  # 100,000 messages (#24's figure)
    assert len(stream.messages) == 100_000
    messages, where = _with_poison(stream, [v for v, _ in POISON])
    kafka.produce(topic_name, messages, partition_by_key(PARTITIONS))
    argv = [
        sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", warehouse, "--database", "ods",
        "--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}", "--kafka_conf", f"topic={topic_name}",
        "--kafka_conf", "value.format=canal-json", "--max-offsets-per-trigger", "10000", "--available-now",
        # local mode that retries a failed task (a Python worker too slow to connect back on a loaded machine)
        "--spark-conf", "spark.master=local[2,4]", "--errors-tolerance", "all", "--dead-letter-table", "ods.dlq",
        "--parallel-write-min-rows", "0",  # every micro-batch written by two tasks (one per core), each its own buckets
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log_path = tmp_path / "first-run.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
    dlq_snapshots = Path(warehouse) / "ods.db" / "dlq" / "snapshot"
    orders_snapshots = Path(warehouse) / "ods.db" / "orders" / "snapshot"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and (
        len(list(dlq_snapshots.glob("snapshot-*"))) < 1 or len(list(orders_snapshots.glob("snapshot-*"))) < 3
    ):
        assert proc.poll() is None, log_path.read_text()[-3000:]
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and Python workers, mid-stream
    proc.wait()
    assert proc.returncode == -signal.SIGKILL  # killed mid-stream, not finished
    committed_before = len(_dead_letters(warehouse))
    assert 0 < committed_before < len(POISON)

    for attempt in range(3):
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
        (tmp_path / f"second-run-{attempt}.log").write_text(done.stderr + done.stdout)
        if done.returncode == 0 or LOAD_FLAKE not in done.stderr:
            break
        # A Python worker too slow to connect back on a loaded machine (tests/chaos/harness.py): the
        # operator's restart, from the checkpoint; what the failed run committed counts as before.
        committed_before = len(_dead_letters(warehouse))
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = re.search(r"lakecdc: (\d+) change events.*; (\d+) dead letters", done.stdout)
    assert resumed is not None, done.stdout
    assert 0 < int(resumed.group(1)) < len(stream.messages)
    assert int(resumed.group(2)) == len(POISON) - committed_before  # the restart's own, none again
    assert "dead_letters=" in done.stderr + done.stdout  # in the "micro-batch committed" event

    _assert_tables(warehouse, stream, changelog=True)
    letters = _dead_letters(warehouse)
    assert len(letters) == len(POISON)  # exactly the ten, none twice
    by_value = {d["value"]: d for d in letters}
    for value, reason in POISON:
        letter = by_value[value]
        assert (letter["topic"], letter["partition"], letter["offset"]) == (topic_name, *where[value])
        assert letter["key"] == f"poison:{POISON.index((value, reason))}".encode()
        assert letter["format"] == "canal-json" and letter["error_class"] == "MalformedMessage"
        assert reason in letter["error_message"], letter
        assert letter["dead_lettered_at"] is not None


def _settings(warehouse: str, kafka: LocalKafka, topic: str, **extra: Any) -> SyncSettings:
    values: dict[str, Any] = {
        "action": "kafka-sync-database",
        "warehouse": warehouse,
        "database": "ods",
        "kafka_conf": {"properties.bootstrap.servers": kafka.bootstrap, "topic": topic, "value.format": "canal-json"},
        "available_now": True,
        "max_offsets_per_trigger": 300,
    }
    values.update(extra)
    return SyncSettings(**values)


def test_default_stops_at_a_bad_message_and_skip_offsets_moves_past_it_on_the_same_checkpoint(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, tmp_path: Path
) -> None:
    kafka.create_topic(topic_name, 1)
    stream = generate(keys=120, updates=5, seed=25)  # 1,460 messages
    good = list(stream.messages)
    first, second = b"\xff not json", _canal("orders", _row(900_100, qty="x"))
    messages = [*good[:200], (b"p1", first), *good[200:1200], (b"p2", second), *good[1200:]]
    kafka.produce(topic_name, messages)
    o1, o2 = 200, 1201

    # --max-dead-letters: a batch with more stops before it commits (another checkpoint)
    with pytest.raises(JobFailed) as info:
        run(_settings(warehouse, kafka, topic_name, checkpoint=str(tmp_path / "ck-limit"), errors_tolerance="all",
                      dead_letter_table="ods.dlq", max_dead_letters=0))  # fmt: skip
    assert f"DeadLetterLimit: micro-batch 0 has 1 dead letters, more than --max-dead-letters 0 ({topic_name}:0 " in (
        str(info.value)
    )
    assert not (Path(warehouse) / "ods.db" / "dlq").exists()

    # the default: stops at the first, naming it and what to do
    with pytest.raises(JobFailed) as info:
        run(_settings(warehouse, kafka, topic_name))
    message = str(info.value)
    assert f"topic '{topic_name}', partition 0, offset {o1}" in message, message
    assert f"--skip-offsets {topic_name}:0:{o1}" in message and "--errors-tolerance all" in message
    assert "fix or remove" not in message

    # the same checkpoint with --skip-offsets: past the first, then stops at the second
    with pytest.raises(JobFailed) as info:
        run(_settings(warehouse, kafka, topic_name, skip_offsets=(f"{topic_name}:0:{o1}",)))
    assert f"offset {o2}" in str(info.value)
    assert len(read_rust(warehouse, "ods.orders")) > 0  # batches before the second committed

    # and past the second, recorded in the dead-letter table as the operator's skip
    result = run(
        _settings(warehouse, kafka, topic_name, skip_offsets=(f"{topic_name}:0:{o1},{topic_name}:0:{o2}",),
                  errors_tolerance="all", dead_letter_table="ods.dlq")
    )  # fmt: skip
    assert result.stats.dead_letters == 1
    _assert_tables(warehouse, stream)
    (letter,) = _dead_letters(warehouse)
    assert (letter["topic"], letter["partition"], letter["offset"]) == (topic_name, 0, o2)
    assert (letter["error_class"], letter["key"], letter["value"]) == ("SkippedByOperator", b"p2", second)
    # each run's skips are kept beside the checkpoint, with the batch they applied from
    checkpoint = Path(warehouse) / "_lakecdc" / "checkpoints" / _settings(warehouse, kafka, topic_name).job_name
    runs = json.loads((checkpoint / SKIPS_FILE).read_text())
    assert [r["skip_offsets"] for r in runs] == [
        [f"{topic_name}:0:{o1}"],
        [f"{topic_name}:0:{o1},{topic_name}:0:{o2}"],
    ]
    assert runs[0]["from_batch"] <= runs[1]["from_batch"]
