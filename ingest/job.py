"""Wires a sync job: the Spark session, the job's ``Source`` (picked once from the action), the
micro-batch processor, the query."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import structlog

from formats import mysql_values
from ingest import logs
from ingest.durations import interval_ms
from ingest.paimon.source import PaimonDataSource
from ingest.pipeline.dead_letters import parse_binlog_skips, parse_skip_offsets
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from ingest.source import (
    MAX_BATCH_BYTES_ENV,
    MAX_BATCH_BYTES_OPTION,
    STOP_FILE_OPTION,
    Source,
    SourceKind,
    SourceSettings,
)
from ingest.spark_conf import session_conf, submitted_conf
from ingest.streaming.checkpoint import SKIPS_FILE, SPARK_DIR, CheckpointGuard, SparkProgress, record_skips
from ingest.streaming.dead_letter_table import DeadLetterTable
from ingest.streaming.micro_batch import BatchStats, MicroBatchProcessor, configure_session
from ingest.streaming.progress import JobProgress
from ingest.streaming.progress_bar import ProgressBar, wants_bar
from ingest.streaming.stopping import GracefulStop, stop_timeout
from ingest.workers.warmup import start_warming
from schema_evolution.errors import LakeCdcError, TransientError
from schema_evolution.payloads import enable_previews
from schema_evolution.type_mapping import parse_type_mapping
from sinks.filesystem import UnsupportedStore, scheme
from sinks.hadoop_files import Hadoop
from sinks.state_files import (
    check_hadoop_serves,
    check_state_location,
    create_once,
    lease_directory,
    needs_hadoop,
    set_store_options,
    state_path,
    use_hadoop,
)
from sinks.table.catalog import Catalog
from sinks.table.locations import resolve_location
from sinks.table.prepare import TablePolicy, TablePreparer
from sinks.write.committer import Committer
from sinks.write.lease import DEFAULT_TTL, Fence, Owner

if TYPE_CHECKING:
    # Annotations only: the command line builds the settings and calls run() (cli -> job).
    from ingest.cli.settings import SyncSettings

log = structlog.get_logger(__name__)

COMMIT_USER_FILE = "lakecdc-commit-user"

# Each source's module, imported when a job of that source starts: a Kafka job no longer imports the
# MySQL stack before Spark starts (~0.3 s of CPU, 12% of its imports; bench/README.md: Job start-up).
SOURCES: dict[SourceKind, tuple[str, str]] = {
    SourceKind.KAFKA: ("ingest.kafka.job_source", "KafkaSource"),
    SourceKind.MYSQL: ("ingest.mysql.job_source", "MySqlSource"),
}

# Read tasks of every source, and the write task, import these: warmed at job start.
WORKER_MODULES = ("ingest.streaming.write_task", "pypaimon_rust.datafusion")


class JobFailed(LakeCdcError):
    """The streaming query stopped with an error; the message is the root cause, and ``terminal``
    the cause's (``LakeCdcError.terminal``)."""

    def __init__(self, message: str, terminal: bool = True) -> None:
        super().__init__(message)
        self.terminal = terminal


@dataclass
class JobResult:
    stats: BatchStats
    seconds: float
    stopped: bool = False  # by SIGTERM / SIGINT

    @property
    def events_per_second(self) -> float:
        return self.stats.events / self.seconds if self.seconds > 0 else 0.0


def default_checkpoint(settings: SyncSettings) -> str:
    """``<warehouse>/_lakecdc/checkpoints/<job>``: an absolute local path, also for a ``file:`` URI
    warehouse (never a relative folder named after the URI)."""
    return os.path.join(resolve_location(settings.warehouse), "_lakecdc", "checkpoints", settings.job_name)


def commit_user(checkpoint: str) -> str:
    """The job's stable Paimon commit user, kept beside Spark's checkpoint.

    Exactly-once depends on it: Paimon skips commit identifiers (batch ids) that this user has
    already committed, so a new user would re-commit replayed batches. Created once: two first
    starts that race both read the user that won (a complete file, linked into place).
    """
    path = state_path(checkpoint) / COMMIT_USER_FILE
    if not path.exists():
        create_once(path, f"lakecdc-{uuid.uuid4()}")  # a link into place, or a conditional PUT
    return path.read_text().strip()


