"""The Confluent Schema Registry behind ``value.format=debezium-avro``: writer schemas by id, through
confluent-kafka's ``SchemaRegistryClient`` (``GET /schemas/ids/{id}``), for ``formats.debezium_avro``.

Runs where messages are decoded (the read tasks on executors, and the driver's schema discovery). One
parser per registry URL per process (``avro_parser``): the client caches each schema by id, and the
parser what it derives from it, so a Python worker asks the registry once per schema id for as long as
it lives. Schemas are asked for by the id each message carries, whatever its topic or subject.

A registry that cannot be reached (connection refused, timeout, HTTP 5xx or 429) is asked again with
backoff for ``RETRY_SECONDS``; then the read stops with ``SchemaRegistryUnavailable`` (a
``TransientError``: the job exits as for a lost broker, and a restart resumes from the checkpoint)
naming the registry URL and the message's topic, partition and offset. An id the registry does not know
(HTTP 404) is the message's fault: ``MalformedMessage`` (a dead letter under --errors-tolerance all).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import structlog

from formats import Parser, get_format
from formats.debezium_avro import FORMAT
from schema_evolution.errors import MalformedMessage, SourcePosition, TransientError

log = structlog.get_logger(__name__)

URL_OPTION = "schema.registry.url"  # Paimon's --kafka-conf key (MessageQueueSchemaUtils.SCHEMA_REGISTRY_URL)

# How long an unreachable registry is retried before the read stops (LAKECDC_SCHEMA_REGISTRY_RETRY_SECONDS
# overrides it, in the read tasks too), and the first pause (doubled up to MAX_PAUSE_SECONDS).
RETRY_SECONDS = 60.0
RETRY_ENV = "LAKECDC_SCHEMA_REGISTRY_RETRY_SECONDS"
FIRST_PAUSE_SECONDS = 0.5
MAX_PAUSE_SECONDS = 8.0
_TIMEOUT_SECONDS = 10

_PARSERS: dict[str, Parser] = {}


class SchemaRegistryUnavailable(TransientError):
    """The Schema Registry could not be reached (after retries) for a message's writer schema."""


def check_url(value: str) -> str | None:
    """``schema.registry.url``'s check for the option table: one or more http(s) URLs, ','-separated,
    without credentials (they would reach logs and errors)."""
    for url in value.split(","):
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "is not an http:// or https:// URL (e.g. http://registry:8081)"
        if parts.username is not None or parts.password is not None:
            # raised, not returned: the option table quotes a returned reason's value, and this one holds a secret
            raise ValueError(
                f"--kafka-conf {URL_OPTION} carries credentials: lakecdc refuses them in the URL, where they would "
                "reach logs and errors"
            )
    return None


def avro_parser(conf: Mapping[str, str]) -> Parser:
    """This process's debezium-avro parser for the registry ``conf`` (--kafka-conf) names."""
    url = conf.get(URL_OPTION, "").strip()
    if not url:
        raise ValueError(f"value.format={FORMAT} needs --kafka-conf {URL_OPTION}=http://HOST:PORT, the Schema Registry")
    parser = _PARSERS.get(url)
    if parser is None:
        build = get_format(FORMAT).with_schemas
        assert build is not None
        parser = _PARSERS[url] = build(RegistrySchemas(url))
    return parser


def parser_for(value_format: str, conf: Mapping[str, str]) -> Parser | None:
    """The parser the Kafka source builds itself for ``value_format`` (None: the format's registry entry)."""
    return avro_parser(conf) if value_format.strip().lower() == FORMAT else None


class RegistrySchemas:
    """A ``formats.debezium_avro.SchemaSource`` over one registry: schema id -> its JSON text."""

    def __init__(self, url: str, client: Any = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.url = url
        self._client = client
        self._sleep = sleep
        self._texts: dict[int, str] = {}

    def _registry(self) -> Any:
        if self._client is None:
            from confluent_kafka.schema_registry import SchemaRegistryClient

            # the client's own retries cover HTTP 408/429/5xx once; ours (below) cover the outage
            self._client = SchemaRegistryClient({"url": self.url, "timeout": _TIMEOUT_SECONDS, "max.retries": 0})
        return self._client

    def __call__(self, schema_id: int, pos: SourcePosition) -> str:
        text = self._texts.get(schema_id)
        if text is None:
            text = self._texts[schema_id] = self._fetch(schema_id, pos)
        return text

    def _fetch(self, schema_id: int, pos: SourcePosition) -> str:
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        retry_seconds = float(os.environ.get(RETRY_ENV) or RETRY_SECONDS)
        deadline = time.monotonic() + retry_seconds
        pause = FIRST_PAUSE_SECONDS
        attempt = 0
        while True:
            attempt += 1
            try:
                schema = self._registry().get_schema(schema_id)
            except SchemaRegistryError as exc:
                if exc.http_status_code == 404:
                    raise MalformedMessage(
                        FORMAT,
                        pos,
                        f"the Schema Registry at {self.url} has no schema with id {schema_id} ({exc.error_message})",
                    ) from None
                if exc.http_status_code not in (408, 429) and exc.http_status_code < 500:
                    raise SchemaRegistryUnavailable(
                        f"the Schema Registry at {self.url} refused schema id {schema_id} for {pos}: "
                        f"HTTP {exc.http_status_code} {exc.error_message}"
                    ) from None
                failure = f"HTTP {exc.http_status_code} {exc.error_message}"
            except Exception as exc:  # httpx's connection errors and timeouts, whatever their class
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if schema.schema_type not in (None, "AVRO"):
                    raise MalformedMessage(
                        FORMAT, pos, f"schema id {schema_id} is a {schema.schema_type} schema, not Avro"
                    )
                if schema.references:
                    raise MalformedMessage(
                        FORMAT, pos, f"schema id {schema_id} has schema references, which lakecdc does not follow"
                    )
                if attempt > 1:
                    log.info("Schema Registry reachable again", url=self.url, schema_id=schema_id)
                return str(schema.schema_str)
            if time.monotonic() + pause > deadline:
                raise SchemaRegistryUnavailable(
                    f"the Schema Registry at {self.url} could not be reached for schema id {schema_id} of the "
                    f"message at {pos} ({attempt} attempts over {retry_seconds:.0f} s; last: {failure}); "
                    f"check --kafka-conf {URL_OPTION} and the registry, then restart the job (it resumes from its "
                    "checkpoint)"
                )
            log.warning(
                "Schema Registry unreachable, retrying",
                url=self.url,
                schema_id=schema_id,
                topic=pos.topic,
                partition=pos.partition,
                offset=pos.offset,
                attempt=attempt,
                error=failure,
            )
            self._sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_SECONDS)
