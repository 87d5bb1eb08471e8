"""``--kafka-conf``: every Flink Kafka connector option a Paimon script may pass, with what lakecdc
does with it (``ingest.conf_options``), and the start-up checks of a Kafka job's source options.

Paimon hands every ``properties.*`` key to Kafka's Java client; lakecdc hands them to librdkafka,
which shares most names. The Java-only properties scripts commonly carry have rows of their own:
translated to librdkafka's where a translation exists (``sasl.jaas.config`` of the PLAIN, SCRAM and
Kerberos login modules, PEM-in-property keys, an empty ``ssl.endpoint.identification.algorithm``),
no effect where they only tune the Java client, refused (with librdkafka's equivalent) where
dropping them would change what is read or how the job authenticates (Java key and trust stores,
``*.class`` properties). Rows with no effect, and the few properties lakecdc handles itself, never
reach librdkafka (``librdkafka_config``), which would refuse a property it does not know.

Secrets (``sasl.jaas.config``, ``*.password``, ``*.secret``, private keys) are never quoted in an
error: the messages name the key only."""

from __future__ import annotations

import re
from collections.abc import Mapping

from formats import FORMATS
from formats.debezium_avro import FORMAT as AVRO_FORMAT
from ingest.conf_options import ConfOption, OptionTable, Treatment, boolean, one_of, regex, whole_number
from ingest.kafka.java_client import (
    JAAS_MODULES,
    JAVA_CLASSES,
    OAUTH_HINT,
    PEM_PROPERTIES,
    TRUSTSTORE_HINT,
    check_login_and_stores,
    translate_jaas,
)
from ingest.kafka.outage import DEFAULT_TIMEOUT, TIMEOUT_OPTION, check_timeout
from ingest.kafka.schema_registry import REGISTRY_OPTIONS, URL_OPTION, client_conf
from ingest.kafka.startup import STARTUP_MODES, StartupMode, parse_specific_offsets
from ingest.logs import is_secret_name

H, N, R = Treatment.HONOURED, Treatment.NO_EFFECT, Treatment.REFUSED

# Kafka's OffsetResetStrategy, as Paimon lists it, then librdkafka's own names for the same three.
OFFSET_RESETS = ("latest", "earliest", "none")
_LIBRDKAFKA_RESETS = {"largest": "latest", "end": "latest", "smallest": "earliest", "beginning": "earliest"}
_LIBRDKAFKA_RESETS |= {"error": "none"}


def _topics(value: str) -> str | None:
    return None if topic_list(value) else "names no topic"


def _value_format(value: str) -> str | None:
    name = value.strip().lower()
    if name in FORMATS:
        return None
    return f"is not a format lakecdc knows (This format: {value} is not supported.); known formats: " + ", ".join(
        sorted(FORMATS)
    )


def _specific_offsets(value: str) -> str | None:
    try:
        parse_specific_offsets(value)
    except ValueError as exc:
        return f"is not partition:N,offset:M;... ({exc})"
    return None


def _offset_reset(value: str) -> str | None:
    v = value.strip().lower()
    if v in OFFSET_RESETS or v in _LIBRDKAFKA_RESETS:
        return None
    return f"must be latest, earliest or none (auto.offset.reset can not be set to {value}. Valid values: " + (
        f"[{','.join(OFFSET_RESETS)}])"
    )


def _pkcs12(value: str) -> str | None:
    if value.strip().upper() == "PKCS12":
        return None
    return (
        "is not PKCS12: librdkafka reads PKCS#12 keystores only (properties.ssl.keystore.location); export a "
        "JKS keystore to PEM and give properties.ssl.certificate.location and properties.ssl.key.location"
    )


