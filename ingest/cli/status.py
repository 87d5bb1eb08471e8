"""``lakecdc status --checkpoint DIR``: where a sync job stands, read from its checkpoint (the job may be
running or not; nothing is written).

- the last micro-batch Spark committed (``spark/commits/<n>``), and one planned but not committed
  (Spark runs it again on start);
- that batch's end offsets (``spark/offsets/<n>``: Kafka offsets per partition, or the MySQL binlog
  position and the snapshot's chunks done of planned);
- the lag per Kafka partition when ``--kafka-conf properties.bootstrap.servers=...`` is given;
- per table the job wrote (``lakecdc-tables.json``): its latest snapshot, when it was committed, and
  the last batch this job's commit user committed to it. The warehouse is ``--warehouse``, or the
  one the default checkpoint lies in (``<warehouse>/_lakecdc/checkpoints/<job>``); an ``s3://``
  warehouse takes the ``s3.*`` options ``--catalog-conf`` lacks from the AWS_* environment, as the
  job does (``sinks.filesystem.with_environment``).

A checkpoint on a scheme only Spark's Hadoop serves (``hdfs://``, ``viewfs://``, ``gs://``...) is read through a
minimal local SparkSession started for the purpose (one core, no UI, stopped at the end): its Hadoop settings
come from ``spark-defaults.conf`` (``spark.hadoop.*``) and ``HADOOP_CONF_DIR``, as a spark-submit'ed job's do.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingest import logs
from ingest.cli.pairs import key_values
from ingest.cli.secrets import resolve_conf
from ingest.job import COMMIT_USER_FILE
from ingest.streaming.checkpoint import SPARK_DIR, SparkProgress, committed_tables
from ingest.streaming.progress import kafka_lag, snapshot_chunks
from sinks.hadoop_files import Hadoop
from sinks.state_files import (
    StatePath,
    check_state_location,
    hadoop_in_use,
    needs_hadoop,
    set_store_options,
    state_path,
    use_hadoop,
)


@dataclass
class TableStatus:
    table: str
    snapshot: int | None = None
    committed_at: str | None = None  # the latest snapshot's time, ISO 8601 UTC
    commit_kind: str | None = None
    last_batch: int | None = None  # the latest identifier this job's commit user committed
    error: str | None = None


@dataclass
class JobStatus:
    checkpoint: str
    commit_user: str | None = None
    last_batch: int | None = None  # the last batch Spark committed
    planned_batch: int | None = None  # a batch planned and not committed (run again on start)
    batch_time: str | None = None  # when the last batch was planned, ISO 8601 UTC
    offsets: list[Any] = field(default_factory=list)  # the last batch's end offsets, one per source
    kafka_lag: dict[str, dict[str, int]] | None = None
    tables: list[TableStatus] = field(default_factory=list)


def _iso(millis: int | float) -> str:
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="seconds")


def read_offsets(spark_checkpoint: StatePath, batch: int) -> tuple[dict[str, Any], list[Any]]:
    """Spark's offset log entry of ``batch``: its metadata and one end offset per source."""
    lines = (spark_checkpoint / "offsets" / str(batch)).read_text().splitlines()
    metadata = json.loads(lines[1]) if len(lines) > 1 else {}
    offsets = [json.loads(line) if line and line != "-" else None for line in lines[2:]]
    return metadata, offsets


def default_warehouse(checkpoint: StatePath) -> str | None:
    """The warehouse a default checkpoint lies in (``<warehouse>/_lakecdc/checkpoints/<job>``)."""
    parent = checkpoint.resolve().parent if isinstance(checkpoint, Path) else checkpoint.parent
    if parent.name == "checkpoints" and parent.parent.name == "_lakecdc":
        return str(parent.parent.parent)
    return None


def local_spark() -> Any:
    """A minimal local SparkSession for its Hadoop (no UI, one core, on loopback)."""
    import os

    from pyspark.sql import SparkSession

    from ingest.spark_conf import session_conf

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = session_conf({"spark.ui.enabled": "false", "spark.master": "local[1]"})
    builder = SparkSession.builder.appName("lakecdc status")
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("LAKECDC_SPARK_LOG_LEVEL", "ERROR"))
    return spark


def job_status(checkpoint: str, warehouse: str | None, catalog_conf: dict[str, str]) -> JobStatus:
    """Where the job stands; a checkpoint only Spark's Hadoop serves is read through a local SparkSession
    started here (and stopped), unless one was handed over already (``use_hadoop``)."""
    if not needs_hadoop(checkpoint) or hadoop_in_use():
        return _job_status(checkpoint, warehouse, catalog_conf)
    spark = local_spark()
    use_hadoop(Hadoop.of_session(spark))
    try:
        return _job_status(checkpoint, warehouse, catalog_conf)
    finally:
        use_hadoop(None)
        spark.stop()


def _job_status(checkpoint: str, warehouse: str | None, catalog_conf: dict[str, str]) -> JobStatus:
    check_state_location(checkpoint)  # UnsupportedStore (a ValueError) for a scheme it cannot read
    if catalog_conf:
        set_store_options(catalog_conf)  # an object-store checkpoint's s3.* options (AWS_* fills the rest)
    root = state_path(checkpoint)
    if not (root / SPARK_DIR).is_dir() and not (root / COMMIT_USER_FILE).exists():
        raise ValueError(f"{checkpoint} is not a lakecdc checkpoint (no {SPARK_DIR}/ and no {COMMIT_USER_FILE})")
    status = JobStatus(checkpoint)
    user_file = root / COMMIT_USER_FILE
    status.commit_user = user_file.read_text().strip() if user_file.exists() else None
    progress = SparkProgress.read(root / SPARK_DIR)
    status.last_batch = progress.finished
    status.planned_batch = progress.replay
    shown = progress.finished if progress.finished is not None else progress.planned
    if shown is not None:
        metadata, status.offsets = read_offsets(root / SPARK_DIR, shown)
        if "batchTimestampMs" in metadata:
            status.batch_time = _iso(metadata["batchTimestampMs"])
    warehouse = warehouse or catalog_conf.get("warehouse") or default_warehouse(root)
    if warehouse is not None:  # an s3:// warehouse's s3.* options from AWS_* when not given, as the job's
        from sinks.filesystem import with_environment

        catalog_conf = with_environment(warehouse, catalog_conf)
        logs.register_secrets(v for k, v in catalog_conf.items() if logs.is_secret_name(k))
    for table in committed_tables(checkpoint):
        status.tables.append(table_status(warehouse, catalog_conf, table, status.commit_user))
    return status


