"""The stop on SIGTERM / SIGINT (ingest.streaming.stopping) against a stand-in query: it stops only
between batches, refuses a batch that starts while it stops, and gives up on a batch in flight past
its bound."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest.source import STOP_FILE_OPTION, stop_file
from ingest.source import stopping as source_stopping
from ingest.streaming.stopping import BatchGate, GracefulStop, JobStopping, stop_timeout


class FakeQuery:
    """A streaming query: ``active_trigger`` says whether Spark is inside a trigger."""

    def __init__(self) -> None:
        self.active_trigger = False
        self.stopped = threading.Event()

    @property
    def isActive(self) -> bool:
        return not self.stopped.is_set()

    @property
    def status(self) -> dict[str, Any]:
        return {"isTriggerActive": self.active_trigger, "message": "Waiting for next trigger"}

    def stop(self) -> None:
        self.stopped.set()

    def awaitTermination(self, timeout: int | None = None) -> bool:
        return self.stopped.wait(timeout)


@pytest.fixture
def stopping() -> Iterator[GracefulStop]:
    stop = GracefulStop(BatchGate(), timeout=30)
    stop.install()
    try:
        yield stop
    finally:
        stop.restore()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_query_between_batches(stopping: GracefulStop, signum: int) -> None:
    query = FakeQuery()
    stopping.watch(query)
    os.kill(os.getpid(), signum)  # handled in this (the main) thread
    stopping.wait(query)
    assert query.stopped.is_set() and stopping.requested.is_set() and not stopping.abandoned


def test_the_stop_waits_for_the_batch_in_flight_and_the_trigger(stopping: GracefulStop) -> None:
    query = FakeQuery()
    gate = stopping.gate
    in_batch, release = threading.Event(), threading.Event()

    def batch() -> None:
        with gate.batch(7):
            query.active_trigger = True
            in_batch.set()
            release.wait(30)
        query.active_trigger = False  # Spark writes commits/7, then waits for the next trigger

    worker = threading.Thread(target=batch)
    worker.start()
    assert in_batch.wait(30)
    stopping.watch(query)
    os.kill(os.getpid(), signal.SIGTERM)
    assert not query.stopped.wait(0.5)  # the batch is still in flight
    release.set()
    stopping.wait(query)
    worker.join(30)
    assert query.stopped.is_set() and gate.last_batch == 7 and not stopping.abandoned
    # Spark starting another batch now: refused before it writes anything.
    with pytest.raises(JobStopping, match="micro-batch 8 started while the job stops"), gate.batch(8):
        pytest.fail("a batch ran after the stop")
    assert gate.refused == 8


def test_past_the_bound_the_stop_gives_up_on_the_batch_in_flight() -> None:
    stopping = GracefulStop(BatchGate(), timeout=0.5)
    stopping.install()
    query = FakeQuery()
    release = threading.Event()
    entered = threading.Event()

    def batch() -> None:
        with stopping.gate.batch(3):
            entered.set()
            release.wait(30)

    worker = threading.Thread(target=batch)
    worker.start()
    try:
        assert entered.wait(30)
        stopping.watch(query)
        os.kill(os.getpid(), signal.SIGTERM)
        stopping.wait(query)
        assert stopping.abandoned
        assert query.stopped.wait(30)  # stopped anyway (Spark replays batch 3 on restart)
        assert stopping.gate.last_batch is None
    finally:
        release.set()
        worker.join(30)
        stopping.restore()


def test_a_second_signal_stops_at_once(stopping: GracefulStop) -> None:
    query = FakeQuery()
    query.active_trigger = True  # a trigger that does not end
    stopping.watch(query)
    os.kill(os.getpid(), signal.SIGINT)
    assert not query.stopped.wait(0.3)
    os.kill(os.getpid(), signal.SIGINT)
    stopping.wait(query)
    assert stopping.abandoned and query.stopped.wait(30)


def test_the_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    stop = GracefulStop(BatchGate(), timeout=1)
    stop.install()
    assert signal.getsignal(signal.SIGTERM) == stop._on_signal
    stop.restore()
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize(("text", "seconds"), [("60 s", 60), ("2 min", 120), ("90", 90), ("1h", 3600), ("500ms", 0.5)])
def test_stop_timeout_reads_durations(text: str, seconds: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_STOP_TIMEOUT", text)
    assert stop_timeout() == seconds


def test_stop_timeout_default_and_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKECDC_STOP_TIMEOUT", raising=False)
    assert stop_timeout() == 60
    monkeypatch.setenv("LAKECDC_STOP_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="LAKECDC_STOP_TIMEOUT: cannot read interval 'soon'"):
        stop_timeout()


def test_the_signal_creates_the_stop_file_the_sources_read(tmp_path: Path) -> None:
    # The sources' latestOffset offers no new batch once it exists (the lagging case of
    # tests/integration/kafka/test_graceful_stop.py shows the effect on a real job).
    path = str(tmp_path / "stop")
    options = {STOP_FILE_OPTION.lower(): path}  # as Spark hands options over
    stop = GracefulStop(BatchGate(), timeout=30, stop_file=stop_file(options))
    stop.install()
    try:
        query = FakeQuery()
        stop.watch(query)
        assert not source_stopping(stop_file(options))
        os.kill(os.getpid(), signal.SIGTERM)
        stop.wait(query)
    finally:
        stop.restore()
    assert source_stopping(stop_file(options)) and query.stopped.is_set()
    assert stop_file({}) is None and not source_stopping(None)
