"""``make bench-mysql``: the MySQL source's snapshot and binlog throughput beside their floors.

    python -m bench.mysql [--rows 2000000] [--updates 100000]

A private MariaDB (as the tests start it) gets a 10-column table. Measured in one run:

- floor, snapshot: one plain pymysql process reading the whole table (unbuffered cursor);
- lakecdc snapshot: ``mysql-sync-table --available-now`` on local[2], minus the same command on an
  empty table (Spark and job start-up);
- floor, binlog: mysql-replication decoding the update events alone, one process;
- lakecdc binlog: the same job continuing from its checkpoint over those updates, minus a run with
  nothing to read.

Results go to bench/results/mysql-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.results import write_report
from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.mysql.client import MySqlConnection, connect, master_status

ROOT = Path(__file__).resolve().parent.parent
DDL = """CREATE TABLE {t} (
    id BIGINT PRIMARY KEY, name VARCHAR(64), amount DECIMAL(12, 2), qty INT, updated DATETIME(3),
    status VARCHAR(16), note TEXT, flag TINYINT(1), score DOUBLE, created TIMESTAMP(3) NULL
)"""


def _load(db: LocalMariaDB, table: str, rows: int) -> None:
    rng = random.Random(1)
    conn = db.connect("shop")
    with conn.cursor() as cur:
        for start in range(0, rows, 5000):
            cur.executemany(
                f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        i,
                        f"customer-{i}",
                        f"{rng.randrange(100000)}.{rng.randrange(100):02d}",
                        rng.randrange(1000),
                        "2024-05-01 12:00:00.123",
                        rng.choice(["new", "paid", "shipped"]),
                        "a note of moderate length for every order row",
                        i % 2,
                        rng.random(),
                        "2024-05-01 10:00:00.456",
                    )
                    for i in range(start, min(rows, start + 5000))
                ],
            )
    conn.close()


def _floor_snapshot(db: LocalMariaDB, table: str) -> tuple[float, int]:
    import pymysql.cursors

    conn = db.connect("shop", cursorclass=pymysql.cursors.SSCursor)
    started = time.perf_counter()
    n = 0
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM {table}")
        for _ in cur:
            n += 1
    conn.close()
    return time.perf_counter() - started, n


def _floor_binlog(db: LocalMariaDB, start: tuple[str, int], end: tuple[str, int]) -> tuple[float, int]:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import UpdateRowsEvent

    settings = MySqlConnection("127.0.0.1", db.port, "root", ROOT_PASSWORD).replication_settings()
    stream = BinLogStreamReader(
        connection_settings=settings,
        server_id=999,
        resume_stream=True,
        log_file=start[0],
        log_pos=start[1],
        blocking=False,
        only_events=[UpdateRowsEvent],
    )
    started = time.perf_counter()
    n = 0
    for event in stream:
        n += len(event.rows)
        if (stream.log_file, event.packet.log_pos) >= end:
            break
    stream.close()
    return time.perf_counter() - started, n


def job_command(db: LocalMariaDB, warehouse: str, table: str, checkpoint: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of ``mysql-sync-table --available-now`` of shop.``table``."""
    argv = [sys.executable, "-m", "ingest", "mysql_sync_table", "--warehouse", warehouse, "--database", "ods"]
    argv += ["--table", table, "--available-now", "--checkpoint", checkpoint, "--spark-conf", "spark.master=local[2]"]
    for k, v in db.mysql_conf(**{"database-name": "shop", "table-name": table}).items():
        if k != "password":
            argv += ["--mysql_conf", f"{k}={v}"]
    return argv, {**os.environ, "LAKECDC_LOG_LEVEL": "WARNING", "LAKECDC_MYSQL_PASSWORD": ROOT_PASSWORD}


def _job(db: LocalMariaDB, warehouse: str, table: str, checkpoint: str, tasks: str | None = None) -> float:
    """The job's seconds; ``tasks`` sets the binlog read tasks (LAKECDC_BINLOG_READ_TASKS; default: one
    per core)."""
    argv, env = job_command(db, warehouse, table, checkpoint)
    env.pop("LAKECDC_BINLOG_READ_TASKS", None)
    if tasks is not None:
        env["LAKECDC_BINLOG_READ_TASKS"] = tasks
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return time.monotonic() - started


