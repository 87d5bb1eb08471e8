"""The progress event and the metrics of a micro-batch, from the processor's plan and Spark's reports."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from prometheus_client import generate_latest
from structlog.testing import capture_logs

from ingest.streaming.metrics import JobMetrics
from ingest.streaming.progress import (
    BinlogClock,
    JobProgress,
    batch_figures,
    binlog_offset,
    kafka_lag,
    snapshot_chunks,
)


def _chunk(table: str, rows: int, events: int, schema: str | None = "{}") -> dict[str, Any]:
    return {"table": table, "schema": schema, "rows": rows, "events": events}


def _plan(batch_id: int, meta: list[dict[str, Any]], tables: list[str], dead_letters: int = 0) -> Any:
    return SimpleNamespace(
        batch_id=batch_id, meta=meta, context=SimpleNamespace(layouts=dict.fromkeys(tables)), dead_letters=dead_letters
    )


def _report(batch_id: int, end: Any, latest: Any, ran: bool = True) -> dict[str, Any]:
    durations = {"triggerExecution": 1500, "latestOffset": 20, **({"addBatch": 1200} if ran else {})}
    source = {"startOffset": None, "endOffset": json.dumps(end), "latestOffset": latest, "numInputRows": 7}
    return {"batchId": batch_id, "name": "job", "numInputRows": 7, "durationMs": durations, "sources": [source]}


def test_kafka_lag_per_partition_from_end_and_latest_offsets() -> None:
    end = {"orders": {"0": 10, "1": 4}, "@topic-ids": {"orders": "abc"}, "other": {"0": 3}}
    latest = {"orders": {"0": 15, "1": 4}, "other": {"0": 2}}
    assert kafka_lag(end, latest) == {"orders": {"0": 5, "1": 0}, "other": {"0": 0}}
    assert kafka_lag(end, None) == {}
    assert kafka_lag({"binlog": ["f.000001", 4]}, {"binlog": ["f.000001", 9]}) == {}


def test_snapshot_chunks_done_of_planned_per_source_table() -> None:
    end = {"chunks": [["shop", "a", None, 5], ["shop", "a", 5, None], ["shop", "b", None, None]], "done": 2}
    got = {t: (c.done, c.total) for t, c in snapshot_chunks({**end, "binlog": ["f.000001", 4]}).items()}
    assert got == {"shop.a": (2, 2), "shop.b": (0, 1)}
    assert snapshot_chunks({"chunks": [], "done": 0, "binlog": ["f.000001", 4]}) == {}
    assert snapshot_chunks({"orders": {"0": 1}}) == {}
    # the source's latest offset carries the tables' estimated rows (a table not estimated has none)
    latest = {"binlog": ["f.000001", 9], "table_rows": {"shop.a": 1200}}
    got_rows = {t: c.rows_total for t, c in snapshot_chunks(end, latest).items()}
    assert got_rows == {"shop.a": 1200, "shop.b": None}


def test_binlog_seconds_behind_counts_from_the_last_server_position_the_lake_reached() -> None:
    assert binlog_offset(["mysql-bin.000002", 300]) == (2 << 32) | 300
    clock = BinlogClock()
    assert clock.behind({"chunks": [], "done": 0, "binlog": ["b.000001", 100]}, now=1000.0) is None  # nothing seen
    clock.saw({"binlog": ["b.000001", 100], "read_at_ms": 990_000})
    clock.saw({"binlog": ["b.000001", 500], "read_at_ms": 995_000})
    clock.saw({"binlog": ["b.000002", 4], "read_at_ms": 998_000})
    # A batch ending at 500 holds what the server had at 995 s; one ending short of it, what it had at 990 s.
    assert clock.behind({"chunks": [], "done": 0, "binlog": ["b.000001", 400]}, now=1000.0) == 10.0
    assert clock.behind({"chunks": [], "done": 0, "binlog": ["b.000001", 500]}, now=1000.0) == 5.0
    assert clock.behind({"chunks": [], "done": 0, "binlog": ["b.000002", 4]}, now=1001.0) == 3.0
    # During a snapshot the binlog phase has not started.
    snapshot = {"chunks": [["d", "t", None, None]], "done": 0, "binlog": ["b.000002", 4]}
    assert clock.behind(snapshot, now=1001.0) is None
    assert BinlogClock().behind({"orders": {"0": 1}}, now=1.0) is None


def test_batch_figures_count_written_tables_apart_from_dead_letters_and_ddl() -> None:
    meta = [
        _chunk("ods.a", 3, 2),
        _chunk("ods.a", 1, 1),
        _chunk("ods.b", 2, 2),
        _chunk("ods.a", 0, 0, schema=None),  # a DDL message
        _chunk("ods.errors", 4, 4),  # the dead-letter table
        _chunk("ods.skipped", 5, 5),  # not written (no layout)
    ]
    figures = batch_figures(7, meta, dict.fromkeys(["ods.a", "ods.b", "ods.errors"]), "ods.errors", 4, 1, {})
    assert figures.rows == {"ods.a": 4, "ods.b": 2}
    assert figures.events == {"ods.a": 3, "ods.b": 2}
    assert figures.dead_letters == 4


def test_one_event_per_batch_joins_the_processors_figures_with_the_lag() -> None:
    metrics = JobMetrics()
    progress = JobProgress("ods.errors", metrics)
    progress.committed(
        _plan(3, [_chunk("ods.a", 4, 3), _chunk("ods.errors", 1, 1)], ["ods.a", "ods.errors"], dead_letters=1),
        {"seconds": 1.25, "write_s": 0.5, "commit_s": 0.25, "maintenance_s": 0.1},
        compactions=2,
    )
    with capture_logs() as logs:
        event = progress.progress(_report(3, {"t": {"0": 10, "1": 6}}, {"t": {"0": 12, "1": 6}}))
        idle = progress.progress(_report(4, {"t": {"0": 12, "1": 6}}, {"t": {"0": 12, "1": 6}}, ran=False))
    assert idle is None  # an idle trigger updates the lag, logs nothing
    assert [e["event"] for e in logs] == ["micro-batch progress"]
    assert event is not None
    assert event == {
        "batch": 3,
        "rows": {"ods.a": 4},
        "events": {"ods.a": 3},
        "input_chunks": 7,
        "trigger_s": 1.5,
        "batch_s": 1.25,
        "write_s": 0.5,
        "commit_s": 0.25,
        "maintenance_s": 0.1,
        "dead_letters": 1,
        "compactions": 2,
        "kafka_lag": {"t": {"0": 2, "1": 0}},
        "kafka_lag_total": 2,
    }
    text = generate_latest(metrics.registry).decode()
    assert 'lakecdc_rows_total{table="ods.a"} 4.0' in text
    assert 'lakecdc_events_total{table="ods.a"} 3.0' in text
    assert "lakecdc_batches_total 1.0" in text
    assert "lakecdc_dead_letters_total 1.0" in text
    assert "lakecdc_compactions_total 2.0" in text
    assert "lakecdc_last_batch_id 3.0" in text
    assert "lakecdc_batch_duration_seconds_sum 1.25" in text
    assert 'lakecdc_kafka_lag{partition="0",topic="t"} 0.0' in text  # after the idle trigger
    # A second batch's compactions are its own, not the job's total.
    progress.committed(_plan(5, [_chunk("ods.a", 1, 1)], ["ods.a"]), {}, compactions=2)
    assert "lakecdc_compactions_total 2.0" in generate_latest(metrics.registry).decode()


def test_mysql_snapshot_and_binlog_figures() -> None:
    metrics = JobMetrics()
    progress = JobProgress(None, metrics)
    hook_calls: list[int] = []
    hook = progress.marks(lambda batch_id, marks, committed: hook_calls.append(batch_id))
    assert hook is not None and progress.marks(None) is None
    marks = [json.dumps({"chunk": 0, "database": "shop", "table": "a", "target": "ods.a", "rows": 100})]
    hook(0, marks, lambda table: False)
    assert hook_calls == [0]
    chunks = [["shop", "a", None, 100], ["shop", "a", 100, None]]
    latest = {"binlog": ["b.000001", 900], "read_at_ms": 1_000_000, "table_rows": {"shop.a": 180}}
    progress.committed(_plan(0, [_chunk("ods.a", 100, 100)], ["ods.a"]), {}, 0)
    event = progress.progress(_report(0, {"chunks": chunks, "done": 1, "binlog": ["b.000001", 50]}, latest), now=1010)
    assert event is not None
    assert event["snapshot"] == {
        "shop.a": {"chunks_done": 1, "chunks_total": 2, "rows_done": 100, "rows_estimated": 180}
    }
    assert 'lakecdc_snapshot_rows_estimated{table="shop.a"} 180.0' in generate_latest(metrics.registry).decode()
    assert "binlog_seconds_behind" not in event  # a snapshot is being read
    # The snapshot ends: offsets list no chunks any more; the binlog reached the position read at 1000 s.
    progress.committed(_plan(1, [_chunk("ods.a", 1, 1)], ["ods.a"]), {}, 0)
    event = progress.progress(_report(1, {"chunks": [], "done": 0, "binlog": ["b.000001", 900]}, latest), now=1012)
    assert event is not None
    assert event["snapshot"] == {
        "shop.a": {"chunks_done": 2, "chunks_total": 2, "rows_done": 100, "rows_estimated": 180}
    }
    assert event["binlog_seconds_behind"] == 12.0
    text = generate_latest(metrics.registry).decode()
    assert 'lakecdc_snapshot_chunks_done{table="shop.a"} 2.0' in text
    assert 'lakecdc_snapshot_chunks_total{table="shop.a"} 2.0' in text
    assert 'lakecdc_snapshot_rows_done{table="shop.a"} 100.0' in text
    assert "lakecdc_binlog_seconds_behind 12.0" in text


def test_a_failing_figure_never_fails_the_batch() -> None:
    progress = JobProgress()
    with capture_logs() as logs:
        progress.committed(SimpleNamespace(batch_id=1), {}, 0)  # a plan without its parts
    assert [e["event"] for e in logs] == ["micro-batch figures not kept"]


def test_metrics_port_in_use_is_a_clear_error() -> None:
    import socket

    import pytest

    from ingest.streaming.progress import MetricsPortError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(MetricsPortError, match=f"--metrics-port {port} on 127.0.0.1"):
            JobProgress.start(None, None, port)
    served = JobProgress.start(None, "127.0.0.1", 0)
    try:
        assert served.metrics is not None
    finally:
        served.close()