def table_status(warehouse: str | None, catalog_conf: dict[str, str], table: str, user: str | None) -> TableStatus:
    out = TableStatus(table)
    if warehouse is None:
        out.error = "give --warehouse to read it"
        return out
    from sinks.store.tables import latest_snapshot, open_table
    from sinks.write.committer import Committer

    try:
        snapshot = latest_snapshot(open_table(warehouse, catalog_conf, table))
        if user is not None:
            out.last_batch = Committer(warehouse, catalog_conf, user).last_identifier(table)
    except Exception as exc:  # a table dropped since, a catalog that cannot be read: say so, go on
        out.error = logs.redact_text(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return out
    if snapshot is not None:
        out.snapshot = int(snapshot.id)
        out.committed_at = _iso(snapshot.time_millis)
        out.commit_kind = str(snapshot.commit_kind)
    return out


def broker_lag(offsets: list[Any], kafka_conf: dict[str, str]) -> dict[str, dict[str, int]]:
    """Each partition's high watermark on the broker minus the checkpoint's offset."""
    from confluent_kafka import Consumer, TopicPartition

    servers = kafka_conf.get("properties.bootstrap.servers", kafka_conf.get("bootstrap.servers"))
    if not servers:
        raise ValueError("--kafka-conf properties.bootstrap.servers=... is needed for the lag")
    props = {k.removeprefix("properties."): v for k, v in kafka_conf.items() if k.startswith("properties.")}
    props.update({"bootstrap.servers": servers, "group.id": "lakecdc-status", "enable.auto.commit": "false"})
    consumer = Consumer(props)
    try:
        lag: dict[str, dict[str, int]] = {}
        for end in offsets:
            if not isinstance(end, dict) or "binlog" in end:
                continue
            latest: dict[str, dict[str, int]] = {}
            for topic, parts in end.items():
                if topic.startswith("@") or not isinstance(parts, dict):
                    continue
                for p in parts:
                    _, high = consumer.get_watermark_offsets(TopicPartition(topic, int(p)), timeout=10, cached=False)
                    latest.setdefault(topic, {})[p] = int(high)
            lag.update(kafka_lag(end, latest))
        return lag
    finally:
        consumer.close()


def render(status: JobStatus) -> str:
    lines = [f"checkpoint   {status.checkpoint}", f"commit user  {status.commit_user or '-'}"]
    if status.last_batch is None:
        lines.append("last batch   none committed yet")
    else:
        lines.append(
            f"last batch   {status.last_batch}" + (f" (planned {status.batch_time})" if status.batch_time else "")
        )
    if status.planned_batch is not None:
        lines.append(f"in flight    batch {status.planned_batch} planned, not committed: run again on start")
    for end in status.offsets:
        if isinstance(end, dict) and "binlog" in end:
            lines.append(f"binlog       {end['binlog'][0]}:{end['binlog'][1]}")
            for table, chunks in sorted(snapshot_chunks(end).items()):
                lines.append(f"snapshot     {table}: {chunks.done} of {chunks.total} chunks read")
        elif isinstance(end, dict):
            for topic, parts in sorted(end.items()):
                if topic.startswith("@") or not isinstance(parts, dict):
                    continue
                for p, offset in sorted(parts.items(), key=lambda kv: int(kv[0])):
                    lag = (status.kafka_lag or {}).get(topic, {}).get(p)
                    lines.append(
                        f"kafka        {topic} partition {p}: next offset {offset}"
                        + (f", lag {lag}" if lag is not None else "")
                    )
    if not status.tables:
        lines.append("tables       none committed yet")
    for t in status.tables:
        if t.error is not None:
            lines.append(f"table        {t.table}: {t.error}")
        elif t.snapshot is None:
            lines.append(f"table        {t.table}: no snapshot")
        else:
            lines.append(
                f"table        {t.table}: snapshot {t.snapshot} ({t.commit_kind}) at {t.committed_at}, "
                f"last batch of this job {t.last_batch if t.last_batch is not None else '-'}"
            )
    return "\n".join(lines)


def run_status(args: argparse.Namespace) -> int:
    try:
        catalog_conf = resolve_conf(key_values(args.catalog_conf, "catalog-conf"), "--catalog-conf")
        kafka_conf = resolve_conf(key_values(args.kafka_conf, "kafka-conf"), "--kafka-conf")
        status = job_status(args.checkpoint, args.warehouse, catalog_conf)
    except ValueError as exc:
        print(logs.redact_text(f"lakecdc: error: {exc}"), file=sys.stderr)
        return 2
    if kafka_conf:
        try:
            status.kafka_lag = broker_lag(status.offsets, kafka_conf)
        except Exception as exc:  # the broker away: the rest still holds
            print(logs.redact_text(f"lakecdc: lag unknown: {exc}"), file=sys.stderr)
    if args.output == "json":
        print(json.dumps(asdict(status), indent=2))
    else:
        print(render(status))
    return 0
