"""Job configuration: one typed, frozen model, filled from the command line and ``LAKECDC_*``
environment variables (command line first), validated before Spark starts."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from ingest import logs
from ingest.cli import config_file
from ingest.cli.paimon_conf import CATALOG_OPTIONS, TABLE_CONF_OPTIONS
from ingest.cli.secrets import SecretEnvironment, resolve_conf
from ingest.durations import spark_interval
from ingest.kafka.options import check_kafka_conf
from ingest.mysql.options import check_mysql_conf
from ingest.pipeline.chunk_builder import METADATA_TYPES
from ingest.pipeline.dead_letters import check_dead_letter_options
from ingest.source import Action, SourceKind
from schema_evolution.computed_specs import parse_computed_columns
from schema_evolution.type_mapping import parse_type_mapping
from sinks.filesystem import check_lease_support, is_object_store, with_environment
from sinks.table.locations import resolve_checkpoint, resolve_warehouse
from sinks.table.options import validate_table_options


class SyncSettings(BaseSettings):
    """Settings of a ``kafka-sync-table`` / ``kafka-sync-database`` job."""

    # hide_input_in_errors: a validation error's text must not carry the options (and their secrets).
    model_config = SettingsConfigDict(env_prefix="LAKECDC_", frozen=True, extra="forbid", hide_input_in_errors=True)

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
    log_payloads: bool = Field(False, description="message values in error texts and DDL text in logs")
    errors_tolerance: Literal["none", "all"] = Field(
        "none", description="none: bad input stops the job; all: it goes to --dead-letter-table"
    )
    dead_letter_table: str | None = Field(None, description="database.table of dead letters (--errors-tolerance all)")
    max_dead_letters: int | None = Field(None, ge=0, description="dead letters per micro-batch at most")
    skip_offsets: tuple[str, ...] = Field((), description="topic:partition:offset of messages to move past")
    spark_conf: dict[str, str] = Field(default_factory=dict, description="extra Spark configuration")
    metrics_port: int | None = Field(None, ge=0, le=65535, description="serve Prometheus metrics on this port")
    metrics_host: str = Field("127.0.0.1", description="address the metrics port binds to")
    progress: Literal["auto", "bar", "log"] = Field(
        "auto", description="auto: a progress bar when stderr is a terminal; bar; log: a log line per batch"
    )
    # Source option keys accepted with no effect (logged once when the job starts).
    _no_effect: list[str] = PrivateAttr(default_factory=list)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The command line, then LAKECDC_* variables, then --config's file (ingest.cli.config_file).
        return init_settings, env_settings, dotenv_settings, file_secret_settings, config_file.file_source(settings_cls)

    @field_validator("trigger_interval")
    @classmethod
    def _interval(cls, v: str) -> str:
        return spark_interval(v)

    @field_validator("kafka_conf", "mysql_conf", "catalog_conf", mode="before")
    @classmethod
    def _references(cls, v: object, info: ValidationInfo) -> object:
        # ${env:NAME} and ${file:/path}, resolved once here on the driver (ingest.cli.secrets).
        if isinstance(v, dict):
            return resolve_conf(v, f"--{(info.field_name or '').replace('_', '-')}")
        return v

    @field_validator("warehouse", "checkpoint")
    @classmethod
    def _location(cls, v: str | None, info: ValidationInfo) -> str | None:
        # Absolute from here on: pypaimon-rust and Spark's executors take no relative path.
        if v is None:
            return None
        # s3:// warehouses; checkpoint URIs of schemes Spark's Hadoop serves (checked when Spark starts)
        resolve = resolve_warehouse if info.field_name == "warehouse" else resolve_checkpoint
        return resolve(v, f"--{info.field_name}")

    @field_validator("including_tables", "excluding_tables", "including_dbs", "excluding_dbs")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return v

    @field_validator("database", "table")
    @classmethod
    def _identifier(cls, v: str | None, info: ValidationInfo) -> str | None:
        # A directory name in the warehouse (and the default checkpoint's): refused before anything
        # is created when it could reach outside (schema_evolution.identifiers).
        from schema_evolution.identifiers import check_name

        kind = "database" if info.field_name == "database" else "table"
        return None if v is None else check_name(v, kind, f"--{info.field_name}")

    @property
    def case_sensitive(self) -> bool:
        """Paimon's catalog option ``case-sensitive`` (default true). A case-insensitive catalog gets
        table, column and key names in lower case, as Paimon's CDC actions write them."""
        return self.catalog_conf.get("case-sensitive", "true").strip().lower() != "false"

    def name(self, text: str) -> str:
        """A table, column or key name as the catalog keeps it."""
        return text if self.case_sensitive else text.lower()

    @property
    def dead_letter_identifier(self) -> str | None:
        """--dead-letter-table as the catalog keeps it (None: --errors-tolerance none)."""
        return None if self.dead_letter_table is None else self.name(self.dead_letter_table)

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
        check_dead_letter_options(
            self.errors_tolerance,
            self.dead_letter_table,
            self.max_dead_letters,
            self.skip_offsets,
            self.action.source is SourceKind.MYSQL,
            None if self.action.database_sync else f"{self.database}.{self.table}",
        )
        if self.primary_keys and self.partition_keys and not self.action.database_sync:
            keys = {self.name(k) for k in self.primary_keys}
            missing = [k for k in self.partition_keys if self.name(k) not in keys]
            if missing:
                raise ValueError(f"partition keys {missing} must be part of the primary keys {list(self.primary_keys)}")
        # Every source but plain JSON carries updates and deletes (-U/-D rows).
        value_format = self.kafka_conf.get("value.format", "").strip().lower()
        plain_json = self.action.source is SourceKind.KAFKA and value_format == "json"
        validate_table_options(self.table_conf, has_primary_key=True, retractions=not plain_json)
        self._no_effect += [f"--table-conf {k}" for k in TABLE_CONF_OPTIONS.review(self.table_conf)]
        self._no_effect += [f"--catalog-conf {k}" for k in CATALOG_OPTIONS.review(self.catalog_conf)]
        if is_object_store(self.warehouse):
            self._check_object_store()
        return self

    def _check_object_store(self) -> None:
        if self.checkpoint is None:
            raise ValueError(
                f"--warehouse {self.warehouse} is on object storage: give --checkpoint a local or shared path "
                "or a URI Spark's Hadoop serves (s3a:// with hadoop-aws, hdfs://...); the default, "
                "<warehouse>/_lakecdc/checkpoints/<job>, would be an s3:// location, which Spark's Hadoop has no "
                "filesystem for"
            )
        check_lease_support(self.warehouse)
        # s3.* options the command line lacks, from AWS_* variables: the same for every reader and writer
        self.catalog_conf.update(with_environment(self.warehouse, self.catalog_conf))
        logs.register_secrets(v for k, v in self.catalog_conf.items() if logs.is_secret_name(k))

    def _check_kafka(self) -> None:
        if self.mysql_conf:
            raise ValueError("--mysql-conf belongs to the mysql-sync actions")
        env_password = SecretEnvironment().kafka_sasl_password
        if env_password is not None and not {"properties.sasl.password", "properties.sasl.jaas.config"} & set(
            self.kafka_conf
        ):
            logs.register_secret(env_password.get_secret_value())
            self.kafka_conf["properties.sasl.password"] = env_password.get_secret_value()
        self._no_effect = [f"--kafka-conf {k}" for k in check_kafka_conf(self.kafka_conf)]

    def _check_mysql(self) -> None:
        if self.kafka_conf:
            raise ValueError("--kafka-conf belongs to the kafka-sync actions")
        no_effect = check_mysql_conf(self.mysql_conf, self.action, self.type_mapping, self.metadata_columns)
        self._no_effect = [f"--mysql-conf {k}" for k in no_effect]

    @property
    def no_effect_options(self) -> list[str]:
        """Source, table and catalog option keys accepted for compatibility that change nothing here,
        as ``--kafka-conf key`` (logged once when the job starts)."""
        return list(self._no_effect)

    @property
    def mysql_password(self) -> str:
        """From --mysql-conf password, password-file, or LAKECDC_MYSQL_PASSWORD (in that order)."""
        if "password" in self.mysql_conf:
            password = self.mysql_conf["password"]
        elif "password-file" in self.mysql_conf:
            with open(self.mysql_conf["password-file"]) as f:
                password = f.read().strip()
        else:
            env_password = SecretEnvironment().mysql_password
            password = "" if env_password is None else env_password.get_secret_value()
        logs.register_secret(password)
        return password

    @property
    def job_name(self) -> str:
        target = "all" if self.action.database_sync else self.table
        return f"{self.action}-{self.database}-{target}"
