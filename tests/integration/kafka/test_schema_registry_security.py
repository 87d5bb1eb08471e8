"""debezium-avro against a Schema Registry behind HTTP basic authentication and TLS (a server
certificate of a private CA, and mutual TLS): messages serialized by confluent-kafka's real
AvroSerializer with the same client settings, synced into Paimon and read back with both readers. A
wrong password and an unknown CA stop the job at once with lakecdc's error naming the option to fix,
and the password reaches no log line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from deploy.local_kafka import LocalKafka
from ingest.job import run
from tests.conftest import ROOT
from tests.formats.debezium_avro_streams import AvroWriter
from tests.integration.kafka.test_debezium_avro import Message, _assert_table, _settings, _stream
from tests.support.certificates import make_certificates
from tests.support.schema_registry import FakeSchemaRegistry, TlsFiles

PASSWORD = "s3cret-registry-pw"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_certificates(tmp_path_factory.mktemp("registry-tls"))


@pytest.fixture(scope="module")
def secured(certs: Path) -> Iterator[FakeSchemaRegistry]:
    tls = TlsFiles(str(certs / "server.pem"), str(certs / "server.key"), client_ca=str(certs / "ca.pem"))
    with FakeSchemaRegistry(users={"reader": PASSWORD}, tls=tls) as registry:
        yield registry


def _client_conf(certs: Path, password: str = PASSWORD, ca: str = "ca.pem") -> dict[str, str]:
    """The registry settings, as --kafka-conf keys."""
    return {
        "schema.registry.basic.auth.user.info": f"reader:{password}",
        "schema.registry.ssl.ca.location": str(certs / ca),
        "schema.registry.ssl.certificate.location": str(certs / "client.pem"),
        "schema.registry.ssl.key.location": str(certs / "client.key"),
    }


def _produce(kafka: LocalKafka, registry: FakeSchemaRegistry, certs: Path, messages: list[Message]) -> None:
    """Serialized as Kafka Connect's AvroConverter would, through a client with the same settings."""
    writer = AvroWriter(registry.url)
    conf = {k.removeprefix("schema.registry."): v for k, v in _client_conf(certs).items()}
    writer.client = SchemaRegistryClient({"url": registry.url, **conf})
    records: dict[str, list[tuple[bytes, bytes]]] = {}
    for topic, table, ident, op, before, after, version in messages:
        value = writer.value(topic, table, op, before, after, version)
        records.setdefault(topic, []).append((writer.key(topic, table, ident), value))
    for topic, pairs in records.items():
        kafka.create_topic(topic, 1)
        kafka.produce(topic, pairs)


def test_sync_through_a_registry_with_basic_auth_and_mutual_tls(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, secured: FakeSchemaRegistry, certs: Path
) -> None:
    messages, live = _stream(topic_name, seed=31, steps=200)
    _produce(kafka, secured, certs, messages)
    pattern = f"{topic_name}_.*"
    conf = {**_settings(warehouse, kafka, secured, pattern).kafka_conf, **_client_conf(certs)}
    run(_settings(warehouse, kafka, secured, pattern, kafka_conf=conf))  # validated as the CLI's
    for table in ("items", "users"):
        _assert_table(warehouse, table, live[table])


def _failing_run(
    kafka: LocalKafka, registry: FakeSchemaRegistry, tmp_path: Path, topic: str, conf: dict[str, str]
) -> str:
    """Everything the CLI (Python and the JVM) wrote before it failed."""
    argv = [
        sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", str(tmp_path / "wh"),
        "--database", "ods", "--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}",
        "--kafka_conf", f"topic-pattern={topic}", "--kafka_conf", "value.format=debezium-avro",
        "--kafka_conf", f"schema.registry.url={registry.url}",
        *(arg for k, v in conf.items() for arg in ("--kafka_conf", f"{k}={v}")),
        "--available-now", "--spark-conf", "spark.master=local[2]",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAKECDC_SCHEMA_REGISTRY_RETRY_SECONDS": "120"}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode != 0
    return done.stdout + done.stderr


def test_a_wrong_password_stops_at_once_naming_the_option_and_is_never_logged(
    kafka: LocalKafka, tmp_path: Path, topic_name: str, secured: FakeSchemaRegistry, certs: Path
) -> None:
    messages, _ = _stream(topic_name, seed=32, steps=20)
    _produce(kafka, secured, certs, [m for m in messages if m[1] == "items"])
    wrong = "wrong-password-4711"
    conf = _client_conf(certs, password=wrong)
    output = _failing_run(kafka, secured, tmp_path, f"{topic_name}_items", conf)
    assert "HTTP 401" in output and "schema.registry.basic.auth.user.info" in output, output[-3000:]
    assert "Schema Registry unreachable, retrying" not in output  # refused, not an outage: no 120 s of retries
    assert wrong not in output


def test_an_unknown_ca_stops_at_once_naming_the_tls_options(
    kafka: LocalKafka, tmp_path: Path, topic_name: str, secured: FakeSchemaRegistry, certs: Path
) -> None:
    messages, _ = _stream(topic_name, seed=33, steps=20)
    _produce(kafka, secured, certs, [m for m in messages if m[1] == "items"])
    conf = _client_conf(certs, ca="other-ca.pem")
    output = _failing_run(kafka, secured, tmp_path, f"{topic_name}_items", conf)
    assert "failed the TLS handshake" in output and "schema.registry.ssl.ca.location" in output, output[-3000:]
    assert "CERTIFICATE_VERIFY_FAILED" in output
    assert "Schema Registry unreachable, retrying" not in output
    assert PASSWORD not in output
