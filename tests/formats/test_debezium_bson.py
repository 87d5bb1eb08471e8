"""debezium-bson (MongoDB change events) on the messages of tests/data/debezium-bson."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats import get_parser
from formats.debezium_bson import document_row, java_double, parse
from formats.events import DataChangeEvent, MessageContext, Op, TypeSystem
from schema_evolution.errors import MalformedMessage, SourcePosition

DATA = Path(__file__).resolve().parents[1] / "data" / "debezium-bson"
CTX = MessageContext(SourcePosition("mongo1.shop.orders", 0, 7))


def _events(value: str, key: str | None = None) -> list[DataChangeEvent]:
    events = parse((DATA / value).read_bytes(), (DATA / key).read_bytes() if key else None, CTX)
    assert all(isinstance(e, DataChangeEvent) for e in events)
    return events  # type: ignore[return-value]


def test_registered() -> None:
    assert get_parser("debezium-bson") is parse
    assert get_parser("DEBEZIUM-BSON") is parse


def test_insert_writes_every_bson_type_as_paimon_does() -> None:
    (event,) = _events("insert-all-types.json")
    assert event.op is Op.INSERT and event.before is None
    assert (event.database, event.table, event.op_ts_ms) == ("shop", "orders", 1764201600000)
    assert event.schema.type_system is TypeSystem.STRING
    assert event.schema.primary_keys == ("_id",)
    assert event.after is not None
    assert [n for n, _ in event.schema.fields] == list(event.after)
    assert event.after == {
        "_id": "6746f2a05c0d5ac87eb8c001",
        "name": 'Ada "Lovelace"\n',
        "qty": "7",
        "big": "9007199254740993",
        "relaxed_long": "1764201600000",
        "price": "19.5",
        "ratio": "1.0E-5",
        "huge": "1.2345678E7",
        "zero": "-0.0",
        "inf": "-Infinity",
        "amount": "1234.5600",
        "exp": "1E+3",
        "dec_inf": "Infinity",
        "created": "1764201600000",
        "iso": "1764201600123",
        "before_epoch": "-1000",
        "ts": "1764201600",
        "flag": "true",
        "off": "false",
        "nothing": None,
        "undef": None,
        "tags": '["a",2,3.0,null]',
        "uuid4": "b84dbfe2-fe4c-4953-a225-990ea3700f29",
        "uuid_legacy": "uE2/4v5MSVOiJZkOo3APKQ==",
        "bin": "AAEC/w==",
        "uuid_text": "b84dbfe2-fe4c-4953-a225-990ea3700f29",
        "re": "/^a\\/b$/im",
        "re_empty": "/(?:)/",
        "sym": "sym",
        "js": "function(){return 1}",
        "js_scope": '{"$code":"f(x)","$scope":{"x":5}}',
        "lo": "BsonMinKey",
        "hi": "BsonMaxKey",
        "ptr": "BsonDbPointer{namespace='shop.users', id=6746f2a05c0d5ac87eb8c0ff}",
        "address": '{"city":"Zürich","geo":{"lat":47.3769,"lon":"NaN"},"since":0,"zip":"8001"}',
    }


def test_update_with_before_deletes_it_then_inserts_after() -> None:
    removed, added = _events("update-with-before.json", "key-oid.json")
    assert removed.op is Op.DELETE and removed.after is None
    assert removed.before == {"_id": "6746f2a05c0d5ac87eb8c002", "status": "new", "qty": "1"}
    assert added.op is Op.INSERT and added.before is None
    assert added.after == {
        "_id": "6746f2a05c0d5ac87eb8c002",
        "status": "paid",
        "qty": "1",
        "paid_at": "1764201660000",
    }
    assert removed.schema.primary_keys == added.schema.primary_keys == ("_id",)


def test_update_without_before_deletes_by_the_keys_id() -> None:
    removed, added = _events("update-without-before.json", "key-oid.json")
    assert removed.op is Op.DELETE and removed.before == {"_id": "6746f2a05c0d5ac87eb8c002"}
    assert removed.schema.fields == (("_id", None),)
    assert added.after is not None and added.after["status"] == "paid"


def test_delete_without_before_reads_the_id_from_a_key_envelope() -> None:
    (event,) = _events("delete-without-before.json", "key-string-id-envelope.json")
    assert event.op is Op.DELETE and event.before == {"_id": "order-42"} and event.after is None


def test_delete_with_before() -> None:
    (event,) = _events("delete-with-before.json")
    assert event.op is Op.DELETE and event.before is not None and event.before["status"] == "paid"


def test_snapshot_read_inside_a_connect_envelope() -> None:
    (event,) = _events("snapshot-read-envelope.json")
    assert event.op is Op.INSERT and event.after == {"_id": "order-42", "total": "10.00"}


def test_tombstone_is_no_change() -> None:
    assert parse(None, b'{"id": "1"}', CTX) == []


def test_update_without_before_or_key_is_malformed() -> None:
    value = (DATA / "update-without-before.json").read_bytes()
    with pytest.raises(MalformedMessage, match="no 'before' and no 'id' in the message key"):
        parse(value, None, CTX)
    with pytest.raises(MalformedMessage, match="key is not JSON"):
        parse(value, b"\xff", CTX)
    with pytest.raises(MalformedMessage, match="'id': not valid Extended JSON"):
        parse(value, b'{"id": "ObjectId(1)"}', CTX)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (1.0, "1.0"),
        (3.14, "3.14"),
        (-2.5, "-2.5"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (123456789.123, "1.23456789123E8"),
        (1.5e-10, "1.5E-10"),
        (1e22, "1.0E22"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_java_double(value: float, text: str) -> None:
    assert java_double(value) == text


def test_nested_strings_are_escaped_as_jackson_does() -> None:
    row = document_row('{"d": {"s": "a\\"b\\\\c\\n\\u0001/é"}}')
    assert row == {"d": '{"s":"a\\"b\\\\c\\n\\u0001/é"}'}


def test_long_overflow_and_legacy_regex_and_relaxed_dates() -> None:
    row = document_row(
        '{"n": 99999999999999999999, "r": {"$regex": "a", "$options": "x"}, '
        '"d": {"$date": "1969-12-31T23:59:59.999+00:00"}, "i": {"$numberInt": "-3"}}'
    )
    assert row == {"n": "1.0E20", "r": "/a/x", "d": "-1", "i": "-3"}


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    value = json.dumps({"before": None, "after": deep, "op": "c"}).encode()
    with pytest.raises(MalformedMessage, match="nested too deeply"):
        parse(value, None, CTX)
    nested = '{"a": ' + '{"b": ' * 5000 + "1" + "}" * 5001
    with pytest.raises(MalformedMessage, match="nested too deeply"):
        parse(json.dumps({"before": None, "after": nested, "op": "c"}).encode(), None, CTX)


def test_a_lone_surrogate_in_extended_json_is_not_valid() -> None:
    # Python's json takes "\ud800" (orjson and msgspec refuse it); Arrow cannot write the string.
    value = (DATA / "update-without-before.json").read_bytes()
    with pytest.raises(MalformedMessage, match="'id': not valid Extended JSON"):
        parse(value, b'{"id": "{\\"$oid\\": \\"\\\\ud800\\"}"}', CTX)
