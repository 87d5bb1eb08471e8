"""The Kafka side of a sync job (``kafka-sync-table`` / ``kafka-sync-database``): the ``Source`` that
``ingest.job`` composes with the streaming sink."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from ingest.kafka.discovery import check_schema_discoverable
from ingest.kafka.options import (
    SECRETS_OPTION,
    commit_offsets_to_group,
    is_secret_property,
    librdkafka_config,
    startup_mode,
    topic_list,
)
from ingest.kafka.outage import timeout_seconds
from ingest.kafka.schema_registry import PREFIX as REGISTRY_PREFIX
from ingest.kafka.schema_registry import SECRET_KEYS as REGISTRY_SECRETS
from ingest.kafka.schema_registry import URL_OPTION, client_conf
from ingest.kafka.source import KafkaCdcDataSource, KafkaSourceSpec
from ingest.source import MarksHook, SourceSettings

if TYPE_CHECKING:
    from ingest.pipeline.parse_spec import ParseSpec


class KafkaSource:
    """Kafka topics through ``lakecdc-kafka``; librdkafka properties travel as ``kafka.*`` options, the
    secret ones together as the ``lakecdc.secrets`` option, which Spark redacts."""

    data_source = KafkaCdcDataSource
    worker_modules = ("ingest.kafka.source",)
    require_primary_keys = False  # Paimon's Kafka actions make an append table
    state_in_planner = False  # job state is the driver's only (start-up checks, the micro-batch commits)
    bounded = False  # Paimon's Kafka source never ends (scan.bounded.* have no effect)
    marks_hook: MarksHook | None = None

    def __init__(self, settings: SourceSettings, checkpoint: str) -> None:
        self.settings = settings
        self.checkpoint = checkpoint

    @property
    def value_format(self) -> str:
        return self.settings.kafka_conf["value.format"].strip().lower()  # Paimon lower-cases it too

    def check_startup(self) -> None:
        check_schema_discoverable(self.settings, self.checkpoint)  # kafka-sync-table's schema retrieval, as Paimon's

    def spec(self, parse: ParseSpec, parallelism: int) -> KafkaSourceSpec:
        conf = self.settings.kafka_conf
        ts = conf.get("scan.startup.timestamp-millis")
        return KafkaSourceSpec(
            topics=topic_list(conf.get("topic", "")),
            topic_pattern=conf.get("topic-pattern"),
            startup_mode=startup_mode(conf),
            startup_timestamp_millis=int(ts) if ts else None,
            startup_specific_offsets=conf.get("scan.startup.specific-offsets"),
            parse=parse,
            min_partitions=parallelism,
            commit_offsets_to_group=commit_offsets_to_group(conf),
            pattern_must_match=not self.settings.action.database_sync,
            offset_reset_on_loss=conf.get("scan.offset-reset-on-loss", "none").strip().lower(),
            broker_unavailable_timeout_s=timeout_seconds(conf),
            schema_registry_url=conf.get(URL_OPTION, "").strip() or None,
            schema_registry_conf={k: v for k, v in client_conf(conf).items() if k not in REGISTRY_SECRETS},
        )

    def options(self, parse: ParseSpec, parallelism: int) -> dict[str, str]:
        options = {"lakecdc.spec": self.spec(parse, parallelism).to_json()}
        secrets: dict[str, str] = {}
        for k, v in librdkafka_config(self.settings.kafka_conf).items():
            if is_secret_property(k):
                secrets[k] = v
            else:
                options[f"kafka.{k}"] = v
        for k, v in client_conf(self.settings.kafka_conf).items():
            if k in REGISTRY_SECRETS:  # travel with the broker's secrets, under their --kafka-conf name
                secrets[REGISTRY_PREFIX + k] = v
        if secrets:  # one option Spark redacts in plans and the UI, whatever the properties are called
            options[SECRETS_OPTION] = msgspec.json.encode(secrets).decode()
        return options
