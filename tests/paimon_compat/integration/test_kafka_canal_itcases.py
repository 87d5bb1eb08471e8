"""Schema evolution end to end against Apache Paimon's own canal ITCases
(``KafkaCanalSyncTableActionITCase``): the same messages (read in place), arguments and expected tables.
The same scenarios on the project's own messages are tests/integration/kafka/test_schema_evolution.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from schema_evolution.types import string
from sinks.table.catalog import Catalog
from tests.integration.kafka.test_schema_evolution import _compact_fully, _produce_file
from tests.paimon_compat.itcase_args import basic_table_config, kafka_sync_table
from tests.paimon_compat.samples import SAMPLES
from tests.paimon_read import java_rows, paimon_schema, read_pypaimon

CANAL_TABLE = SAMPLES / "canal" / "table"


TABLE = "default.t"  # ActionITCaseBase's database; the table keeps the replays' short name


def _sync_table(warehouse: str, kafka: LocalKafka, topic: str, **builder: Any) -> Callable[[], int]:
    """kafka_sync_table with Paimon's command line (getBasicKafkaConfig(), value.format=canal-json, topic),
    through lakecdc's CLI; calling the result runs it once over what the topic holds: its exit code."""
    conf = {"value.format": "canal-json", "topic": topic}
    return lambda: kafka_sync_table(warehouse, kafka.bootstrap, conf, **builder)


# KafkaCanalSyncTableActionITCase#testSchemaEvolutionImpl: after file N, the schema and rows.
SCHEMA_EVOLUTION_STEPS = [
    (
        [("pt", "INT NOT NULL"), ("_id", "INT NOT NULL"), ("v1", "VARCHAR(10)")],
        ["+I[1, 1, one]", "+I[1, 2, two]", "+I[2, 4, four]"],
    ),
    (
        [("pt", "INT NOT NULL"), ("_id", "INT NOT NULL"), ("v1", "VARCHAR(10)"), ("v2", "INT")],
        [
            "+I[1, 1, one, NULL]",
            "+I[1, 2, second, NULL]",
            "+I[2, 3, three, 30]",
            "+I[2, 4, four, NULL]",
            "+I[1, 5, five, 50]",
            "+I[1, 6, six, 60]",
        ],
    ),
    (
        [("pt", "INT NOT NULL"), ("_id", "INT NOT NULL"), ("v1", "VARCHAR(10)"), ("v2", "BIGINT")],
        [
            "+I[1, 1, one, NULL]",
            "+I[1, 2, second, NULL]",
            "+I[2, 3, three, 30000000000]",
            "+I[2, 4, four, NULL]",
            "+I[1, 6, six, 60]",
            "+I[2, 7, seven, 70000000000]",
            "+I[2, 8, eight, 80000000000]",
        ],
    ),
    (
        [
            ("pt", "INT NOT NULL"),
            ("_id", "INT NOT NULL"),
            ("v1", "VARCHAR(20)"),
            ("v2", "BIGINT"),
            ("v3", "DECIMAL(8, 3)"),
            ("v4", "VARBINARY(10)"),
            ("v5", "FLOAT"),
        ],
        [
            "+I[1, 1, one, NULL, NULL, NULL, NULL]",
            "+I[1, 2, second, NULL, NULL, NULL, NULL]",
            "+I[2, 3, three, 30000000000, NULL, NULL, NULL]",
            "+I[2, 4, four, NULL, NULL, NULL, NULL]",
            "+I[1, 6, six, 60, NULL, NULL, NULL]",
            "+I[2, 7, seven, 70000000000, NULL, NULL, NULL]",
            "+I[2, 8, very long string, 80000000000, NULL, NULL, NULL]",
            "+I[1, 9, nine, 90000000000, 99999.999, [110, 105, 110, 101, 46, 98, 105, 110], 9.9]",
        ],
    ),
    (
        [
            ("pt", "INT NOT NULL"),
            ("_id", "INT NOT NULL"),
            ("v1", "VARCHAR(20)"),
            ("v2", "BIGINT"),
            ("v3", "DECIMAL(8, 3)"),
            ("v4", "VARBINARY(20)"),
            ("v5", "DOUBLE"),
        ],
        [
            "+I[1, 1, one, NULL, NULL, NULL, NULL]",
            "+I[1, 2, second, NULL, NULL, NULL, NULL]",
            "+I[2, 3, three, 30000000000, NULL, NULL, NULL]",
            "+I[2, 4, four, NULL, NULL, [102, 111, 117, 114, 46, 98, 105, 110, 46, 108, 111, 110, 103], 4.00000000004]",
            "+I[1, 6, six, 60, NULL, NULL, NULL]",
            "+I[2, 7, seven, 70000000000, NULL, NULL, NULL]",
            "+I[2, 8, very long string, 80000000000, NULL, NULL, NULL]",
            "+I[1, 9, nine, 90000000000, 99999.999, [110, 105, 110, 101, 46, 98, 105, 110, 46, 108, 111, 110, 103], "
            "9.00000000009]",
        ],
    ),
]