KAFKA_OPTIONS = OptionTable(
    "--kafka-conf",
    (
        ConfOption(
            "properties.*",
            H,
            "Kafka client properties, given to librdkafka, SSL and SASL included (a property librdkafka does "
            "not know stops the job at start-up with librdkafka's error)",
            "client.id=lakecdc-orders",
        ),
        ConfOption("properties.bootstrap.servers", H, "brokers (required)", "broker-1:9092,broker-2:9092"),
        ConfOption(
            "properties.group.id",
            H,
            "consumer group: group-offsets starts from its committed offsets, and each micro-batch's offsets are "
            "committed to it for lag monitoring (without one, group-offsets starts where "
            "properties.auto.offset.reset says, as Paimon's random group id does)",
            "cdc-orders",
        ),
        ConfOption(
            "properties.auto.offset.reset",
            H,
            "where group-offsets starts a partition the group has no offset for: earliest (lakecdc's default), "
            "latest, or none (fail); librdkafka's smallest/largest/error too",
            "latest",
            _offset_reset,
            "newest",
        ),
        ConfOption(
            "properties.commit.offsets.on.checkpoint",
            H,
            "Flink's switch for committing offsets to the consumer group; lakecdc commits after each micro-batch "
            "unless false",
            "false",
            boolean,
            "sometimes",
        ),
        ConfOption(
            "properties.enable.auto.commit",
            N,
            "lakecdc commits offsets itself (to its checkpoint, and to the group after each micro-batch)",
            "false",
        ),
        ConfOption("properties.key.deserializer", N, "lakecdc reads keys as bytes", "ByteArrayDeserializer"),
        ConfOption("properties.value.deserializer", N, "lakecdc reads values as bytes", "ByteArrayDeserializer"),
        ConfOption(
            "properties.partition.assignment.strategy",
            N,
            "lakecdc assigns partitions to its readers itself (no group rebalancing)",
            "org.apache.kafka.clients.consumer.RangeAssignor",
        ),
        ConfOption(
            "properties.partition.discovery.interval.ms",
            N,
            "Flink's partition discovery; lakecdc discovers new partitions at every trigger",
            "60000",
        ),
        ConfOption("properties.client.id.prefix", N, "Flink's client id prefix", "paimon-cdc"),
        ConfOption("properties.register.consumer.metrics", N, "Flink's metric registration", "true"),
        ConfOption(
            "properties.default.api.timeout.ms", N, "Java client timeout; librdkafka times out per call", "120000"
        ),
        ConfOption("properties.fetch.max.wait.ms", N, "Java client tuning (librdkafka's is fetch.wait.max.ms)", "500"),
        ConfOption(
            "properties.receive.buffer.bytes",
            N,
            "Java socket tuning (librdkafka's socket.receive.buffer.bytes)",
            "65536",
        ),
        ConfOption(
            "properties.send.buffer.bytes", N, "Java socket tuning (librdkafka's socket.send.buffer.bytes)", "131072"
        ),
        ConfOption(
            "properties.exclude.internal.topics",
            N,
            "topic-pattern never matches internal topics (names starting with __)",
            "true",
        ),
        ConfOption("properties.metric.reporters", N, "Java metric reporters", "org.example.Reporter"),
        ConfOption(
            "properties.ssl.enabled.protocols",
            N,
            "librdkafka negotiates the TLS version through OpenSSL (TLS 1.2 or later)",
            "TLSv1.2,TLSv1.3",
        ),
        ConfOption("properties.ssl.protocol", N, "librdkafka negotiates the TLS version through OpenSSL", "TLSv1.3"),
        ConfOption(
            "properties.ssl.keystore.type",
            N,
            "librdkafka reads PKCS#12 keystores (properties.ssl.keystore.location) and no other type",
            "PKCS12",
            _pkcs12,
            "JKS",
        ),
        ConfOption(
            "properties.sasl.jaas.config",
            H,
            f"Java JAAS configuration, translated: {JAAS_MODULES} become librdkafka's properties.sasl.username "
            "and properties.sasl.password (properties.sasl.mechanism PLAIN by default for PlainLoginModule, "
            "SCRAM-SHA-256 or -512 to be given for ScramLoginModule), or sasl.kerberos.keytab and "
            "sasl.kerberos.principal; other login modules are refused (" + OAUTH_HINT + ")",
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";',
        ),
        ConfOption("properties.sasl.mechanism", H, "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI, OAUTHBEARER", "PLAIN"),
        ConfOption(
            "properties.security.protocol", H, "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (same names)", "SASL_SSL"
        ),
        ConfOption(
            "properties.ssl.endpoint.identification.algorithm",
            H,
            "https (the default) checks the broker's host name; Java's empty value, which turns the check off, "
            "becomes librdkafka's none",
            "https",
            one_of(("https", "", "none")),
            "http",
        ),
        ConfOption(
            "properties.ssl.keystore.location",
            H,
            "the client's key store: PKCS#12 only (librdkafka's too); a JKS file is refused with how to convert it",
            "/etc/kafka/client.p12",
        ),
        ConfOption("properties.ssl.keystore.password", H, "the PKCS#12 key store's password", "changeit"),
        ConfOption("properties.ssl.key.password", H, "the private key's password", "changeit"),
        *(
            ConfOption(f"properties.{java}", H, f"PEM text in the property, translated to librdkafka's {pem}", "-----")
            for java, pem in PEM_PROPERTIES.items()
        ),
        ConfOption("properties.ssl.truststore.location", R, TRUSTSTORE_HINT, "/etc/kafka/truststore.jks"),
        ConfOption("properties.ssl.truststore.password", R, f"the password of {TRUSTSTORE_HINT}", "changeit"),
        ConfOption("properties.ssl.truststore.type", R, f"the type of {TRUSTSTORE_HINT}", "JKS"),
        *(
            ConfOption(f"properties.{key}", N, "tunes Java's TLS implementation; librdkafka uses OpenSSL's", example)
            for key, example in (
                ("ssl.keymanager.algorithm", "SunX509"),
                ("ssl.trustmanager.algorithm", "PKIX"),
                ("ssl.secure.random.implementation", "SHA1PRNG"),
                ("ssl.provider", "SunJSSE"),
                ("security.providers", "org.example.ProviderCreator"),
            )
        ),
        ConfOption(
            "properties.sasl.login.*",
            N,
            "Java's login tuning (token refresh, timeouts, retries); librdkafka refreshes its logins itself",
            "refresh.window.factor=0.8",
        ),
        ConfOption(
            "properties.max.poll.records",
            N,
            "Java's records per poll; lakecdc fetches whole offset ranges (--max-offsets-per-trigger)",
            "500",
        ),
        ConfOption(
            "properties.sasl.login.callback.handler.class", R, f"{JAVA_CLASSES}; {OAUTH_HINT}", "org.example.Handler"
        ),
        ConfOption(
            "properties.sasl.client.callback.handler.class", R, f"{JAVA_CLASSES}; {OAUTH_HINT}", "org.example.Handler"
        ),
        ConfOption("properties.sasl.login.class", R, f"{JAVA_CLASSES}; {OAUTH_HINT}", "org.example.Login"),
        ConfOption(
            "properties.interceptor.classes",
            R,
            f"{JAVA_CLASSES}, and an interceptor may change the records read",
            "org.example.Interceptor",
        ),
        ConfOption(
            "topic",
            H,
            "topic name(s), ';'-separated; as in Paimon, each item is also split on ','. Exactly one of topic "
            "and topic-pattern",
            "orders;payments,refunds",
            _topics,
        ),
        ConfOption("topic-pattern", H, "regular expression over topic names (full match)", "cdc_.*", regex, "(cdc"),
        ConfOption(
            "value.format",
            H,
            f"the CDC format of message values: {', '.join(sorted(FORMATS))} (debezium-avro needs schema.registry.url)",
            "debezium-json",
            _value_format,
            "protobuf",
        ),
        ConfOption(
            "scan.startup.mode",
            H,
            "where a new job starts reading: earliest-offset, latest-offset, group-offsets (the default), "
            "timestamp or specific-offsets",
            "latest-offset",
            one_of(STARTUP_MODES),
            "sometime",
        ),
        ConfOption(
            "scan.startup.timestamp-millis",
            H,
            "start time for scan.startup.mode=timestamp",
            "1700000000000",
            whole_number,
            "yesterday",
        ),
        ConfOption(
            "scan.startup.specific-offsets",
            H,
            "start offsets of the first topic for scan.startup.mode=specific-offsets (its other partitions, and "
            "other topics, start at the earliest offset)",
            "partition:0,offset:42;partition:1,offset:300",
            _specific_offsets,
            "0:42",
        ),
        ConfOption(
            "scan.offset-reset-on-loss",
            H,
            "lakecdc's own: what a restarted job does when the checkpoint's offsets are no longer in Kafka (topic "
            "deleted and re-created, log truncated, retention deleted unread messages, partitions removed): none "
            "(the default) stops naming topic, partition and offsets; earliest resumes those partitions from their "
            "earliest offset, logging a warning with what was skipped or is read again",
            "earliest",
            one_of(("none", "earliest")),
            "latest",
        ),
        ConfOption(
            TIMEOUT_OPTION,
            H,
            "lakecdc's own: how long the job waits for an unavailable broker (restarted, network cut) before it "
            f"stops (default {DEFAULT_TIMEOUT}): the driver's planning calls (topic metadata, offsets) are retried "
            "with backoff and a read task waits for its next message this long; then the job stops naming the "
            "bootstrap servers and what it was doing. A duration (30 s, 10 min; a bare number is seconds)",
            "10 min",
            check_timeout,
            "soon",
        ),
        *REGISTRY_OPTIONS,
        ConfOption(
            "scan.topic-partition-discovery.interval",
            N,
            "lakecdc discovers new partitions at every trigger",
            "5 min",
        ),
        # Paimon never makes its Kafka source bounded, so these change nothing there either.
        # --available-now is lakecdc's way to stop at the offsets present at start-up.
        *(
            ConfOption(
                key,
                N,
                "Paimon's Kafka source is always unbounded, and so is lakecdc's (--available-now stops at the "
                "offsets present at start-up)",
                example,
            )
            for key, example in (
                ("scan.bounded.mode", "latest-offset"),
                ("scan.bounded.specific-offsets", "partition:0,offset:42"),
                ("scan.bounded.timestamp-millis", "1700000000000"),
            )
        ),
        *(
            ConfOption(key, N, "Paimon's Kafka actions do not read it: the value.format parser does", example)
            for key, example in (
                ("key.format", "json"),
                ("key.fields", "id"),
                ("key.fields-prefix", "k_"),
                ("value.fields-include", "EXCEPT_KEY"),
            )
        ),
        ConfOption(
            "key.*",
            N,
            "options of the key format, which Paimon's Kafka actions do not read",
            "json.ignore-parse-errors=true",
        ),
        ConfOption(
            "value.*",
            N,
            "options of Flink's value formats (value.<format>.*), which Paimon's own parsers do not read",
            "debezium-json.schema-include=true",
        ),
        ConfOption("sink.*", N, "Kafka sink options; these actions only read from Kafka", "partitioner=fixed"),
    ),
)

