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
from ingest.conf_options import ConfOption, Treatment
from schema_evolution.errors import MalformedMessage, SourcePosition, TransientError

log = structlog.get_logger(__name__)

URL_OPTION = "schema.registry.url"  # Paimon's --kafka-conf key (MessageQueueSchemaUtils.SCHEMA_REGISTRY_URL)
PREFIX = "schema.registry."

# Authentication and TLS: --kafka-conf schema.registry.<key> is confluent-kafka SchemaRegistryClient's
# <key> (Kafka Connect's AvroConverter spells them the same after its converter prefix). Paimon passes
# the URL alone, so a registry behind basic auth or TLS client certificates cannot be read there at all.
USER_INFO = "basic.auth.user.info"
CREDENTIALS_SOURCE = "basic.auth.credentials.source"
CA_LOCATION = "ssl.ca.location"
CERTIFICATE_LOCATION = "ssl.certificate.location"
KEY_LOCATION = "ssl.key.location"
KEY_PASSWORD = "ssl.key.password"
CLIENT_KEYS = (USER_INFO, CREDENTIALS_SOURCE, CA_LOCATION, CERTIFICATE_LOCATION, KEY_LOCATION, KEY_PASSWORD)
SECRET_KEYS = (USER_INFO, KEY_PASSWORD)
# Java clients' keystores, which the Python client cannot read: the PEM keys above replace them.
JAVA_KEYS = (
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.type",
)

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


def check_user_info(value: str) -> str | None:
    """``schema.registry.basic.auth.user.info``: ``user:password`` (the value is never quoted back)."""
    user, colon, _password = value.partition(":")
    if not colon or not user.strip():
        raise ValueError(f"--kafka-conf {PREFIX}{USER_INFO} must be USER:PASSWORD")
    return None


def check_credentials_source(value: str) -> str | None:
    if value.strip().upper() != "USER_INFO":
        return (
            f"is not supported: lakecdc takes the credentials from {PREFIX}{USER_INFO} (USER_INFO), never from "
            "the URL, where they would reach logs"
        )
    return None


def client_conf(conf: Mapping[str, str]) -> dict[str, str]:
    """The registry client's settings in ``conf`` (--kafka-conf ``schema.registry.<key>`` -> ``<key>``),
    without the URL; refuses (``ValueError``) combinations the client would reject later."""
    out = {key: conf[PREFIX + key].strip() for key in CLIENT_KEYS if conf.get(PREFIX + key, "").strip()}
    for key in (CA_LOCATION, CERTIFICATE_LOCATION, KEY_LOCATION):
        # executors read the same path: a file on every node, or shipped with spark-submit --files
        if key in out and not (os.path.isfile(out[key]) and os.access(out[key], os.R_OK)):
            raise ValueError(
                f"--kafka-conf {PREFIX}{key}='{out[key]}' is not a readable file (a PEM file, at the same path on "
                "the driver and every executor)"
            )
    if CREDENTIALS_SOURCE in out:
        out[CREDENTIALS_SOURCE] = out[CREDENTIALS_SOURCE].upper()
        if USER_INFO not in out:
            raise ValueError(f"--kafka-conf {PREFIX}{CREDENTIALS_SOURCE}=USER_INFO needs {PREFIX}{USER_INFO}")
    if (KEY_LOCATION in out or KEY_PASSWORD in out) and CERTIFICATE_LOCATION not in out:
        raise ValueError(
            f"--kafka-conf {PREFIX}{KEY_LOCATION} / {PREFIX}{KEY_PASSWORD} need {PREFIX}{CERTIFICATE_LOCATION} "
            "(the client certificate that goes with the key)"
        )
    if CERTIFICATE_LOCATION in out and KEY_LOCATION not in out:
        raise ValueError(f"--kafka-conf {PREFIX}{CERTIFICATE_LOCATION} needs {PREFIX}{KEY_LOCATION} (its private key)")
    return out


H, R = Treatment.HONOURED, Treatment.REFUSED

