"""``make bench-scale``, second part: a MySQL binlog backlog read by a job that was away (#27, "bounded
micro-batches everywhere").

    python -m bench.backlog [--rows 200000] [--rounds 5] [--pad 900]

A private MariaDB gets a table of ``--rows`` rows of ~1 KB (``bench.mysql``'s ten columns and a
``--pad``-character column); ``mysql-sync-table --available-now`` takes its snapshot. With no job
running, the table is then updated ``--rounds`` times over in 10,000-row transactions: a backlog of
rows x rounds row changes, each with its full before and after image in the binlog (its size from
``SHOW BINARY LOGS``). The same job then resumes from its checkpoint with ``--available-now`` at its
defaults: the micro-batches it commits (events, rows and seconds of each, from its own log lines), the
whole run and its process tree's peak memory. The Paimon table is then checked against MariaDB (row
count and the sum of the updated column, read back with pypaimon-rust).

Results go to bench/results/backlog-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from bench.mysql import DDL, ROOT, job_command
from bench.procs import PeakRss
from bench.results import write_report
from bench.scale import JobRun
from deploy.local_mariadb import LocalMariaDB

TRANSACTION = 10_000


def _load(db: LocalMariaDB, rows: int, pad: int) -> None:
    """``rows`` rows made by the server (MariaDB's SEQUENCE engine) in one statement."""
    conn = db.connect("shop")
    conn.autocommit(True)
    with conn.cursor() as cur:
        cur.execute(
            "INSERT INTO orders SELECT seq, CONCAT('customer-', seq), (seq % 100000) + (seq % 100) / 100, "
            "seq % 1000, '2024-05-01 12:00:00.123', 'paid', 'a note of moderate length for every order row', "
            f"seq % 2, RAND(seq), '2024-05-01 10:00:00.456', REPEAT(CHAR(97 + seq % 26), {pad}) "
            f"FROM seq_1_to_{rows}"
        )
    conn.close()


def _binlog_bytes(db: LocalMariaDB) -> int:
    conn = db.connect("shop")
    with conn.cursor() as cur:
        cur.execute("SHOW BINARY LOGS")
        total = sum(int(r[1]) for r in cur.fetchall())
    conn.close()
    return total


def _backlog(db: LocalMariaDB, rows: int, rounds: int) -> float:
    """Every row updated ``rounds`` times, ``TRANSACTION`` rows a transaction; the seconds it took."""
    conn = db.connect("shop")
    conn.autocommit(True)
    started = time.monotonic()
    with conn.cursor() as cur:
        for _ in range(rounds):
            for lo in range(1, rows + 1, TRANSACTION):
                cur.execute(f"UPDATE orders SET qty = qty + 1 WHERE id >= {lo} AND id < {lo + TRANSACTION}")
    conn.close()
    return time.monotonic() - started


def _job(db: LocalMariaDB, warehouse: str, checkpoint: str) -> JobRun:
    """``mysql-sync-table --available-now`` of shop.orders, its log lines read as it runs."""
    argv, env = job_command(db, warehouse, "orders", checkpoint)
    env.update(LAKECDC_LOG_LEVEL="INFO", LAKECDC_LOG_FORMAT="json")
    run = JobRun(time.monotonic())
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reader = threading.Thread(target=run.read, args=(proc.stderr,), daemon=True)
    reader.start()
    with PeakRss(proc.pid, interval=0.5) as peak:
        proc.wait()
    reader.join(timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"the job failed ({proc.returncode}): {run.errors[-5:]}")
    run.peak_rss, run.peak_pss = peak.peak, peak.peak_pss
    run.wall_s = time.monotonic() - run.started
    return run


def _check(db: LocalMariaDB, warehouse: str) -> tuple[int, int]:
    """(rows, sum of qty) of the Paimon table, which must equal MariaDB's."""
    from pypaimon_rust.datafusion import PaimonCatalog

    table = PaimonCatalog({"warehouse": warehouse}).get_table("ods.orders")
    builder = table.new_read_builder()
    batches = builder.new_read().read(builder.new_scan().plan().splits())
    qty = pa.Table.from_batches(batches).column("qty")
    paimon = (len(qty), int(pc.sum(qty).as_py() or 0))
    conn = db.connect("shop")
    with conn.cursor() as cur:
        cur.execute("SELECT COUNT(*), SUM(qty) FROM orders")
        count, total = cur.fetchone()
    conn.close()
    if paimon != (int(count), int(total)):
        raise AssertionError(f"the Paimon table holds {paimon} (rows, sum of qty), MariaDB {(count, total)}")
    return paimon


def _report(args: argparse.Namespace, measured: dict[str, Any]) -> list[str]:
    run: JobRun = measured["run"]
    gib = measured["binlog"] / 2**30
    lines = [
        "# bench-backlog: a binlog backlog read by a resumed job",
        "",
        f"`python -m bench.backlog --rows {args.rows} --rounds {args.rounds} --pad {args.pad}`; load average at "
        f"the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}",
        "",
        f"Snapshot of {args.rows:,} rows ({measured['snapshot_s']:.1f} s, the whole command); then, with no job "
        f"running, {args.rows * args.rounds:,} row changes in {TRANSACTION:,}-row transactions "
        f"({measured['backlog_s']:.1f} s): **{gib:.2f} GiB of binlog**. The job resumed from its checkpoint with "
        "`--available-now` at its defaults (`--max-offsets-per-trigger` 500000 binlog events).",
        "",
        f"Whole command {run.wall_s:.1f} s; **{len(run.commits)} micro-batches**; peak RSS "
        f"{run.peak_rss / 2**30:.2f} GiB, **peak PSS {run.peak_pss / 2**30:.2f} GiB**; Paimon table equals MariaDB "
        f"({measured['check'][0]:,} rows, sum of qty {measured['check'][1]:,}).",
        "",
        "| Batch | Events | Rows | Seconds | Read/parse/plan | Write | Commit | Maintenance | Committed at (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for b in run.commits:
        lines.append(
            f"| {b['batch']} | {b['events']:,} | {b['rows']:,} | {b['seconds']} | {b['read_parse_plan_s']} "
            f"| {b['write_s']} | {b['commit_s']} | {b['maintenance_s']} | {b['at_s']:.1f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5, help="times every row is updated while the job is away")
    parser.add_argument("--pad", type=int, default=900, help="characters of the padding column (~row size)")
    args = parser.parse_args()
    measured: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-backlog-") as tmp:
        db = LocalMariaDB(f"{tmp}/mariadb")
        try:
            db.execute("CREATE DATABASE shop")
            ddl = DDL.replace("TIMESTAMP(3) NULL\n)", "TIMESTAMP(3) NULL, pad VARCHAR(4000)\n)")
            db.execute(ddl.format(t="orders"), database="shop")
            _load(db, args.rows, args.pad)
            warehouse, checkpoint = f"{tmp}/wh", f"{tmp}/cp"
            measured["snapshot_s"] = _job(db, warehouse, checkpoint).wall_s
            before = _binlog_bytes(db)
            measured["backlog_s"] = _backlog(db, args.rows, args.rounds)
            measured["binlog"] = _binlog_bytes(db) - before
            measured["run"] = _job(db, warehouse, checkpoint)
            measured["check"] = _check(db, warehouse)
        finally:
            db.close()
    write_report(_report(args, measured), "backlog-")


if __name__ == "__main__":
    main()
