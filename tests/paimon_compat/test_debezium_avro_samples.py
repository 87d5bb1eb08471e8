"""debezium-avro against Paimon's sample ``debezium-avro/table/schema/alltype/debezium-avro-data-1.txt``
(read in place) and its ``KafkaDebeziumAvroSyncTableActionITCase``.

The sample holds the all-types table's two inserts as Kafka Connect JSON (key and value alternating);
Paimon's ITCase turns each into Avro against the schema Kafka Connect's AvroConverter derives, and
sends it through the Confluent serializer and a Schema Registry. Here the same: the Connect schema is
converted as AvroConverter converts it (structs to records, ``connect.type``/``connect.name``/
``connect.parameters``/``connect.version`` kept, optional fields ``["null", X]``, Decimal with Avro's
decimal logical type), the values with it, serialized by confluent-kafka's AvroSerializer against the
in-suite registry, and read back by lakecdc's debezium-avro parser.

Every column carries Debezium's ``__debezium.source.column.type`` parameters, so, as Paimon's
``DebeziumSchemaUtils.avroToPaimonDataType``, the columns are typed from those MySQL types by MySQL's
mapping (``pt`` DECIMAL(2, 1) from a string, ``_tinyint1`` BOOLEAN, ``_char`` CHAR(10), ``_set``
ARRAY<STRING>, ...): the types are the ITCase's, and the first row's values convert to the ITCase's.
Paimon's debezium-json path does not read these parameters (``DebeziumJsonRecordParser`` maps the Connect
types), so the same message as debezium-json keeps the Connect types: where both give a column the same
type, its values must be equal."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from formats import debezium
from formats.debezium_avro import DebeziumAvroParser
from formats.events import DataChangeEvent, MessageContext, TypeSystem
from ingest.kafka.schema_registry import RegistrySchemas
from schema_evolution.conversion import convert_column
from schema_evolution.errors import SourcePosition
from schema_evolution.mysql_types import mysql_to_paimon
from schema_evolution.type_mapping import TypeMappingMode
from tests.paimon_compat.samples import FOUND, REASON, SAMPLES, sample_messages
from tests.paimon_compat.test_alltype_sample import ALLTYPE_EXPECTED
from tests.support.schema_registry import FakeSchemaRegistry

pytestmark = pytest.mark.skipif(not FOUND, reason=REASON)

SAMPLE = "debezium-avro/table/schema/alltype/debezium-avro-data-1.txt"
TOPIC = "test_avro"
CTX = MessageContext(SourcePosition(TOPIC, 0, 0))

# KafkaDebeziumAvroSyncTableActionITCase's row type (its expectations; Paimon reads MySQL's column types from
# Debezium's __debezium.source.column.type parameters there, e.g. DECIMAL(2, 1) for a string)
ITCASE_TYPES = ALLTYPE_EXPECTED  # the same all-types table as the canal ITCase
# lakecdc's type where it differs from the ITCase's: none (a difference would be listed here with its reason)
DIFFERENT_FROM_ITCASE: dict[str, str] = {}
# The ITCase's first row, for the columns whose type differs from debezium-json's (the Connect types); the
# others are compared with debezium-json's values
ITCASE_ROW_1 = {
    "pt": Decimal("1.1"),
    "_tinyint1": True,
    "_tinyint": 1,
    "_mediumint_unsigned": 200000,
    "_mediumint_unsigned_zerofill": 300000,
    "_bigint_unsigned": Decimal(20000000000),
    "_bigint_unsigned_zerofill": Decimal(30000000000),
    "_serial": Decimal(40000000000),
    "_real": 1.000001,
    "_real_unsigned": 2.000002,
    "_real_unsigned_zerofill": 3.000003,
    "_numeric": Decimal("12345.110"),
    "_numeric_unsigned": Decimal("12345.220"),
    "_numeric_unsigned_zerofill": Decimal("12345.330"),
    "_decimal": Decimal(11111),
    "_decimal_unsigned": Decimal(22222),
    "_decimal_unsigned_zerofill": Decimal(33333),
    "_datetime": datetime(2023, 3, 23, 14, 30, 5),
    "_datetime_p": datetime(2023, 3, 24, 14, 30),
    "_datetime_p2": datetime(2023, 3, 24, 14, 30, 5, 120000),
    "_timestamp0": datetime(2023, 3, 22, 16, 10),
    "_char": "Paimon",
    "_varchar": "Apache Paimon",
    "_bin": b"bytes" + bytes(5),
    "_varbin": b"more bytes",
    "_set": ["a", "b"],
}


class _AvroConverter:
    """Kafka Connect's AvroConverter, schema side: a Connect JSON schema as the Avro schema it registers."""

    def __init__(self) -> None:
        self.defined: set[str] = set()

    def schema(self, connect: dict[str, Any], hint: str) -> Any:
        kind = connect["type"]
        props: dict[str, Any] = {}
        for key, avro_key in (("version", "connect.version"), ("parameters", "connect.parameters")):
            if connect.get(key) is not None:
                props[avro_key] = connect[key]
        if connect.get("name") is not None:
            props["connect.name"] = connect["name"]
        if kind == "struct":
            full = connect.get("name") or hint
            if full in self.defined:
                return full
            self.defined.add(full)
            namespace, _, name = full.rpartition(".")
            fields = [{"name": f["field"], **self._optional(f, f["field"])} for f in connect["fields"]]
            record = {"type": "record", "name": name, "fields": fields, **props}
            return record | ({"namespace": namespace} if namespace else {})
        if kind == "array":
            return {"type": "array", "items": self._branch(connect["items"], hint), **props}
        if kind == "map":
            return {"type": "map", "values": self._branch(connect["values"], hint), **props}
        if connect.get("name") == "org.apache.kafka.connect.data.Decimal":
            params = connect["parameters"]
            props |= {"logicalType": "decimal", "scale": int(params["scale"])}
            props["precision"] = int(params.get("connect.decimal.precision", 64))
        avro = {"int8": "int", "int16": "int", "int32": "int", "int64": "long", "float32": "float"}.get(kind, kind)
        avro = {"float64": "double"}.get(avro, avro)
        if kind in ("int8", "int16"):
            props["connect.type"] = kind
        return {"type": avro, **props} if props else avro

    def _branch(self, connect: dict[str, Any], hint: str) -> Any:
        inner = self.schema(connect, hint)
        return ["null", inner] if connect.get("optional") else inner

    def _optional(self, connect: dict[str, Any], hint: str) -> dict[str, Any]:
        inner = self.schema(connect, hint)
        return {"type": ["null", inner], "default": None} if connect.get("optional") else {"type": inner}


