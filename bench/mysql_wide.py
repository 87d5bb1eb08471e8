"""``make bench-mysql``, last part: the snapshot of a 1,000-column table (#27: chunks bounded by bytes).

    python -m bench.mysql_wide [--columns 1000] [--rows 20000] [--repeat 2]

A private MariaDB gets ``shop.wide``: a BIGINT key and ``--columns`` - 1 columns cycling INT, DOUBLE,
VARCHAR(12), DATETIME and DECIMAL(10,2) (latin1), ``--rows`` rows made by the server itself, and
``shop.wide_one`` with the same columns and one row. Measured alternately, ``--repeat`` times:

- floor: one pymysql process reading the whole table (unbuffered cursor), as ``bench.mysql``'s;
- lakecdc: ``mysql-sync-table --available-now`` on local[2], a new warehouse and checkpoint each run,
  minus the same command on the one-row table (start-up, also run each round); its process tree's
  peak memory, and the snapshot chunks it committed (their key ranges from its chunk registry, counted).

Beside them: the chunks ``chunk.size`` alone would give, and each chunk's stored bytes as the server
estimates them (information_schema's AVG_ROW_LENGTH x rows) and their values (rows x columns), the two
things ``ingest.mysql.key_chunks`` bounds.
Each run's Paimon table is checked against MariaDB (rows and the sum of a column, with pypaimon-rust).

Results go to bench/results/mysql-wide-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from bench.mysql import ROOT, _floor_snapshot, job_command
from bench.procs import PeakRss
from bench.results import write_report
from deploy.local_mariadb import LocalMariaDB
from ingest.mysql.key_chunks import CHUNK_MAX_BYTES, CHUNK_MAX_VALUES
from ingest.mysql.snapshot import SnapshotRegistry
from ingest.mysql.spec import DEFAULT_CHUNK_SIZE

# Each column kind with the server-side expression of its value in row ``seq``, column ``{i}``.
KINDS: tuple[tuple[str, str], ...] = (
    ("INT", "seq % 100000 + {i}"),
    ("DOUBLE", "RAND(seq) * {i}"),
    ("VARCHAR(12)", "CONCAT('v', seq % 9973, '-', {i})"),
    ("DATETIME", "'2024-05-01 12:00:00' + INTERVAL (seq % 86400) SECOND"),
    ("DECIMAL(10,2)", "(seq % 100000) / 100 + {i}"),
)


@dataclass
class WideRun:
    seconds: float
    peak_rss: int
    peak_pss: int
    chunk_rows: list[int]


def _create(db: LocalMariaDB, columns: int, rows: int) -> None:
    kinds = [KINDS[i % len(KINDS)] for i in range(1, columns)]
    body = ", ".join(f"c{i:04d} {kind}" for i, (kind, _) in enumerate(kinds, 1))
    values = ", ".join(expr.format(i=i) for i, (_, expr) in enumerate(kinds, 1))
    db.execute("CREATE DATABASE shop")
    for table in ("wide", "wide_one"):
        db.execute(f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, {body}) CHARACTER SET latin1", database="shop")
    db.execute(
        f"INSERT INTO wide SELECT seq, {values} FROM seq_0_to_{rows - 1}",
        f"INSERT INTO wide_one SELECT seq, {values} FROM seq_0_to_0",
        "ANALYZE TABLE wide, wide_one",  # the row length estimate a long-lived table has
        database="shop",
    )


def _avg_row_length(db: LocalMariaDB) -> int:
    conn = db.connect("shop")
    with conn.cursor() as cur:
        cur.execute(
            "SELECT AVG_ROW_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'wide'"
        )
        length = int(cur.fetchone()[0])
    conn.close()
    return length


def _job(db: LocalMariaDB, tmp: str, table: str, run: int) -> WideRun:
    """``mysql-sync-table --available-now`` of shop.``table`` into a new warehouse and checkpoint."""
    warehouse, checkpoint = f"{tmp}/wh-{table}-{run}", f"{tmp}/cp-{table}-{run}"
    argv, env = job_command(db, warehouse, table, checkpoint)
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with PeakRss(proc.pid, interval=0.5) as peak:
        _out, err = proc.communicate()
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(err[-3000:])
    _check(db, warehouse, table)
    return WideRun(seconds, peak.peak, peak.peak_pss, _chunk_rows(db, checkpoint, table))


def _chunk_rows(db: LocalMariaDB, checkpoint: str, table: str) -> list[int]:
    """The rows of each snapshot chunk the job committed (its chunk registry's key ranges, counted)."""
    chunks = SnapshotRegistry(checkpoint).by_table()[f"shop.{table}"]
    conn = db.connect("shop")
    out = []
    with conn.cursor() as cur:
        for lo, hi, _file, _pos in chunks:
            cur.execute(
                f"SELECT COUNT(*) FROM {table} WHERE (%s IS NULL OR id >= %s) AND (%s IS NULL OR id < %s)",
                (lo, lo, hi, hi),
            )
            out.append(int(cur.fetchone()[0]))
    conn.close()
    return out


def _check(db: LocalMariaDB, warehouse: str, table: str) -> None:
    """The Paimon table holds MariaDB's rows (count, and the sum of the first INT column)."""
    from pypaimon_rust.datafusion import PaimonCatalog

    paimon = PaimonCatalog({"warehouse": warehouse}).get_table(f"ods.{table}")
    builder = paimon.new_read_builder()
    column = pa.Table.from_batches(builder.new_read().read(builder.new_scan().plan().splits())).column("c0005")
    got = (len(column), int(pc.sum(column).as_py() or 0))
    conn = db.connect("shop")
    with conn.cursor() as cur:
        cur.execute(f"SELECT COUNT(*), SUM(c0005) FROM {table}")
        count, total = cur.fetchone()
    conn.close()
    if got != (int(count), int(total)):
        raise AssertionError(f"ods.{table} holds {got} (rows, sum of c0005), MariaDB {(count, total)}")


def _report(
    args: argparse.Namespace, avg: int, floors: list[float], runs: list[WideRun], ones: list[WideRun]
) -> list[str]:
    floor_s = statistics.median(floors)
    job_s = statistics.median(r.seconds for r in runs)
    one_s = statistics.median(r.seconds for r in ones)
    steady = job_s - one_s
    floor_rate = args.rows / floor_s
    # a table read faster than the start-up's own spread has no steady state to speak of
    rate = args.rows / steady if steady > 1.0 else float("nan")
    chunks = runs[0].chunk_rows
    alone = -(-args.rows // DEFAULT_CHUNK_SIZE)
    biggest = min(args.rows, DEFAULT_CHUNK_SIZE)
    most = max(chunks, default=0)
    return [
        f"# bench-mysql-wide: snapshot of a {args.columns}-column table",
        "",
        f"`python -m bench.mysql_wide --columns {args.columns} --rows {args.rows} --repeat {args.repeat}`; load "
        f"average at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}",
        "",
        f"MariaDB 10.11 on loopback; `shop.wide`: a BIGINT key and {args.columns - 1} INT, DOUBLE, VARCHAR(12), "
        f"DATETIME and DECIMAL(10,2) columns in turn, {args.rows:,} rows, AVG_ROW_LENGTH {avg:,} bytes. Floor and "
        f"job run alternately, {args.repeat} time(s) each (medians); steady state = job minus the same command on a "
        "one-row table of the same columns. Every run's Paimon table was checked against MariaDB.",
        "",
        "| Run | Seconds | Rows/s | Values/s | vs floor |",
        "|---|---|---|---|---|",
        f"| floor: pymysql full-table read, one process | {floor_s:.1f} | {floor_rate:,.0f} "
        f"| {floor_rate * args.columns:,.0f} | 1.00x |",
        f"| lakecdc snapshot, steady state | {steady:.1f} | {rate:,.0f} | {rate * args.columns:,.0f} "
        f"| {rate / floor_rate:.2f}x |",
        f"| lakecdc snapshot, whole command | {job_s:.1f} | {args.rows / job_s:,.0f} | | |",
        f"| start-up (one-row table) | {one_s:.1f} | | | |",
        "",
        f"Chunks read: **{len(chunks)}**, at most **{most:,} rows** ({most * args.columns:,} values, "
        f"~{most * avg / 2**20:.0f} MiB stored; the bounds are {CHUNK_MAX_VALUES:,} values and "
        f"{CHUNK_MAX_BYTES >> 20} MiB); chunk.size alone ({DEFAULT_CHUNK_SIZE:,} rows) would give {alone} chunk(s) "
        f"of up to {biggest:,} rows (~{biggest * avg / 2**20:.0f} MiB stored).",
        "",
        f"Peak memory of the job's process tree over its {args.repeat} runs: RSS "
        f"**{max(r.peak_rss for r in runs) / 2**30:.2f} GiB**, PSS **{max(r.peak_pss for r in runs) / 2**30:.2f} GiB** "
        f"(one-row table: {max(r.peak_pss for r in ones) / 2**30:.2f} GiB PSS).",
        "",
        "| Round | Floor | One-row job | Job | Chunks | Peak PSS |",
        "|---|---|---|---|---|---|",
        *(
            f"| {i + 1} | {f:.1f} s | {o.seconds:.1f} s | {r.seconds:.1f} s | {len(r.chunk_rows)} "
            f"| {r.peak_pss / 2**30:.2f} GiB |"
            for i, (f, o, r) in enumerate(zip(floors, ones, runs, strict=True))
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--columns", type=int, default=1000, help="#27 names a 1,000-column table")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2, help="floor and job runs, alternately")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mysql-wide-") as tmp:
        db = LocalMariaDB(f"{tmp}/mariadb")
        try:
            _create(db, args.columns, args.rows)
            avg = _avg_row_length(db)
            floors: list[float] = []
            ones: list[WideRun] = []
            runs: list[WideRun] = []
            for r in range(args.repeat):
                floor_s, n = _floor_snapshot(db, "wide")
                assert n == args.rows, (n, args.rows)
                floors.append(floor_s)
                ones.append(_job(db, tmp, "wide_one", r))
                runs.append(_job(db, tmp, "wide", r))
        finally:
            db.close()
    write_report(_report(args, avg, floors, runs, ones), "mysql-wide-")


if __name__ == "__main__":
    main()
