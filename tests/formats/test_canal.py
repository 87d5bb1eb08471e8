"""canal-json against captured messages in tests/data/ (the replay of Paimon's own samples is tests/paimon_compat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats import get_parser
from formats.canal import parse
from formats.events import DataChangeEvent, MessageContext, TypeSystem
from schema_evolution.errors import SourcePosition

DATA = Path(__file__).resolve().parents[1] / "data" / "canal"
CTX = MessageContext(SourcePosition("cdc", 3, 42))


def test_schema_keeps_each_messages_column_order() -> None:
    # Equal dicts in another key order are another schema: the column order makes the table.
    first, reordered = (
        b'{"data":[{"a":"1","b":"2"}],"mysqlType":{%s},"pkNames":["a"],"type":"INSERT","table":"t"}' % types
        for types in (b'"a":"int","b":"int"', b'"b":"int","a":"int"')
    )
    assert [n for n, _ in parse(first, None, CTX)[0].schema.fields] == ["a", "b"]
    assert [n for n, _ in parse(reordered, None, CTX)[0].schema.fields] == ["b", "a"]
    assert [n for n, _ in parse(first, None, CTX)[0].schema.fields] == ["a", "b"]


def test_message_without_mysql_type_types_every_column_as_string() -> None:
    value = (DATA / "no-mysqltype.json").read_bytes()
    (event,) = parse(value, None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.schema.type_system is TypeSystem.STRING
    assert [n for n, _ in event.schema.fields] == ["id", "name"]


def test_registry_knows_canal_and_names_the_known_formats() -> None:
    assert get_parser("canal-json") is parse
    with pytest.raises(ValueError, match="not yet supported"):
        get_parser("debezium-avro")
    with pytest.raises(ValueError, match="known formats: aliyun-json, aws-dms-json, canal-json, debezium-json"):
        get_parser("protobuf")
