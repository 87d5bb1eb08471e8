"""A Kafka topic of wide messages: what ``--max-offsets-per-trigger`` does to a 1,000-column table's job.

    python -m bench.kafka_wide [--columns 1000] [--messages 20000] [--bounds 0,5000]

Kafka micro-batches are bounded by messages only (README, *Limitations*): a topic whose messages each
carry a 1,000-column row (~20 KB of canal-json) is read in micro-batches of up to
``--max-offsets-per-trigger`` of them. A private broker gets ``--messages`` canal-json INSERTs of one
table (a BIGINT key and ``--columns`` - 1 INT, DOUBLE, VARCHAR, DATETIME and DECIMAL columns), in 2
partitions; ``kafka-sync-table --available-now`` on local[2] then reads it once per bound in
``--bounds`` (0: the default, 500,000 messages), each into a new warehouse. Reported per bound: the
job's seconds, micro-batches (from its log), peak memory of its process tree, and the Paimon table's
row count checked against the messages.

Results go to bench/results/kafka-wide-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from bench.mysql import ROOT
from bench.procs import PeakRss
from bench.results import write_report
from bench.scale import JobRun

PARTITIONS = 2
KINDS = ("int", "double", "varchar(12)", "datetime", "decimal(10,2)")


@dataclass
class KafkaWideRun:
    bound: int
    seconds: float
    batches: int
    peak_rss: int
    peak_pss: int


def _value(kind: str, row: int, column: int) -> str:
    if kind == "int":
        return str(row % 100000 + column)
    if kind == "double":
        return repr(row * 0.37 * column)
    if kind == "varchar(12)":
        return f"v{row % 9973}-{column}"
    if kind == "datetime":
        stamp = dt.datetime(2024, 5, 1, 12) + dt.timedelta(seconds=row % 86400)
        return stamp.strftime("%Y-%m-%d %H:%M:%S")
    return f"{row % 100000 / 100 + column:.2f}"


def messages(columns: int, count: int) -> Iterator[tuple[bytes, bytes]]:
    types = {"id": "bigint", **{f"c{i:04d}": KINDS[i % len(KINDS)] for i in range(1, columns)}}
    for n in range(count):
        row = {"id": str(n), **{name: _value(kind, n, i) for i, (name, kind) in enumerate(types.items()) if i}}
        body = {
            "data": [row], "old": None, "type": "INSERT", "database": "shop", "table": "wide",
            "es": 1_700_000_000_000 + n, "ts": 1_700_000_000_000 + n, "id": n, "isDdl": False,
            "mysqlType": types, "pkNames": ["id"], "sql": "",
        }  # fmt: skip
        yield str(n).encode(), orjson.dumps(body)


def _job(bootstrap: str, warehouse: str, bound: int) -> KafkaWideRun:
    argv = [sys.executable, "-m", "ingest", "kafka-sync-table", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--table", "wide", "--kafka-conf", f"properties.bootstrap.servers={bootstrap}"]
    argv += ["--kafka-conf", "topic=wide", "--kafka-conf", "value.format=canal-json", "--available-now"]
    argv += ["--spark-conf", "spark.master=local[2]"]
    if bound:
        argv += ["--max-offsets-per-trigger", str(bound)]
    env = {**os.environ, "LAKECDC_LOG_LEVEL": "INFO", "LAKECDC_LOG_FORMAT": "json"}
    log = JobRun(time.monotonic())
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reader = threading.Thread(target=log.read, args=(proc.stderr,), daemon=True)
    reader.start()
    with PeakRss(proc.pid, interval=0.5) as peak:
        proc.wait()
    seconds = time.monotonic() - log.started
    reader.join(timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"the job failed ({proc.returncode}): {log.errors[-5:]}")
    return KafkaWideRun(bound, seconds, len(log.commits), peak.peak, peak.peak_pss)


def _rows(warehouse: str) -> int:
    from pypaimon_rust.datafusion import PaimonCatalog

    table = PaimonCatalog({"warehouse": warehouse}).get_table("ods.wide")
    builder = table.new_read_builder()
    return sum(b.num_rows for b in builder.new_read().read(builder.new_scan().plan().splits()))


def main() -> None:
    from deploy.local_kafka import LocalKafka

    parser = argparse.ArgumentParser()
    parser.add_argument("--columns", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--bounds", default="0,5000", help="--max-offsets-per-trigger per run (0: the default)")
    args = parser.parse_args()
    bounds = [int(b) for b in args.bounds.split(",")]
    runs: list[KafkaWideRun] = []
    with tempfile.TemporaryDirectory(prefix="bench-kafka-wide-") as tmp, LocalKafka() as kafka:
        kafka.create_topic("wide", PARTITIONS)
        size = [0]

        def counted() -> Iterator[tuple[bytes, bytes]]:
            for key, value in messages(args.columns, args.messages):
                size[0] += len(value)
                yield key, value

        kafka.produce("wide", counted(), lambda key, value: zlib.crc32(key) % PARTITIONS)
        for i, bound in enumerate(bounds):
            warehouse = f"{tmp}/wh-{i}"
            runs.append(_job(kafka.bootstrap, warehouse, bound))
            rows = _rows(warehouse)
            if rows != args.messages:
                raise AssertionError(f"ods.wide holds {rows} rows after bound {bound}, the topic {args.messages}")
    lines = [
        f"# bench-kafka-wide: {args.messages:,} canal-json messages of a {args.columns}-column table",
        "",
        f"`python -m bench.kafka_wide --columns {args.columns} --messages {args.messages} --bounds {args.bounds}`; "
        f"{size[0] / 2**20:.0f} MiB of messages ({size[0] // args.messages:,} bytes each) in {PARTITIONS} "
        f"partitions; load average at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}. "
        "`kafka-sync-table --available-now` on local[2], one run per bound, each into a new warehouse whose "
        "table was checked to hold every message's row.",
        "",
        "| --max-offsets-per-trigger | Whole command | Micro-batches | Peak RSS | Peak PSS |",
        "|---|---|---|---|---|",
        *(
            f"| {r.bound or '500000 (default)'} | {r.seconds:.1f} s | {r.batches} | {r.peak_rss / 2**30:.2f} GiB "
            f"| {r.peak_pss / 2**30:.2f} GiB |"
            for r in runs
        ),
    ]
    write_report(lines, "kafka-wide-")


if __name__ == "__main__":
    main()
