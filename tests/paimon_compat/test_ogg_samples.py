"""ogg-json against the real messages of Paimon's Kafka OGG tests (read in place)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from formats.ogg import parse
from schema_evolution.errors import SourcePosition
from tests.formats.strings import as_string
from tests.paimon_compat.samples import SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("cdc", 3, 42))
PRODUCT_COLUMNS = ("id", "name", "description", "weight")


def _ms(text: str) -> int:
    return (datetime.fromisoformat(text).replace(tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(
        milliseconds=1
    )


OGG = SAMPLES / "ogg"


OGG_FILES = sample_files(OGG.name)


def _events(path: Path) -> list[DataChangeEvent]:
    out: list[DataChangeEvent] = []
    for value in sample_messages(path):
        (e,) = parse(value, None, CTX)
        assert isinstance(e, DataChangeEvent)
        out.append(e)
    return out


def _sample(path: str) -> list[DataChangeEvent]:
    return _events(OGG / path)


def _replay(paths: list[str], columns: list[str]) -> list[str]:
    """Apply the files' events to a primary-key ("id") table model; rows shown as Paimon's tests show them."""
    rows: dict[str | None, dict[str, str | None]] = {}
    for path in paths:
        for e in _sample(path):
            columns += [c for c, _ in e.schema.fields if c not in columns]
            if e.before is not None:
                del rows[as_string("id", e.before["id"])]
            if e.after is not None:
                rows[as_string("id", e.after["id"])] = {c: as_string(c, v) for c, v in e.after.items()}
    return sorted("+I[" + ", ".join(r.get(c) or "NULL" for c in columns) + "]" for r in rows.values())


@pytest.mark.parametrize("path", OGG_FILES)
def test_every_paimon_ogg_sample_parses(path: Path) -> None:
    events = _events(path)
    assert events, "every ogg sample file holds row messages"
    for e in events:
        assert e.database and e.table
        assert (e.before is None) == (e.op is Op.INSERT)
        assert (e.after is None) == (e.op is Op.DELETE)
        assert e.schema.type_system is TypeSystem.STRING
        assert all(t is None for _, t in e.schema.fields)
        assert e.schema.primary_keys
        assert e.op_ts_ms is not None and e.op_ts_ms > _ms("2020-01-01")


def test_the_samples_are_there() -> None:
    assert len(sample_paths("ogg")) == 21
    assert sum(len(sample_messages(p)) for p in sample_paths("ogg")) == 43


def test_insert_splits_table_at_the_dot_and_reads_op_ts_as_utc() -> None:
    event = _sample("table/event/event-insert.txt")[0]
    assert event.op is Op.INSERT
    assert (event.database, event.table) == ("OGG", "EVENT")
    assert event.before is None
    assert event.after == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    assert event.schema.fields == tuple((c, None) for c in PRODUCT_COLUMNS)
    assert event.schema.primary_keys == ("id",)
    assert event.op_ts_ms == 1589384406000  # 2020-05-13 15:40:06 UTC


def test_update_carries_before_and_after() -> None:
    (event,) = _sample("table/event/event-update.txt")
    assert event.op is Op.UPDATE
    assert event.before == {"id": 103, "name": "scooter", "description": "Big 2-wheel scooter ", "weight": 5.1}
    assert event.after == {"id": 103, "name": "scooter", "description": "Big 2-wheel scooter ", "weight": 8.1}
    assert event.op_ts_ms == _ms("2020-05-13 17:32:10.904")


def test_delete_has_before_image_only() -> None:
    (event,) = _sample("table/event/event-delete.txt")
    assert event.op is Op.DELETE
    assert event.after is None
    assert event.before == {"id": 103, "name": "scooter", "description": "Big 2-wheel scooter ", "weight": 8.1}
    assert event.op_ts_ms == _ms("2020-05-13 17:32:24.455")


def test_cdc_operations_replay_matches_paimon() -> None:
    # KafkaSyncTableActionITCase.testCDCOperations: insert 101..103, update 103's weight, delete 103.
    columns = list(PRODUCT_COLUMNS)
    assert _replay(["table/event/event-insert.txt"], columns)[-1] == "+I[103, scooter, Big 2-wheel scooter , 5.1]"
    assert _replay(["table/event/event-insert.txt", "table/event/event-update.txt"], columns)[-1] == (
        "+I[103, scooter, Big 2-wheel scooter , 8.1]"
    )
    assert _replay([f"table/event/event-{n}.txt" for n in ("insert", "update", "delete")], columns) == [
        "+I[101, scooter, Small 2-wheel scooter, 3.14]",
        "+I[102, car battery, 12V car battery, 8.1]",
    ]


def test_schema_evolution_replay_matches_paimon_expected_rows() -> None:
    columns = list(PRODUCT_COLUMNS)
    shown = _replay([f"table/schemaevolution/ogg-data-{n}.txt" for n in (1, 2, 3)], columns)
    assert columns == [*PRODUCT_COLUMNS, "age", "address"]
    assert shown == [
        "+I[102, car battery, 12V car battery, 8.1, NULL, NULL]",
        "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18, NULL]",
        "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24, NULL]",
        "+I[105, hammer, 14oz carpenter's hammer, 0.875, NULL, Beijing]",
        "+I[107, rocks, box of assorted rocks, 5.3, NULL, NULL]",
    ]


def test_watermark_sample_keeps_full_double_precision() -> None:
    first = _sample("table/watermark/ogg-data-1.txt")[0]
    assert first.after is not None
    assert as_string("weight", first.after["weight"]) == "3.140000104904175"  # Paimon's DOUBLE expectation


def test_multi_table_topic_names_each_table() -> None:
    events = _sample("database/include/topic0/ogg-data-1.txt")
    assert [(e.database, e.table) for e in events] == [
        ("PAIMON_SYNC_DATABASE_AFFIX", "paimon_1"),
        ("PAIMON_SYNC_DATABASE_AFFIX", "paimon_2"),
        ("PAIMON_SYNC_DATABASE_AFFIX", "ignore"),
        ("PAIMON_SYNC_DATABASE_AFFIX", "flink"),
    ]


def test_names_keep_their_case_for_the_catalog_to_decide() -> None:
    a, b = _sample("database/case-insensitive/ogg-data-1.txt")
    assert (a.database, a.table) == ("PAIMON_SYNC_DATABASE", "T1")
    assert [n for n, _ in a.schema.fields] == ["ID", "NAME", "description", "weight"]
    assert a.schema.primary_keys == ("ID",)
    assert [n for n, _ in b.schema.fields] == ["ID", "name", "description", "WEIGHT"]
    assert b.schema.primary_keys == ("id",)


def test_messages_with_the_same_columns_share_one_schema_object() -> None:
    a, b = _sample("table/startupmode/ogg-data-1.txt")
    c, _ = _sample("table/schemaevolution/ogg-data-2.txt")
    assert a.schema is b.schema
    assert c.schema is not a.schema
    assert [n for n, _ in c.schema.fields] == [*PRODUCT_COLUMNS, "age"]
