"""Stopping a job on SIGTERM or SIGINT after its in-flight micro-batch commits (README: Stopping a job).

Spark has no "stop after this batch" for a streaming query: ``query.stop()`` interrupts whatever the
query is doing, and a batch it interrupts is replayed on restart (safe: Paimon skips a commit
identifier its commit user already committed, but the batch's files written before the stop are
orphans). So the signal handler only asks; a thread then waits for a moment between batches — the
processor idle (``BatchGate``: no batch is being written or committed, and none may start) and the
query between triggers (Spark has written the batch's ``commits/`` entry) — and stops the query
there: nothing to replay, nothing orphaned. A job behind its source runs its batches back to back, with
no such moment between them; so the signal also creates the job's stop file, and from then on the
sources' ``latestOffset`` offers no new data: the batch in flight is the last one.

The wait is bounded by ``LAKECDC_STOP_TIMEOUT`` (a duration, default 60 s). Past it the query is
stopped anyway and the job returns without waiting for the batch in flight: that batch is replayed on
restart, exactly once all the same (its data files written so far are orphans, which
``remove-orphan-files`` deletes). A second signal stops at once the same way.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import structlog

from ingest.durations import interval_ms
from schema_evolution.errors import LakeCdcError

log = structlog.get_logger(__name__)

DEFAULT_STOP_TIMEOUT = "60 s"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# How often the stopping thread looks for the moment between two batches.
_POLL_SECONDS = 0.02


class JobStopping(LakeCdcError):
    """A micro-batch Spark started while the job was being stopped: refused before it wrote anything
    (Spark replays it on restart)."""


def stop_timeout() -> float:
    """``LAKECDC_STOP_TIMEOUT`` in seconds (``60 s``, ``2 min``, ``90``: a bare number is seconds)."""
    text = os.environ.get("LAKECDC_STOP_TIMEOUT", DEFAULT_STOP_TIMEOUT)
    try:
        return interval_ms(text) / 1000
    except ValueError as exc:
        raise ValueError(f"LAKECDC_STOP_TIMEOUT: {exc}") from None


class BatchGate:
    """Held by the micro-batch processor while it processes a batch; once closed, no batch starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False
        self.last_batch: int | None = None  # the last batch processed to its end
        self.refused: int | None = None  # a batch refused because the gate was closed

    @contextmanager
    def batch(self, batch_id: int) -> Iterator[None]:
        # Never block on a closed gate: the stopping thread holds the lock while query.stop() waits
        # for this very batch's callback to return.
        while not self._lock.acquire(timeout=_POLL_SECONDS):
            self._refuse_if_closed(batch_id)
        try:
            self._refuse_if_closed(batch_id)
            yield
            self.last_batch = batch_id
        finally:
            self._lock.release()

    def _refuse_if_closed(self, batch_id: int) -> None:
        if self._closed:
            self.refused = batch_id
            raise JobStopping(f"micro-batch {batch_id} started while the job stops; it is replayed on restart")

    @contextmanager
    def idle(self) -> Iterator[bool]:
        """Yields True while no batch is in flight (and none can start); False when one is."""
        acquired = self._lock.acquire(blocking=False)
        try:
            yield acquired
        finally:
            if acquired:
                self._lock.release()

    def close(self) -> None:
        """No batch starts from now on (a batch in flight finishes)."""
        self._closed = True


class GracefulStop:
    """SIGTERM and SIGINT handlers of the driver, for one streaming query.

    Install after the SparkContext exists (PySpark's own SIGINT handler, set when the context is
    created, cancels every job at once); ``watch`` the query once it is started; ``restore`` at the
    end. The main thread waits with ``wait``, which also returns when a stop overran its bound."""

    def __init__(self, gate: BatchGate, timeout: float, stop_file: str | None = None) -> None:
        self.gate = gate
        self.timeout = timeout
        # Created on the first signal: the sources then offer no new batch (ingest.source.stopping), so a
        # job behind its source reaches a moment between batches instead of running its backlog out.
        self.stop_file = stop_file
        self.requested = threading.Event()
        self.abandoned = False  # stopped past the bound, with a batch in flight
        self._urgent = threading.Event()
        self._query: Any = None
        self._query_set = threading.Event()
        self._previous: dict[int, Any] = {}
        self._thread: threading.Thread | None = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread (e.g. a test calling run())
        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def watch(self, query: Any) -> None:
        self._query = query
        self._query_set.set()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.requested.is_set():
            log.warning("second stop signal: stopping now; a batch in flight is replayed on restart", signal=name)
            self._urgent.set()
            return
        log.info(
            "stop requested: stopping after the micro-batch in flight commits",
            signal=name,
            timeout_s=self.timeout,
        )
        self.requested.set()
        if self.stop_file is not None:
            with open(self.stop_file, "w"):
                pass
        self._thread = threading.Thread(target=self._stop, name="lakecdc-stop", daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        deadline = time.monotonic() + self.timeout
        self._query_set.wait(max(0.0, deadline - time.monotonic()))
        query = self._query
        while time.monotonic() < deadline and not self._urgent.is_set():
            if query is None or not query.isActive:
                break
            with self.gate.idle() as idle:
                # Between batches: the processor is idle, and Spark is between triggers, so the last
                # batch's commits/ entry is written and the next batch's offsets are not. The gate
                # stays held while the query stops: a batch Spark starts in that instant writes nothing.
                if idle and not query.status["isTriggerActive"]:
                    self.gate.close()
                    query.stop()
                    log.info("stopped between micro-batches", last_batch=self.gate.last_batch)
                    return
            time.sleep(_POLL_SECONDS)
        if query is None:
            return
        if not query.isActive and not self._urgent.is_set():
            # Ended on its own: an --available-now run whose source offered no more data once stopping
            log.info("stopped: the query ended after its last micro-batch", last_batch=self.gate.last_batch)
            return
        self.gate.close()
        self.abandoned = True
        log.warning(
            "stopping with a micro-batch in flight (LAKECDC_STOP_TIMEOUT passed, or a second signal): it is "
            "replayed on restart, exactly once; its files written so far are orphans for remove-orphan-files",
            last_batch=self.gate.last_batch,
        )
        threading.Thread(target=query.stop, name="lakecdc-stop-query", daemon=True).start()

    def wait(self, query: Any) -> None:
        """Until the query ends (raising its failure, as ``awaitTermination``), or a stop gave up on it."""
        try:
            while not query.awaitTermination(1):
                if self.abandoned:
                    return
        except Exception:
            if self.gate.refused is None:
                raise
            log.info("a micro-batch Spark started as the job stopped wrote nothing", batch=self.gate.refused)