# The Spark option that carries the secret librdkafka properties, as one JSON object: Spark masks the
# values of options whose names match spark.redaction.regex (default (?i)secret|password|token|access[.]?key)
# wherever it prints them (logical plans, the UI), and this name matches it.
SECRETS_OPTION = "lakecdc.secrets"


def is_secret_property(name: str) -> bool:
    """Whether the librdkafka property ``name`` holds a secret (a password, a private key, ...)."""
    return is_secret_name(name)


# properties.* keys lakecdc itself acts on, never handed to librdkafka as they are.
_HANDLED = {"properties.commit.offsets.on.checkpoint"}


def check_kafka_conf(conf: Mapping[str, str]) -> list[str]:
    """Start-up checks of a Kafka job's ``--kafka-conf``; raises ``ValueError`` naming the option.
    Returns the keys that have no effect (the job logs them once). Where Paimon fails too, its
    message is quoted, so that a runbook grepping for it still matches."""
    check_java_properties(conf)
    no_effect = KAFKA_OPTIONS.review(conf)
    if not conf.get("properties.bootstrap.servers", "").strip():
        raise ValueError(
            "--kafka-conf properties.bootstrap.servers=HOST:PORT is required "
            "(kafka_conf [properties.bootstrap.servers] must be specified.)"
        )
    if not conf.get("value.format", "").strip():
        raise ValueError(
            "--kafka-conf value.format=... is required, e.g. canal-json (kafka_conf [value.format] must be specified.)"
        )
    if ("topic" in conf) == ("topic-pattern" in conf):
        raise ValueError(
            "--kafka-conf needs topic=NAME[;NAME...] or topic-pattern=REGEX, and not both (kafka_conf must and can "
            "only set one of the following options: topic,topic-pattern.)"
        )
    if conf["value.format"].strip().lower() == AVRO_FORMAT and not conf.get(URL_OPTION, "").strip():
        raise ValueError(
            f"value.format={AVRO_FORMAT} needs --kafka-conf {URL_OPTION}=http://HOST:PORT, the Schema Registry its "
            "messages' schema ids are resolved with"
        )
    client_conf(conf)  # the registry settings that only work together
    mode = startup_mode(conf)
    if mode == StartupMode.TIMESTAMP and "scan.startup.timestamp-millis" not in conf:
        raise ValueError("scan.startup.mode=timestamp needs scan.startup.timestamp-millis")
    if mode == StartupMode.SPECIFIC_OFFSETS:
        if "scan.startup.specific-offsets" not in conf:
            raise ValueError("scan.startup.mode=specific-offsets needs scan.startup.specific-offsets")
        if "topic" not in conf:
            raise ValueError(
                "scan.startup.mode=specific-offsets needs --kafka-conf topic: the offsets are the first topic's "
                "(as in Paimon), and topic-pattern names none"
            )
    return no_effect


