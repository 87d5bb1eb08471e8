"""What the driver hands the Kafka source's reader: the spec (everything besides librdkafka's
properties), and the librdkafka properties and Schema Registry settings rebuilt from Spark's options
(the secret ones travel in one option Spark redacts, see ``ingest.kafka.job_source``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from ingest.kafka.options import SECRETS_OPTION
from ingest.kafka.schema_registry import PREFIX as REGISTRY_PREFIX
from ingest.kafka.schema_registry import URL_OPTION
from ingest.kafka.startup import StartupMode
from ingest.pipeline.parse_spec import ParseSpec


@dataclass(frozen=True)
class KafkaSourceSpec:
    """Everything the reader needs besides librdkafka properties (which travel as options)."""

    topics: tuple[str, ...] = ()
    topic_pattern: str | None = None
    startup_mode: str = StartupMode.EARLIEST_OFFSET.value
    startup_timestamp_millis: int | None = None
    startup_specific_offsets: str | None = None
    parse: ParseSpec | None = None
    min_partitions: int = 2
    # lakecdc.broker-unavailable-timeout: how long planning's broker calls are retried, and how long a
    # read task waits for its next message, while no broker answers (ingest.kafka.outage)
    broker_unavailable_timeout_s: float = 300.0
    commit_offsets_to_group: bool = True  # properties.commit.offsets.on.checkpoint
    # kafka-sync-table: a topic-pattern that matches no topic fails at start-up, as in Paimon (whose
    # schema discovery needs a topic); kafka-sync-database waits for matching topics.
    pattern_must_match: bool = False
    # scan.offset-reset-on-loss: "none" stops the job when the checkpoint's offsets are gone from Kafka
    # (ingest.kafka.offset_checks); "earliest" resumes those partitions from their earliest offset.
    offset_reset_on_loss: str = "none"
    # value.format=debezium-avro: the Schema Registry the read tasks resolve writer schemas with
    schema_registry_url: str | None = None
    # its client settings but the secrets (schema.registry.<key> without the prefix; the secrets travel
    # in the redacted lakecdc.secrets option, see registry_settings)
    schema_registry_conf: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return msgspec.json.encode(self).decode()

    @staticmethod
    def from_json(text: str) -> KafkaSourceSpec:
        return msgspec.json.decode(text, type=KafkaSourceSpec)


def kafka_properties(options: Mapping[str, str]) -> dict[str, str]:
    properties = {k[len("kafka.") :]: v for k, v in options.items() if k.startswith("kafka.")}
    # Secret properties travel together in one option whose name Spark redacts (ingest.kafka.job_source).
    secrets = msgspec.json.decode(options.get(SECRETS_OPTION) or "{}", type=dict[str, str])
    properties.update({k: v for k, v in secrets.items() if not k.startswith(REGISTRY_PREFIX)})
    return properties


def registry_settings(spec: KafkaSourceSpec, options: Mapping[str, str]) -> dict[str, str]:
    """The Schema Registry's --kafka-conf keys (URL, client settings and secrets) for ``parser_for``."""
    if not spec.schema_registry_url:
        return {}
    secrets = msgspec.json.decode(options.get(SECRETS_OPTION) or "{}", type=dict[str, str])
    return {
        URL_OPTION: spec.schema_registry_url,
        **{REGISTRY_PREFIX + k: v for k, v in spec.schema_registry_conf.items()},
        **{k: v for k, v in secrets.items() if k.startswith(REGISTRY_PREFIX)},
    }
