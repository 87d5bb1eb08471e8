"""debezium-avro against Paimon's sample ``debezium-avro/table/schema/alltype/debezium-avro-data-1.txt``
(read in place) and its ``KafkaDebeziumAvroSyncTableActionITCase``.

The sample holds the all-types table's two inserts as Kafka Connect JSON (key and value alternating);
Paimon's ITCase turns each into Avro against the schema Kafka Connect's AvroConverter derives, and
sends it through the Confluent serializer and a Schema Registry. Here the same: the Connect schema is
converted as AvroConverter converts it (structs to records, ``connect.type``/``connect.name``/
``connect.parameters``/``connect.version`` kept, optional fields ``["null", X]``, Decimal with Avro's
decimal logical type), the values with it, serialized by confluent-kafka's AvroSerializer against the
in-suite registry, and read back by lakecdc's debezium-avro parser: every row and column type must be
what lakecdc's debezium-json parser gives the same message (the mapping lakecdc uses for both formats).

Where lakecdc's types differ from the ITCase's expectations: Paimon's Avro path reads Debezium's
``__debezium.source.column.type`` parameters (``pt`` DECIMAL(2, 1) from a string, ``_tinyint1`` BOOLEAN,
``_char`` CHAR(10), ``_set`` ARRAY<STRING>, ...), which its debezium-json path does not; lakecdc maps both
formats alike, from the Connect types (``DIFFERENT_FROM_ITCASE`` lists these columns, checked below)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from formats import debezium
from formats.debezium_avro import DebeziumAvroParser
from formats.events import DataChangeEvent, MessageContext
from ingest.kafka.schema_registry import RegistrySchemas
from schema_evolution.errors import SourcePosition
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
# lakecdc's type where it differs (the Connect type, as debezium-json maps it), and why the ITCase differs
DIFFERENT_FROM_ITCASE = {
    "pt": "STRING",
    "_tinyint1": "SMALLINT",
    "_tinyint": "SMALLINT",
    "_mediumint_unsigned": "INT",
    "_mediumint_unsigned_zerofill": "INT",
    "_bigint_unsigned": "BIGINT",
    "_bigint_unsigned_zerofill": "BIGINT",
    "_serial": "BIGINT",
    "_real": "FLOAT",
    "_real_unsigned": "FLOAT",
    "_real_unsigned_zerofill": "FLOAT",
    "_numeric": "STRING",
    "_numeric_unsigned": "STRING",
    "_numeric_unsigned_zerofill": "STRING",
    "_decimal": "STRING",
    "_decimal_unsigned": "STRING",
    "_decimal_unsigned_zerofill": "STRING",
    "_datetime": "TIMESTAMP(3)",
    "_datetime_p": "TIMESTAMP(3)",
    "_datetime_p2": "TIMESTAMP(3)",
    "_timestamp0": "TIMESTAMP(6)",
    "_char": "STRING",
    "_varchar": "STRING",
    "_bin": "BYTES",
    "_varbin": "BYTES",
    "_set": "STRING",
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


def test_the_sample_reads_as_its_debezium_json_does(replayed: list[tuple[DataChangeEvent, DataChangeEvent]]) -> None:
    assert len(replayed) == 2
    for avro_event, json_event in replayed:
        assert avro_event.schema == json_event.schema
        assert (avro_event.op, avro_event.database, avro_event.table) == (
            json_event.op,
            json_event.database,
            json_event.table,
        )
        assert avro_event.after is not None and json_event.after is not None
        assert set(avro_event.after) == set(json_event.after)
        for column, value in avro_event.after.items():
            expected = json_event.after[column]
            if isinstance(expected, list):  # the JSON path keeps a Connect array as a list
                expected = json.dumps(expected, separators=(",", ":"))
            if isinstance(value, float):  # a 32-bit Avro float holds the JSON number's float32
                assert abs(value - float(expected)) <= abs(float(expected)) * 1e-6, column
            else:
                assert value == expected, column


def test_primary_keys_and_ids_as_the_itcase(replayed: list[tuple[DataChangeEvent, DataChangeEvent]]) -> None:
    """The ITCase's table is keyed by the Avro key's ``_id`` (plus its partition key ``pt``, given by
    --primary-keys) and holds the rows with ``_id`` 1 and 2 of ``workdb.all_types_table``."""
    assert [e.schema.primary_keys for e, _ in replayed] == [("_id",), ("_id",)]
    assert [e.after["_id"] for e, _ in replayed if e.after is not None] == [1, 2]
    assert {(e.database, e.table) for e, _ in replayed} == {("workdb", "all_types_table")}


def test_types_are_the_itcases_but_the_documented_ones(replayed: list[tuple[DataChangeEvent, DataChangeEvent]]) -> None:
    types = dict(replayed[0][0].schema.fields)
    assert list(types) == list(ITCASE_TYPES)
    for column, itcase in ITCASE_TYPES.items():
        assert types[column] == DIFFERENT_FROM_ITCASE.get(column, itcase), column