def check_java_properties(conf: Mapping[str, str]) -> None:
    """Java-client properties that have no librdkafka translation are refused with a hint; the
    messages name keys, files and login modules, never a value (they may hold secrets)."""
    for key in conf:
        option = KAFKA_OPTIONS.lookup(key)
        if re.search(r"\.class(es)?$", key) and option is not None and option.key == "properties.*":
            raise ValueError(f"--kafka-conf {key} is refused: {JAVA_CLASSES}")
    check_login_and_stores(conf)


def startup_mode(conf: Mapping[str, str]) -> str:
    """``scan.startup.mode``, lower-cased as Flink reads it; Paimon's default is group-offsets (which,
    without a group id, starts where ``properties.auto.offset.reset`` says: earliest by default)."""
    return conf.get("scan.startup.mode", StartupMode.GROUP_OFFSETS.value).strip().lower()


def topic_list(text: str) -> tuple[str, ...]:
    """``topic``: a Flink list (``;``-separated) whose items Paimon also splits on ``,``."""
    return tuple(t.strip() for item in text.split(";") for t in item.split(",") if t.strip())


def librdkafka_config(conf: Mapping[str, str]) -> dict[str, str]:
    """The ``properties.*`` that go to librdkafka: prefix stripped; keys with no effect and those lakecdc
    handles itself left out; ``auto.offset.reset`` in librdkafka's words (Kafka's ``none`` is ``error``);
    Java-only properties translated (``sasl.jaas.config``, PEM-in-property keys, an empty
    ``ssl.endpoint.identification.algorithm``)."""
    out: dict[str, str] = {}
    for key, value in conf.items():
        if not key.startswith("properties.") or key in _HANDLED:
            continue
        option = KAFKA_OPTIONS.lookup(key)
        if option is not None and option.treatment is not Treatment.HONOURED:
            continue
        name = key[len("properties.") :]
        if name == "group.id" and not value.strip():
            continue  # Paimon puts a random group id in; lakecdc reads without committing to a group
        if name == "auto.offset.reset":
            v = value.strip().lower()
            value = "error" if _LIBRDKAFKA_RESETS.get(v, v) == "none" else v
        if name == "sasl.jaas.config":
            out.update(translate_jaas(conf))
            continue
        if name == "ssl.endpoint.identification.algorithm":
            value = value.strip().lower() or "none"
        out[PEM_PROPERTIES.get(name, name)] = value
    return out


def commit_offsets_to_group(conf: Mapping[str, str]) -> bool:
    return conf.get("properties.commit.offsets.on.checkpoint", "true").strip().lower() != "false"
