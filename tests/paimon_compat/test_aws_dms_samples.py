"""aws-dms-json against the messages of Paimon's Kafka AWS DMS tests (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.aws_dms import parse
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from schema_evolution.errors import SourcePosition
from tests.paimon_compat.samples import SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("cdc", 3, 42))


DMS_FILES = sample_files("aws-dms")


TS = 1730032743210  # 2024-10-27T12:39:03.210671Z


def _events(path: str) -> list[DataChangeEvent]:
    out: list[DataChangeEvent] = []
    for value in sample_messages(SAMPLES / "aws-dms" / path):
        for e in parse(value, None, CTX):
            assert isinstance(e, DataChangeEvent)
            out.append(e)
    return out


@pytest.mark.parametrize("path", DMS_FILES)
def test_every_paimon_dms_sample_parses(path: Path) -> None:
    messages = sample_messages(path)
    assert messages
    for value in messages:
        (event,) = parse(value, None, CTX)
        assert isinstance(event, DataChangeEvent)
        assert event.database and event.table
        assert (event.before is None) == (event.op is Op.INSERT)
        assert (event.after is None) == (event.op is Op.DELETE)
        assert event.schema.type_system is TypeSystem.STRING
        assert event.schema.primary_keys == ()
        assert event.op_ts_ms == TS
        for image in (event.before, event.after):
            assert image is None or not any(n.startswith("BI_") for n in image)


def test_the_samples_are_there() -> None:
    assert len(sample_paths("aws-dms")) == 18
    assert sum(len(sample_messages(p)) for p in sample_paths("aws-dms")) == 38


def test_insert_has_after_image_database_and_table() -> None:
    first = _events("table/schemaevolution/aws-dms-data-1.txt")[0]
    assert first.op is Op.INSERT
    assert (first.database, first.table) == ("test", "product")
    assert first.after == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    assert first.schema.fields == (("id", None), ("name", None), ("description", None), ("weight", None))


def test_schema_evolution_file_3_matches_paimons_itcase() -> None:
    # KafkaSyncTableActionITCase.testSchemaEvolutionImpl, data-3: insert 105, delete 101,
    # update 105 (address Shanghai -> Beijing via BI_ columns), insert 107.
    ins, dele, upd, ins2 = _events("table/schemaevolution/aws-dms-data-3.txt")
    assert ins.op is Op.INSERT and ins.after is not None and ins.after["address"] == "Shanghai"
    assert dele.op is Op.DELETE and dele.after is None
    assert dele.before == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    assert upd.op is Op.UPDATE
    assert upd.after == {
        "id": 105,
        "name": "hammer",
        "description": "14oz carpenter's hammer",
        "weight": 0.875,
        "address": "Beijing",
    }
    assert upd.before == dict(upd.after, address="Shanghai")
    assert [n for n, _ in upd.schema.fields] == ["id", "name", "description", "weight", "address"]
    assert ins2.op is Op.INSERT and ins2.after is not None and ins2.after["id"] == 107


def test_new_column_appears_in_the_schema() -> None:
    e = _events("table/schemaevolution/aws-dms-data-2.txt")[0]
    assert [n for n, _ in e.schema.fields] == ["id", "name", "description", "weight", "age"]
    assert e.after is not None and e.after["age"] == 18


def test_json_null_is_sql_null() -> None:
    # Paimon's testTableFiledValNull stores the text "null" here; lakecdc stores a SQL NULL.
    e = _events("table/schemaevolution/aws-dms-data-4.txt")[0]
    assert e.after is not None and e.after["weight"] is None and "weight" in e.after


def test_database_sync_samples_route_by_schema_and_table_name() -> None:
    tables = [e.table for e in _events("database/include/topic0/aws-dms-data-1.txt")]
    assert tables == ["paimon_1", "paimon_2", "ignore", "flink"]
    assert {e.database for e in _events("database/prefixsuffix/topic1/aws-dms-data-2.txt")} == {"paimon_sync_database"}


def test_rows_of_one_table_share_one_schema_object() -> None:
    a, b = _events("table/startupmode/aws-dms-data-1.txt")
    assert a.schema is b.schema
