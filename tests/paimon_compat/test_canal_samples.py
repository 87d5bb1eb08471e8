"""canal-json against the real messages of Paimon's Kafka canal tests (read in place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.canal import parse
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from schema_evolution.errors import SourcePosition
from tests.paimon_compat.samples import SAMPLES, sample_files, sample_messages, sample_paths

CTX = MessageContext(SourcePosition("cdc", 3, 42))


CANAL_FILES = sample_files("canal")


@pytest.mark.parametrize("path", CANAL_FILES)
def test_every_paimon_canal_sample_parses(path: Path) -> None:
    messages = sample_messages(path)  # a few of Paimon's files hold only the licence header
    for value in messages:
        events = parse(value, None, CTX)
        for e in events:
            if isinstance(e, DataChangeEvent):
                # "incomplete" samples name no database/table; routing decides what that means.
                assert (e.table is None) == (e.database is None)
                assert (e.before is None) == (e.op is Op.INSERT)
                assert (e.after is None) == (e.op is Op.DELETE)
            else:
                assert isinstance(e, SchemaChangeEvent) and e.ddl


def test_the_samples_are_there() -> None:
    assert sum(len(sample_messages(p)) for p in sample_paths("canal")) > 100


def _one(path: str) -> list[bytes]:
    return sample_messages(SAMPLES / "canal" / path)


def test_insert_has_after_image_and_types() -> None:
    (value,) = _one("table/schemaevolution/canal-data-1.txt")[:1]
    (event,) = parse(value, None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.op is Op.INSERT
    assert (event.database, event.table) == ("paimon_sync_table", "schema_evolution_1")
    assert event.after == {"pt": "1", "_id": "1", "v1": "one"}
    assert event.schema.fields == (("pt", "INT"), ("_id", "INT"), ("v1", "VARCHAR(10)"))
    assert event.schema.primary_keys == ("_id",)
    assert event.schema.type_system is TypeSystem.MYSQL
    assert event.op_ts_ms == 1683006706000


def test_multi_row_insert_keeps_row_order() -> None:
    value = _one("table/schemaevolution/canal-data-1.txt")[1]
    events = parse(value, None, CTX)
    assert [e.after["_id"] for e in events if isinstance(e, DataChangeEvent) and e.after] == ["2", "4"]


def test_update_before_image_is_data_overlaid_with_old() -> None:
    (value,) = _one("table/event/event-update.txt")
    (event,) = parse(value, None, CTX)
    assert isinstance(event, DataChangeEvent) and event.op is Op.UPDATE
    assert event.after == {"pt": "1", "_id": "2", "v1": "second", "v2": None}
    assert event.before == {"pt": "1", "_id": "2", "v1": "two", "v2": None}


def test_delete_has_before_image_only() -> None:
    events = [e for v in _one("table/event/event-delete.txt") for e in parse(v, None, CTX)]
    deletes = [e for e in events if isinstance(e, DataChangeEvent) and e.op is Op.DELETE]
    assert deletes
    assert all(e.after is None and e.before for e in deletes)


def test_ddl_message_becomes_schema_change_event() -> None:
    value = _one("table/schemaevolution/canal-data-2.txt")[0]
    (event,) = parse(value, None, CTX)
    assert isinstance(event, SchemaChangeEvent)
    assert event.table == "schema_evolution_1"
    assert event.ddl.endswith("ALTER TABLE schema_evolution_1 ADD COLUMN v2 INT")


def test_messages_of_one_table_share_one_schema_object() -> None:
    a, b = (parse(v, None, CTX)[0] for v in _one("database/schemaevolution/topic0/canal-data-1.txt")[:2])
    assert isinstance(a, DataChangeEvent) and isinstance(b, DataChangeEvent)
    assert a.schema is b.schema
