"""A sync job's figures for Prometheus (``--metrics-port``; 127.0.0.1 unless ``--metrics-host``).

The names (README, Monitoring); one job per process, so no job label (Prometheus' scrape adds ``job``):

=============================================  =======  ==========================================================
lakecdc_batches_total                          counter  micro-batches committed
lakecdc_rows_total{table}                      counter  row images written (an update is two: -U and +U)
lakecdc_events_total{table}                    counter  source change events written
lakecdc_dead_letters_total                     counter  messages written to the dead-letter table
lakecdc_compactions_total                      counter  compaction commits of the in-job maintenance
lakecdc_batch_duration_seconds                 summary  a micro-batch, read to maintenance (``_sum``, ``_count``)
lakecdc_commit_duration_seconds                summary  a micro-batch's Paimon commits
lakecdc_last_batch_id                          gauge    the last committed micro-batch
lakecdc_last_commit_timestamp_seconds{table}   gauge    when the job last committed to the table (epoch seconds)
lakecdc_kafka_lag{topic,partition}             gauge    messages after the last batch's end offset
lakecdc_binlog_seconds_behind                  gauge    MySQL: seconds the lake is behind the server's binlog
lakecdc_snapshot_chunks_done{table}            gauge    MySQL snapshot: chunks read, of
lakecdc_snapshot_chunks_total{table}           gauge    the chunks planned (source table ``db.table``)
lakecdc_snapshot_rows_done{table}              gauge    MySQL snapshot: rows of the chunks this run read
lakecdc_snapshot_rows_estimated{table}         gauge    MySQL snapshot: the table's rows as the server estimates them
=============================================  =======  ==========================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Summary, start_http_server

if TYPE_CHECKING:
    from ingest.streaming.progress import BatchFigures, SourceFigures

DEFAULT_HOST = "127.0.0.1"


class JobMetrics:
    """The job's metrics, in a registry of their own (one job per process; tests run several)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.batches = Counter("lakecdc_batches", "micro-batches committed", registry=r)
        self.rows = Counter("lakecdc_rows", "row images written (an update is two)", ("table",), registry=r)
        self.events = Counter("lakecdc_events", "source change events written", ("table",), registry=r)
        self.dead_letters = Counter("lakecdc_dead_letters", "messages written to the dead-letter table", registry=r)
        self.compactions = Counter("lakecdc_compactions", "compaction commits of the in-job maintenance", registry=r)
        self.batch_seconds = Summary("lakecdc_batch_duration_seconds", "a micro-batch, read to maintenance", registry=r)
        self.commit_seconds = Summary("lakecdc_commit_duration_seconds", "a micro-batch's Paimon commits", registry=r)
        self.last_batch = Gauge("lakecdc_last_batch_id", "the last committed micro-batch", registry=r)
        self.last_commit = Gauge(
            "lakecdc_last_commit_timestamp_seconds", "when the job last committed to the table", ("table",), registry=r
        )
        self.kafka_lag = Gauge(
            "lakecdc_kafka_lag", "messages after the last batch's end offset", ("topic", "partition"), registry=r
        )
        self.binlog_behind = Gauge(
            "lakecdc_binlog_seconds_behind", "seconds the lake is behind the MySQL server's binlog", registry=r
        )
        self.chunks_done = Gauge("lakecdc_snapshot_chunks_done", "snapshot chunks read", ("table",), registry=r)
        self.chunks_total = Gauge("lakecdc_snapshot_chunks_total", "snapshot chunks planned", ("table",), registry=r)
        self.snapshot_rows = Gauge(
            "lakecdc_snapshot_rows_done", "rows of the snapshot chunks this run read", ("table",), registry=r
        )
        self.snapshot_estimate = Gauge(
            "lakecdc_snapshot_rows_estimated", "the table's rows as the server estimates them", ("table",), registry=r
        )
        self._lag_labels: set[tuple[str, str]] = set()
        self._server: Any = None
        self._thread: Any = None

    def batch(self, figures: BatchFigures) -> None:
        self.batches.inc()
        for table, rows in figures.rows.items():
            self.rows.labels(table).inc(rows)
            self.last_commit.labels(table).set(figures.committed_at)
        for table, events in figures.events.items():
            self.events.labels(table).inc(events)
        self.dead_letters.inc(figures.dead_letters)
        self.compactions.inc(figures.compactions)
        self.batch_seconds.observe(figures.seconds)
        self.commit_seconds.observe(figures.commit_seconds)
        self.last_batch.set(figures.batch_id)

    def source(self, figures: SourceFigures) -> None:
        labels = set()
        for topic, parts in figures.kafka_lag.items():
            for partition, lag in parts.items():
                self.kafka_lag.labels(topic, partition).set(lag)
                labels.add((topic, partition))
        for topic, partition in self._lag_labels - labels:  # a partition no longer read
            self.kafka_lag.remove(topic, partition)
        self._lag_labels = labels
        if figures.binlog_seconds_behind is not None:
            self.binlog_behind.set(figures.binlog_seconds_behind)
        for table, chunks in figures.snapshot.items():
            self.chunks_done.labels(table).set(chunks.done)
            self.chunks_total.labels(table).set(chunks.total)
            self.snapshot_rows.labels(table).set(chunks.rows)
            if chunks.rows_total is not None:
                self.snapshot_estimate.labels(table).set(chunks.rows_total)

    def serve(self, port: int, host: str = DEFAULT_HOST) -> int:
        """Serve ``/metrics`` on ``host:port`` (port 0: a free one) until ``close``; the port."""
        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        return int(self._server.server_port)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