def _value(connect: dict[str, Any], value: Any) -> Any:
    """A Connect JSON value as the Avro datum its schema takes (bytes from base64, Decimal for decimals)."""
    if value is None:
        return None
    kind = connect["type"]
    if kind == "struct":
        return {f["field"]: _value(f, value.get(f["field"])) for f in connect["fields"]}
    if kind == "array":
        return [_value(connect["items"], v) for v in value]
    if kind == "bytes":
        raw = base64.b64decode(value)
        if connect.get("name") == "org.apache.kafka.connect.data.Decimal":
            unscaled = int.from_bytes(raw, "big", signed=True)
            return Decimal(unscaled).scaleb(-int(connect["parameters"]["scale"]))
        return raw
    return value


def _records() -> Iterator[tuple[bytes, bytes]]:
    lines = sample_messages(SAMPLES / SAMPLE)
    assert len(lines) == 4
    yield from zip(lines[::2], lines[1::2], strict=True)


Message = tuple[bytes, bytes, bytes, bytes]  # Avro key, Avro value, JSON key, JSON value


@pytest.fixture(scope="module")
def replayed() -> Iterator[list[tuple[DataChangeEvent, DataChangeEvent]]]:
    """Per sample record: lakecdc's debezium-avro event of its Avro form, and its debezium-json event."""
    with FakeSchemaRegistry() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        parser = DebeziumAvroParser(RegistrySchemas(registry.url))
        pairs = []
        for key_json, value_json in _records():
            key, value = json.loads(key_json), json.loads(value_json)
            key_schema = _AvroConverter().schema(key["schema"], "Key")
            value_schema = _AvroConverter().schema(value["schema"], "Envelope")
            key_bytes = AvroSerializer(client, json.dumps(key_schema))(
                _value(key["schema"], key["payload"]), SerializationContext(TOPIC, MessageField.KEY)
            )
            value_bytes = AvroSerializer(client, json.dumps(value_schema))(
                _value(value["schema"], value["payload"]), SerializationContext(TOPIC, MessageField.VALUE)
            )
            assert key_bytes is not None and value_bytes is not None
            assert key_bytes[0] == 0 and value_bytes[0] == 0  # the Confluent wire format
            (avro_event,) = parser(value_bytes, key_bytes, CTX)
            (json_event,) = debezium.parse(value_json, key_json, CTX)
            assert isinstance(avro_event, DataChangeEvent) and isinstance(json_event, DataChangeEvent)
            pairs.append((avro_event, json_event))
        yield pairs


