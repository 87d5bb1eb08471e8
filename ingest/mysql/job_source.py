"""The MySQL side of a sync job (``mysql-sync-table`` / ``mysql-sync-database``): the ``Source`` that
``ingest.job`` composes with the streaming sink."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from formats import mysql_values
from ingest.durations import interval_seconds
from ingest.mysql.backoff import OUTAGE_OPTION, OUTAGE_TIMEOUT_S
from ingest.mysql.client import MySqlConnection
from ingest.mysql.options import skip_ddl_positions
from ingest.mysql.schema_history import SchemaHistory
from ingest.mysql.snapshot import SnapshotRegistry
from ingest.mysql.source import BINLOG_TASKS_OPTION, MySqlCdcDataSource
from ingest.mysql.spec import DEFAULT_CHUNK_SIZE, MySqlSourceSpec
from ingest.mysql.ssl import SslSettings
from ingest.mysql.startup import RESNAPSHOT_OPTION, StartupMode
from ingest.source import Action, MarksHook, SourceSettings

if TYPE_CHECKING:
    from ingest.pipeline.parse_spec import ParseSpec


class MySqlSource:
    """MySQL / MariaDB through ``lakecdc-mysql``: a snapshot, then the binlog. The password travels
    as the separate, redacted option ``mysql.password``; the planning hook keeps what the read tasks
    return beside the checkpoint, on the driver: chunk high watermarks (``SnapshotRegistry``) and the
    DDL the binlog read followed (``SchemaHistory``)."""

    data_source = MySqlCdcDataSource
    worker_modules = ("ingest.mysql.source",)
    value_format = mysql_values.FORMAT
    require_primary_keys = True  # Paimon's requirePrimaryKeys
    state_in_planner = True  # the planner keeps known tables, the schema history's start, re-snapshot markers

    def __init__(self, settings: SourceSettings, checkpoint: str) -> None:
        self.settings = settings
        self.checkpoint = checkpoint
        self.registry = SnapshotRegistry(checkpoint)
        self.history = SchemaHistory(checkpoint)

    @property
    def bounded(self) -> bool:
        """``scan.startup.mode=snapshot``: the snapshot only, then the job ends (Paimon's bounded source)."""
        return self.settings.mysql_conf.get("scan.startup.mode", "").strip().lower() == StartupMode.SNAPSHOT

    @property
    def marks_hook(self) -> MarksHook | None:
        return self.record_marks

    def record_marks(self, batch_id: int, marks: list[str], committed: Callable[[str], bool]) -> None:
        """A batch's marks, kept before its commit: the schema history's changes (idempotent: keyed by
        their binlog offsets, a replay records the same ones), then the chunks' high watermarks."""
        chunks = self.history.record_marks(marks)
        if chunks:
            self.registry.record(batch_id, chunks, committed)

    def check_startup(self) -> None:
        pass  # the --mysql-conf keys without effect (jdbc.properties.* among them) are logged by the CLI

    def spec(self, parse: ParseSpec) -> MySqlSourceSpec:
        settings = self.settings
        conf = settings.mysql_conf
        sid = conf.get("server-id", "5400").replace(" ", "")
        first, _, last = sid.partition("-")
        table_sync = settings.action is Action.MYSQL_SYNC_TABLE
        mode = conf.get("scan.startup.mode", StartupMode.INITIAL.value).strip().lower()
        return MySqlSourceSpec(
            connection=MySqlConnection(
                hostname=conf["hostname"],
                port=int(conf.get("port", "3306")),
                username=conf["username"],
                connect_timeout=interval_seconds(conf.get("connect.timeout", "30s")),
                ssl=SslSettings.from_conf(conf),
                max_retries=int(conf["connect.max-retries"]) if "connect.max-retries" in conf else None,
                outage_timeout=interval_seconds(conf.get(OUTAGE_OPTION, f"{OUTAGE_TIMEOUT_S:g}s")),
            ),
            database_regex=conf["database-name"],
            table_regex=conf["table-name"] if table_sync else settings.including_tables,
            startup_mode=mode,
            parse=parse,
            state_dir=self.checkpoint,
            server_id=int(first),
            # Snapshot readers each need their own replica id: the rest of a range, or the ids after a
            # single one.
            server_id_range=max(1, int(last) - int(first)) if last else 64,
            server_time_zone=conf.get("server-time-zone", "UTC"),
            chunk_size=int(conf.get("scan.incremental.snapshot.chunk.size", str(DEFAULT_CHUNK_SIZE))),
            specific_position=(conf["scan.startup.specific-offset.file"], int(conf["scan.startup.specific-offset.pos"]))
            if mode == StartupMode.SPECIFIC_OFFSET and "scan.startup.specific-offset.file" in conf
            else None,
            specific_gtids=conf.get("scan.startup.specific-offset.gtid-set")
            if mode == StartupMode.SPECIFIC_OFFSET
            else None,
            startup_timestamp_ms=int(conf["scan.startup.timestamp-millis"]) if mode == StartupMode.TIMESTAMP else None,
            require_primary_key=table_sync and not settings.primary_keys,
            newly_added_tables=_true(conf.get("scan.newly-added-table.enabled", "true")),
            skip_backfill=_true(conf.get("scan.incremental.snapshot.backfill.skip", "false")),
            fetch_size=int(conf["scan.snapshot.fetch.size"]) if "scan.snapshot.fetch.size" in conf else None,
            skip_ddl=skip_ddl_positions(conf.get("scan.schema-history.skip-ddl", "")),
            resnapshot_when_needed=_true(conf.get(RESNAPSHOT_OPTION, "false")),
            warehouse=settings.warehouse,
        )

    def options(self, parse: ParseSpec, parallelism: int) -> dict[str, str]:
        # A binlog micro-batch is read by up to one task per core (#27); LAKECDC_BINLOG_READ_TASKS
        # overrides it (benchmarks compare against 1; tests ask for more sub-ranges than cores).
        tasks = os.environ.get("LAKECDC_BINLOG_READ_TASKS", "").strip() or str(parallelism)
        return {
            "lakecdc.spec": self.spec(parse).to_json(),
            "mysql.password": self.settings.mysql_password,
            BINLOG_TASKS_OPTION: tasks,
        }


def _true(value: str) -> bool:
    return value.strip().lower() == "true"