def lease_settings() -> tuple[float, bool]:
    """``LAKECDC_LEASE_SECONDS`` (how long a crashed job's leases block a new one, default 60; a number of
    seconds or a duration, ``2 min``) and
    ``LAKECDC_FORCE_LEASE`` (take leases over even from a live holder)."""
    text = os.environ.get("LAKECDC_LEASE_SECONDS", str(DEFAULT_TTL))
    try:
        seconds = interval_ms(text) / 1000  # the one duration parser: 90, 90s, 2 min
    except ValueError:
        seconds = float("nan")
    if not seconds >= 1:  # NaN too
        raise JobFailed(f"LAKECDC_LEASE_SECONDS={text}: give a number of seconds, at least 1 (or a duration: 2 min)")
    force = os.environ.get("LAKECDC_FORCE_LEASE", "").strip().lower() in ("1", "true", "yes")
    if force:
        log.warning("LAKECDC_FORCE_LEASE: taking over leases of other jobs; two live jobs corrupt data")
    return seconds, force


def checkpoint_guard(settings: SyncSettings, checkpoint: str, user: str, fence: Fence) -> CheckpointGuard:
    """Refuses a Spark checkpoint behind its commit user's commits, and takes the leases of the
    tables the job is known to write (the rest when it first writes them)."""
    committer = Committer(settings.warehouse, settings.catalog_conf, user)
    progress = SparkProgress.read(state_path(checkpoint) / SPARK_DIR)
    guard = CheckpointGuard(checkpoint, user, progress, committer.last_identifier, committer.table_directory, fence)
    known = (
        []
        if settings.action.database_sync
        else [f"{settings.name(settings.database)}.{settings.name(settings.table or '')}"]
    )
    guard.hold([*guard.tables, *known])
    guard.check_start(known)
    return guard


def source_class(kind: SourceKind) -> Callable[[SourceSettings, str], Source]:
    """The class of a source, its module imported on first use."""
    module, name = SOURCES[kind]
    source: Callable[[SourceSettings, str], Source] = getattr(importlib.import_module(module), name)
    return source


def source_for(settings: SyncSettings, checkpoint: str) -> Source:
    """The job's source, picked once from the action."""
    return source_class(settings.action.source)(settings, checkpoint)


def spark_session(settings: SyncSettings, source: Source, spark: Any = None) -> Any:
    """The job's session (``spark``, when it was started before, for a checkpoint URI), with the
    source's data sources registered."""
    spark = spark if spark is not None else start_spark(settings)
    spark.dataSource.register(source.data_source)
    spark.dataSource.register(PaimonDataSource)
    return spark


def hadoop_session(settings: SyncSettings, checkpoint: str) -> Any:
    """For a checkpoint URI (``hdfs://``, ``s3a://``, ``viewfs://``...): Spark, started before anything is
    read there, its Hadoop asked whether it serves the location (Spark's own checkpoint goes through it), and
    handed to the job state layer (the schemes pyarrow does not serve). None for a local checkpoint."""
    if scheme(checkpoint) in (None, "file"):
        return None
    spark = start_spark(settings)
    use_hadoop(Hadoop.of_session(spark))
    check_hadoop_serves(checkpoint)
    return spark


def start_spark(settings: SyncSettings) -> Any:
    # Python workers must run the interpreter that runs lakecdc (it has the dependencies).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    # spark-submit's and spark-defaults.conf's master and confs win over lakecdc's local defaults
    conf = session_conf(settings.spark_conf, logs.is_verbose(), submitted_conf())
    builder = SparkSession.builder.appName(f"lakecdc {settings.job_name}")
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("LAKECDC_SPARK_LOG_LEVEL", "WARN"))
    return spark


def router_for(settings: SyncSettings) -> TableRouter:
    database_sync = settings.action.database_sync
    return TableRouter(
        database=settings.database,
        table=None if database_sync else settings.table,
        prefix=settings.table_prefix if database_sync else "",
        suffix=settings.table_suffix if database_sync else "",
        including=settings.including_tables if database_sync else ".*",
        excluding=settings.excluding_tables if database_sync else None,
        including_dbs=settings.including_dbs if database_sync else ".*",
        excluding_dbs=settings.excluding_dbs if database_sync else None,
        table_mapping=dict(settings.table_mapping) if database_sync else {},
        prefix_db=dict(settings.table_prefix_db) if database_sync else {},
        suffix_db=dict(settings.table_suffix_db) if database_sync else {},
        merge_shards=settings.merge_shards,
        case_sensitive=settings.case_sensitive,
    )


def parse_spec(settings: SyncSettings, fmt: str) -> ParseSpec:
    return ParseSpec(
        format=fmt,
        router=router_for(settings),
        primary_keys=settings.primary_keys,
        type_mapping=settings.type_mapping,
        metadata_columns=settings.metadata_columns,
        computed_columns=settings.computed_columns,
        metadata_prefix=settings.metadata_column_prefix,
        metadata_not_null=fmt == mysql_values.FORMAT,
        case_sensitive=settings.case_sensitive,
        dead_letter_table=settings.dead_letter_identifier,
        skip_offsets=(parse_binlog_skips if settings.action.source is SourceKind.MYSQL else parse_skip_offsets)(
            settings.skip_offsets
        ),
        log_payloads=settings.log_payloads,
    )


