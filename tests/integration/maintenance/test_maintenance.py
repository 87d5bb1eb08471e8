"""Maintenance inside a sync job: compaction after commits (MOR by trigger, COW with
full-compaction.delta-commits=1, MOW with deletion vectors enabled, none with write-only) and
snapshot expiry, checked by outcomes: exact tables and changelog through both readers, files per
bucket, snapshot kinds."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

import pytest

from deploy.canal_stream import generate, partition_by_key, typed
from deploy.local_kafka import LocalKafka
from ingest.job import run
from sinks.store import index, manifests, tables
from tests.integration.kafka.test_sync import _assert_table_matches, _settings
from tests.paimon_read import read_changelog, read_pypaimon, read_rust


def _kinds(warehouse: str, table: str) -> list[str]:
    t = tables.open_table(warehouse, {}, table)
    return [s.commit_kind for s in t.snapshot_manager().list_snapshots()]


@pytest.mark.parametrize(
    ("mode", "table_conf"),
    [
        ("mor", {"num-sorted-run.compaction-trigger": "2", "bucket": "2"}),
        ("cow", {"full-compaction.delta-commits": "1", "bucket": "2"}),
        # MOW: readers skip level 0 and merge nothing, so every commit's level 0 is lifted right
        # after it, the older versions of its keys marked in deletion vectors
        ("mow", {"deletion-vectors.enabled": "true", "bucket": "2"}),
        ("write-only", {"write-only": "true", "bucket": "2"}),
        (
            "expiry",
            {
                "snapshot.num-retained.min": "3",
                "snapshot.time-retained": "1 ms",
                "bucket": "2",
                "tag.automatic-creation": "process-time",
                "tag.creation-period": "hourly",
            },
        ),
    ],
)
def test_maintenance_modes_keep_tables_exact(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, mode: str, table_conf: dict[str, str]
) -> None:
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=80, updates=5, seed=11)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    result = run(_settings(warehouse, kafka, topic_name, max_offsets_per_trigger=120, table_conf=table_conf))
    assert result.stats.batches >= 6
    for table in ("orders", "customers"):
        kinds = _kinds(warehouse, f"ods.{table}")
        files = manifests.live_files(tables.open_table(warehouse, {}, f"ods.{table}"))
        if mode == "write-only":
            assert "COMPACT" not in kinds
            assert max(len(m) for m in files.values()) >= 6  # level-0 files pile up
        elif mode == "cow":
            # One file per bucket at the top level after every commit: each data snapshot is
            # followed by its compaction.
            assert all(len(m) == 1 and m[0].level == 5 for m in files.values())
            assert kinds.count("COMPACT") == kinds.count("APPEND")
        elif mode == "mow":
            # Nothing left in level 0 after any commit, and updates applied as deletion vectors.
            assert all(m.level > 0 for metas in files.values() for m in metas)
            assert kinds.count("COMPACT") == kinds.count("APPEND")
            t = tables.open_table(warehouse, {}, f"ods.{table}")
            assert index.vector_index_files(t, tables.latest_snapshot(t))
        elif mode == "mor":
            assert "COMPACT" in kinds
            # Sorted runs stay at the trigger or below: level-0 files plus non-empty levels.
            for metas in files.values():
                assert sum(m.level == 0 for m in metas) + len({m.level for m in metas if m.level}) <= 2
        else:
            # Everything but the newest three expired after each commit, except the snapshot the
            # automatic tag of the hour that ended holds (tagged at the first commit).
            tags = tables.open_table(warehouse, {}, f"ods.{table}").tag_manager().list_tags()
            assert len(tags) == 1 and re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}", tags[0])
            assert len(kinds) == 3
        if mode != "expiry":
            _assert_table_matches(warehouse, stream, table)
        else:
            # The changelog of expired snapshots is gone with them; the table itself is exact.
            expected = sorted((typed(r) for r in stream.expected[table].values()), key=lambda r: r["id"])
            assert read_rust(warehouse, f"ods.{table}") == expected == read_pypaimon(warehouse, f"ods.{table}")


def test_partition_expiry_inside_the_job_drops_old_partitions(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    import orjson

    kafka.create_topic(topic_name, 1)
    days = ("2020-01-01", "2020-01-02", "2999-01-01")
    messages = []
    for i in range(36):
        row = {"id": str(i % 12), "dt": days[i % 3], "v": str(i)}
        kind = "INSERT" if i < 12 else "UPDATE"
        body: dict[str, object] = {
            "type": kind,
            "data": [row],
            "old": [{"v": str(i - 12)}] if kind == "UPDATE" else None,
        }
        body |= {"database": "shop", "table": "events", "isDdl": False, "pkNames": ["id", "dt"], "es": i, "ts": i}
        body["mysqlType"] = {"id": "int", "dt": "varchar(10)", "v": "varchar(10)"}
        messages.append((str(i % 12).encode(), orjson.dumps(body)))
    kafka.produce(topic_name, messages)
    settings = _settings(
        warehouse,
        kafka,
        topic_name,
        action="kafka-sync-table",
        table="events",
        partition_keys=("dt",),
        max_offsets_per_trigger=10,
        table_conf={"partition.expiration-time": "1 d", "partition.expiration-check-interval": "1 ms"},
    )
    result = run(settings)
    assert result.stats.batches >= 3
    expected = [{"id": i, "dt": "2999-01-01", "v": str(i + 24)} for i in (2, 5, 8, 11)]
    assert read_rust(warehouse, "ods.events") == expected
    assert read_pypaimon(warehouse, "ods.events") == expected
    assert "OVERWRITE" in _kinds(warehouse, "ods.events")


def _canal(kind: str, row: Mapping[str, object], old: Mapping[str, object] | None = None, es: int = 0) -> bytes:
    import orjson

    body: dict[str, object] = {
        "type": kind,
        "data": [row],
        "old": [old] if old is not None else None,
        "es": es,
        "ts": es,
    }
    body |= {"database": "shop", "table": "stock", "isDdl": False, "pkNames": ["id"]}
    body["mysqlType"] = {"id": "int", "qty": "int", "note": "varchar(10)"}
    return orjson.dumps(body)


class _StockRow(TypedDict):
    id: str
    qty: str
    note: str | None


# One change stream, three merge engines: Paimon's documented results for each (ignore-delete for
# partial-update and first-row: their readers cannot take a change stream's -U/-D rows otherwise).
STOCK: list[tuple[str, _StockRow, dict[str, str | None] | None]] = [
    ("INSERT", {"id": "1", "qty": "5", "note": "a"}, None),
    ("INSERT", {"id": "2", "qty": "3", "note": None}, None),
    ("INSERT", {"id": "3", "qty": "8", "note": "x"}, None),
    ("UPDATE", {"id": "1", "qty": "7", "note": None}, {"qty": "5", "note": "a"}),
    ("DELETE", {"id": "2", "qty": "3", "note": None}, None),
    ("DELETE", {"id": "3", "qty": "8", "note": "x"}, None),
    ("INSERT", {"id": "2", "qty": "4", "note": "c"}, None),
    ("UPDATE", {"id": "1", "qty": "9", "note": "d"}, {"qty": "7", "note": None}),
]


@pytest.mark.parametrize(
    ("table_conf", "expected"),
    [
        (  # the newest non-null value of each column; deletes ignored
            {"merge-engine": "partial-update", "ignore-delete": "true"},
            [(1, 9, "d"), (2, 4, "c"), (3, 8, "x")],
        ),
        (  # note follows qty, its sequence: a -U/-D NULLs it (the key stays), a newer row sets it
            {"merge-engine": "partial-update", "fields.qty.sequence-group": "note"},
            [(1, 9, "d"), (2, 4, "c"), (3, 8, None)],
        ),
        (  # sum retracts the old value, so qty follows the source; a deleted key stays, at 0
            {"merge-engine": "aggregation", "fields.qty.aggregate-function": "sum"},
            [(1, 9, "d"), (2, 4, "c"), (3, 0, None)],
        ),
        (  # each key's first row; its later updates and deletes ignored
            {"merge-engine": "first-row", "ignore-delete": "true"},
            [(1, 5, "a"), (2, 3, None), (3, 8, "x")],
        ),
    ],
    ids=["partial-update", "partial-update-sequence-group", "aggregation", "first-row"],
)
def test_merge_engines_inside_the_job(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, table_conf: dict[str, str], expected: list[Any]
) -> None:
    kafka.create_topic(topic_name, 1)
    messages = [(row["id"].encode(), _canal(kind, row, old, es=i)) for i, (kind, row, old) in enumerate(STOCK)]
    kafka.produce(topic_name, messages)
    conf = {"bucket": "1", "num-sorted-run.compaction-trigger": "2", **table_conf}
    settings = _settings(
        warehouse,
        kafka,
        topic_name,
        action="kafka-sync-table",
        table="stock",
        max_offsets_per_trigger=2,
        table_conf=conf,
    )
    assert run(settings).stats.batches == 4
    rows = [{"id": i, "qty": q, "note": n} for i, q, n in expected]
    assert read_rust(warehouse, "ods.stock") == rows
    options = tables.open_table(warehouse, {}, "ods.stock").options.options.to_map()
    if table_conf["merge-engine"] == "first-row":
        # Visible after every commit (level 0 lifted each time); pypaimon reads it too.
        assert read_pypaimon(warehouse, "ods.stock") == rows
        assert options["changelog-producer"] == "none"
        assert all(
            m.level > 0
            for metas in manifests.live_files(tables.open_table(warehouse, {}, "ods.stock")).values()
            for m in metas
        )
    else:
        assert options["changelog-producer"] == "input"
    assert "COMPACT" in _kinds(warehouse, "ods.stock")


@pytest.mark.parametrize(
    "conf",
    [{"changelog-producer": "full-compaction", "full-compaction.delta-commits": "1"}, {"changelog-producer": "lookup"}],
    ids=["full-compaction", "lookup"],
)
def test_compaction_changelog_inside_the_job(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, conf: dict[str, str]
) -> None:
    """changelog-producer=full-compaction with a full compaction after every commit, or lookup
    (level 0 lifted after every commit): the changelog the COMPACT snapshots carry replays to the
    table, each key's net change once per commit."""
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=60, updates=4, seed=5)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    table_conf = {**conf, "bucket": "2"}
    result = run(_settings(warehouse, kafka, topic_name, max_offsets_per_trigger=100, table_conf=table_conf))
    assert result.stats.batches >= 4
    for table in ("orders", "customers"):
        rows = sorted((typed(r) for r in stream.expected[table].values()), key=lambda r: r["id"])
        assert read_rust(warehouse, f"ods.{table}") == rows == read_pypaimon(warehouse, f"ods.{table}")
        log = read_changelog(warehouse, f"ods.{table}", columns=("id", "name", "qty"))
        replay: dict[int, tuple[Any, ...]] = {}
        for kind, key, *values in log:
            if kind == "-D":
                assert replay.pop(key) == tuple(values)
            elif kind == "-U":
                assert replay[key] == tuple(values)  # what the previous full compaction showed
            else:
                assert (kind == "+I") == (key not in replay)
                replay[key] = tuple(values)
        expected = {int(r["id"]): (r["name"], int(r["qty"])) for r in stream.expected[table].values()}
        assert replay == expected
        snapshots = tables.open_table(warehouse, {}, f"ods.{table}").snapshot_manager().list_snapshots()
        assert {s.commit_kind for s in snapshots if s.changelog_manifest_list} == {"COMPACT"}


