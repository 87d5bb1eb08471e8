"""Schema evolution end to end on our own canal messages (tests/data/canal/evolution/): the scenarios of
Apache Paimon's ``KafkaCanalSyncTableActionITCase`` (added, widened and re-typed columns with and without
DDL messages, several changes in one ALTER, every MySQL type twice, an incompatible existing table) and
beyond them (dropped, renamed, narrowed columns). Paimon's own messages replay in tests/paimon_compat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from schema_evolution.types import string
from sinks.compaction import compactor
from sinks.store.manifests import live_files
from sinks.store.tables import open_table
from sinks.table.catalog import Catalog
from tests.conftest import sample_messages
from tests.paimon_read import java_rows, paimon_schema, read_pypaimon
from tests.schema_evolution.test_mysql_types import ALL_TYPES_EXPECTED

DATA = Path(__file__).resolve().parents[2] / "data" / "canal"
EVOLUTION = DATA / "evolution"
TABLE = "ods.t"


def _sync_table(warehouse: str, kafka: LocalKafka, topic: str, **extra: Any) -> SyncSettings:
    values: dict[str, Any] = {
        "action": "kafka-sync-table",
        "warehouse": warehouse,
        "database": "ods",
        "table": "t",
        "kafka_conf": {
            "properties.bootstrap.servers": kafka.bootstrap,
            "topic": topic,
            "value.format": "canal-json",
        },
        "available_now": True,
    }
    values.update(extra)
    return SyncSettings(**values)


def _produce_file(kafka: LocalKafka, topic: str, path: Path) -> None:
    messages = sample_messages(path)
    assert messages
    kafka.produce(topic, [(None, m) for m in messages])


def _compact_fully(warehouse: str, table: str) -> None:
    """Full compaction (the job's own compaction may have done part of it already): afterwards
    every bucket is one file at the top level."""
    report = compactor.compact(warehouse, {}, table, "test-compactor", 2**63 - 1, full=True)
    assert report.committed or report.buckets == 0
    files = live_files(open_table(warehouse, {}, table))
    assert files and all(len(metas) == 1 and metas[0].level == 5 for metas in files.values())


def test_drop_rename_narrow_then_incompatible_change_stops_with_named_error(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    settings = _sync_table(warehouse, kafka, topic_name, max_offsets_per_trigger=2)
    kafka.produce(topic_name, [(None, m) for m in sample_messages(DATA / "evolution" / "drop-rename-narrow.txt")])
    run(settings)
    # v2 was dropped (kept, NULL for new rows), v3 renamed to v3_new (both kept), v4 widened to
    # DOUBLE then narrowed back to FLOAT (the table keeps DOUBLE), v5 VARCHAR(10) -> VARCHAR(100).
    assert paimon_schema(warehouse, TABLE) == [
        ("id", "INT NOT NULL"),
        ("v2", "INT"),
        ("v3", "VARCHAR(10)"),
        ("v4", "DOUBLE"),
        ("v5", "VARCHAR(100)"),
        ("v3_new", "VARCHAR(10)"),
    ]
    assert java_rows(warehouse, TABLE) == [
        "+I[1, 10, a, 1.5, short, NULL]",
        "+I[2, NULL, NULL, 2.25, a much longer value than ten, b]",
        "+I[3, NULL, NULL, 3.5, c, c]",
    ]
    kafka.produce(topic_name, [(None, m) for m in sample_messages(DATA / "evolution" / "cross-family.txt")])
    with pytest.raises(JobFailed) as info:
        run(settings)
    message = str(info.value)
    assert "table 'ods.t', column 'v4'" in message
    assert "from DOUBLE to DATE" in message
    assert java_rows(warehouse, TABLE)[0] == "+I[1, 10, a, 1.5, short, NULL]"


# after tests/data/canal/evolution/steps/step-N.txt: the table's schema and rows
KEYS = [("shard", "INT NOT NULL"), ("id", "INT NOT NULL")]
STEPS = [
    (
        [*KEYS, ("name", "VARCHAR(10)")],
        ["+I[1, 1, bolt]", "+I[1, 2, nut]", "+I[2, 3, gear]"],
    ),
    (
        [*KEYS, ("name", "VARCHAR(10)"), ("qty", "INT")],
        ["+I[1, 1, bolt, NULL]", "+I[1, 2, washer, NULL]", "+I[2, 3, gear, NULL]", "+I[2, 4, cog, 40]",
         "+I[1, 6, rod, 60]"],
    ),
    (
        [*KEYS, ("name", "VARCHAR(10)"), ("qty", "BIGINT")],
        ["+I[1, 1, bolt, NULL]", "+I[1, 2, washer, NULL]", "+I[2, 3, gear, NULL]", "+I[2, 4, cog, 40000000000]",
         "+I[1, 6, rod, 60]", "+I[2, 7, axle, 70000000000]"],
    ),
    (
        [*KEYS, ("name", "VARCHAR(20)"), ("qty", "BIGINT"), ("price", "DECIMAL(8, 3)"), ("code", "VARBINARY(10)"),
         ("weight", "FLOAT")],
        ["+I[1, 1, bolt, NULL, NULL, NULL, NULL]", "+I[1, 2, washer, NULL, NULL, NULL, NULL]",
         "+I[2, 3, gear, NULL, NULL, NULL, NULL]", "+I[2, 4, cog, 40000000000, NULL, NULL, NULL]",
         "+I[1, 6, rod, 60, NULL, NULL, NULL]", "+I[2, 7, long axle bar 2m, 70000000000, NULL, NULL, NULL]",
         "+I[1, 8, spring, 80, 12345.678, [115, 112, 45, 56, 46, 98, 105, 110], 0.5]"],
    ),
    (
        [*KEYS, ("name", "VARCHAR(20)"), ("qty", "BIGINT"), ("price", "DECIMAL(8, 3)"), ("code", "VARBINARY(20)"),
         ("weight", "DOUBLE")],
        ["+I[1, 1, bolt, NULL, NULL, NULL, NULL]", "+I[1, 2, washer, NULL, NULL, NULL, NULL]",
         "+I[2, 3, gear, NULL, NULL, [103, 101, 97, 114, 45, 51, 46, 98, 105, 110, 46, 108, 111, 110, 103], "
         "3.00000000003]",
         "+I[2, 4, cog, 40000000000, NULL, NULL, NULL]",
         "+I[1, 6, rod, 60, NULL, NULL, NULL]", "+I[2, 7, long axle bar 2m, 70000000000, NULL, NULL, NULL]",
         "+I[1, 8, spring, 80, 12345.678, [115, 112, 114, 105, 110, 103, 45, 56, 46, 98, 105, 110, 46, 118, 50], "
         "0.50000000001]"],
    ),
]  # fmt: skip


@pytest.mark.parametrize("source_dir", ["steps", "steps-without-ddl"])
def test_schema_evolution(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, source_dir: str) -> None:
    """A column added, an INT widened to BIGINT, a VARCHAR lengthened and columns of three types added
    in one ALTER, a VARBINARY lengthened and a FLOAT widened to DOUBLE; announced by DDL messages, or
    (steps-without-ddl) only by the messages' mysqlType."""
    kafka.create_topic(topic_name, 1)
    settings = _sync_table(
        warehouse, kafka, topic_name, partition_keys=("shard",), primary_keys=("shard", "id"), max_offsets_per_trigger=4
    )
    for step, (schema, rows) in enumerate(STEPS, start=1):
        _produce_file(kafka, topic_name, EVOLUTION / source_dir / f"step-{step}.txt")
        run(settings)
        assert paimon_schema(warehouse, TABLE) == schema, f"after step {step}"
        assert java_rows(warehouse, TABLE) == sorted(rows), f"after step {step}"
    # Compaction reads files of every schema version by field id: the rows stay exactly the same.
    _compact_fully(warehouse, TABLE)
    assert java_rows(warehouse, TABLE) == sorted(STEPS[-1][1])


def test_several_changes_in_one_alter(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    settings = _sync_table(warehouse, kafka, topic_name, primary_keys=("id",))
    _produce_file(kafka, topic_name, EVOLUTION / "multiple-1.txt")
    run(settings)
    assert paimon_schema(warehouse, TABLE) == [
        ("id", "INT NOT NULL"),
        ("a", "VARCHAR(10)"),
        ("b", "INT"),
        ("c", "VARCHAR(10)"),
    ]
    assert java_rows(warehouse, TABLE) == ["+I[1, first, 11, c_1]"]
    _produce_file(kafka, topic_name, EVOLUTION / "multiple-2.txt")
    run(settings)
    assert paimon_schema(warehouse, TABLE) == [
        ("id", "INT NOT NULL"),
        ("a", "VARCHAR(20)"),
        ("b", "BIGINT"),
        ("c", "VARCHAR(10)"),
        ("d", "INT"),
        ("e", "DOUBLE"),
        ("f", "DECIMAL(5, 3)"),
        ("odd name, $%", "VARCHAR(10)"),
    ]
    assert java_rows(warehouse, TABLE) == [
        "+I[1, first, 11, c_1, NULL, NULL, NULL, NULL]",
        "+I[2, second, longer one, 3000000000000, c_2, 22, 22.25, 22.022, odd_2]",
    ]


# the all-types row as Java's Paimon reader shows it (tests/schema_evolution/test_conversion.py has it typed)
ALL_TYPES_ROW_1 = (
    "+I[7, 12.5, true, false, true, -128, 255, 9, -32768, 65535, 42, -8388608, 16777215, 4242, "
    "-2147483648, 4294967295, 77, -9223372036854775808, 18446744073709551615, 123, 9000000001, "
    "-0.25, 0.75, 6.5, -1.125, 2.0625, 3.000001, -4.5e-10, 5.000005, 6.000006, 7.25, 8.5, 9.000009, "
    "-1234567.89, 7654321.00, 0.01, -98765432109876543210987654321098765432.1234, 1.0000, 20.5000, "
    "-9999999999, 31, 5, 10956, 2000-02-29T23:59:59, 2024-07-01T08:09:10.250, "
    "2024-07-01T08:09:10.000001, 1970-01-01T00:00, 2038-01-19T03:14:07.990, "
    "2021-10-31T01:30:00.654321, 2021-03-28T02:30, lakecdc, grüße, 世界, a tiny text, "
    'line one\nline two, a "quoted" medium text, a long text with a tab\tinside, [0, 1, 2, -2, -1, '
    "0], [114, 97, 119, 0, 98, 121, 116, 101, 115], [116, 105, 110, 121, 32, 98, 108, 111, 98], "
    "[-64, -63, 32, 98, 108, 111, 98], [109, 101, 100, 105, 117, 109, 32, 98, 108, 111, 98], [108, "
    '111, 110, 103, 32, 98, 108, 111, 98], {"k": [1, 2, {"n": null}]}, blue, 1999, 86398000, '
    '{"coordinates":[2.5,-1],"type":"Point","srid":0}, '
    '{"coordinates":[[[0,0],[4,0],[4,4],[0,4],[0,0]]],"type":"Polygon","srid":0}, '
    '{"coordinates":[[0,0],[1,1],[2,0]],"type":"LineString","srid":0}, '
    '{"coordinates":[[[0,0],[4,0],[4,4],[0,4],[0,0]],[[1,1],[2,1],[2,2],[1,1]]],"type":"Polygon","srid":0}, '
    '{"coordinates":[[0,1],[1,0]],"type":"MultiPoint","srid":0}, '
    '{"coordinates":[[[0,0],[0,5]],[[5,5],[6,6],[7,5]]],"type":"MultiLineString","srid":0}, '
    '{"coordinates":[[[[0,0],[4,0],[4,4],[0,4],[0,0]]],[[[10,10],[12,10],[11,13],[10,10]]]],'
    '"type":"MultiPolygon","srid":0}, '
    '{"geometries":[{"type":"Point","coordinates":[3,3]},{"type":"LineString","coordinates":[[8,8],[9,9]]}],'
    '"type":"GeometryCollection","srid":0}, '
    "[x, z]]"
)


def test_every_mysql_type_twice(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    """The canonical all-types row (tests/data/canal/all-types.json) end to end; the second round runs
    on the existing table (a new job and checkpoint)."""
    for round_ in range(2):
        topic = f"{topic_name}_{round_}"
        kafka.create_topic(topic, 1)
        _produce_file(kafka, topic, DATA / "all-types.json")
        run(
            _sync_table(
                warehouse,
                kafka,
                topic,
                partition_keys=("part",),
                primary_keys=("part", "id"),
                checkpoint=f"{warehouse}/ck{round_}",
            )
        )
        schema = paimon_schema(warehouse, TABLE)
        keys = ("id", "part")
        assert schema == [(c, t + " NOT NULL" if c in keys else t) for c, t in ALL_TYPES_EXPECTED.items()]
        rows = java_rows(warehouse, TABLE)
        assert rows[0] == ALL_TYPES_ROW_1
        # the second row: only id, part and serial (the 21st column) are set
        assert len(schema) == 75
        assert rows[1] == "+I[8, 0.5, " + ", ".join(["NULL"] * 18) + ", 9000000002, " + ", ".join(["NULL"] * 54) + "]"
        # Every type survives compaction's read and rewrite, read back by both libraries.
        before = read_pypaimon(warehouse, TABLE)
        _compact_fully(warehouse, TABLE)
        assert java_rows(warehouse, TABLE) == rows
        assert read_pypaimon(warehouse, TABLE) == before


def test_existing_table_of_another_schema_is_refused(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str
) -> None:
    Catalog(warehouse).create_table(TABLE, [("k", string()), ("v1", string())], ["k"], [], {})
    kafka.create_topic(topic_name, 1)
    _produce_file(kafka, topic_name, EVOLUTION / "steps" / "step-1.txt")
    with pytest.raises(JobFailed) as info:
        run(_sync_table(warehouse, kafka, topic_name, partition_keys=("shard",), primary_keys=("shard", "id")))
    assert (
        "Paimon schema and source table schema are not compatible.\n"
        "Paimon fields are: [`k` STRING NOT NULL, `v1` STRING].\n"
        "Source table fields are: [`shard` INT NOT NULL, `id` INT NOT NULL, `name` VARCHAR(10)]"
    ) in str(info.value)
