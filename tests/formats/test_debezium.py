"""debezium-json against captured messages in tests/data/ (Paimon's own samples: tests/paimon_compat)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.debezium import parse
from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from schema_evolution.conversion import convert_column
from schema_evolution.errors import MalformedMessage, SourcePosition, UnsupportedChange
from schema_evolution.types import parse_type
from tests.conftest import sample_messages

DATA = Path(__file__).resolve().parents[1] / "data" / "debezium"
CTX = MessageContext(SourcePosition("cdc", 3, 42))


def _event(value: bytes, key: bytes | None = None) -> DataChangeEvent:
    (event,) = parse(value, key, CTX)
    assert isinstance(event, DataChangeEvent)
    return event


def test_update_with_envelope_converts_every_logical_type() -> None:
    event = _event((DATA / "update-envelope.json").read_bytes(), (DATA / "key-envelope.json").read_bytes())
    assert event.op is Op.UPDATE
    assert (event.database, event.table, event.op_ts_ms) == ("inventory", "products", 1700000000000)
    assert event.schema.primary_keys == ("id",)
    assert event.schema.fields == (
        ("id", "INT"), ("price", "DECIMAL(10, 2)"), ("created", "TIMESTAMP(3)"), ("updated", "TIMESTAMP(6)"),
        ("day", "DATE"), ("at", "TIME(0)"), ("data", "BYTES"), ("tags", "STRING"), ("loc", "STRING"), ("doc", "STRING"),
    )  # fmt: skip
    assert event.before == {
        "id": 1, "price": "123.45", "created": "2023-03-23 14:30:05.123000", "updated": "2023-03-23 20:00:10.500000",
        "day": "2023-03-23", "at": "10:13:23.000001", "data": b"\x00\xffraw", "tags": "a,c",
        "loc": '{"coordinates":[3,4],"type":"Point","srid":4326}', "doc": '{"k": [1, 2]}',
    }  # fmt: skip
    assert event.after == dict(event.before, price="-1.50", tags="", loc=None, doc=None)


def test_delete_with_envelope_and_plain_key() -> None:
    event = _event((DATA / "delete-envelope.json").read_bytes(), b'{"id": 1}')
    assert event.op is Op.DELETE and event.after is None
    assert event.before is not None and event.before["price"] == "-1.50"
    assert event.schema.primary_keys == ("id",)
    assert event.op_ts_ms == 1700000000000


@pytest.mark.parametrize("key", [None, b"", b"not json", b'"101"', b"[1]"])
def test_keys_that_name_no_fields_give_no_primary_keys(key: bytes | None) -> None:
    assert _event((DATA / "delete-envelope.json").read_bytes(), key).schema.primary_keys == ()


def test_messages_of_one_table_share_one_schema_object() -> None:
    a = _event((DATA / "update-envelope.json").read_bytes(), b'{"id": 1}')
    b = _event((DATA / "delete-envelope.json").read_bytes(), b'{"id": 2}')
    assert a.schema is b.schema


def test_snapshot_read_with_pk_names_in_payload() -> None:
    event = _event((DATA / "snapshot-read-pknames.json").read_bytes(), b'{"other": 1}')
    assert event.op is Op.INSERT
    assert event.schema.primary_keys == ("k1", "k2")  # pkNames wins over the key, as in Paimon
    assert event.after == {"k1": "a", "k2": 2, "v": None}
    assert event.op_ts_ms == 1700000003000  # no source.ts_ms: the payload's ts_ms


def test_update_without_before_keeps_after_as_before() -> None:
    event = _event((DATA / "update-before-null.json").read_bytes())
    assert event.op is Op.UPDATE
    assert event.before == event.after == {"id": 7, "qty": 2}


def test_numbers_a_double_cannot_hold_are_read_exactly() -> None:
    event = _event((DATA / "exact-numbers.json").read_bytes())
    assert event.after == {
        "id": 18446744073709551616,
        "amount": "1.00000000000000000001",
        "small": "0.5",
        "nested": '{"v":[123456789012345678901.5,2]}',
    }
    assert json.loads(event.after["nested"]) == {"v": [123456789012345678901.5, 2]}


def test_schema_change_topic_message_is_a_schema_change_event() -> None:
    (event,) = parse((DATA / "schema-change.json").read_bytes(), None, CTX)
    assert isinstance(event, SchemaChangeEvent)
    assert (event.database, event.table) == ("inventory", "products")
    assert event.ddl == "ALTER TABLE products ADD COLUMN note VARCHAR(20)"
    assert event.op_ts_ms == 1700000004000


def test_truncate_is_a_clear_terminal_error() -> None:
    with pytest.raises(UnsupportedChange) as info:
        parse((DATA / "truncate.json").read_bytes(), None, CTX)
    text = str(info.value)
    assert "table 'inventory.orders'" in text
    assert "topic 'cdc', partition 3, offset 42" in text
    assert "truncate ('op': 't') is not supported yet" in text
    assert "skipped.operations=t" in text
    assert info.value.terminal


def test_logical_decoding_message_is_refused() -> None:
    with pytest.raises(UnsupportedChange, match="'op': 'm'"):
        parse((DATA / "message-op.json").read_bytes(), None, CTX)


def test_exact_parse_path_reports_bad_json_too() -> None:
    with pytest.raises(MalformedMessage, match="not valid JSON"):
        parse(b'{"after": {"n": 12345678901234567890}', None, CTX)
    with pytest.raises(MalformedMessage, match="expected a JSON object, got list"):
        parse(b"[12345678901234567890]", None, CTX)


def _bare() -> list[DataChangeEvent]:
    return [_event(v) for v in sample_messages(DATA / "bare-payload.txt")]


def test_bare_payload_insert_is_untyped() -> None:
    event = _bare()[0]
    assert event.op is Op.INSERT and event.before is None
    assert (event.database, event.table, event.op_ts_ms) == ("shop", "goods", 1710000001000)
    assert event.after == {"sku": 501, "title": "kettle", "note": "1.7 l", "weight": 1.25}
    assert event.schema.type_system is TypeSystem.STRING
    assert event.schema.fields == (("sku", None), ("title", None), ("note", None), ("weight", None))
    assert event.schema.primary_keys == ()


def test_bare_payload_partial_update_and_delete() -> None:
    _, _, update, delete, _ = _bare()
    assert update.op is Op.UPDATE and update.op_ts_ms == 1710000003000
    # 'before' carries only the changed column: the before image is 'after' overlaid with it
    assert update.after == {"sku": 502, "title": "toaster", "note": "2 slots", "weight": 2.75}
    assert update.before == dict(update.after, weight=2.5)
    assert delete.op is Op.DELETE and delete.after is None
    assert delete.before == {"sku": 501, "title": "kettle", "note": "1.7 l", "weight": 1.25}


def test_bare_payload_messages_of_one_table_share_one_schema_until_a_column_appears() -> None:
    first, second, *_, wider = _bare()
    assert first.schema is second.schema
    assert [n for n, _ in wider.schema.fields] == [n for n, _ in first.schema.fields] + ["color", "dims"]


def test_bare_payload_nested_values_are_kept_for_string_columns() -> None:
    wider = _bare()[-1]
    assert wider.after is not None and wider.after["note"] is None
    assert wider.after["dims"] == {"h": 40, "w": [18, 20]}
    assert convert_column("dims", [wider.after["dims"]], parse_type("STRING")).to_pylist() == ['{"h":40,"w":[18,20]}']


@pytest.mark.parametrize("field", [{"type": {"nested": 1}}, {"type": "int32", "name": ["a"]}, {"name": {"x": 1}}])
def test_a_schema_field_whose_type_or_name_is_not_text_is_malformed(field: dict[str, object]) -> None:
    """Found by the fuzz tests: an unhashable 'type' escaped as a TypeError instead of naming the message."""
    schema = {"type": "struct", "fields": [{"field": "after", "fields": [{"field": "id", **field}]}]}
    value = {"schema": schema, "payload": {"op": "c", "after": {"id": 1}, "source": {"db": "d", "table": "t"}}}
    with pytest.raises(MalformedMessage, match="column 'id': its schema's 'type' or 'name' is not text"):
        parse(json.dumps(value).encode(), None, CTX)


@pytest.mark.parametrize(
    "ddl", [b"\xed\xa0\x80ALTER TABLE t ADD c INT", b"\\ud800ALTER TABLE t ADD c INT"], ids=["encoded", "escaped"]
)
def test_exact_parse_path_refuses_a_lone_surrogate_as_the_other_json_paths_do(ddl: bytes) -> None:
    # Found by tests/formats/test_fuzz.py: Python's json (the exact path, for numbers orjson would round)
    # took it, and the string failed the read task in Arrow instead of naming the message.
    head = b'{"source": {"version": [12345678901234567890], "db": "d", "table": "t"}, "ddl": "'
    with pytest.raises(MalformedMessage, match="not valid JSON") as raised:
        parse(head + ddl + b'", "tableChanges": []}', None, CTX)
    assert raised.value.position == CTX.position
    (event,) = parse(head + b'\\ud83d\\ude00ALTER TABLE t ADD c INT", "tableChanges": []}', None, CTX)
    assert isinstance(event, SchemaChangeEvent) and event.ddl.startswith("\U0001f600ALTER")  # a pair is a character


@pytest.mark.parametrize("name", [[None], 7, {"db": "d"}], ids=["list", "number", "object"])
def test_a_schema_change_whose_database_name_is_not_text_names_the_message(name: object) -> None:
    # Found by tests/formats/test_fuzz.py: the name reached the router, which failed with
    # "unhashable type: 'list'" instead of naming the message.
    value = {"source": {"db": "d", "table": "t"}, "databaseName": name, "ddl": "ALTER TABLE t ADD c INT"}
    with pytest.raises(MalformedMessage, match="field 'databaseName' must be a str") as raised:
        parse(json.dumps(value).encode(), None, CTX)
    assert raised.value.position == CTX.position