def test_append_table_small_files_merge_inside_the_job(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    import orjson

    kafka.create_topic(topic_name, 1)
    messages = []
    for i in range(36):
        body: dict[str, object] = {
            "type": "INSERT",
            "data": [{"id": str(i), "msg": f"m{i}"}],
            "old": None,
            "es": i,
            "ts": i,
        }
        body |= {"database": "shop", "table": "logs", "isDdl": False, "pkNames": None}
        body["mysqlType"] = {"id": "int", "msg": "varchar(10)"}
        messages.append((b"k", orjson.dumps(body)))
    kafka.produce(topic_name, messages)
    settings = _settings(
        warehouse,
        kafka,
        topic_name,
        action="kafka-sync-table",
        table="logs",
        max_offsets_per_trigger=3,
        table_conf={"compaction.min.file-num": "3"},
    )
    assert run(settings).stats.batches == 12
    table = tables.open_table(warehouse, {}, "ods.logs")
    assert not table.is_primary_key_table
    # a file per commit, merged whenever three have gathered: never more than two are left
    assert _kinds(warehouse, "ods.logs").count("COMPACT") >= 5
    assert sum(len(m) for m in manifests.live_files(table).values()) <= 2
    expected = [{"id": i, "msg": f"m{i}"} for i in range(36)]
    assert read_rust(warehouse, "ods.logs") == expected == read_pypaimon(warehouse, "ods.logs")
