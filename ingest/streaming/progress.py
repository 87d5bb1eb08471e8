"""A sync job's progress: one structured event per micro-batch, and the Prometheus figures.

Two parts of the driver see a micro-batch, and the event joins them:

- the micro-batch processor, right after its commits (``on_committed``): rows and change events per
  table, dead letters, compactions, and how long the batch, its writes, commits and maintenance took;
- Spark's ``StreamingQueryListener`` (``onQueryProgress``, on Spark's listener thread, after the batch):
  the batch's start, end and latest offsets, from which come the Kafka lag per partition (the
  source's ``reportLatestOffset`` is the broker's high watermarks), the MySQL snapshot's chunks done of
  total per table (the offset holds the chunk plan) and the binlog's seconds behind the server.

Binlog seconds behind: the MySQL source reports the server's binlog end with the time it read it
(``{"binlog": [file, pos], "read_at_ms": ms}``). Once a batch's end offset reaches a position read at
time t, the lake holds every change the server had written by t; the figure is now - t (0 .. the
trigger interval while the job keeps up, growing while it falls behind).

Counters move when the processor commits (a scrape right after a batch sees it); the lag and the
snapshot figures when Spark reports the batch's progress. The event is logged then, as
``micro-batch progress``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from pyspark.sql.streaming import StreamingQueryListener

from ingest.streaming.metrics import DEFAULT_HOST, JobMetrics
from ingest.streaming.progress_bar import ProgressBar
from schema_evolution.errors import LakeCdcError

log = structlog.get_logger(__name__)

# How long the end of a job waits for Spark's last progress reports (its listener bus is asynchronous).
DRAIN_SECONDS = 10.0

MarksHook = Callable[[int, list[str], Callable[[str], bool]], None]
Lag = dict[str, dict[str, int]]  # topic -> partition -> messages behind


@dataclass(frozen=True)
class BatchFigures:
    """What the processor saw of one committed micro-batch."""

    batch_id: int
    rows: dict[str, int]  # row images written per table (an update is two)
    events: dict[str, int]  # source changes per table
    dead_letters: int
    compactions: int
    seconds: float  # the whole batch, read to maintenance
    write_seconds: float
    commit_seconds: float
    maintenance_seconds: float
    committed_at: float  # wall clock (epoch seconds) when the commits were done


def batch_figures(
    batch_id: int,
    meta: list[Any],
    tables: Mapping[str, Any],
    dead_letter_table: str | None,
    dead_letters: int,
    compactions: int,
    timings: Mapping[str, float],
) -> BatchFigures:
    """The figures of a batch from its plan's chunk rows (``meta``: table, schema, rows, events) and the
    tables it wrote (``tables``: the plan's layouts), as the processor counts them."""
    rows: dict[str, int] = {}
    events: dict[str, int] = {}
    for r in meta:
        table = r["table"]
        if r["schema"] is None or table not in tables or table == dead_letter_table:
            continue
        rows[table] = rows.get(table, 0) + (r["rows"] or 0)
        events[table] = events.get(table, 0) + (r["events"] or 0)
    return BatchFigures(
        batch_id=batch_id,
        rows=rows,
        events=events,
        dead_letters=dead_letters,
        compactions=compactions,
        seconds=timings.get("seconds", 0.0),
        write_seconds=timings.get("write_s", 0.0),
        commit_seconds=timings.get("commit_s", 0.0),
        maintenance_seconds=timings.get("maintenance_s", 0.0),
        committed_at=timings.get("committed_at", time.time()),
    )


# ----- offsets, as Spark reports them ----------------------------------------------------------


def offset_value(value: Any) -> Any:
    """An offset of a progress report: Spark's JSON has it as an object, or as text when it is not JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def kafka_lag(end: Any, latest: Any) -> Lag:
    """Messages between a batch's end offsets and the latest offsets, per topic and partition (Kafka
    offsets: ``{topic: {partition: next offset}}``; keys starting with ``@`` carry no positions)."""
    lag: Lag = {}
    if not isinstance(end, dict) or not isinstance(latest, dict):
        return lag
    for topic, parts in end.items():
        highs = latest.get(topic)
        if topic.startswith("@") or not isinstance(parts, dict) or not isinstance(highs, dict):
            continue
        for partition, offset in parts.items():
            high = highs.get(partition)
            if isinstance(high, int) and isinstance(offset, int):
                lag.setdefault(topic, {})[str(partition)] = max(0, high - offset)
    return lag


@dataclass
class ChunkProgress:
    done: int = 0
    total: int = 0
    rows: int = 0  # rows of the chunks read by this run
    rows_total: int | None = None  # the table's rows as the server estimates them (information_schema)


def snapshot_chunks(end: Any, latest: Any = None) -> dict[str, ChunkProgress]:
    """Per source table (``db.table``), the snapshot chunks read of those planned (MySQL offsets:
    ``{"chunks": [[db, table, lo, hi], ...], "done": n, ...}``) and its estimated rows (the latest
    offset's ``table_rows``, where the source read them); empty outside a snapshot."""
    out: dict[str, ChunkProgress] = {}
    if not isinstance(end, dict) or not isinstance(end.get("chunks"), list):
        return out
    estimates = latest.get("table_rows") if isinstance(latest, dict) else None
    done = int(end.get("done", 0))
    for i, chunk in enumerate(end["chunks"]):
        table = f"{chunk[0]}.{chunk[1]}"
        figures = out.setdefault(table, ChunkProgress())
        figures.total += 1
        figures.done += i < done
        if isinstance(estimates, dict) and isinstance(estimates.get(table), int):
            figures.rows_total = estimates[table]
    return out


def binlog_offset(position: Any) -> int | None:
    """A binlog position ``[file, pos]`` as one increasing number (as ``ingest.mysql.spec`` orders them)."""
    if not isinstance(position, list | tuple) or len(position) != 2:
        return None
    match = re.search(r"(\d+)$", str(position[0]))
    return (int(match.group(1)) if match else 0) << 32 | int(position[1])


class BinlogClock:
    """How far the lake is behind the MySQL server, in seconds (see the module's text)."""

    def __init__(self) -> None:
        self._seen: deque[tuple[int, float]] = deque(maxlen=10_000)  # (server end, epoch seconds read)

    def saw(self, latest: Any) -> None:
        """The source's latest offset: the server's binlog end and when it was read."""
        if not isinstance(latest, dict) or "read_at_ms" not in latest:
            return
        position = binlog_offset(latest.get("binlog"))
        if position is None:
            return
        at = float(latest["read_at_ms"]) / 1000
        if not self._seen or self._seen[-1][1] < at:
            self._seen.append((position, at))

    def behind(self, end: Any, now: float) -> float | None:
        """Seconds behind once the lake holds the binlog up to ``end`` (an end offset); None before the
        binlog phase (a snapshot is being read) or before any server position was seen."""
        if not isinstance(end, dict) or (end.get("chunks") and end.get("done", 0) < len(end["chunks"])):
            return None
        position = binlog_offset(end.get("binlog"))
        if position is None:
            return None
        reached = None
        while self._seen and self._seen[0][0] <= position:
            reached = self._seen.popleft()
        if reached is None:
            return None
        self._seen.appendleft(reached)  # still the best known until a later read is reached
        return max(0.0, now - reached[1])


# ----- the job's tracker -----------------------------------------------------------------------


@dataclass
class SourceFigures:
    """The latest figures of the job's source, from Spark's progress reports."""

    kafka_lag: Lag = field(default_factory=dict)
    binlog_seconds_behind: float | None = None
    snapshot: dict[str, ChunkProgress] = field(default_factory=dict)


class MetricsPortError(LakeCdcError):
    """--metrics-port cannot be served (in use, or the host is not this machine's)."""


class JobProgress:
    """Joins the processor's figures with Spark's progress reports: the events and the metrics."""

    @classmethod
    def start(
        cls, dead_letter_table: str | None, host: str | None, port: int | None, bar: ProgressBar | None = None
    ) -> JobProgress:
        """The job's tracker; with ``port`` its metrics served on ``host:port`` from now on; with ``bar``
        its events drawn there instead of logged at info level."""
        if port is None:
            return cls(dead_letter_table, bar=bar)
        metrics = JobMetrics()
        try:
            served = metrics.serve(port, host or DEFAULT_HOST)
        except OSError as exc:
            raise MetricsPortError(f"--metrics-port {port} on {host or DEFAULT_HOST}: {exc.strerror or exc}") from None
        log.info("metrics served", url=f"http://{host or DEFAULT_HOST}:{served}/metrics")
        return cls(dead_letter_table, metrics, bar)

    def __init__(
        self, dead_letter_table: str | None = None, metrics: JobMetrics | None = None, bar: ProgressBar | None = None
    ) -> None:
        self.dead_letter_table = dead_letter_table
        self.metrics = metrics
        self.bar = bar
        self.source = SourceFigures()
        self.events: list[dict[str, Any]] = []  # the events logged (the last 100), for tests and status
        self._figures: dict[int, BatchFigures] = {}
        self._snapshot_rows: dict[str, int] = {}
        self._clock = BinlogClock()
        self._lock = threading.Lock()
        self._terminated = threading.Event()
        self._compactions = 0
        self._started = threading.Event()
        self._listener: ProgressListener | None = None
        self._spark: Any = None

    def attach(self, spark: Any, processor: Any, query_name: str) -> None:
        """Listen to the query ``query_name`` and to ``processor`` (a ``MicroBatchProcessor``)."""
        processor.on_committed = self.committed
        self._listener = ProgressListener(self, query_name)
        self._spark = spark
        spark.streams.addListener(self._listener)

    def close(self) -> None:
        """At the job's end: the last reports handled (bounded), the listener removed, the metrics
        server stopped."""
        try:
            if self._listener is not None and self._started.is_set():
                self.wait_terminated(DRAIN_SECONDS)
            if self._listener is not None:
                self._spark.streams.removeListener(self._listener)
                self._listener = None
        finally:
            if self.bar is not None:
                self.bar.close()
            if self.metrics is not None:
                self.metrics.close()

    # -- the processor's side (its thread) ---------------------------------------------------------
    def marks(self, hook: MarksHook | None) -> MarksHook | None:
        """The source's marks hook, counting the rows of the snapshot chunks read on the way."""
        if hook is None:
            return None

        def counted(batch_id: int, marks: list[str], committed: Callable[[str], bool]) -> None:
            hook(batch_id, marks, committed)
            with self._lock:
                for text in marks:
                    try:
                        mark = json.loads(text)
                        table, rows = f"{mark['database']}.{mark['table']}", int(mark["rows"])
                    except (ValueError, KeyError, TypeError):
                        continue
                    self._snapshot_rows[table] = self._snapshot_rows.get(table, 0) + rows

        return counted

    def committed(self, plan: Any, timings: Mapping[str, float], compactions: int) -> None:
        """The processor committed ``plan`` (``ingest.streaming.micro_batch.BatchPlan``);
        ``compactions`` is the job's count so far. Never raises: the batch is committed."""
        try:
            self._committed(plan, timings, compactions)
        except Exception as exc:
            log.warning("micro-batch figures not kept", error=f"{type(exc).__name__}: {exc}")

    def _committed(self, plan: Any, timings: Mapping[str, float], compactions: int) -> None:
        with self._lock:
            figures = batch_figures(
                plan.batch_id,
                plan.meta,
                plan.context.layouts,
                self.dead_letter_table,
                getattr(plan, "dead_letters", 0),  # (--errors-tolerance all)
                compactions - self._compactions,
                {**timings, "committed_at": time.time()},
            )
            self._compactions = compactions
            self._figures[figures.batch_id] = figures
            while len(self._figures) > 100:  # Spark never reported them (it always does): bounded
                del self._figures[min(self._figures)]
        if self.metrics is not None:
            self.metrics.batch(figures)

    # -- Spark's side (its listener thread) --------------------------------------------------------
    def progress(self, report: Mapping[str, Any], now: float | None = None) -> dict[str, Any] | None:
        """A progress report of the query (``StreamingQueryProgress.json`` as a dict): the source's
        figures updated; the event when the report is of a batch that ran (else None: idle)."""
        now = time.time() if now is None else now
        lag: Lag = {}
        behind: float | None = None
        snapshot: dict[str, ChunkProgress] = {}
        for source in report.get("sources") or []:
            end, latest = offset_value(source.get("endOffset")), offset_value(source.get("latestOffset"))
            lag.update(kafka_lag(end, latest))
            self._clock.saw(latest)
            behind = self._clock.behind(end, now) if behind is None else behind
            snapshot.update(snapshot_chunks(end, latest))
        batch_id = int(report.get("batchId", -1))
        with self._lock:
            figures = self._figures.pop(batch_id, None)
            if snapshot:
                self.source.snapshot = snapshot
            else:  # no snapshot, or it is over: its offsets no longer list chunks; all were read
                for chunks in self.source.snapshot.values():
                    chunks.done = chunks.total
            for table, chunks in self.source.snapshot.items():
                chunks.rows = self._snapshot_rows.get(table, 0)
            self.source.kafka_lag = lag
            if behind is not None:
                self.source.binlog_seconds_behind = behind
            source = self.source
        if self.metrics is not None:
            self.metrics.source(source)
        ran = "addBatch" in (report.get("durationMs") or {})
        if not ran and figures is None:
            return None
        event = progress_event(batch_id, report, figures, source, behind)
        if self.bar is not None:  # the bar shows it; the line stays for -v / LAKECDC_LOG_LEVEL=debug
            log.debug("micro-batch progress", **event)
            self.bar.update(event)
        else:
            log.info("micro-batch progress", **event)
        with self._lock:
            self.events = [*self.events[-99:], event]
        return event

    def terminated(self) -> None:
        self._terminated.set()

    def wait_terminated(self, timeout: float) -> bool:
        """Spark reports a query's progress before its end: True once every report was handled."""
        return self._terminated.wait(timeout)


def progress_event(
    batch_id: int,
    report: Mapping[str, Any],
    figures: BatchFigures | None,
    source: SourceFigures,
    behind: float | None,
) -> dict[str, Any]:
    """The fields of one ``micro-batch progress`` event."""
    durations = report.get("durationMs") or {}
    event: dict[str, Any] = {
        "batch": batch_id,
        "rows": figures.rows if figures else {},
        "events": figures.events if figures else {},
        "input_chunks": int(report.get("numInputRows", 0) or 0),
        "trigger_s": round(int(durations.get("triggerExecution", 0)) / 1000, 3),
        "batch_s": round(figures.seconds, 3) if figures else round(int(durations.get("addBatch", 0)) / 1000, 3),
    }
    if figures is not None:
        event.update(
            write_s=round(figures.write_seconds, 3),
            commit_s=round(figures.commit_seconds, 3),
            maintenance_s=round(figures.maintenance_seconds, 3),
            dead_letters=figures.dead_letters,
            compactions=figures.compactions,
        )
    if source.kafka_lag:
        event["kafka_lag"] = source.kafka_lag
        event["kafka_lag_total"] = sum(n for parts in source.kafka_lag.values() for n in parts.values())
    if behind is not None:
        event["binlog_seconds_behind"] = round(behind, 3)
    if source.snapshot:
        event["snapshot"] = {
            table: {
                "chunks_done": c.done,
                "chunks_total": c.total,
                "rows_done": c.rows,
                **({"rows_estimated": c.rows_total} if c.rows_total is not None else {}),
            }
            for table, c in sorted(source.snapshot.items())
        }
    return event


class ProgressListener(StreamingQueryListener):
    """Hands Spark's progress reports to ``JobProgress`` (on Spark's listener thread). A failure here
    is logged, never raised: the job must not stop for its figures."""

    def __init__(self, progress: JobProgress, query_name: str) -> None:
        self.job = progress
        self.query_name = query_name

    def onQueryStarted(self, event: Any) -> None:
        self.job._started.set()

    def onQueryProgress(self, event: Any) -> None:
        try:
            report = json.loads(event.progress.json)
            if report.get("name") == self.query_name:
                self.job.progress(report)
        except Exception as exc:
            log.warning("progress report not handled", error=f"{type(exc).__name__}: {exc}")

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        self.job.terminated()
