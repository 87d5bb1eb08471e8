"""The Kafka side of a sync job (``kafka-sync-table`` / ``kafka-sync-database``): the ``Source`` that
``ingest.job`` composes with the streaming sink."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ingest.kafka.source import KafkaCdcDataSource, KafkaSourceSpec
from ingest.source import MarksHook, SourceSettings

if TYPE_CHECKING:
    from ingest.pipeline.assembler import ParseSpec


class KafkaSource:
    """Kafka topics through ``lakecdc-kafka``; librdkafka properties travel as ``kafka.*`` options."""

    data_source = KafkaCdcDataSource
    worker_modules = ("ingest.kafka.source",)
    require_primary_keys = False  # Paimon's Kafka actions make an append table
    marks_hook: MarksHook | None = None

    def __init__(self, settings: SourceSettings, checkpoint: str) -> None:
        self.settings = settings
        self.checkpoint = checkpoint

    @property
    def value_format(self) -> str:
        return self.settings.kafka_conf["value.format"]

    def check_startup(self) -> None:
        pass

    def spec(self, parse: ParseSpec, parallelism: int) -> KafkaSourceSpec:
        settings = self.settings
        ts = settings.kafka_conf.get("scan.startup.timestamp-millis")
        return KafkaSourceSpec(
            topics=settings.topics,
            topic_pattern=settings.kafka_conf.get("topic-pattern"),
            startup_mode=settings.startup_mode,
            startup_timestamp_millis=int(ts) if ts else None,
            startup_specific_offsets=settings.kafka_conf.get("scan.startup.specific-offsets"),
            parse=parse,
            min_partitions=parallelism,
        )

    def options(self, parse: ParseSpec, parallelism: int) -> dict[str, str]:
        options = {"lakecdc.spec": self.spec(parse, parallelism).to_json()}
        for k, v in self.settings.librdkafka_properties.items():
            options[f"kafka.{k}"] = v
        return options
