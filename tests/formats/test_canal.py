"""canal-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats import get_parser
from formats.canal import parse
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from schema_evolution.errors import SourcePosition
from tests.conftest import sample_messages

DATA = Path(__file__).resolve().parents[1] / "data" / "canal"
CTX = MessageContext(SourcePosition("cdc", 3, 42))


def test_schema_keeps_each_messages_column_order() -> None:
    # Equal dicts in another key order are another schema: the column order makes the table.
    first, reordered = (
        b'{"data":[{"a":"1","b":"2"}],"mysqlType":{%s},"pkNames":["a"],"type":"INSERT","table":"t"}' % types
        for types in (b'"a":"int","b":"int"', b'"b":"int","a":"int"')
    )
    assert _column_names(first) == ["a", "b"]
    assert _column_names(reordered) == ["b", "a"]
    assert _column_names(first) == ["a", "b"]


def _column_names(value: bytes) -> list[str]:
    event = parse(value, None, CTX)[0]
    assert isinstance(event, DataChangeEvent)
    return [n for n, _ in event.schema.fields]


def test_message_without_mysql_type_types_every_column_as_string() -> None:
    value = (DATA / "no-mysqltype.json").read_bytes()
    (event,) = parse(value, None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.schema.type_system is TypeSystem.STRING
    assert [n for n, _ in event.schema.fields] == ["id", "name"]


def test_registry_knows_canal_and_names_the_known_formats() -> None:
    assert get_parser("canal-json") is parse
    known = "known formats: aliyun-json, aws-dms-json, canal-json, debezium-avro, debezium-bson, debezium-json"
    with pytest.raises(ValueError, match=known):
        get_parser("protobuf")


STEPS = DATA / "evolution" / "steps"


def _events(path: str) -> list[DataChangeEvent | SchemaChangeEvent]:
    return [e for value in sample_messages(STEPS / path) for e in parse(value, None, CTX)]


def test_insert_has_after_image_and_types() -> None:
    event = _events("step-1.txt")[0]
    assert isinstance(event, DataChangeEvent)
    assert event.op is Op.INSERT and event.before is None
    assert (event.database, event.table) == ("shop", "parts")
    assert event.after == {"shard": "1", "id": "1", "name": "bolt"}
    assert event.schema.fields == (("shard", "INT"), ("id", "INT"), ("name", "VARCHAR(10)"))
    assert event.schema.primary_keys == ("shard", "id")
    assert event.schema.type_system is TypeSystem.MYSQL
    assert event.op_ts_ms == 1720000001000  # "es", the change's time in MySQL


def test_multi_row_insert_keeps_row_order() -> None:
    events = _events("step-1.txt")[:2]
    assert [e.after["id"] for e in events if isinstance(e, DataChangeEvent) and e.after] == ["1", "2"]
    (two_rows,) = [v for v in sample_messages(STEPS / "step-2.txt") if b'"pin"' in v and b"INSERT" in v]
    assert [e.after["id"] for e in parse(two_rows, None, CTX) if isinstance(e, DataChangeEvent) and e.after] == [
        "5",
        "6",
    ]


def test_update_before_image_is_data_overlaid_with_old() -> None:
    (event,) = [e for e in _events("step-2.txt") if isinstance(e, DataChangeEvent) and e.op is Op.UPDATE]
    assert event.after == {"shard": "1", "id": "2", "name": "washer", "qty": None}
    assert event.before == {"shard": "1", "id": "2", "name": "nut", "qty": None}


def test_delete_has_before_image_only() -> None:
    (event,) = [e for e in _events("step-2.txt") if isinstance(e, DataChangeEvent) and e.op is Op.DELETE]
    assert event.after is None
    assert event.before == {"shard": "1", "id": "5", "name": "pin", "qty": "50"}


def test_ddl_message_becomes_schema_change_event() -> None:
    event = _events("step-2.txt")[0]
    assert isinstance(event, SchemaChangeEvent)
    assert (event.database, event.table) == ("shop", "parts")
    assert event.ddl == "ALTER TABLE parts ADD COLUMN qty INT"


def test_messages_of_one_table_share_one_schema_object() -> None:
    a, b, c = (e for e in _events("step-1.txt") if isinstance(e, DataChangeEvent))  # two messages
    assert a.schema is b.schema is c.schema
    later = _events("step-2.txt")[1]
    assert isinstance(later, DataChangeEvent) and later.schema is not a.schema
