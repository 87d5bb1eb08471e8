"""``make bench-scale``: database sync over many tables (issue #27, *Many tables*).

    python -m bench.scale [--tables 1000] [--rows 10] [--only kafka|mysql]

Two workloads, each one continuous job on local[2] (``--trigger-interval 1 s``) sampled for memory:

- ``kafka-sync-database``: canal-json, as Canal sends a database to Kafka (one topic, the table in each
  message, 4 partitions keyed by table): ``--rows`` inserts into each of ``--tables`` tables, then,
  once the job has committed them all, one UPDATE of every table;
- ``mysql-sync-database``: a private MariaDB with ``--tables`` tables of ``--rows`` rows (snapshot), then,
  once the snapshot is committed, one UPDATE of every table (binlog).

Measured from the job's own ``micro-batch committed`` log lines (``LAKECDC_LOG_FORMAT=json``): start-up to
the first commit (from the process start), the time until the initial load is committed, every
micro-batch's time and its split (read/parse/plan, write, commit, maintenance), the second wave from
its first change to its commit; peak RSS and PSS of the job's process tree (driver, JVM, Python workers).

Results go to bench/results/scale-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bench.procs import PeakRss
from bench.results import code_version, write_report

ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 4
MYSQL_TYPES = {"id": "bigint", "name": "varchar(64)", "amount": "decimal(12,2)", "qty": "int", "note": "varchar(255)"}
DDL = (
    "CREATE TABLE t{i:04d} (id BIGINT PRIMARY KEY, name VARCHAR(64), amount DECIMAL(12, 2), qty INT, note VARCHAR(255))"
)


@dataclass
class JobRun:
    """What one job's log said, with the times (since its process started) of each commit."""

    started: float
    commits: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    events: int = 0
    peak_rss: int = 0
    peak_pss: int = 0
    wall_s: float = 0.0
    _changed: threading.Condition = field(default_factory=threading.Condition)

    log: Any = None  # a file the job's log lines are copied to (--log-dir)

    def read(self, stream: Any) -> None:
        for line in stream:
            if self.log is not None:
                self.log.write(line)
            try:
                entry = json.loads(line)
            except ValueError:
                self.errors.append(line.rstrip()[-300:])
                continue
            if entry.get("event") == "micro-batch committed":
                with self._changed:
                    entry["at_s"] = time.monotonic() - self.started
                    self.events += int(entry.get("events") or 0)
                    self.commits.append(entry)
                    self._changed.notify_all()
            elif entry.get("level") in ("error", "critical"):
                self.errors.append(line.rstrip()[-300:])

    def wait_events(self, events: int, proc: subprocess.Popen[str], timeout: float) -> float:
        """Wait until ``events`` change events are committed; the time since the process started."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.events < events:
                if proc.poll() is not None:
                    raise RuntimeError(f"job ended ({proc.returncode}) at {self.events} events: {self.errors[-5:]}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.events} of {events} events committed after {timeout} s")
                self._changed.wait(1.0)
        return time.monotonic() - self.started


LOG_DIR: Path | None = None  # --log-dir


def _job(argv: list[str], first: int, then: Callable[[], None], second: int, timeout: float) -> tuple[JobRun, float]:
    """Run the job: wait for ``first`` events, call ``then`` (the second wave), wait for ``first + second``,
    stop the job with SIGTERM (graceful stop). Returns the run and the time the second wave started."""
    env = {**os.environ, "LAKECDC_LOG_LEVEL": "INFO", "LAKECDC_LOG_FORMAT": "json"}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ingest", *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    run = JobRun(started)
    if LOG_DIR is not None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        run.log = (LOG_DIR / f"{argv[0]}.log").open("w")
    reader = threading.Thread(target=run.read, args=(proc.stderr,), daemon=True)
    reader.start()
    try:
        with PeakRss(proc.pid, interval=0.5) as rss:
            run.wait_events(first, proc, timeout)
            wave = time.monotonic() - started
            then()
            run.wait_events(first + second, proc, timeout)
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        run.peak_rss, run.peak_pss = rss.peak, rss.peak_pss
        run.wall_s = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(timeout=10)
    if run.log is not None:
        run.log.close()
    return run, wave


def _canal(table: int, kind: str, row: dict[str, str], n: int, old: dict[str, str] | None = None) -> bytes:
    return orjson.dumps(
        {
            "data": [row], "old": [old] if old else None, "type": kind, "database": "shop", "table": f"t{table:04d}",
            "es": 1_700_000_000_000 + n, "ts": 1_700_000_000_000 + n, "id": n, "isDdl": False,
            "mysqlType": MYSQL_TYPES, "pkNames": ["id"], "sql": "",
        }
    )  # fmt: skip


def _row(key: int, version: int) -> dict[str, str]:
    return {
        "id": str(key),
        "name": f"customer-{key}",
        "amount": f"{key * 7 % 100000}.{version:02d}",
        "qty": str(version),
        "note": "a note of moderate length for every row",
    }


def _kafka_wave(tables: int, rows: int, update: bool) -> Iterator[tuple[bytes, bytes]]:
    n = 0
    for t in range(tables):
        key = f"t{t:04d}".encode()
        if update:
            n += 1
            yield key, _canal(t, "UPDATE", _row(0, 1), 10_000_000 + n, {"qty": "0"})
            continue
        for i in range(rows):
            n += 1
            yield key, _canal(t, "INSERT", _row(i, 0), n)


def kafka_workload(tables: int, rows: int, work: Path, timeout: float) -> dict[str, Any]:
    from deploy.local_kafka import LocalKafka

    with LocalKafka() as kafka:
        kafka.create_topic("shop", PARTITIONS)
        part: Callable[[bytes, bytes], int] = lambda key, value: zlib.crc32(key) % PARTITIONS  # noqa: E731
        kafka.produce("shop", _kafka_wave(tables, rows, False), part)
        argv = ["kafka-sync-database", "--warehouse", str(work / "wh-kafka"), "--database", "ods"]
        argv += ["--kafka-conf", f"properties.bootstrap.servers={kafka.bootstrap}", "--kafka-conf", "topic=shop"]
        argv += ["--kafka-conf", "value.format=canal-json", "--trigger-interval", "1 second"]
        argv += ["--checkpoint", str(work / "ck-kafka"), "--spark-conf", "spark.master=local[2]"]
        wave_started: list[float] = []

        def second_wave() -> None:
            wave_started.append(time.monotonic())
            kafka.produce("shop", _kafka_wave(tables, rows, True), part)

        run, wave = _job(argv, tables * rows, second_wave, tables, timeout)
    return _summary("kafka-sync-database", run, wave, tables * rows)


def mysql_workload(tables: int, rows: int, work: Path, timeout: float) -> dict[str, Any]:
    from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB

    with LocalMariaDB() as db:
        db.execute("CREATE DATABASE shop")
        conn = db.connect("shop")
        with conn.cursor() as cur:
            for t in range(tables):
                cur.execute(DDL.format(i=t))
                cur.executemany(
                    f"INSERT INTO t{t:04d} VALUES (%s, %s, %s, %s, %s)",
                    [tuple(_row(i, 0).values()) for i in range(rows)],
                )
        conn.commit()
        argv = ["mysql-sync-database", "--warehouse", str(work / "wh-mysql"), "--database", "ods"]
        for k, v in db.mysql_conf(**{"database-name": "shop"}).items():
            if k != "password":
                argv += ["--mysql-conf", f"{k}={v}"]
        argv += ["--trigger-interval", "1 second", "--checkpoint", str(work / "ck-mysql")]
        argv += ["--spark-conf", "spark.master=local[2]"]
        os.environ["LAKECDC_MYSQL_PASSWORD"] = ROOT_PASSWORD

        def second_wave() -> None:
            c = db.connect("shop")
            with c.cursor() as cur:
                for t in range(tables):
                    cur.execute(f"UPDATE t{t:04d} SET qty = qty + 1 WHERE id = 0")
            c.commit()
            c.close()

        try:
            run, wave = _job(argv, tables * rows, second_wave, tables, timeout)
        finally:
            conn.close()
            os.environ.pop("LAKECDC_MYSQL_PASSWORD", None)
    return _summary("mysql-sync-database", run, wave, tables * rows)


def _summary(action: str, run: JobRun, wave: float, first_events: int) -> dict[str, Any]:
    batches = [
        {k: c.get(k) for k in ("batch", "tables", "events", "seconds", "read_parse_plan_s", "write_s", "commit_s",
                               "maintenance_s", "at_s")}
        for c in run.commits
    ]  # fmt: skip
    return {
        "action": action,
        "first_commit_s": run.commits[0]["at_s"],
        "loaded_s": wave,
        "second_wave_s": run.commits[-1]["at_s"] - wave,
        "wall_s": run.wall_s,
        "peak_rss": run.peak_rss,
        "peak_pss": run.peak_pss,
        "batches": batches,
        "first_events": first_events,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=1000, help="the performance issue asks for 1,000 tables")
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--only", choices=("kafka", "mysql"))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each wave's commits")
    parser.add_argument("--log-dir", type=Path, help="keep each job's log lines here")
    args = parser.parse_args()
    global LOG_DIR
    LOG_DIR = args.log_dir
    load = Path("/proc/loadavg").read_text().split()[:3]
    commit = code_version()
    results = []
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-scale-") as tmp:
        if args.only in (None, "kafka"):
            results.append(kafka_workload(args.tables, args.rows, Path(tmp), args.timeout))
        if args.only in (None, "mysql"):
            results.append(mysql_workload(args.tables, args.rows, Path(tmp), args.timeout))
    argv = " ".join(["python -m bench.scale", *sys.argv[1:]])
    lines = [
        f"# Many-tables benchmark, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"`{argv}` at commit {commit}; load average at start {' '.join(load)}. {args.tables} tables, "
        f"{args.rows} rows each, then one UPDATE of every table, into one continuous job on local[2] "
        "(trigger 1 s). Start-up = process start to the first `micro-batch committed`; initial load = until "
        "every first-wave row is committed; second wave = from its first change to its last commit.",
        "",
        "| Workload | Start-up to first commit | Initial load committed | Second wave | Whole job | Peak RSS "
        "| Peak PSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| `{r['action']}` | {r['first_commit_s']:.1f} s | {r['loaded_s']:.1f} s | {r['second_wave_s']:.1f} s "
            f"| {r['wall_s']:.1f} s | {r['peak_rss'] / 2**30:.2f} GiB | {r['peak_pss'] / 2**30:.2f} GiB |"
        )
    for r in results:
        lines += ["", f"## `{r['action']}`: micro-batches", ""]
        lines += ["| Batch | Tables | Events | Seconds | Read/parse/plan | Write | Commit | Maintenance | At (s) |"]
        lines += ["|---|---|---|---|---|---|---|---|---|"]
        for b in r["batches"]:
            lines.append(
                f"| {b['batch']} | {b['tables']} | {b['events']} | {b['seconds']} | {b['read_parse_plan_s']} "
                f"| {b['write_s']} | {b['commit_s']} | {b['maintenance_s']} | {b['at_s']:.1f} |"
            )
    write_report(lines, "scale-")


if __name__ == "__main__":
    main()