def _small_transactions(db: LocalMariaDB, table: str, rows: int, per: int) -> None:
    """``rows`` row updates in transactions of ``per`` rows (without a log flush per commit)."""
    db.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
    conn = db.connect("shop")
    conn.autocommit(True)
    with conn.cursor() as cur:
        cur.executemany(
            f"UPDATE {table} SET qty = qty + 1 WHERE id BETWEEN %s AND %s",
            [(i, i + per - 1) for i in range(0, rows, per)],
        )
    conn.close()
    db.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 1")


def _parallel_binlog(db: LocalMariaDB, tmp: str, updates: int, rounds: int) -> list[str]:
    """The parallel binlog workloads (#27): ``updates`` rows changed by one statement, then by
    transactions of 10 rows; each against mysql-replication's one-process decode-only floor of the same
    range, and lakecdc split over the cores (default) against one read task, run alternately."""
    table = "upd"
    db.execute(DDL.format(t=f"shop.{table}"))
    _load(db, table, updates)
    wh = f"{tmp}/wh-par"
    for ck in ("ck-split", "ck-one"):
        _job(db, wh + ck, table, f"{tmp}/{ck}")
    idle = _job(db, f"{tmp}/wh", "empty", f"{tmp}/ck-empty")
    conn = MySqlConnection("127.0.0.1", db.port, "root", ROOT_PASSWORD)
    out = [f"| start-up (nothing to read) | {idle:.1f} | | |"]
    for name in ("one 100k-row statement", "transactions of 10 rows"):
        for r in range(rounds):
            with connect(conn) as c:
                before = master_status(c)
            if name.startswith("one"):
                db.execute(f"UPDATE shop.{table} SET qty = qty + 1 WHERE id < {updates}")
            else:
                _small_transactions(db, table, updates, 10)
            with connect(conn) as c:
                after = master_status(c)
            floor_s, floor_rows = _floor_binlog(db, before, after)
            floor = floor_rows / floor_s
            out.append(
                f"| {name}, round {r + 1}: floor, mysql-replication one process | {floor_s:.1f} "
                f"| {floor:,.0f} | 1.00x |"
            )
            # alternate which of the two runs first
            order = [("split over the cores", "ck-split", None), ("one read task", "ck-one", "1")]
            for label, ck, tasks in order if r % 2 == 0 else order[::-1]:
                run_s = _job(db, wh + ck, table, f"{tmp}/{ck}", tasks) - idle
                out.append(
                    f"| {name}, round {r + 1}: lakecdc, {label}, steady state | {run_s:.1f} "
                    f"| {floor_rows / run_s:,.0f} | {(floor_rows / run_s) / floor:.2f}x |"
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000, help="the performance issue asks for a 2M-row table")
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each parallel binlog workload")
    parser.add_argument("--only-binlog", action="store_true", help="the parallel binlog workloads only")
    parser.add_argument("--only-snapshot", action="store_true", help="the snapshot and its floor only")
    args = parser.parse_args()
    if args.only_snapshot:
        write_report(_only_snapshot(args), "mysql-")
        return
    if args.only_binlog:
        with tempfile.TemporaryDirectory(prefix="lakecdc-bench-mysql-") as tmp, LocalMariaDB() as db:
            db.execute("CREATE DATABASE shop", DDL.format(t="shop.empty"))
            _load(db, "empty", 1)
            parallel = _parallel_binlog(db, tmp, args.updates, args.rounds)
        write_report([*_parallel_head(args), *parallel], "mysql-")
        return
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-mysql-") as tmp, LocalMariaDB() as db:
        floor_s, floor_rows, base_s, snap_s = _snapshot_runs(db, tmp, args.rows)
        conn = MySqlConnection("127.0.0.1", db.port, "root", ROOT_PASSWORD)
        with connect(conn) as c:
            before = master_status(c)
        db.execute(f"UPDATE shop.orders SET qty = qty + 1 WHERE id < {args.updates}")
        with connect(conn) as c:
            after = master_status(c)
        floor_b_s, floor_b_rows = _floor_binlog(db, before, after)
        idle_s = _job(db, f"{tmp}/wh", "empty", f"{tmp}/ck-empty")
        binlog_s = _job(db, f"{tmp}/wh", "orders", f"{tmp}/ck")
        parallel = _parallel_binlog(db, tmp, args.updates, args.rounds)
    snap_steady = snap_s - base_s
    binlog_steady = binlog_s - idle_s
    lines = [
        f"# MySQL source benchmark, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"MariaDB 10.11 on loopback, 10-column table; {args.rows} rows snapshotted, then {args.updates} rows"
        " updated in one statement. lakecdc runs `mysql-sync-table --available-now` on local[2]; steady state ="
        " run minus the same command with (next to) nothing to read.",
        "",
        "| Run | Seconds | Rows/s | vs floor |",
        "|---|---|---|---|",
        f"| floor: pymysql full-table read, one process | {floor_s:.1f} | {floor_rows / floor_s:,.0f} | 1.00x |",
        f"| lakecdc snapshot, steady state | {snap_steady:.1f} | {args.rows / snap_steady:,.0f} "
        f"| {(args.rows / snap_steady) / (floor_rows / floor_s):.2f}x |",
        f"| lakecdc snapshot, whole command | {snap_s:.1f} | {args.rows / snap_s:,.0f} | |",
        f"| start-up (empty table) | {base_s:.1f} | | |",
        f"| floor: mysql-replication decoding the updates, one process | {floor_b_s:.1f} "
        f"| {floor_b_rows / floor_b_s:,.0f} | 1.00x |",
        f"| lakecdc binlog, steady state | {binlog_steady:.1f} | {args.updates / binlog_steady:,.0f} "
        f"| {(args.updates / binlog_steady) / (floor_b_rows / floor_b_s):.2f}x |",
        f"| lakecdc binlog, whole command | {binlog_s:.1f} | {args.updates / binlog_s:,.0f} | |",
        f"| start-up (nothing to read) | {idle_s:.1f} | | |",
        "",
        *_parallel_head(args),
        *parallel,
    ]
    write_report(lines, "mysql-")


