"""maxwell-json against the real messages of Paimon's Kafka maxwell tests (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from formats.maxwell import parse
from schema_evolution.errors import SourcePosition
from tests.formats.strings import as_string
from tests.paimon_compat.samples import SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("cdc", 3, 42))
PRODUCT_COLUMNS = ("id", "name", "description", "weight")


def _events(path: Path) -> list[DataChangeEvent]:
    out: list[DataChangeEvent] = []
    for value in sample_messages(path):
        for e in parse(value, None, CTX):
            assert isinstance(e, DataChangeEvent)
            out.append(e)
    return out


MAXWELL = SAMPLES / "maxwell"


MAXWELL_FILES = sample_files(MAXWELL.name)


def _sample(path: str) -> list[DataChangeEvent]:
    return _events(MAXWELL / path)


@pytest.mark.parametrize("path", MAXWELL_FILES)
def test_every_paimon_maxwell_sample_parses(path: Path) -> None:
    events = _events(path)
    assert events, "every maxwell sample file holds row messages"
    for e in events:
        assert e.database and e.table
        assert (e.before is None) == (e.op is Op.INSERT)
        assert (e.after is None) == (e.op is Op.DELETE)
        assert e.schema.type_system is TypeSystem.STRING
        assert all(t is None for _, t in e.schema.fields)
        row = e.after if e.after is not None else e.before
        assert row is not None and [n for n, _ in e.schema.fields] == list(row)
        assert e.op_ts_ms is not None and e.op_ts_ms % 1000 == 0


def test_the_samples_are_there() -> None:
    assert len(sample_paths("maxwell")) == 18
    assert sum(len(sample_messages(p)) for p in sample_paths("maxwell")) == 38


def test_insert_has_after_image_keys_and_seconds_timestamp() -> None:
    event = _sample("table/schemaevolution/maxwell-data-1.txt")[0]
    assert event.op is Op.INSERT
    assert (event.database, event.table) == ("test", "product")
    assert event.before is None
    assert event.after == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    assert event.schema.fields == tuple((c, None) for c in PRODUCT_COLUMNS)
    assert event.schema.primary_keys == ("id",)
    assert event.op_ts_ms == 1596684883000


def test_update_before_image_is_data_overlaid_with_old() -> None:
    update = _sample("table/schemaevolution/maxwell-data-3.txt")[2]
    assert update.op is Op.UPDATE
    assert update.after == {
        "id": 105,
        "name": "hammer",
        "description": "14oz carpenter's hammer",
        "weight": 0.875,
        "address": "Beijing",
    }
    assert update.before == {**update.after, "address": "Shanghai"}
    assert update.op_ts_ms == 1596684906000


def test_delete_has_the_row_as_before_image() -> None:
    delete = _sample("table/schemaevolution/maxwell-data-3.txt")[1]
    assert delete.op is Op.DELETE
    assert delete.after is None
    assert delete.before == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}


def test_null_value_stays_null() -> None:
    first = _sample("table/schemaevolution/maxwell-data-4.txt")[0]
    assert first.after is not None and first.after["weight"] is None
    assert ("weight", None) in first.schema.fields


def test_schema_evolution_replay_matches_paimon_expected_rows() -> None:
    """Replays Paimon's runSingleTableSchemaEvolution files into a primary-key table model and
    compares with KafkaSyncTableActionITCase's expected rows (all columns STRING)."""
    rows: dict[str | None, dict[str, str | None]] = {}
    columns: list[str] = []
    for n in (1, 2, 3):
        for e in _sample(f"table/schemaevolution/maxwell-data-{n}.txt"):
            columns += [c for c, _ in e.schema.fields if c not in columns]
            if e.before is not None:
                del rows[as_string("id", e.before["id"])]
            if e.after is not None:
                rows[as_string("id", e.after["id"])] = {c: as_string(c, v) for c, v in e.after.items()}
    assert columns == [*PRODUCT_COLUMNS, "age", "address"]
    shown = sorted("+I[" + ", ".join(r.get(c) or "NULL" for c in columns) + "]" for r in rows.values())
    assert shown == [
        "+I[102, car battery, 12V car battery, 8.1, NULL, NULL]",
        "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18, NULL]",
        "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24, NULL]",
        "+I[105, hammer, 14oz carpenter's hammer, 0.875, NULL, Beijing]",
        "+I[107, rocks, box of assorted rocks, 5.3, NULL, NULL]",
    ]


def test_multi_table_topic_names_each_table() -> None:
    events = _sample("database/include/topic0/maxwell-data-1.txt")
    assert [(e.database, e.table) for e in events] == [
        ("paimon_sync_database_affix", "paimon_1"),
        ("paimon_sync_database_affix", "paimon_2"),
        ("paimon_sync_database_affix", "ignore"),
        ("paimon_sync_database_affix", "flink"),
    ]
    assert [e.after["id"] for e in events if e.after] == [101, 102, 103, 104]


def test_added_column_changes_the_schema_and_same_columns_share_one() -> None:
    a, b = _sample("database/schemaevolution/topic1/maxwell-data-1.txt")
    c, _ = _sample("database/schemaevolution/topic1/maxwell-data-2.txt")
    assert a.schema is b.schema
    assert c.schema is not a.schema
    assert [n for n, _ in c.schema.fields] == [*PRODUCT_COLUMNS, "address"]
