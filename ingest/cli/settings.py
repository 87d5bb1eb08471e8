"""Job configuration: one typed, frozen model, filled from the command line and ``LAKECDC_*``
environment variables (command line first), validated before Spark starts."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from formats import get_parser
from ingest.durations import interval_ms, spark_interval
from ingest.kafka.startup import STARTUP_MODES as KAFKA_STARTUP_MODES
from ingest.kafka.startup import StartupMode as KafkaStartupMode
from ingest.mysql.ssl import SSL_KEYS, SslSettings
from ingest.mysql.startup import STARTUP_MODES as MYSQL_STARTUP_MODES
from ingest.mysql.startup import StartupMode as MySqlStartupMode
from ingest.pipeline.chunk_builder import METADATA_TYPES
from ingest.source import Action, SourceKind
from schema_evolution.computed_specs import parse_computed_columns
from schema_evolution.type_mapping import TypeMappingMode, parse_type_mapping
from sinks.table.locations import resolve_location
from sinks.table.options import validate_table_options

# --kafka-conf keys (Paimon's names) that lakecdc reads; ``properties.*`` go to librdkafka.
KAFKA_CONF_KEYS = {
    "topic": "topic name(s), ';'-separated",
    "topic-pattern": "regular expression over topic names",
    "value.format": "the CDC format of message values",
    "scan.startup.mode": "where a new job starts reading",
    "scan.startup.timestamp-millis": "start time for scan.startup.mode=timestamp",
    "scan.startup.specific-offsets": "start offsets for scan.startup.mode=specific-offsets",
    # New partitions are discovered at every trigger, which is at least as often as asked.
    "scan.topic-partition-discovery.interval": "accepted: lakecdc discovers partitions at every trigger",
}


# --mysql-conf keys (Paimon's names) that lakecdc reads.
MYSQL_CONF_KEYS = {
    "hostname": "server host",
    "port": "server port (default 3306)",
    "username": "user with SELECT, REPLICATION SLAVE and REPLICATION CLIENT",
    "password": "password (or password-file, or the LAKECDC_MYSQL_PASSWORD environment variable)",
    "password-file": "file holding the password",
    "database-name": "database name (a regular expression for mysql-sync-table)",
    "table-name": "table name regular expression (mysql-sync-table)",
    "server-id": "replica server id, or a range a-b (one id per parallel snapshot reader)",
    "server-time-zone": "the server's time zone, for TIMESTAMP columns (default UTC)",
    "scan.startup.mode": "initial (default), earliest-offset, latest-offset or specific-offset",
    "scan.startup.specific-offset.file": "binlog file for specific-offset",
    "scan.startup.specific-offset.pos": "binlog position for specific-offset",
    "scan.startup.specific-offset.gtid-set": "GTID set for specific-offset: start after these transactions "
    "(MySQL uuid:1-5 or MariaDB domain-server-seq)",
    "scan.incremental.snapshot.chunk.size": "rows per snapshot chunk (default 32768; Flink CDC: 8096)",
    "scan.startup.timestamp-millis": "start time (epoch milliseconds) for scan.startup.mode=timestamp",
    "connect.timeout": "connection timeout, e.g. 30s",
    "debezium.include.schema.comments": "accepted: lakecdc always copies column and table comments",
    "heartbeat.interval": "accepted (e.g. 30s): every micro-batch moves the binlog offset to the server's "
    "current position, which is what Flink CDC's heartbeats do for idle tables",
    **SSL_KEYS,
}


class SyncSettings(BaseSettings):
    """Settings of a ``kafka-sync-table`` / ``kafka-sync-database`` job."""

    model_config = SettingsConfigDict(env_prefix="LAKECDC_", frozen=True, extra="forbid")

    action: Action = Field(description="which sync action runs")
    warehouse: str = Field(description="Paimon warehouse: a relative or absolute path, or a file: URI")
    database: str = Field(description="target Paimon database (created when missing)")
    table: str | None = Field(None, description="target table (kafka-sync-table)")
    partition_keys: tuple[str, ...] = Field((), description="partition keys of created tables")
    primary_keys: tuple[str, ...] = Field((), description="primary keys; default: the source's")
    type_mapping: str = Field("", description="comma-separated --type-mapping options")
    sync_primary_keys_from_source_schema: bool = Field(
        True, description="without --primary-keys, take the source's primary keys (else: no keys)"
    )
    computed_columns: tuple[str, ...] = Field((), description="computed columns, 'name=func(args)'")
    metadata_columns: tuple[str, ...] = Field((), description="metadata columns to add, e.g. topic,offset,op_ts")
    metadata_column_prefix: str = Field("", description="prefix of the metadata columns' names")
    kafka_conf: dict[str, str] = Field(default_factory=dict, description="Kafka source options")
    mysql_conf: dict[str, str] = Field(default_factory=dict, description="MySQL source options")
    catalog_conf: dict[str, str] = Field(default_factory=dict, description="Paimon catalog options")
    table_conf: dict[str, str] = Field(default_factory=dict, description="Paimon table options")
    table_prefix: str = Field("", description="prefix of created table names (database sync)")
    table_suffix: str = Field("", description="suffix of created table names (database sync)")
    including_tables: str = Field(".*", description="regex of source tables to sync (database sync)")
    excluding_tables: str | None = Field(None, description="regex of source tables to skip (database sync)")
    ignore_incompatible: bool = Field(False, description="skip tables whose schema cannot evolve")
    merge_shards: bool = Field(True, description="mysql-sync-database: merge same-named tables of several databases")
    mode: Literal["divided", "combined"] = Field("divided", description="mysql-sync-database mode")
    including_dbs: str = Field(".*", description="regex of source databases to sync (database sync)")
    excluding_dbs: str | None = Field(None, description="regex of source databases to skip (database sync)")
    table_mapping: dict[str, str] = Field(default_factory=dict, description="source table -> Paimon table")
    table_prefix_db: dict[str, str] = Field(default_factory=dict, description="source db -> table prefix")
    table_suffix_db: dict[str, str] = Field(default_factory=dict, description="source db -> table suffix")
    multiple_table_partition_keys: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Paimon (or source) table name -> its partition keys"
    )
    checkpoint: str | None = Field(None, description="Spark checkpoint directory")
    trigger_interval: str = Field("10 seconds", description="micro-batch trigger interval")
    # Larger micro-batches amortise the fixed per-batch cost (planning, two Spark jobs, a commit):
    # `make bench` measured 500k per batch 40% faster than 200k, with lower peak memory.
    max_offsets_per_trigger: int = Field(500_000, ge=0, description="messages per micro-batch at most")
    parallel_write_min_rows: int = Field(
        50_000, ge=0, description="rows of one table in a micro-batch from which several tasks write it, by bucket"
    )
    available_now: bool = Field(False, description="process what is in Kafka now, then stop")
    spark_conf: dict[str, str] = Field(default_factory=dict, description="extra Spark configuration")

    @field_validator("trigger_interval")
    @classmethod
    def _interval(cls, v: str) -> str:
        return spark_interval(v)

    @field_validator("warehouse", "checkpoint")
    @classmethod
    def _location(cls, v: str | None, info: ValidationInfo) -> str | None:
        # Absolute from here on: pypaimon-rust and Spark's executors take no relative path.
        return None if v is None else resolve_location(v, f"--{info.field_name}")

    @field_validator("including_tables", "excluding_tables", "including_dbs", "excluding_dbs")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return v

    @property
    def case_sensitive(self) -> bool:
        """Paimon's catalog option ``case-sensitive`` (default true). A case-insensitive catalog gets
        table, column and key names in lower case, as Paimon's CDC actions write them."""
        return self.catalog_conf.get("case-sensitive", "true").strip().lower() != "false"

    def name(self, text: str) -> str:
        """A table, column or key name as the catalog keeps it."""
        return text if self.case_sensitive else text.lower()

    @model_validator(mode="after")
    def _check(self) -> SyncSettings:
        if not self.action.database_sync and not self.table:
            raise ValueError(f"{self.action} needs --table")
        parse_computed_columns(self.computed_columns)  # start-up validation: names the bad argument
        unknown = [c for c in self.metadata_columns if c not in METADATA_TYPES]
        if unknown:
            raise ValueError(f"unknown --metadata-column {unknown}; known: {', '.join(METADATA_TYPES)}")
        parse_type_mapping(self.type_mapping)
        if self.catalog_conf.get("case-sensitive", "true").strip().lower() not in ("true", "false"):
            raise ValueError(
                f"--catalog-conf case-sensitive={self.catalog_conf['case-sensitive']}: expected true or false"
            )
        if self.action.source is SourceKind.MYSQL:
            self._check_mysql()
        else:
            self._check_kafka()
        if self.primary_keys and self.partition_keys and not self.action.database_sync:
            keys = {self.name(k) for k in self.primary_keys}
            missing = [k for k in self.partition_keys if self.name(k) not in keys]
            if missing:
                raise ValueError(f"partition keys {missing} must be part of the primary keys {list(self.primary_keys)}")
        # Every source but plain JSON carries updates and deletes (-U/-D rows).
        plain_json = self.action.source is SourceKind.KAFKA and self.kafka_conf.get("value.format") == "json"
        validate_table_options(self.table_conf, has_primary_key=True, retractions=not plain_json)
        return self

    def _check_kafka(self) -> None:
        if self.mysql_conf:
            raise ValueError("--mysql-conf belongs to the mysql-sync actions")
        for key in self.kafka_conf:
            if not key.startswith("properties.") and key not in KAFKA_CONF_KEYS:
                known = ", ".join(sorted(KAFKA_CONF_KEYS))
                raise ValueError(f"--kafka-conf {key} is not supported; supported: properties.*, {known}")
        if not self.kafka_conf.get("properties.bootstrap.servers"):
            raise ValueError("--kafka-conf properties.bootstrap.servers=HOST:PORT is required")
        if not self.kafka_conf.get("topic") and not self.kafka_conf.get("topic-pattern"):
            raise ValueError("--kafka-conf topic=NAME (or topic-pattern=REGEX) is required")
        if "value.format" not in self.kafka_conf:
            raise ValueError("--kafka-conf value.format=... is required (e.g. canal-json)")
        get_parser(self.kafka_conf["value.format"])
        mode = self.kafka_conf.get("scan.startup.mode")
        if mode is not None and mode not in KAFKA_STARTUP_MODES:
            raise ValueError(f"scan.startup.mode '{mode}' is not one of the supported modes")
        if mode == KafkaStartupMode.TIMESTAMP and "scan.startup.timestamp-millis" not in self.kafka_conf:
            raise ValueError("scan.startup.mode=timestamp needs scan.startup.timestamp-millis")
        if mode == KafkaStartupMode.SPECIFIC_OFFSETS and "scan.startup.specific-offsets" not in self.kafka_conf:
            raise ValueError("scan.startup.mode=specific-offsets needs scan.startup.specific-offsets")

    def _check_mysql(self) -> None:
        if self.kafka_conf:
            raise ValueError("--kafka-conf belongs to the kafka-sync actions")
        conf = self.mysql_conf
        kafka_only = [c for c in self.metadata_columns if c not in ("database_name", "table_name", "op_ts")]
        if kafka_only:
            raise ValueError(
                f"--metadata-column {kafka_only} are Kafka's; the MySQL source has database_name, table_name, op_ts"
            )
        if "scan.startup.specific-offset.gtid-set" in conf:
            from ingest.mysql.gtid import GtidSet

            GtidSet.parse(conf["scan.startup.specific-offset.gtid-set"])
        for key in conf:
            if key not in MYSQL_CONF_KEYS and not key.startswith("jdbc.properties."):
                known = ", ".join(sorted(MYSQL_CONF_KEYS))
                raise ValueError(f"--mysql-conf {key} is not supported; supported: jdbc.properties.*, {known}")
        if (
            TypeMappingMode.TINYINT1_NOT_BOOL in parse_type_mapping(self.type_mapping)
            and conf.get("jdbc.properties.tinyInt1isBit", "").strip().lower() == "true"
        ):
            # Paimon's message (MySqlActionUtils): the mode is Connector/J's tinyInt1isBit=false.
            raise ValueError(
                "Type mapping option 'tinyint1-not-bool' conflicts with jdbc properties "
                "'jdbc.properties.tinyInt1isBit=true'. Option 'tinyint1-not-bool' is equal to "
                "'jdbc.properties.tinyInt1isBit=false'."
            )
        for key in ("hostname", "username", "database-name"):
            if not conf.get(key):
                raise ValueError(f"--mysql-conf {key}=... is required")
        if self.action is Action.MYSQL_SYNC_TABLE and not conf.get("table-name"):
            raise ValueError("--mysql-conf table-name=... is required for mysql-sync-table")
        if self.action is Action.MYSQL_SYNC_DATABASE and conf.get("table-name"):
            raise ValueError(
                "table-name cannot be set for mysql_sync_database. If you want to sync several MySQL tables "
                "into one Paimon table, use mysql_sync_table instead."
            )
        for key in ("database-name", "table-name"):
            if conf.get(key):
                try:
                    re.compile(conf[key])
                except re.error as exc:
                    raise ValueError(f"--mysql-conf {key} is not a valid regular expression: {exc}") from None
        _check_mysql_startup(conf)
        for key in ("port", "scan.incremental.snapshot.chunk.size", "scan.startup.specific-offset.pos"):
            if key in conf and not conf[key].strip().isdigit():
                raise ValueError(f"--mysql-conf {key}='{conf[key]}' is not a whole number")
        sid = conf.get("server-id", "5400")
        if not re.fullmatch(r"\s*\d+\s*(-\s*\d+\s*)?", sid):
            raise ValueError(f"--mysql-conf server-id='{sid}' is not a number or a range a-b")
        from formats.mysql_values import server_zone

        server_zone(conf.get("server-time-zone"))
        SslSettings.from_conf(conf)
        for key in ("connect.timeout", "heartbeat.interval"):
            if key in conf:
                try:
                    interval_ms(conf[key])
                except ValueError:
                    raise ValueError(f"--mysql-conf {key}='{conf[key]}' is not a duration (e.g. 30s)") from None

    @property
    def mysql_password(self) -> str:
        """From --mysql-conf password, password-file, or LAKECDC_MYSQL_PASSWORD (in that order)."""
        import os

        if "password" in self.mysql_conf:
            return self.mysql_conf["password"]
        if "password-file" in self.mysql_conf:
            with open(self.mysql_conf["password-file"]) as f:
                return f.read().strip()
        return os.environ.get("LAKECDC_MYSQL_PASSWORD", "")

    @property
    def startup_mode(self) -> str:
        """Paimon's default: group offsets when a group id is given, else the earliest offset."""
        mode = self.kafka_conf.get("scan.startup.mode")
        if mode:
            return mode
        group = self.kafka_conf.get("properties.group.id")
        return (KafkaStartupMode.GROUP_OFFSETS if group else KafkaStartupMode.EARLIEST_OFFSET).value

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(t.strip() for t in self.kafka_conf.get("topic", "").split(";") if t.strip())

    @property
    def librdkafka_properties(self) -> dict[str, str]:
        return {k[len("properties.") :]: v for k, v in self.kafka_conf.items() if k.startswith("properties.")}

    @property
    def job_name(self) -> str:
        target = "all" if self.action.database_sync else self.table
        return f"{self.action}-{self.database}-{target}"


def _check_mysql_startup(conf: dict[str, str]) -> None:
    mode = conf.get("scan.startup.mode", MySqlStartupMode.INITIAL)
    if mode not in MYSQL_STARTUP_MODES:
        raise ValueError(
            f"scan.startup.mode '{mode}' is not supported; use {', '.join(MYSQL_STARTUP_MODES[:-1])} "
            f"or {MYSQL_STARTUP_MODES[-1]}"
        )
    if mode == MySqlStartupMode.TIMESTAMP and not conf.get("scan.startup.timestamp-millis", "").strip().isdigit():
        raise ValueError("scan.startup.mode=timestamp needs scan.startup.timestamp-millis (epoch milliseconds)")
    if mode == MySqlStartupMode.SPECIFIC_OFFSET and not (
        (conf.get("scan.startup.specific-offset.file") and conf.get("scan.startup.specific-offset.pos"))
        or conf.get("scan.startup.specific-offset.gtid-set")
    ):
        raise ValueError(
            "scan.startup.mode=specific-offset needs scan.startup.specific-offset.gtid-set, or "
            "scan.startup.specific-offset.file and .pos"
        )
