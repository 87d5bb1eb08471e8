"""Untrusted table names never escape the warehouse (#24): canal-json messages that name tables such as
``../../escaped_table``, ``/abs``, ``a/b``, NUL or ``t$snapshots`` stop the job (the default
tolerance) naming the name and the reason, and nothing is created outside the warehouse. The
filesystem around the warehouse is walked before and after each job."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from deploy.canal_stream import CanalStream, generate, typed
from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from schema_evolution.identifiers import shown
from tests.paimon_read import read_pypaimon, read_rust

ABSOLUTE = f"/lakecdc_escape_{os.getpid()}"
# (id, table name the message gives, a piece of the refusal's reason); the other unsafe names (a\b, ..,
# control characters, '.hidden', a backquote) are refused by the same check (tests/ingest/pipeline/test_routing.py,
# tests/schema_evolution/test_identifiers.py): each job here costs half a minute.
ESCAPES = [
    ("parent", "../../escaped_table", "path separator"),
    ("absolute", ABSOLUTE, "path separator"),
    ("nul", "nul\x00byte", "U+0000"),
    ("dollar", "orders$snapshots", "'$'"),
    ("too-long", "x" * 300, "300 bytes"),
]


def _paths(root: Path) -> set[str]:
    out = {str(root)}
    for directory, dirs, files in os.walk(root):
        out.update(os.path.join(directory, n) for n in dirs + files)
    return out


def _around(tmp_path: Path) -> set[str]:
    """Everything in the test's tmp dir (the warehouse's parents within it), the entries of the session's
    tmp dir beside it, and the absolute name's target."""
    return _paths(tmp_path) | {str(p) for p in tmp_path.parent.iterdir()} | {p for p in [ABSOLUTE] if os.path.exists(p)}


def _settings(warehouse: Path, kafka: LocalKafka, topic: str, **extra: Any) -> SyncSettings:
    return SyncSettings(
        action="kafka-sync-database",
        warehouse=str(warehouse),
        database="ods",
        kafka_conf={"properties.bootstrap.servers": kafka.bootstrap, "topic": topic, "value.format": "canal-json"},
        available_now=True,
        **extra,
    )


def _row(i: int) -> dict[str, Any]:
    return {"id": i, "name": f"item-{i}", "amount": "1.00", "updated": "2024-01-01 00:00:00.000", "qty": i}


@pytest.mark.parametrize(("name", "why"), [(n, w) for _, n, w in ESCAPES], ids=[i for i, _, _ in ESCAPES])
def test_a_message_naming_an_escaping_table_stops_the_job_and_nothing_leaves_the_warehouse(
    spark: Any, kafka: LocalKafka, tmp_path: Path, topic_name: str, name: str, why: str
) -> None:
    warehouse = tmp_path / "nest" / "deeper" / "warehouse"  # '../..' from a database stays inside tmp_path
    warehouse.parent.mkdir(parents=True)
    stream = CanalStream(database="shop")
    stream.message("orders", "INSERT", [_row(1)], None)
    stream.message(name, "INSERT", [_row(2)], None)
    stream.message("orders", "INSERT", [_row(3)], None)
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, stream.messages)
    before = _around(tmp_path)

    settings = _settings(warehouse, kafka, topic_name)
    with pytest.raises(JobFailed) as info:
        run(settings)
    message = str(info.value)
    assert message.startswith("UnsafeNameError: "), message
    assert f"the target table name {shown(name)} (source table {shown('shop.' + name)}) is refused" in message
    assert why in message
    assert "--excluding-tables" in message

    created = sorted(_around(tmp_path) - before)
    outside = [p for p in created if not (p == str(warehouse) or p.startswith(f"{warehouse}{os.sep}"))]
    assert outside == [], f"created outside the warehouse: {outside}"
    assert not os.path.exists(ABSOLUTE)
    # nothing of the refused table inside the warehouse either (the job stopped before committing)
    assert not [p for p in created if re.search(r"escaped|nul|evil|snapshots|hidden|xxxx", p)], created


def test_the_refusal_names_the_messages_position(
    spark: Any, kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    stream = CanalStream(database="shop")
    stream.message("orders", "INSERT", [_row(1)], None)
    stream.message("a/b", "INSERT", [_row(2)], None)
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, stream.messages)
    with pytest.raises(JobFailed) as info:
        run(_settings(tmp_path / "warehouse", kafka, topic_name))
    where = f"canal-json message at topic '{topic_name}', partition 0, offset 1"
    assert str(info.value).startswith(f"UnsafeNameError: {where}: the target table name 'a/b'"), str(info.value)


# Every unsafe kind of name, each dead-lettered in one tolerant job (one Spark job for all of them).
DEAD_LETTERED = [name for _, name, _ in ESCAPES] + ["a/b", "..\\..\\b", "..", ".", "a`b", ".hidden"]
# A line break is not matched by the default --including-tables '.*' ('.' stops at line breaks, in Java's
# regular expressions too): such a table is not synced, like any table not included, and so never judged.
NOT_INCLUDED = "evil\nname"


def test_with_errors_tolerance_all_each_escaping_message_is_dead_lettered_and_good_tables_sync(
    spark: Any, kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    warehouse = tmp_path / "nest" / "deeper" / "warehouse"
    warehouse.parent.mkdir(parents=True)
    good = generate(keys=40, updates=2, seed=24)
    messages = list(good.messages)
    bad = CanalStream(database="shop")
    for i, name in enumerate(DEAD_LETTERED):
        bad.message(name, "INSERT", [_row(1000 + i)], None)
    for i, message in enumerate(bad.messages):
        messages.insert(3 + i * (len(messages) // len(DEAD_LETTERED)), message)
    bad.message(NOT_INCLUDED, "INSERT", [_row(999)], None)
    messages.insert(1, bad.messages[-1])
    letters_sent = bad.messages[: len(DEAD_LETTERED)]
    offsets = {name: messages.index(message) for name, message in zip(DEAD_LETTERED, letters_sent, strict=True)}
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, messages)
    before = _around(tmp_path)

    result = run(_settings(warehouse, kafka, topic_name, errors_tolerance="all", dead_letter_table="ods.dlq"))
    assert result.stats.events == len(good.messages)

    for table in good.tables:
        expected = sorted((typed(r) for r in good.expected[table].values()), key=lambda r: r["id"])
        assert read_rust(str(warehouse), f"ods.{table}") == expected
    letters = sorted(read_rust(str(warehouse), "ods.dlq"), key=lambda d: d["offset"])
    assert sorted(read_pypaimon(str(warehouse), "ods.dlq"), key=lambda d: d["offset"]) == letters
    assert sorted((d["topic"], d["partition"], d["offset"]) for d in letters) == sorted(
        (topic_name, 0, offset) for offset in offsets.values()
    )
    by_offset = {d["offset"]: d for d in letters}
    for name, offset in offsets.items():
        letter = by_offset[offset]
        assert letter["error_class"] == "UnsafeNameError" and letter["format"] == "canal-json"
        assert letter["error_message"].startswith(f"the target table name {shown(name)} (source table"), letter

    created = sorted(_around(tmp_path) - before)
    outside = [p for p in created if not (p == str(warehouse) or p.startswith(f"{warehouse}{os.sep}"))]
    assert outside == [], f"created outside the warehouse: {outside}"
    assert not os.path.exists(ABSOLUTE)
    assert sorted(p.name for p in (warehouse / "ods.db").iterdir()) == sorted([*good.tables, "dlq"])