def _snapshot_runs(db: LocalMariaDB, tmp: str, rows: int) -> tuple[float, int, float, float]:
    """Loads shop.orders (``rows`` rows) and shop.empty (1 row), then measures the floor's read of orders
    and the job on each: (floor seconds, floor rows, empty job seconds, orders job seconds)."""
    db.execute("CREATE DATABASE shop", DDL.format(t="shop.orders"), DDL.format(t="shop.empty"))
    _load(db, "orders", rows)
    _load(db, "empty", 1)
    floor_s, floor_rows = _floor_snapshot(db, "orders")
    base_s = _job(db, f"{tmp}/wh", "empty", f"{tmp}/ck-empty")
    return floor_s, floor_rows, base_s, _job(db, f"{tmp}/wh", "orders", f"{tmp}/ck")


def _only_snapshot(args: argparse.Namespace) -> list[str]:
    """The snapshot (#27's second target) against its floor, measured in one run."""
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-mysql-") as tmp, LocalMariaDB() as db:
        floor_s, floor_rows, base_s, snap_s = _snapshot_runs(db, tmp, args.rows)
    steady = snap_s - base_s
    load = os.getloadavg()
    return [
        *_parallel_head(args)[:2],
        f"MariaDB 10.11 on loopback, 10-column table of {args.rows} rows; `mysql-sync-table --available-now` on"
        f" local[2]; steady state = run minus the same command on a 1-row table. Load average at the end:"
        f" {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}.",
        "",
        "| Run | Seconds | Rows/s | vs floor |",
        "|---|---|---|---|",
        f"| floor: pymysql full-table read, one process | {floor_s:.1f} | {floor_rows / floor_s:,.0f} | 1.00x |",
        f"| lakecdc snapshot, steady state | {steady:.1f} | {args.rows / steady:,.0f} "
        f"| {(args.rows / steady) / (floor_rows / floor_s):.2f}x |",
        f"| lakecdc snapshot, whole command | {snap_s:.1f} | {args.rows / snap_s:,.0f} | |",
        f"| start-up (1-row table) | {base_s:.1f} | | |",
    ]


def _parallel_head(args: argparse.Namespace) -> list[str]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "ingest", "bench"], cwd=ROOT, capture_output=True,
                           text=True).stdout  # fmt: skip
    return [
        f"`python -m bench.mysql {' '.join(sys.argv[1:])}` at commit {commit.strip()}"
        f"{' (with uncommitted changes)' if dirty.strip() else ''}",
        "",
        f"Parallel binlog (#27): a {args.updates}-row table `upd`, {args.updates} rows changed by one UPDATE, then by"
        " UPDATEs of 10 rows each in autocommit; each range's floor decoded in the same round; lakecdc split over"
        " local[2]'s cores (the default) and with LAKECDC_BINLOG_READ_TASKS=1, alternately first.",
        "",
        "| Run | Seconds | Rows/s | vs floor |",
        "|---|---|---|---|",
    ]


if __name__ == "__main__":
    main()
