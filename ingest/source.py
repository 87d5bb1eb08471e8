"""What a sync job reads: the sync actions, and the ``Source`` a job composes with the streaming sink.

``job.py`` picks the source once from the action (``Action.source``) and asks it, never the action
string, what differs between Kafka and MySQL: the Spark data source and its options, the modules its
read tasks import (warmed at start-up), what it checks at start-up, and its planning hook.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql.datasource import DataSource

    from ingest.pipeline.parse_spec import ParseSpec


class SourceKind(enum.StrEnum):
    KAFKA = "kafka"
    MYSQL = "mysql"


class Action(enum.StrEnum):
    """The sync actions; the values are the command line's names (Paimon's, with ``-``)."""

    KAFKA_SYNC_TABLE = "kafka-sync-table"
    KAFKA_SYNC_DATABASE = "kafka-sync-database"
    MYSQL_SYNC_TABLE = "mysql-sync-table"
    MYSQL_SYNC_DATABASE = "mysql-sync-database"

    @property
    def source(self) -> SourceKind:
        return _SOURCE[self]

    @property
    def database_sync(self) -> bool:
        """``*-sync-database``: many tables, routed by name; ``*-sync-table``: one target table."""
        return self in (Action.KAFKA_SYNC_DATABASE, Action.MYSQL_SYNC_DATABASE)


_SOURCE = {
    Action.KAFKA_SYNC_TABLE: SourceKind.KAFKA,
    Action.KAFKA_SYNC_DATABASE: SourceKind.KAFKA,
    Action.MYSQL_SYNC_TABLE: SourceKind.MYSQL,
    Action.MYSQL_SYNC_DATABASE: SourceKind.MYSQL,
}

# The driver's hook for the notes a batch's read tasks leave (chunk rows' ``mark`` column): called
# with the batch id, the notes and "is this target table's commit of the batch already in Paimon".
MarksHook = Callable[[int, list[str], Callable[[str], bool]], None]


# The reader option naming the file whose existence means "the job is stopping" (ingest.streaming.stopping):
# the sources' latestOffset then offers no new data, so a job behind its source stops after the batch in
# flight instead of running its backlog out. Spark hands options over with lower-cased keys.
STOP_FILE_OPTION = "lakecdc.stopFile"
# Test-only: another byte bound of a Kafka micro-batch (``ingest.kafka.batch_bytes``), read from the job's
# environment and handed to the planner, which runs in a Python process Spark started, as this option.
MAX_BATCH_BYTES_ENV = "LAKECDC_KAFKA_BATCH_BYTES"
MAX_BATCH_BYTES_OPTION = "lakecdc.maxBatchBytes"


def stop_file(options: Mapping[str, str]) -> str | None:
    """The stop file the job named in the reader's options (None: none, e.g. a source used on its own)."""
    return options.get(STOP_FILE_OPTION.lower()) or options.get(STOP_FILE_OPTION) or None


def stopping(path: str | None) -> bool:
    """Whether the job's stop was requested: then no new micro-batch is offered (its start offset is
    returned as the latest), and the query stops between batches."""
    return path is not None and os.path.exists(path)


class SourceSettings(Protocol):
    """What the sources read of a job's settings (``ingest.cli.settings.SyncSettings``; named here so
    that the source packages do not import the command line)."""

    @property
    def action(self) -> Action: ...
    @property
    def warehouse(self) -> str: ...
    @property
    def catalog_conf(self) -> Mapping[str, str]: ...
    @property
    def database(self) -> str: ...
    @property
    def table(self) -> str | None: ...
    def name(self, text: str) -> str: ...
    @property
    def kafka_conf(self) -> Mapping[str, str]: ...
    @property
    def mysql_conf(self) -> Mapping[str, str]: ...
    @property
    def primary_keys(self) -> tuple[str, ...]: ...
    @property
    def including_tables(self) -> str: ...
    @property
    def mysql_password(self) -> str: ...


class Source(Protocol):
    """One source of a sync job, as ``job.py`` composes it with the streaming sink."""

    @property
    def data_source(self) -> type[DataSource]:
        """The Spark Python data source (registered with the session; its ``name()`` is the format)."""
        ...

    @property
    def worker_modules(self) -> tuple[str, ...]:
        """Modules its read tasks import, warmed in the Python workers at job start
        (``ingest.workers.warmup``); they must import neither pypaimon nor the micro-batch code."""
        ...

    @property
    def value_format(self) -> str:
        """The CDC format its read tasks parse (``ParseSpec.format``)."""
        ...

    @property
    def require_primary_keys(self) -> bool:
        """Whether a table left without primary keys is refused (Paimon's MySQL actions)."""
        ...

    @property
    def bounded(self) -> bool:
        """Whether the source ends by itself (MySQL ``scan.startup.mode=snapshot``): the job then runs
        as with ``--available-now``."""
        ...

    @property
    def marks_hook(self) -> MarksHook | None:
        """Planning hook: what the driver keeps of a batch's notes before its commit."""
        ...

    @property
    def state_in_planner(self) -> bool:
        """Whether its planner (a Python worker Spark starts on the driver's host, without the driver's JVM)
        reads and writes job state beside the checkpoint: then the checkpoint cannot be one only Spark's
        Hadoop serves."""
        ...

    def check_startup(self) -> None:
        """Start-up checks and warnings, before the Spark session starts (a ``LakeCdcError`` stops the job)."""
        ...

    def options(self, parse: ParseSpec, parallelism: int) -> dict[str, str]:
        """The Spark data source's options (secrets as separate, redacted options)."""
        ...
