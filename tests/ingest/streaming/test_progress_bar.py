"""--progress: the bar drawn from the job's per-batch events, and when it is drawn at all."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ingest.streaming.progress import JobProgress
from ingest.streaming.progress_bar import ProgressBar, wants_bar


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Bar(ProgressBar):
    """A bar on a terminal that is a string; ``getvalue`` is the bars as last drawn."""

    def __init__(self) -> None:
        super().__init__(Console(file=_Tty(), force_terminal=True, width=140, color_system=None))

    def getvalue(self) -> str:
        return self.text()


def _bar() -> tuple[ProgressBar, _Bar]:
    bar = _Bar()
    return bar, bar


def test_auto_draws_a_bar_only_on_a_terminal_without_json_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKECDC_LOG_FORMAT", raising=False)
    assert wants_bar("auto", _Tty())
    assert not wants_bar("auto", io.StringIO())  # a file or a pipe: log lines
    assert wants_bar("bar", io.StringIO()) and not wants_bar("log", _Tty())
    monkeypatch.setenv("LAKECDC_LOG_FORMAT", "json")
    assert not wants_bar("auto", _Tty())


def test_snapshot_bars_show_chunks_and_rows_per_table() -> None:
    bar, out = _bar()
    bar.update({"batch": 0, "snapshot": {"shop.orders": {"chunks_done": 3, "chunks_total": 10, "rows_done": 6000}}})
    bar.update(
        {
            "batch": 1,
            "snapshot": {
                "shop.orders": {"chunks_done": 10, "chunks_total": 10, "rows_done": 20000, "rows_estimated": 19800},
                "shop.users": {"chunks_done": 1, "chunks_total": 4, "rows_done": 500},
            },
        }
    )
    bar.close()
    text = out.getvalue().splitlines()
    orders = next(line for line in text if "snapshot shop.orders" in line)
    users = next(line for line in text if "snapshot shop.users" in line)
    assert "10/10" in orders and "20,000 of ~19,800 rows" in orders
    assert "1/4" in users and "500 rows" in users


def test_kafka_bar_fills_as_the_lag_drains() -> None:
    bar, out = _bar()
    bar.update({"batch": 0, "events": {"ods.a": 400}, "kafka_lag": {"t": {"0": 500, "1": 100}}, "kafka_lag_total": 600})
    bar.update(
        {"batch": 1, "events": {"ods.a": 500, "ods.b": 100}, "kafka_lag": {"t": {"0": 0, "1": 0}}, "kafka_lag_total": 0}
    )
    bar.close()
    last = out.getvalue()
    assert "kafka changes" in last and "1000/1000" in last and "lag 0 over 2 partition(s), batch 1" in last


def test_binlog_shows_seconds_behind() -> None:
    bar, out = _bar()
    bar.update({"batch": 7, "events": {"shop.orders": 12}, "binlog_seconds_behind": 1.25})
    bar.close()
    assert "1.2 s behind, batch 7" in out.getvalue()


def test_the_job_draws_its_events_on_the_bar_and_closes_it() -> None:
    bar, out = _bar()
    job = JobProgress(bar=bar)
    report = {
        "batchId": 2,
        "durationMs": {"addBatch": 10, "triggerExecution": 12},
        "sources": [{"endOffset": {"t": {"0": 40}}, "latestOffset": {"t": {"0": 50}}}],
    }
    event = job.progress(report, now=0.0)
    assert event is not None and event["kafka_lag_total"] == 10
    job.close()
    assert "lag 10 over 1 partition(s), batch 2" in out.getvalue()
