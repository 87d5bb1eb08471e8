"""A Kafka broker gone for 30 s and for 90 s is survived; one gone longer than
``lakecdc.broker-unavailable-timeout`` stops the job with a clear error (#23, ingest/kafka/outage.py).

The test broker (tansu, deploy/local_kafka.py) keeps its log in memory only: its build has no storage
engine with a data directory, so a restarted process would come back empty. The outage is therefore made
in front of it: the broker advertises a loopback relay, and every client (the job's planning, its read
tasks, the test's producer) reaches it only through that relay. ``down()`` cuts every open connection and
closes the relay's port (new connections are refused); ``up()`` listens on the same port again. To the
clients this is what a broker restart is: connections reset, then refused, then the broker back with its
log as it was.

- 30 s mid-stream, during an ``--available-now`` run of many micro-batches: read tasks lose their
  connections mid-fetch and wait; the run ends with exit 0 and exact tables.
- 90 s from before the start: the job's planning (topic metadata, watermarks, topic ids) waits, then
  the run ends with exact tables.
- An outage longer than a configured 8 s: the job stops naming the bootstrap servers, what it was doing
  and the option.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka, free_port, tansu_binary
from ingest.job import JobFailed, JobResult, run
from ingest.kafka.outage import TIMEOUT_OPTION
from tests.chaos.harness import run_past_load_flakes
from tests.integration.kafka.test_sync import _assert_table_matches, _settings

# Long fault runs: `make faults`, not `make test` (README: Guarantees has their figures).
pytestmark = pytest.mark.faults

TABLES = ("orders", "customers")


class Relay:
    """A loopback TCP relay to the broker whose port can be closed (``down``) and opened again (``up``)."""

    def __init__(self, target_port: int) -> None:
        self.port = free_port()
        self.target_port = target_port
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._server: socket.socket | None = None
        self.up()

    def up(self) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(128)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def down(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            _close(server)
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            _close(conn)

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._server is not server:  # went down meanwhile
                    _close(client)
                    _close(upstream)
                    continue
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    _close(src)
    _close(dst)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    s.close()


@pytest.fixture(scope="module")
def relayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalKafka, Relay]]:
    """A private broker reached only through a relay (the shared session broker is left alone)."""
    broker_port = free_port()
    relay = Relay(broker_port)
    log = open(tmp_path_factory.mktemp("tansu-outage") / "tansu.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [
            tansu_binary(),
            "broker",
            *("--listener-url", f"tcp://127.0.0.1:{broker_port}"),
            *("--advertised-listener-url", f"tcp://127.0.0.1:{relay.port}"),
        ],
        stdout=log,
        stderr=log,
    )
    kafka = LocalKafka.__new__(LocalKafka)  # LocalKafka's helpers (topics, producing) on this process
    kafka.port, kafka.bootstrap, kafka.process, kafka._log = relay.port, f"127.0.0.1:{relay.port}", process, log
    try:
        kafka._wait_ready()
        yield kafka, relay
    finally:
        relay.down()
        kafka.stop()


def _snapshots(warehouse: str) -> int:
    return sum(len(list((Path(warehouse) / "ods.db" / t / "snapshot").glob("snapshot-*"))) for t in TABLES)


def _run_in_thread(settings: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}
    thread = threading.Thread(target=run_past_load_flakes, args=(lambda: run(settings), out), daemon=True)
    thread.start()
    return thread, out


def test_a_30_s_outage_mid_stream_is_survived(
    spark: Any, relayed: tuple[LocalKafka, Relay], warehouse: str, topic_name: str
) -> None:
    kafka, relay = relayed
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=150, updates=6, seed=41)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    settings = _settings(warehouse, kafka, topic_name, max_offsets_per_trigger=60)
    thread, out = _run_in_thread(settings)
    deadline = time.monotonic() + 300
    while _snapshots(warehouse) < 2:  # mid-stream: batches committed, many to come
        assert "ended" not in out and time.monotonic() < deadline, out
        time.sleep(0.05)
    committed_before = _snapshots(warehouse)
    relay.down()
    went_down = time.monotonic()
    time.sleep(30)
    assert "ended" not in out, out  # the job waited
    relay.up()
    came_up = time.monotonic()
    thread.join(600)
    assert "error" not in out, out.get("error")
    result: JobResult = out["result"]
    assert out["ended"] > came_up and came_up - went_down >= 30
    assert _snapshots(warehouse) > committed_before  # and went on after it
    after = out["ended"] - came_up
    print(f"30 s outage mid-stream survived: {result.stats.batches} batches, the job ended {after:.1f} s after it")
    for table in TABLES:
        _assert_table_matches(warehouse, stream, table)


def test_a_90_s_outage_from_before_the_start_is_survived(
    spark: Any, relayed: tuple[LocalKafka, Relay], warehouse: str, topic_name: str
) -> None:
    kafka, relay = relayed
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=60, updates=4, seed=42)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))
    relay.down()
    went_down = time.monotonic()
    try:
        thread, out = _run_in_thread(_settings(warehouse, kafka, topic_name))
        time.sleep(90)
        assert "ended" not in out, out  # planning waited
    finally:
        relay.up()
    came_up = time.monotonic()
    thread.join(600)
    assert "error" not in out, out.get("error")
    assert out["ended"] - went_down >= 90
    print(f"90 s outage before the start survived: job ended {out['ended'] - came_up:.1f} s after the broker came back")
    for table in TABLES:
        _assert_table_matches(warehouse, stream, table)


def test_an_outage_longer_than_the_limit_stops_the_job_naming_broker_and_option(
    spark: Any, relayed: tuple[LocalKafka, Relay], warehouse: str, topic_name: str
) -> None:
    kafka, relay = relayed
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, generate(keys=10, updates=0, seed=43).messages)
    conf = {"properties.bootstrap.servers": kafka.bootstrap, "topic": topic_name, "value.format": "canal-json"}
    settings = _settings(warehouse, kafka, topic_name, kafka_conf={**conf, TIMEOUT_OPTION: "8 s"})
    relay.down()
    started = time.monotonic()
    try:
        with pytest.raises(JobFailed) as info:
            run(settings)
    finally:
        relay.up()
    took = time.monotonic() - started
    message = str(info.value)
    assert message.startswith("BrokerUnavailableError: "), message
    assert f"Kafka broker(s) {kafka.bootstrap} unavailable" in message
    assert "failed for" in message and f"--kafka-conf {TIMEOUT_OPTION}=8 s" in message
    assert "start the job again" in message
    assert 8 <= took < 90, took
