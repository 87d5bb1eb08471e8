"""The Schema Registry client behind debezium-avro: confluent-kafka's real ``SchemaRegistryClient``
against the test registry on a loopback port; ids cached; an unreachable registry retried with backoff,
then a clear error naming the URL and the message's position; an unknown id a malformed message."""

from __future__ import annotations

import json
import re
import socket
import threading

import pytest

from ingest.kafka import schema_registry
from ingest.kafka.schema_registry import RegistrySchemas, SchemaRegistryUnavailable, avro_parser, parser_for
from schema_evolution.errors import MalformedMessage, SourcePosition, TransientError
from tests.support.schema_registry import FakeSchemaRegistry

POS = SourcePosition("shop.items", 1, 99)
SCHEMA = json.dumps({"type": "record", "name": "K", "fields": [{"name": "id", "type": "int"}]})


@pytest.fixture
def short_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_registry, "RETRY_SECONDS", 1.0)
    monkeypatch.setattr(schema_registry, "FIRST_PAUSE_SECONDS", 0.05)


def test_schema_by_id_is_fetched_once() -> None:
    with FakeSchemaRegistry() as registry:
        schema_id = registry.register("shop.items-key", SCHEMA)
        schemas = RegistrySchemas(registry.url)
        assert json.loads(schemas(schema_id, POS)) == json.loads(SCHEMA)
        assert json.loads(schemas(schema_id, POS)) == json.loads(SCHEMA)
        assert registry.id_requests == 1


def test_unknown_id_is_a_malformed_message_naming_registry_and_position() -> None:
    with FakeSchemaRegistry() as registry:
        with pytest.raises(MalformedMessage) as info:
            RegistrySchemas(registry.url)(42, POS)
        assert f"the Schema Registry at {registry.url} has no schema with id 42" in str(info.value)
        assert str(POS) in str(info.value)


def test_registry_down_is_retried_then_stops_naming_url_and_position(short_retries: None) -> None:
    with FakeSchemaRegistry() as registry:
        schema_id = registry.register("s", SCHEMA)
        registry.down()
        pauses: list[float] = []
        with pytest.raises(SchemaRegistryUnavailable) as info:
            RegistrySchemas(registry.url, sleep=pauses.append)(schema_id, POS)
        text = str(info.value)
        assert registry.url in text and "topic 'shop.items', partition 1, offset 99" in text and "HTTP 503" in text
        assert isinstance(info.value, TransientError)
        assert len(pauses) >= 3 and pauses[1] == 2 * pauses[0]  # backoff


def test_registry_that_comes_back_is_read(short_retries: None) -> None:
    with FakeSchemaRegistry() as registry:
        schema_id = registry.register("s", SCHEMA)
        registry.down()
        timer = threading.Timer(0.3, registry.up)
        timer.start()
        assert json.loads(RegistrySchemas(registry.url)(schema_id, POS)) == json.loads(SCHEMA)
        timer.join()


def test_nothing_listening_is_retried_then_stops(short_retries: None) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    expected = re.escape(f"the Schema Registry at {url} could not be reached")
    with pytest.raises(SchemaRegistryUnavailable, match=expected):
        RegistrySchemas(url)(1, POS)


def test_one_parser_per_registry_per_process() -> None:
    conf = {"schema.registry.url": "http://127.0.0.1:1"}
    assert avro_parser(conf) is avro_parser(conf) is parser_for("Debezium-Avro", conf)
    assert parser_for("debezium-json", conf) is None
    with pytest.raises(ValueError, match=r"needs --kafka-conf schema\.registry\.url"):
        avro_parser({})


@pytest.mark.parametrize(
    ("url", "accepted"),
    [("http://r:8081", True), ("https://a:1,https://b:2", True), ("r:8081", False), ("ftp://r", False)],
)
def test_check_url(url: str, accepted: bool) -> None:
    assert (schema_registry.check_url(url) is None) == accepted
    with pytest.raises(ValueError, match="carries credentials") as info:
        schema_registry.check_url("http://me:hunter22@r:8081")
    assert "hunter22" not in str(info.value)