# The registry's rows of --kafka-conf's option table (ingest.kafka.options.KAFKA_OPTIONS).
REGISTRY_OPTIONS: tuple[ConfOption, ...] = (
    ConfOption(
        "schema.registry.url",
        H,
        "the Confluent Schema Registry of value.format=debezium-avro (required there; Paimon's only registry "
        "option): writer schemas are resolved by the id each message carries, whatever its topic, and cached "
        "per id; ','-separated URLs are tried in turn; credentials in the URL are refused (they would reach "
        "logs); other formats ignore it, as Paimon does",
        "http://registry:8081",
        check_url,
        "registry:8081",
    ),
    ConfOption(
        PREFIX + USER_INFO,
        H,
        "lakecdc's own (Paimon passes the URL alone; Kafka Connect's name): USER:PASSWORD for a registry behind "
        "HTTP basic authentication; a secret (use ${env:VAR} or ${file:PATH}; masked in logs and Spark plans)",
        "reader:secret",
        check_user_info,
    ),
    ConfOption(
        PREFIX + CREDENTIALS_SOURCE,
        H,
        f"lakecdc's own: where basic-auth credentials come from; only USER_INFO ({PREFIX}{USER_INFO}), the "
        "default (credentials in the URL are refused)",
        "USER_INFO",
        check_credentials_source,
        "URL",
    ),
    ConfOption(
        PREFIX + CA_LOCATION,
        H,
        "lakecdc's own: a PEM file of the CA(s) that signed an https:// registry's certificate (default: the "
        "system's); the same path on the driver and every executor",
        "/etc/lakecdc/registry-ca.pem",
    ),
    ConfOption(
        PREFIX + CERTIFICATE_LOCATION,
        H,
        f"lakecdc's own: a PEM client certificate for a registry that asks for one (mutual TLS), with "
        f"{PREFIX}{KEY_LOCATION}",
        "/etc/lakecdc/client.pem",
    ),
    ConfOption(
        PREFIX + KEY_LOCATION,
        H,
        f"lakecdc's own: the PEM private key of {PREFIX}{CERTIFICATE_LOCATION}",
        "/etc/lakecdc/client.key",
    ),
    ConfOption(
        PREFIX + KEY_PASSWORD,
        H,
        f"lakecdc's own: the password of an encrypted {PREFIX}{KEY_LOCATION}; a secret",
        "changeit",
    ),
    *(
        ConfOption(
            PREFIX + key,
            R,
            f"a Java keystore, which lakecdc's registry client cannot read: give PEM files in "
            f"{PREFIX}{CA_LOCATION}, {PREFIX}{CERTIFICATE_LOCATION} and {PREFIX}{KEY_LOCATION} "
            "(keytool/openssl convert them)",
            "/etc/ssl/registry.jks",
        )
        for key in JAVA_KEYS
    ),
)


def avro_parser(conf: Mapping[str, str]) -> Parser:
    """This process's debezium-avro parser for the registry ``conf`` (--kafka-conf) names."""
    url = conf.get(URL_OPTION, "").strip()
    if not url:
        raise ValueError(f"value.format={FORMAT} needs --kafka-conf {URL_OPTION}=http://HOST:PORT, the Schema Registry")
    settings = client_conf(conf)
    cache_key = "\n".join([url, *(f"{k}={v}" for k, v in sorted(settings.items()))])
    parser = _PARSERS.get(cache_key)
    if parser is None:
        build = get_format(FORMAT).with_schemas
        assert build is not None
        parser = _PARSERS[cache_key] = build(RegistrySchemas(url, settings=settings))
    return parser


def parser_for(value_format: str, conf: Mapping[str, str]) -> Parser | None:
    """The parser the Kafka source builds itself for ``value_format`` (None: the format's registry entry)."""
    return avro_parser(conf) if value_format.strip().lower() == FORMAT else None


class RegistrySchemas:
    """A ``formats.debezium_avro.SchemaSource`` over one registry: schema id -> its JSON text."""

    def __init__(
        self,
        url: str,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.url = url
        self._settings = dict(settings or {})
        self._client = client
        self._sleep = sleep
        self._texts: dict[int, str] = {}

    def _registry(self) -> Any:
        if self._client is None:
            from confluent_kafka.schema_registry import SchemaRegistryClient

            # the client's own retries cover HTTP 408/429/5xx once; ours (below) cover the outage
            self._client = SchemaRegistryClient(
                {"url": self.url, "timeout": _TIMEOUT_SECONDS, "max.retries": 0, **self._settings}
            )
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
                    hint = (
                        f"; check --kafka-conf {PREFIX}{USER_INFO} (USER:PASSWORD of a user allowed to read schemas)"
                        if exc.http_status_code in (401, 403)
                        else ""
                    )
                    raise SchemaRegistryUnavailable(
                        f"the Schema Registry at {self.url} refused schema id {schema_id} for {pos}: "
                        f"HTTP {exc.http_status_code} {exc.error_message}{hint}"
                    ) from None
                failure = f"HTTP {exc.http_status_code} {exc.error_message}"
            except Exception as exc:  # httpx's connection errors and timeouts, whatever their class
                tls = _tls_failure(exc)
                if tls is not None:  # a certificate problem does not heal by waiting
                    raise SchemaRegistryUnavailable(
                        f"the Schema Registry at {self.url} failed the TLS handshake for schema id {schema_id} of "
                        f"the message at {pos}: {tls}; check --kafka-conf {PREFIX}{CA_LOCATION} (the CA that "
                        f"signed the registry's certificate) and {PREFIX}{CERTIFICATE_LOCATION} / "
                        f"{PREFIX}{KEY_LOCATION} (a client certificate, if the registry asks for one)"
                    ) from None
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


def _tls_failure(exc: BaseException) -> str | None:
    """The TLS error behind a failed request (httpx wraps ``ssl.SSLError``), or None."""
    import ssl

    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLError):
            return f"{type(seen).__name__}: {seen}"
        seen = seen.__cause__ or seen.__context__
    return None