def table_preparer(settings: SyncSettings, source: Source, checkpoint: str, user: str) -> TablePreparer:
    """Creates and evolves the job's tables (``sinks.table.prepare``), by the action's rules."""
    catalog = Catalog(settings.warehouse, settings.catalog_conf)
    catalog.ensure_database(settings.name(settings.database))
    name = settings.name
    return TablePreparer(
        catalog,
        TablePolicy(
            primary_keys=tuple(map(name, settings.primary_keys)),
            partition_keys=tuple(map(name, settings.partition_keys)),
            table_conf=settings.table_conf,
            modes=parse_type_mapping(settings.type_mapping),
            ignore_incompatible=settings.ignore_incompatible and settings.action.database_sync,
            multiple_partition_keys={
                name(t): tuple(map(name, keys)) for t, keys in settings.multiple_table_partition_keys.items()
            },
            lenient_keys=settings.action.database_sync,
            source_primary_keys=settings.sync_primary_keys_from_source_schema,
            require_primary_keys=source.require_primary_keys,
        ),
        commit_user=user,
        state_dir=checkpoint,
    )


def dead_letter_table(settings: SyncSettings) -> DeadLetterTable | None:
    """--errors-tolerance all: the table dead letters go to (made on first use)."""
    identifier = settings.dead_letter_identifier
    if identifier is None:
        return None
    return DeadLetterTable(Catalog(settings.warehouse, settings.catalog_conf), identifier)


def run(settings: SyncSettings) -> JobResult:
    """Run the sync job until it is stopped (or, with ``available_now``, until Kafka is drained).

    The job holds the leases of its checkpoint and tables while it runs (``sinks.write.lease``)."""
    enable_previews(settings.log_payloads)  # the driver's error texts and DDL logs (--log-payloads)
    checkpoint = settings.checkpoint or default_checkpoint(settings)
    try:
        spark = hadoop_session(settings, checkpoint)  # a checkpoint URI: Spark's Hadoop serves it
        check_state_location(checkpoint)  # before anything is read or written there
        source = source_for(settings, checkpoint)
        if source.state_in_planner and needs_hadoop(checkpoint):
            raise UnsupportedStore(
                f"checkpoint {checkpoint}: {settings.action.value} keeps job state from its planner, a Python "
                f"worker without Spark's JVM, which reaches local paths, file: URIs, s3:// and s3a:// only; "
                f"give --checkpoint one of those"
            )
    except UnsupportedStore as exc:
        use_hadoop(None)
        raise JobFailed(str(exc)) from None
    set_store_options(settings.catalog_conf)  # an object-store checkpoint's s3.* options
    ttl, force = lease_settings()
    fence = Fence(Owner.this_process(f"job '{settings.job_name}' (checkpoint {checkpoint})"), ttl, force)
    try:
        try:
            fence.hold(lease_directory(checkpoint), f"checkpoint {checkpoint}")
            user = commit_user(checkpoint)
            guard = checkpoint_guard(settings, checkpoint, user, fence)
            source.check_startup()  # before Spark starts (a local checkpoint's), as Paimon checks before Flink (#29)
            # --metrics-port: served from here until the job ends (ingest.streaming.metrics)
            bar = ProgressBar() if wants_bar(settings.progress) else None  # --progress
            progress = JobProgress.start(
                settings.dead_letter_identifier, settings.metrics_host, settings.metrics_port, bar
            )
        except LakeCdcError as exc:
            raise JobFailed(f"{type(exc).__name__}: {exc}", exc.terminal) from None
        try:
            return _run(settings, checkpoint, user, guard, progress, spark, source)
        finally:
            progress.close()
    finally:
        fence.close()
        use_hadoop(None)


