"""``--kafka-conf``: every Flink Kafka connector option a Paimon script may pass, with what lakecdc
does with it (``ingest.conf_options``), and the start-up checks of a Kafka job's source options."""

from __future__ import annotations

from collections.abc import Mapping

from formats import get_parser
from ingest.conf_options import ConfOption, OptionTable, Treatment, whole_number
from ingest.kafka.startup import STARTUP_MODES, StartupMode

H, N, R = Treatment.HONOURED, Treatment.NO_EFFECT, Treatment.REFUSED

KAFKA_OPTIONS = OptionTable(
    "--kafka-conf",
    (
        ConfOption("properties.*", H, "Kafka client properties, given to librdkafka", "bootstrap.servers=b:9092"),
        ConfOption("topic", H, "topic name(s), ';'-separated", "orders"),
        ConfOption("topic-pattern", H, "regular expression over topic names", "cdc_.*"),
        ConfOption("value.format", H, "the CDC format of message values", "canal-json"),
        ConfOption("scan.startup.mode", H, "where a new job starts reading", "earliest-offset"),
        ConfOption(
            "scan.startup.timestamp-millis",
            H,
            "start time for scan.startup.mode=timestamp",
            "1700000000000",
            whole_number,
        ),
        ConfOption(
            "scan.startup.specific-offsets",
            H,
            "start offsets for scan.startup.mode=specific-offsets",
            "partition:0,offset:42",
        ),
        # New partitions are discovered at every trigger, which is at least as often as asked.
        ConfOption(
            "scan.topic-partition-discovery.interval",
            N,
            "lakecdc discovers new partitions at every trigger",
            "5 min",
        ),
    ),
)


def check_kafka_conf(conf: Mapping[str, str]) -> list[str]:
    """Start-up checks of a Kafka job's ``--kafka-conf``; raises ``ValueError`` naming the option.
    Returns the keys that have no effect (the job logs them once)."""
    no_effect = KAFKA_OPTIONS.review(conf)
    if not conf.get("properties.bootstrap.servers"):
        raise ValueError("--kafka-conf properties.bootstrap.servers=HOST:PORT is required")
    if not conf.get("topic") and not conf.get("topic-pattern"):
        raise ValueError("--kafka-conf topic=NAME (or topic-pattern=REGEX) is required")
    if "value.format" not in conf:
        raise ValueError("--kafka-conf value.format=... is required (e.g. canal-json)")
    get_parser(conf["value.format"])
    mode = conf.get("scan.startup.mode")
    if mode is not None and mode not in STARTUP_MODES:
        raise ValueError(f"scan.startup.mode '{mode}' is not one of the supported modes")
    if mode == StartupMode.TIMESTAMP and "scan.startup.timestamp-millis" not in conf:
        raise ValueError("scan.startup.mode=timestamp needs scan.startup.timestamp-millis")
    if mode == StartupMode.SPECIFIC_OFFSETS and "scan.startup.specific-offsets" not in conf:
        raise ValueError("scan.startup.mode=specific-offsets needs scan.startup.specific-offsets")
    return no_effect