def _same(value: Any) -> Any:
    return float(value) if isinstance(value, float) else value


def _converted(event: DataChangeEvent, modes: frozenset[TypeMappingMode] = frozenset()) -> dict[str, Any]:
    """The event's row as the chunk builder stores it: each value converted to its column's Paimon type."""
    assert event.after is not None
    types = dict(event.schema.fields)
    out = {}
    for column, value in event.after.items():
        mysql = types[column]
        assert mysql is not None
        out[column] = convert_column(column, [value], mysql_to_paimon(mysql, modes), mysql).to_pylist()[0]
    return out


def test_the_sample_reads_as_the_itcase_and_as_its_debezium_json_does(
    replayed: list[tuple[DataChangeEvent, DataChangeEvent]],
) -> None:
    assert len(replayed) == 2
    for avro_event, json_event in replayed:
        assert avro_event.schema.type_system is TypeSystem.MYSQL
        assert avro_event.schema.primary_keys == json_event.schema.primary_keys
        assert (avro_event.op, avro_event.database, avro_event.table) == (
            json_event.op,
            json_event.database,
            json_event.table,
        )
        assert avro_event.after is not None and json_event.after is not None
        assert set(avro_event.after) == set(json_event.after)
        json_types = dict(json_event.schema.fields)
        avro_types = {c: mysql_to_paimon(t or "").sql() for c, t in avro_event.schema.fields}
        same_type = {c for c in avro_types if avro_types[c] == json_types[c]}
        assert same_type.isdisjoint(ITCASE_ROW_1) and set(avro_types) - same_type <= set(ITCASE_ROW_1)
        _converted(avro_event)  # every value converts to its MySQL-mapped type
        for column in same_type:
            value, expected = avro_event.after[column], json_event.after[column]
            if isinstance(expected, list):  # the JSON path keeps a Connect array as a list
                expected = json.dumps(expected, separators=(",", ":"))
            if isinstance(value, float):  # a 32-bit Avro float holds the JSON number's float32
                assert abs(value - float(expected)) <= abs(float(expected)) * 1e-6, column
            else:
                assert value == expected, column
    first = _converted(replayed[0][0])
    assert {c: first[c] for c in ITCASE_ROW_1} == ITCASE_ROW_1


def test_type_mapping_options_apply_to_the_parameters_types(
    replayed: list[tuple[DataChangeEvent, DataChangeEvent]],
) -> None:
    """The parameters' types are MySQL's, so --type-mapping applies to them as to canal-json's."""
    event = replayed[0][0]
    types = dict(event.schema.fields)
    for column, mode, expected, value in (
        ("_tinyint1", TypeMappingMode.TINYINT1_NOT_BOOL, "TINYINT", 1),
        ("_bigint_unsigned", TypeMappingMode.BIGINT_UNSIGNED_TO_BIGINT, "BIGINT", 20000000000),
        ("_char", TypeMappingMode.CHAR_TO_STRING, "STRING", "Paimon"),
        ("_real", TypeMappingMode.TO_STRING, "STRING", "1.000001"),
    ):
        mysql = types[column]
        assert mysql is not None
        assert mysql_to_paimon(mysql, frozenset({mode})).sql() == expected, column
        assert _converted(event, frozenset({mode}))[column] == value, column


def test_primary_keys_and_ids_as_the_itcase(replayed: list[tuple[DataChangeEvent, DataChangeEvent]]) -> None:
    """The ITCase's table is keyed by the Avro key's ``_id`` (plus its partition key ``pt``, given by
    --primary-keys) and holds the rows with ``_id`` 1 and 2 of ``workdb.all_types_table``."""
    assert [e.schema.primary_keys for e, _ in replayed] == [("_id",), ("_id",)]
    assert [e.after["_id"] for e, _ in replayed if e.after is not None] == [1, 2]
    assert {(e.database, e.table) for e, _ in replayed} == {("workdb", "all_types_table")}


def test_types_are_the_itcases_but_the_documented_ones(replayed: list[tuple[DataChangeEvent, DataChangeEvent]]) -> None:
    schema = replayed[0][0].schema
    assert schema.type_system is TypeSystem.MYSQL  # MySQL's types, as the parameters give them
    types = {c: mysql_to_paimon(t or "").sql() for c, t in schema.fields}
    assert list(types) == list(ITCASE_TYPES)
    for column, itcase in ITCASE_TYPES.items():
        assert types[column] == DIFFERENT_FROM_ITCASE.get(column, itcase), column