def _run(
    settings: SyncSettings,
    checkpoint: str,
    user: str,
    guard: CheckpointGuard,
    progress: JobProgress,
    spark: Any,
    source: Source,
) -> JobResult:
    try:
        timeout = stop_timeout()
    except ValueError as exc:
        raise JobFailed(str(exc)) from None
    preparer = table_preparer(settings, source, checkpoint, user)
    spark = spark_session(settings, source, spark)
    configure_session(spark)
    parallelism = spark.sparkContext.defaultParallelism
    start_warming(spark, (*source.worker_modules, *WORKER_MODULES))
    processor = MicroBatchProcessor(
        settings.warehouse,
        settings.catalog_conf,
        user,
        preparer,
        progress.marks(source.marks_hook),
        parallel_write_min_rows=settings.parallel_write_min_rows,
        guard=guard,
        dead_letters=dead_letter_table(settings),
        max_dead_letters=settings.max_dead_letters,
    )
    progress.attach(spark, processor, settings.job_name)  # a progress event per micro-batch
    if settings.skip_offsets:
        record_skips(checkpoint, settings.skip_offsets, datetime.now(UTC).isoformat(timespec="seconds"))
        log.warning(
            "--skip-offsets: these messages are skipped when read, each logged (and dead-lettered with "
            "--errors-tolerance all); recorded in the checkpoint's " + SKIPS_FILE,
            skip_offsets=list(settings.skip_offsets),
        )
    reader = spark.readStream.format(source.data_source.name())
    for key, value in source.options(parse_spec(settings, source.value_format), parallelism).items():
        reader = reader.option(key, value)
    # Touched on SIGTERM/SIGINT: the source then offers no new batch (the planner runs on this host)
    stop_dir = tempfile.mkdtemp(prefix="lakecdc-stop-")
    stop_path = os.path.join(stop_dir, "stop")
    reader = reader.option(STOP_FILE_OPTION, stop_path)
    if settings.max_offsets_per_trigger:
        reader = reader.option("lakecdc.maxRows", str(settings.max_offsets_per_trigger))
    if os.environ.get(MAX_BATCH_BYTES_ENV):  # test-only (ingest.kafka.batch_bytes)
        reader = reader.option(MAX_BATCH_BYTES_OPTION, os.environ[MAX_BATCH_BYTES_ENV])
    writer = (
        reader.load()
        .writeStream.foreachBatch(processor)
        .option("checkpointLocation", os.path.join(checkpoint, SPARK_DIR))
        .queryName(settings.job_name)
    )
    bounded = settings.available_now or source.bounded
    writer = writer.trigger(availableNow=True) if bounded else writer.trigger(processingTime=settings.trigger_interval)
    log.info(
        "job starting",
        job=settings.job_name,
        warehouse=settings.warehouse,
        checkpoint=checkpoint,
        commit_user=user,
        available_now=bounded,
    )
    started = time.monotonic()
    # SIGTERM / SIGINT: stop after the batch in flight commits (ingest.streaming.stopping)
    stopping = GracefulStop(processor.gate, timeout, stop_path)
    stopping.install()
    try:
        query = writer.start()
        stopping.watch(query)
        stopping.wait(query)
    except Exception as exc:
        raise job_failure(processor.failure, exc) from None
    finally:
        stopping.restore()
        shutil.rmtree(stop_dir, ignore_errors=True)
        elapsed = time.monotonic() - started
    return JobResult(processor.stats, elapsed, stopped=stopping.requested.is_set())


def job_failure(failure: BaseException | None, exc: BaseException) -> JobFailed:
    """Why the query stopped. A driver-side failure (schema, commit) is kept by the processor with
    its own message; an executor-side one (parsing, fetching) only reaches us as text inside Spark's
    exception, after Spark's own task retries (``spark.task.maxFailures``; lakecdc's local master ``local[*,4]``).

    Either way the job stops with the cause's message. A terminal error needs a person (bad input,
    an incompatible change, a wrong option); a transient one (``TransientError``: a broker or server
    briefly away) may pass, so the message says that starting the job again is worth it.
    """
    if isinstance(failure, LakeCdcError):
        message, terminal = f"{type(failure).__name__}: {failure}", failure.terminal
    else:
        message = root_cause(exc)
        terminal = not message.startswith(f"{TransientError.__name__}: ")
    if not terminal:
        message += " (transient: start the job again, it resumes from its checkpoint)"
    return JobFailed(message, terminal)


_OUR_ERROR = re.compile(
    r"^(?:formats|schema_evolution|sinks|ingest)\.[\w.]*?(\w+(?:Error|Message|Change|Table|Failed)): "
    r"(.+?)(?=\n\s*\n|\n\s+at |\n=== |\nJVM stacktrace|\Z)",
    re.MULTILINE | re.DOTALL,
)


_SQLSTATES = re.compile(r"(?:\s*SQLSTATE: \w+)+\s*$")
_JAVA_CAUSE = re.compile(r"^Caused by: (.+)$", re.MULTILINE)


def root_cause(exc: BaseException) -> str:
    """The first lakecdc error in a Spark exception's text (which embeds Python tracebacks)."""
    text = str(exc)
    m = _OUR_ERROR.search(text)
    if m is not None:
        # Spark appends its error classes' SQLSTATEs to the embedded Python text; they say nothing here
        return f"{m.group(1)}: {_SQLSTATES.sub('', m.group(2)).strip()}"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else type(exc).__name__
    # Py4J's first line only names the call ("An error occurred while calling o76.load."); the Java
    # trace's innermost cause says what went wrong (a program that cannot run, a refused connection).
    causes = _JAVA_CAUSE.findall(text)
    return f"{first} {causes[-1].strip()}" if causes and first.startswith("An error occurred while calling") else first
