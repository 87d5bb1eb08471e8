"""``make bench``: lakecdc against floors measured in the same run, on this machine.

    python -m bench.run [--messages 1000000] [--naive-messages 100000] [--skip-freshness]

Writes a Markdown table to bench/results/<UTC time>.md (and prints it). Every figure is measured
here; ratios compare runs of the same messages on the same broker within one invocation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import floors
from bench.procs import ExecutorCpu, PeakRss
from bench.results import write_report
from bench.workload import _row, messages
from deploy.local_kafka import LocalKafka
from deploy.local_spark_cluster import LocalSparkCluster
from ingest.cli.settings import SyncSettings
from ingest.spark_conf import LOCAL_DRIVER_JAVA_OPTIONS

PARTITIONS = 4
BATCH = SyncSettings.model_fields["max_offsets_per_trigger"].default  # messages per micro-batch


def _lakecdc(
    args: list[str], env_extra: dict[str, str] | None = None, sample: bool = False
) -> tuple[float, tuple[int, int], str]:
    """Run the lakecdc CLI; returns (seconds, peak (RSS, PSS) of its process tree, stdout).

    Only ``sample`` runs read /proc for memory: each sample of the tree costs ~40 ms of CPU on
    the two cores the job needs, so timed runs are never sampled."""
    env = {**os.environ, "LAKECDC_LOG_LEVEL": "WARNING", **(env_extra or {})}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ingest", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = (0, 0)
    if sample:
        with PeakRss(proc.pid) as rss:
            out, err = proc.communicate()
        peak = (rss.peak, rss.peak_pss)
    else:
        out, err = proc.communicate()
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(f"lakecdc failed ({proc.returncode}):\n{err[-4000:]}")
    return elapsed, peak, out


def _sync_args(
    kafka: LocalKafka, topic: str, warehouse: str, cores: int | str, extra: list[str] | None = None
) -> list[str]:
    master = f"local[{cores}]" if isinstance(cores, int) else cores
    return [
        "kafka-sync-table",
        "--warehouse",
        warehouse,
        "--database",
        "bench",
        "--table",
        "orders",
        "--kafka-conf",
        f"properties.bootstrap.servers={kafka.bootstrap}",
        "--kafka-conf",
        f"topic={topic}",
        "--kafka-conf",
        "value.format=canal-json",
        "--spark-conf",
        f"spark.master={master}",
        *(extra or []),
    ]


def _produce(kafka: LocalKafka, topic: str, count: int) -> float:
    kafka.create_topic(topic, PARTITIONS)
    started = time.monotonic()
    kafka.produce(topic, messages(count), lambda key, value: zlib.crc32(key) % PARTITIONS)
    return time.monotonic() - started


def throughput(
    kafka: LocalKafka,
    work: Path,
    topic: str,
    count: int,
    cores: int,
    runs: int,
    between: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """``runs`` timed runs of the command over ``topic`` and as many over a one-message topic (steady
    state = median full run - median start-up run), then one more run sampled for peak memory.

    The start-up and full runs alternate, and ``between(i)`` (the floor's i-th run) follows each pair:
    the host's speed drifts by tens of percent over minutes here, and runs taken in blocks put that
    drift between the two terms of a ratio (bench/README.md, 5 Dec)."""
    empty: list[float] = []
    full: list[float] = []
    for i in range(runs):
        args = _sync_args(kafka, "bench_empty", str(work / f"wh_empty_{cores}_{i}"), cores, ["--available-now"])
        empty.append(_lakecdc(args)[0])
        args = _sync_args(kafka, topic, str(work / f"wh_{topic}_{cores}_{i}"), cores, ["--available-now"])
        full.append(_lakecdc(args)[0])
        if between is not None:
            between(i)
    _, (rss, pss), _ = _lakecdc(
        _sync_args(kafka, topic, str(work / f"wh_{topic}_{cores}_mem"), cores, ["--available-now"]), sample=True
    )
    empty_s, full_s = statistics.median(empty), statistics.median(full)
    steady = [f - empty_s for f in full]
    return {
        "cores": cores,
        "wall_s": full_s,
        "empty_s": empty_s,
        "steady_s": full_s - empty_s,
        "steady_range": (min(steady), max(steady)),
        "rate": count / (full_s - empty_s),
        "rss": rss,
        "pss": pss,
    }


def cluster_throughput(kafka: LocalKafka, work: Path, topic: str, count: int) -> dict[str, Any]:
    """The same command against a standalone cluster (master + 2 workers of 1 core, loopback):
    reading, parsing and writing run in executor JVMs' Python workers, whose CPU is sampled."""
    with LocalSparkCluster(workers=2, cores_per_worker=1) as cluster:
        conf = ["--spark-conf", "spark.driver.host=127.0.0.1", "--spark-conf", "spark.driver.bindAddress=127.0.0.1"]
        conf += ["--spark-conf", "spark.executor.memory=1g", "--available-now"]
        empty_s, _, _ = _lakecdc(_sync_args(kafka, "bench_empty", str(work / "wh_cl_empty"), cluster.master_url, conf))
        with ExecutorCpu() as executors:
            full_s, _, _ = _lakecdc(_sync_args(kafka, topic, str(work / "wh_cl"), cluster.master_url, conf))
    steady = full_s - empty_s
    return {"wall_s": full_s, "steady_s": steady, "rate": count / steady, "executor_cpu_s": executors.seconds}


def freshness(
    kafka: LocalKafka, work: Path, trigger: str, rate: int, seconds: int, warmup: int = 10
) -> dict[str, float]:
    """Produce ``rate`` events/s for ``warmup`` + ``seconds`` into a running job; latency = snapshot
    commit time - produce time of each row (the ``note`` column carries the produce time), over the
    rows produced after the warm-up (the first non-empty micro-batch starts Python workers)."""

    topic = f"fresh_{trigger.replace(' ', '')}"
    kafka.create_topic(topic, PARTITIONS)
    warehouse = str(work / f"wh_{topic}")
    env = {**os.environ, "LAKECDC_LOG_LEVEL": "WARNING"}
    args = _sync_args(kafka, topic, warehouse, 2, ["--trigger-interval", trigger])
    log = open(work / f"{topic}.log", "wb")  # noqa: SIM115
    job = subprocess.Popen([sys.executable, "-m", "ingest", *args], env=env, stdout=log, stderr=log)
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap, "linger.ms": 5, "batch.num.messages": 200})
    row = _row(0, 0, random.Random(1))
    # One row first, in partition 0 (kafka-sync-table takes a new table's columns from it), and the clock
    # starts once the job has committed it: the job's start-up is not what freshness measures.
    producer.produce(topic, _canal_insert({**row, "id": "-1", "note": "0"}), key=b"-1", partition=0)
    producer.flush(30)
    _wait_for_commit(Path(warehouse) / "bench.db" / "orders" / "snapshot" / "LATEST", job, 300)
    sent = 0
    started = time.monotonic()
    measured_from_ms = int(time.time() * 1000) + warmup * 1000
    while time.monotonic() - started < seconds + warmup:
        due = int((time.monotonic() - started) * rate)
        while sent < due:
            row = {**row, "id": str(sent), "note": str(time.time_ns() // 1_000_000)}
            producer.produce(topic, _canal_insert(row), key=str(sent).encode(), partition=sent % PARTITIONS)
            sent += 1
        producer.poll(0)
        time.sleep(0.002)
    producer.flush(30)
    time.sleep(float(trigger.split()[0]) * 3 + 5)
    failed = job.poll() is not None
    job.terminate()
    job.wait(60)
    log.close()
    if failed:
        raise RuntimeError(f"the freshness job stopped early: {(work / f'{topic}.log').read_text()[-3000:]}")
    return _latencies(warehouse, sent, measured_from_ms)


def _canal_insert(row: dict[str, str]) -> bytes:
    import orjson

    from bench.workload import MYSQL_TYPES

    body = {
        "type": "INSERT",
        "data": [row],
        "old": None,
        "database": "shop",
        "table": "orders",
        "isDdl": False,
        "mysqlType": MYSQL_TYPES,
        "pkNames": ["id"],
        "es": 0,
        "ts": 0,
    }
    return orjson.dumps(body)


def _wait_for_commit(latest: Path, job: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Until the job's first snapshot (``latest`` exists); the job stopping or the time running out is an error."""
    deadline = time.monotonic() + timeout_s
    while not latest.exists():
        if job.poll() is not None or time.monotonic() > deadline:
            job.terminate()
            raise RuntimeError("the freshness job made no first commit")
        time.sleep(0.2)


def _latencies(warehouse: str, sent: int, since_ms: int) -> dict[str, float]:
    import pyarrow as pa
    from pypaimon_rust.datafusion import PaimonCatalog

    table = PaimonCatalog({"warehouse": warehouse}).get_table("bench.orders")
    lat: list[float] = []
    for snap in table.list_snapshots():
        rb = table.new_read_builder().with_projection(["note"])
        batches = rb.new_read().read(rb.new_incremental_scan(snap.id() - 1, snap.id()).plan().splits())
        for note in pa.Table.from_batches(batches).column("note").to_pylist() if batches else []:
            if int(note) >= since_ms:
                lat.append((snap.commit_time_ms() - int(note)) / 1000)
    lat.sort()
    return {
        "rows": len(lat),
        "sent": sent,
        "p50": statistics.median(lat) if lat else float("nan"),
        "p99": lat[int(len(lat) * 0.99) - 1] if lat else float("nan"),
    }


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--naive-messages", type=int, default=100_000)
    ap.add_argument("--skip-freshness", action="store_true")
    ap.add_argument("--skip-cluster", action="store_true")
    ap.add_argument("--freshness-seconds", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5, help="timed runs of lakecdc (2 cores) and of the floor")
    return ap.parse_args()


@dataclass
class Measured:
    """Every figure of one ``make bench`` run."""

    n: int
    runs: int
    produce_s: float
    two: dict[str, Any]  # lakecdc, local[2]
    one: dict[str, Any]  # lakecdc, local[1]
    cluster: dict[str, Any] | None  # lakecdc on a standalone cluster (None: --skip-cluster)
    floor_runs: list[float]
    floor_s: float  # their median
    naive_n: int
    naive_s: float
    fresh: dict[str, dict[str, float]]  # trigger -> freshness (empty: --skip-freshness)


def _measure(kafka: LocalKafka, work: Path, args: argparse.Namespace) -> Measured:
    n = args.messages
    topic = f"bench_{n}"
    produce_s = _produce(kafka, topic, n)
    # The start-up run's topic holds one message, in partition 0 where kafka-sync-table looks for a new
    # table's columns: it refuses a table it cannot create from an empty topic (as Paimon's action does).
    kafka.create_topic("bench_empty", PARTITIONS)
    kafka.produce("bench_empty", messages(1), lambda key, value: 0)
    # The floor commits as often as lakecdc does at its defaults (one commit per micro-batch); its runs
    # alternate with lakecdc's.
    floor_runs: list[float] = []

    def run_floor(i: int) -> None:
        floor_runs.append(floors.floor(kafka.bootstrap, topic, PARTITIONS, n, str(work / f"wh_floor_{i}"), BATCH))

    two = throughput(kafka, work, topic, n, 2, args.runs, between=run_floor)
    one = throughput(kafka, work, topic, n, 1, 1)
    cluster = cluster_throughput(kafka, work, topic, n) if not args.skip_cluster else None
    floor_s = statistics.median(floor_runs)
    naive_n = min(args.naive_messages, n)
    naive_s = floors.naive(kafka.bootstrap, topic, PARTITIONS, naive_n, str(work / "wh_naive"))
    fresh = {}
    if not args.skip_freshness:
        for trigger in ("1 second", "5 seconds"):
            fresh[trigger] = freshness(kafka, work, trigger, 10_000, args.freshness_seconds)
    return Measured(n, args.runs, produce_s, two, one, cluster, floor_runs, floor_s, naive_n, naive_s, fresh)


def _header(m: Measured) -> list[str]:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return [
        f"# lakecdc benchmark — {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {os.cpu_count()} cores, {mem:.0f} GiB; Python {sys.version.split()[0]}; "
        f"{m.n:,} canal-json messages (~790 bytes, 10 columns, 50% insert / 40% update / 10% delete over "
        f"200k keys, {PARTITIONS} partitions; produced in {m.produce_s:.1f} s). lakecdc at its defaults "
        f"({BATCH:,} messages per micro-batch, local-mode driver JVM with {LOCAL_DRIVER_JAVA_OPTIONS}); the floor "
        f"commits every {BATCH:,} messages too. Seconds are the median of {m.runs} runs (range in brackets; "
        "lakecdc's start-up and full runs and the floor's runs alternate) "
        "for lakecdc on 2 cores and the floor, one run otherwise; memory comes from one more run sampled "
        "every 0.2 s (timed runs are not sampled).",
        "",
    ]


def _throughput_table(m: Measured) -> list[str]:
    n, two, one, cluster, floor_runs = m.n, m.two, m.one, m.cluster, m.floor_runs
    floor_s = m.floor_s
    floor_rate = n / floor_s
    naive_rate = m.naive_n / m.naive_s
    return [
        "| Run | Seconds | Events/s | Events/s per core | vs floor | Peak PSS | Peak RSS (sum) |",
        "|---|---|---|---|---|---|---|",
        f"| lakecdc `kafka-sync-table --available-now`, local[2], steady state | {two['steady_s']:.1f} "
        f"({two['steady_range'][0]:.1f} to {two['steady_range'][1]:.1f}) "
        f"| {two['rate']:,.0f} | {two['rate'] / 2:,.0f} | {two['rate'] / floor_rate:.2f}x "
        f"| {two['pss'] / 2**30:.2f} GiB | {two['rss'] / 2**30:.2f} GiB |",
        f"| same, whole command (incl. {two['empty_s']:.1f} s start-up) | {two['wall_s']:.1f} "
        f"| {n / two['wall_s']:,.0f} "
        f"| | | | |",
        f"| lakecdc, local[1], steady state | {one['steady_s']:.1f} | {one['rate']:,.0f} | {one['rate']:,.0f} "
        f"| {one['rate'] / floor_rate:.2f}x | {one['pss'] / 2**30:.2f} GiB | {one['rss'] / 2**30:.2f} GiB |",
        *(
            [
                f"| lakecdc on a standalone cluster (master + 2 workers x 1 core, loopback), steady state "
                f"| {cluster['steady_s']:.1f} | {cluster['rate']:,.0f} | {cluster['rate'] / 2:,.0f} "
                f"| {cluster['rate'] / floor_rate:.2f}x | | |"
            ]
            if cluster
            else []
        ),
        f"| floor: one process, confluent-kafka + lakecdc parser + pypaimon-rust | {floor_s:.1f} "
        f"({min(floor_runs):.1f} to {max(floor_runs):.1f}) "
        f"| {floor_rate:,.0f} | {floor_rate:,.0f} | 1.00x | | |",
        f"| naive peer: json.loads + pypaimon writer, commit per poll ({m.naive_n:,} msgs) | {m.naive_s:.1f} "
        f"| {naive_rate:,.0f} | {naive_rate:,.0f} | {naive_rate / floor_rate:.2f}x | | |",
        "",
        f"lakecdc (2 cores) vs naive peer: {two['rate'] / naive_rate:.1f}x. "
        f"Scaling 1 → 2 cores: {two['rate'] / one['rate']:.2f}x."
        + (
            f" On the standalone cluster, Python workers under the executor JVMs used "
            f"{cluster['executor_cpu_s']:.1f} CPU-seconds (reading, parsing and writing run on executors)."
            if cluster
            else ""
        ),
    ]


def _freshness_table(fresh: dict[str, dict[str, float]]) -> list[str]:
    if not fresh:
        return []
    lines = [
        "",
        "| Freshness at 10k events/s (rows after a 10 s warm-up) | rows | p50 | p99 |",
        "|---|---|---|---|",
    ]
    for trigger, f in fresh.items():
        lines.append(f"| trigger {trigger} | {f['rows']:,} of {f['sent']:,} | {f['p50']:.2f} s | {f['p99']:.2f} s |")
    return lines


def main() -> int:
    args = _parse_args()
    work = Path(tempfile.mkdtemp(prefix="lakecdc-bench-"))
    lines: list[str] = []
    try:
        with LocalKafka(log_path=str(work / "tansu.log")) as kafka:
            measured = _measure(kafka, work, args)
        lines += _header(measured) + _throughput_table(measured) + _freshness_table(measured.fresh)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_report(lines, "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