@pytest.mark.parametrize("source_dir", ["schemaevolution", "schemaevolutionmissingddl"])
def test_paimon_schema_evolution(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, source_dir: str
) -> None:
    kafka.create_topic(topic_name, 1)
    job = _sync_table(
        warehouse, kafka, topic_name, partition_keys=("pt",), primary_keys=("pt", "_id"),
        table_conf=basic_table_config(), settings={"max_offsets_per_trigger": "4"},
    )  # fmt: skip
    for step, (schema, rows) in enumerate(SCHEMA_EVOLUTION_STEPS, start=1):
        _produce_file(kafka, topic_name, CANAL_TABLE / source_dir / f"canal-data-{step}.txt")
        assert job() == 0
        assert paimon_schema(warehouse, TABLE) == schema, f"after canal-data-{step}"
        assert java_rows(warehouse, TABLE) == sorted(rows), f"after canal-data-{step}"
    # Compaction reads files of every schema version by field id: the rows stay exactly the same.
    _compact_fully(warehouse, TABLE)
    assert java_rows(warehouse, TABLE) == sorted(SCHEMA_EVOLUTION_STEPS[-1][1])


def test_paimon_multiple_schema_evolutions(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    kafka.create_topic(topic_name, 1)
    job = _sync_table(warehouse, kafka, topic_name, primary_keys=("_id",))
    _produce_file(kafka, topic_name, CANAL_TABLE / "schemaevolutionmultiple" / "canal-data-1.txt")
    assert job() == 0
    assert paimon_schema(warehouse, TABLE) == [
        ("_id", "INT NOT NULL"),
        ("v1", "VARCHAR(10)"),
        ("v2", "INT"),
        ("v3", "VARCHAR(10)"),
    ]
    assert java_rows(warehouse, TABLE) == ["+I[1, one, 10, string_1]"]
    _produce_file(kafka, topic_name, CANAL_TABLE / "schemaevolutionmultiple" / "canal-data-2.txt")
    assert job() == 0
    assert paimon_schema(warehouse, TABLE) == [
        ("_id", "INT NOT NULL"),
        ("v1", "VARCHAR(20)"),
        ("v2", "BIGINT"),
        ("v3", "VARCHAR(10)"),
        ("v4", "INT"),
        ("v5", "DOUBLE"),
        ("v6", "DECIMAL(5, 3)"),
        ("$% ^,& *(", "VARCHAR(10)"),
    ]
    assert java_rows(warehouse, TABLE) == [
        "+I[1, one, 10, string_1, NULL, NULL, NULL, NULL]",
        "+I[2, long_string_two, 2000000000000, string_2, 20, 20.5, 20.002, test_2]",
    ]


ALL_TYPES_ROW_1 = (
    "+I[1, 1.1, true, true, false, 1, 2, 3, 1000, 2000, 3000, 100000, 200000, 300000, 1000000, 2000000, 3000000, "
    "10000000000, 20000000000, 30000000000, 40000000000, 1.5, 2.5, 3.5, 1.000001, 2.000002, 3.000003, "
    "1.000011, 2.000022, 3.000033, 1.000111, 2.000222, 3.000333, 12345.110, 12345.220, 12345.330, "
    "123456789876543212345678987654321.110, 123456789876543212345678987654321.220, "
    "123456789876543212345678987654321.330, 11111, 22222, 33333, 19439, "
    "2023-03-23T14:30:05, 2023-03-23T14:30:05.123, 2023-03-23T14:30:05.123456, "
    "2023-03-24T14:30, 2023-03-24T14:30:05.120, 2023-03-23T15:00:10.123456, 2023-03-23T00:10, "
    "Paimon, Apache Paimon, Apache Paimon MySQL TINYTEXT Test Data, Apache Paimon MySQL Test Data, "
    "Apache Paimon MySQL MEDIUMTEXT Test Data, Apache Paimon MySQL Long Test Data, "
    "[98, 121, 116, 101, 115], [109, 111, 114, 101, 32, 98, 121, 116, 101, 115], "
    "[84, 73, 78, 89, 66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97], "
    "[66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97], "
    "[77, 69, 68, 73, 85, 77, 66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97], "
    "[76, 79, 78, 71, 66, 76, 79, 66, 32, 32, 98, 121, 116, 101, 115, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97], "
    '{"a": "b"}, value1, 2023, 36803000, '
    '{"coordinates":[1,1],"type":"Point","srid":0}, '
    '{"coordinates":[[[1,1],[2,1],[2,2],[1,2],[1,1]]],"type":"Polygon","srid":0}, '
    '{"coordinates":[[3,0],[3,3],[3,5]],"type":"LineString","srid":0}, '
    '{"coordinates":[[[1,1],[2,1],[2,2],[1,2],[1,1]]],"type":"Polygon","srid":0}, '
    '{"coordinates":[[1,1],[2,2]],"type":"MultiPoint","srid":0}, '
    '{"coordinates":[[[1,1],[2,2],[3,3]],[[4,4],[5,5]]],"type":"MultiLineString","srid":0}, '
    '{"coordinates":[[[[0,0],[10,0],[10,10],[0,10],[0,0]]],[[[5,5],[7,5],[7,7],[5,7],[5,5]]]],'
    '"type":"MultiPolygon","srid":0}, '
    '{"geometries":[{"type":"Point","coordinates":[10,10]},{"type":"Point","coordinates":[30,30]},'
    '{"type":"LineString","coordinates":[[15,15],[20,20]]}],"type":"GeometryCollection","srid":0}, '
    "[a, b]]"
)


def test_paimon_all_types_twice(spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str) -> None:
    # Like Paimon's testAllTypes: the second round runs on the existing table (a new job and checkpoint).
    for round_ in range(2):
        topic = f"{topic_name}_{round_}"
        kafka.create_topic(topic, 1)
        _produce_file(kafka, topic, CANAL_TABLE / "alltype" / "canal-data.txt")
        job = _sync_table(
            warehouse, kafka, topic, partition_keys=("pt",), primary_keys=("pt", "_id"),
            checkpoint=f"{warehouse}/ck{round_}",
        )  # fmt: skip
        assert job() == 0
        schema = dict(paimon_schema(warehouse, TABLE))
        assert schema["_id"] == "INT NOT NULL" and schema["pt"] == "DECIMAL(2, 1) NOT NULL"
        assert schema["_tinyint1"] == "BOOLEAN" and schema["_bigint_unsigned"] == "DECIMAL(20, 0)"
        assert schema["_fixed"] == "STRING" and schema["_datetime_p2"] == "TIMESTAMP(2)"
        assert schema["_bin"] == "VARBINARY(10)" and schema["_set"] == "ARRAY<STRING>"
        assert schema["_time"] == "TIME(0)" and schema["_point"] == "STRING"
        rows = java_rows(warehouse, TABLE)
        assert rows[0] == ALL_TYPES_ROW_1
        # the second row: only _id, pt and _serial (the 21st column) are set
        assert len(schema) == 75
        assert rows[1] == "+I[2, 2.2, " + ", ".join(["NULL"] * 18) + ", 50000000000, " + ", ".join(["NULL"] * 54) + "]"
        # Every type survives compaction's read and rewrite, read back by both libraries.
        before = read_pypaimon(warehouse, TABLE)
        _compact_fully(warehouse, TABLE)
        assert java_rows(warehouse, TABLE) == rows
        assert read_pypaimon(warehouse, TABLE) == before


def test_paimon_assert_schema_compatible(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Catalog(warehouse).create_table(TABLE, [("k", string()), ("v1", string())], ["k"], [], {})
    kafka.create_topic(topic_name, 1)
    _produce_file(kafka, topic_name, CANAL_TABLE / "schemaevolution" / "canal-data-1.txt")
    capsys.readouterr()
    keys = {"partition_keys": ("pt",), "primary_keys": ("pt", "_id")}
    assert _sync_table(warehouse, kafka, topic_name, table_conf=basic_table_config(), **keys)() != 0
    assert (
        "Paimon schema and source table schema are not compatible.\n"
        "Paimon fields are: [`k` STRING NOT NULL, `v1` STRING].\n"
        "Source table fields are: [`pt` INT NOT NULL, `_id` INT NOT NULL, `v1` VARCHAR(10)]"
    ) in capsys.readouterr().err
