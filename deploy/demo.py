"""``make demo``: a local broker, a sample canal-json stream for two tables, one sync job, and the
resulting Paimon tables, read back with pypaimon-rust.

    python -m deploy.demo [--keys 5000] [--updates 3] [--warehouse ./warehouse]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa

from deploy.canal_stream import generate, partition_by_key
from deploy.local_kafka import LocalKafka


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=5000, help="rows per table")
    ap.add_argument("--updates", type=int, default=3, help="updates per row")
    ap.add_argument("--partitions", type=int, default=4, help="Kafka partitions of the topic")
    ap.add_argument("--warehouse", default="warehouse", help="Paimon warehouse (replaced)")
    args = ap.parse_args()

    warehouse = str(Path(args.warehouse).resolve())
    shutil.rmtree(warehouse, ignore_errors=True)
    stream = generate(keys=args.keys, updates=args.updates)
    print(f"demo: {len(stream.messages):,} canal-json messages for tables {', '.join(stream.tables)}")
    with LocalKafka() as kafka:
        kafka.create_topic("shop_cdc", args.partitions)
        kafka.produce("shop_cdc", stream.messages, partition_by_key(args.partitions))
        print(f"demo: produced them to topic 'shop_cdc' ({args.partitions} partitions) on {kafka.bootstrap}")
        cmd = [
            sys.executable,
            "-m",
            "ingest",
            "kafka-sync-database",
            "--warehouse",
            warehouse,
            "--database",
            "ods",
            "--kafka-conf",
            f"properties.bootstrap.servers={kafka.bootstrap}",
            "--kafka-conf",
            "topic=shop_cdc",
            "--kafka-conf",
            "value.format=canal-json",
            "--available-now",
        ]
        print("demo: running", " ".join(c if " " not in c else repr(c) for c in ["lakecdc", *cmd[3:]]))
        started = time.monotonic()
        env = {**os.environ, "LAKECDC_LOG_LEVEL": os.environ.get("LAKECDC_LOG_LEVEL", "WARNING")}
        done = subprocess.run(cmd, env=env, check=False)
        elapsed = time.monotonic() - started
    if done.returncode != 0:
        print("demo: the sync job failed", file=sys.stderr)
        return done.returncode

    from pypaimon_rust.datafusion import PaimonCatalog

    catalog = PaimonCatalog({"warehouse": warehouse})
    ok = True
    for table in stream.tables:
        t = catalog.get_table(f"ods.{table}")
        rb = t.new_read_builder()
        rows = pa.Table.from_batches(rb.new_read().read(rb.new_scan().plan().splits())).sort_by("id")
        snapshot = t.latest_snapshot()
        assert snapshot is not None
        expected = len(stream.expected[table])
        ok &= rows.num_rows == expected
        print(f"\nods.{table}: {rows.num_rows:,} rows (expected {expected:,}), snapshot {snapshot.id()}")
        print(rows.slice(0, 5).to_pandas().to_string(index=False))
    print(
        f"\ndemo: {len(stream.messages):,} change events synced in {elapsed:.1f} s wall clock including "
        f"Spark start-up ({len(stream.messages) / elapsed:,.0f} events/s); tables in {warehouse}"
    )
    print(
        f"demo: inspect them with: .venv/bin/lakecdc query 'SELECT * FROM orders LIMIT 5' "
        f"--warehouse {warehouse} --database ods"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
