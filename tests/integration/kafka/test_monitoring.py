"""Monitoring a Kafka job (#25): the progress event of each micro-batch, the Prometheus metrics
scraped while the job runs, and ``lakecdc status`` on its checkpoint afterwards."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka
from ingest.cli.main import main
from ingest.cli.settings import SyncSettings
from ingest.job import JobResult, run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``: (name, labels) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _by_label(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> dict[str, float]:
    return {",".join(v for _, v in labels): value for (n, labels), value in samples.items() if n == name}


def test_progress_events_metrics_while_running_and_status_afterwards(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=30, updates=2, seed=3)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    total = len(stream.messages)
    per_partition = Counter(partition_by_key(2)(key, value) for key, value in stream.messages)
    rows = Counter[str]()
    events = Counter[str]()
    for table, effects in stream.effects:
        rows[f"ods.{table}"] += len(effects)
        events[f"ods.{table}"] += 1

    port = _free_port()
    settings = SyncSettings(
        action="kafka-sync-database",
        warehouse=warehouse,
        database="ods",
        kafka_conf={"properties.bootstrap.servers": kafka.bootstrap, "topic": topic_name, "value.format": "canal-json"},
        available_now=False,  # a running job: scraped while it runs, then stopped
        trigger_interval="1 second",
        max_offsets_per_trigger=total // 3 + 1,  # several batches, the first ones leaving a lag
        metrics_port=port,
    )
    samples: Any = None
    outcome: dict[str, Any] = {}
    with capture_logs() as logs:
        for _attempt in range(3):
            outcome = {}
            thread = threading.Thread(target=_job, args=(settings, outcome), name="lakecdc-job")
            thread.start()
            try:
                samples = _wait_for(
                    port,
                    lambda s: (
                        sum(_by_label(s, "lakecdc_events_total").values()) == total
                        and set(_by_label(s, "lakecdc_kafka_lag").values()) == {0.0}
                    ),
                    thread,
                )
            finally:
                for query in spark.streams.active:
                    query.stop()
                thread.join(timeout=120)
            if samples is not None or not _worker_too_slow(outcome):
                break
    assert "error" not in outcome, outcome.get("error")
    assert samples is not None, f"the job ended before its metrics were complete: {outcome}"
    result: JobResult = outcome["result"]
    assert result.stats.events == total

    # The scrape, while the job ran: rows and events per table, the lag per partition, the batches.
    assert _by_label(samples, "lakecdc_rows_total") == {t: float(n) for t, n in rows.items()}
    assert _by_label(samples, "lakecdc_events_total") == {t: float(n) for t, n in events.items()}
    assert _by_label(samples, "lakecdc_kafka_lag") == {f"{p},{topic_name}": 0.0 for p in ("0", "1")}
    batches = samples[("lakecdc_batches_total", ())]
    assert batches >= 3
    assert samples[("lakecdc_batch_duration_seconds_count", ())] == batches
    assert samples[("lakecdc_dead_letters_total", ())] == 0
    assert set(_by_label(samples, "lakecdc_last_commit_timestamp_seconds")) == set(rows)

    # One progress event per micro-batch that ran, with its rows per table and the lag after it: all
    # messages were there before the job started, so the lag is what the batches so far left.
    progress = [e for e in logs if e["event"] == "micro-batch progress"]
    ran = [e for e in progress if e["rows"]]
    assert len(ran) == result.stats.batches
    assert [e["batch"] for e in ran] == sorted(e["batch"] for e in ran)
    read = 0
    for event in ran:
        read += sum(event["events"].values())
        assert event["kafka_lag_total"] == total - read
        assert set(event["kafka_lag"]) == {topic_name}
        assert event["batch_s"] >= event["commit_s"] >= 0
    assert ran[0]["kafka_lag_total"] > 0
    summed: Counter[str] = Counter()
    for event in ran:
        summed.update(event["rows"])
    assert summed == rows

    # lakecdc status: the last batch, the offsets (lag 0 from the broker), the tables' snapshots.
    checkpoint = Path(warehouse) / "_lakecdc" / "checkpoints" / settings.job_name
    capsys.readouterr()
    code = main(
        ["status", "--checkpoint", str(checkpoint), "--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    last = ran[-1]["batch"]
    assert f"last batch   {last}" in out
    for p, n in per_partition.items():
        assert f"kafka        {topic_name} partition {p}: next offset {n}, lag 0" in out
    last_of = {t: max(e["batch"] for e in ran if t in e["rows"]) for t in rows}  # a batch may miss a table
    for table in rows:
        assert f"table        {table}: snapshot " in out
        assert f", last batch of this job {last_of[table]}" in out
    code = main(["status", "--checkpoint", str(checkpoint), "--warehouse", warehouse, "--output", "json"])
    status = orjson.loads(capsys.readouterr().out)
    assert status["last_batch"] == last
    assert status["offsets"][0][topic_name] == {str(p): n for p, n in per_partition.items()}
    assert {t["table"]: t["last_batch"] for t in status["tables"]} == last_of
    assert all(t["snapshot"] >= 1 and t["committed_at"] for t in status["tables"])


def _job(settings: SyncSettings, outcome: dict[str, Any]) -> None:
    try:
        outcome["result"] = run(settings)
    except BaseException as exc:  # handed to the test thread
        outcome["error"] = exc


def _worker_too_slow(outcome: dict[str, Any]) -> bool:
    """Spark waits 10 s (fixed) for the source's Python process to connect back: on a machine loaded by
    other jobs it may not make it, before any batch ran. Such a start is tried again."""
    return "Python worker failed to connect back" in str(outcome.get("error"))


def _wait_for(port: int, ready: Any, thread: threading.Thread) -> Any:
    """Scrapes until ``ready(samples)`` (the job's batches are asynchronous); None if the job ends first."""
    deadline = time.monotonic() + 240
    samples: Any = {}
    while time.monotonic() < deadline:
        if not thread.is_alive():
            return None
        try:
            samples = scrape(port)
        except OSError:
            samples = {}  # not serving yet
        if samples and ready(samples):
            return samples
        time.sleep(0.2)
    raise AssertionError(f"metrics never complete; last scrape: {samples}")
