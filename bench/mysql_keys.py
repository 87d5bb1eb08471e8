"""``make bench-mysql-keys``: the snapshot of a UUID-keyed table beside the same table keyed by an integer (#27).

    python -m bench.mysql_keys [--rows 5000000] [--repeat 3] [--keys int,uuid]

A private MariaDB gets a table of ``--rows`` rows per key kind, with the same ten columns as
``bench.mysql``'s: ``orders_int`` keyed by BIGINT (split by key arithmetic), ``orders_uuid`` keyed by a
VARCHAR(36) UUID in the server's default collation (split where the server's order puts a chunk's
rows, ``ingest.mysql.key_chunks``) and, with ``--keys int,tenant``, ``orders_tenant`` keyed by
``(tenant INT, id BIGINT)`` where nine rows in ten have tenant 1 (split on the whole key,
``ingest.mysql.key_tuples``). Each is snapshotted by ``mysql-sync-table --available-now`` on local[2];
steady state = each key's median run (``--repeat`` runs per key, the kinds alternating) minus
the same command on an empty table. Reported: rows/s of each, each other key's speed as a ratio of
the integer one's (target ≥ 0.8x), and each key's peak memory over its runs (RSS and PSS of the
job's process tree; target ≤ 2 GB).

Results go to bench/results/mysql-keys-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time

from bench.mysql import DDL, ROOT, job_command
from bench.procs import PeakRss
from bench.results import write_report
from deploy.local_mariadb import LocalMariaDB

# A random-looking v4-shaped UUID per row, from the MD5 of its number: reproducible, and spread over
# the whole key space like uuid4() keys.
UUID_SQL = (
    "CONCAT_WS('-', SUBSTR(h, 1, 8), SUBSTR(h, 9, 4), CONCAT('4', SUBSTR(h, 14, 3)), "
    "CONCAT(ELT(1 + CONV(SUBSTR(h, 17, 1), 16, 10) % 4, '8', '9', 'a', 'b'), SUBSTR(h, 18, 3)), SUBSTR(h, 21, 12))"
)


# Per key kind: the table's DDL from ``bench.mysql.DDL``, the key columns' SELECT expressions over the
# sequence, and their names (the load is sorted by them).
KINDS: dict[str, tuple[str, str, str]] = {
    "int": (DDL, "seq AS k", "k"),
    "uuid": (DDL.replace("id BIGINT", "id VARCHAR(36)"), f"{UUID_SQL} AS k", "k"),
    "tenant": (
        DDL.replace("id BIGINT PRIMARY KEY", "tenant INT NOT NULL, id BIGINT NOT NULL").replace(
            "TIMESTAMP(3) NULL\n)", "TIMESTAMP(3) NULL,\n    PRIMARY KEY (tenant, id)\n)"
        ),
        "IF(seq % 10 = 0, 2 + seq % 50, 1) AS tenant, seq AS k",
        "tenant, k",
    ),
}


def _load(db: LocalMariaDB, table: str, rows: int, kind: str) -> None:
    """``rows`` rows made by the server itself (MariaDB's SEQUENCE engine), in one statement sorted by
    the key, so InnoDB appends to its clustered index instead of splitting pages at random."""
    _ddl, key, order = KINDS[kind]
    conn = db.connect("shop")
    conn.autocommit(True)
    with conn.cursor() as cur:
        cur.execute(
            f"INSERT INTO {table} SELECT {key}, CONCAT('customer-', seq), (seq % 100000) + (seq % 100) / 100, "
            "seq % 1000, '2024-05-01 12:00:00.123', 'paid', 'a note of moderate length for every order row', "
            f"seq % 2, RAND(seq), '2024-05-01 10:00:00.456' "
            f"FROM (SELECT seq, MD5(seq) AS h FROM seq_0_to_{rows - 1}) s ORDER BY {order}"
        )
    conn.close()


def _job(db: LocalMariaDB, warehouse: str, table: str, checkpoint: str) -> tuple[float, int, int]:
    """The job's seconds and its process tree's peak RSS and PSS."""
    argv, env = job_command(db, warehouse, table, checkpoint)
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with PeakRss(proc.pid, interval=0.5) as peak:
        _out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(err[-3000:])
    return time.monotonic() - started, peak.peak, peak.peak_pss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000, help="the performance issue asks for 5M rows")
    parser.add_argument("--repeat", type=int, default=3, help="snapshot jobs per key, run alternately")
    parser.add_argument("--keys", default="int,uuid", help=f"key kinds, the first the baseline: {', '.join(KINDS)}")
    args = parser.parse_args()
    kinds = args.keys.split(",")
    if len(kinds) < 2 or not set(kinds) <= set(KINDS):
        parser.error(f"--keys: two or more of {', '.join(KINDS)}")
    with tempfile.TemporaryDirectory(prefix="bench-mysql-keys-") as tmp:
        db = LocalMariaDB(f"{tmp}/mariadb")
        try:
            db.execute("CREATE DATABASE shop")
            for kind in kinds:
                ddl = KINDS[kind][0]
                db.execute(ddl.format(t=f"orders_{kind}"), ddl.format(t=f"empty_{kind}"), database="shop")
            started = time.monotonic()
            for kind in kinds:
                _load(db, f"orders_{kind}", args.rows, kind)
            loaded = time.monotonic() - started
            empties = {k: _job(db, f"{tmp}/wh-e-{k}", f"empty_{k}", f"{tmp}/cp-e-{k}") for k in kinds}
            fulls: dict[str, list[tuple[float, int, int]]] = {k: [] for k in kinds}
            # Alternated (int, uuid, int, uuid, ...): this host's speed drifts by tens of percent over
            # minutes, and two back-to-back blocks of one key each would put the drift into the ratio.
            for r in range(args.repeat):
                for kind in kinds:
                    fulls[kind].append(_job(db, f"{tmp}/wh-{kind}-{r}", f"orders_{kind}", f"{tmp}/cp-{kind}-{r}"))
        finally:
            db.close()
    load = os.getloadavg()
    runs = {}
    for kind in kinds:
        seconds = statistics.median(f[0] for f in fulls[kind])
        full = (seconds, max(f[1] for f in fulls[kind]), max(f[2] for f in fulls[kind]))
        runs[kind] = (empties[kind], full, args.rows / max(seconds - empties[kind][0], 1e-9))
    base = kinds[0]
    lines = [
        f"# bench-mysql-keys: snapshot of tables keyed by {', '.join(kinds)}",
        "",
        f"`python -m bench.mysql_keys --rows {args.rows} --repeat {args.repeat} --keys {args.keys}`; MariaDB loaded "
        f"in {loaded:.0f} s; load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
        "",
        f"Snapshot jobs run alternately, {', '.join(kinds)}, {args.repeat} time(s) each: each key's median job "
        "time, and the peak memory of all its runs",
        "",
        "| Key | Empty job | Snapshot job (median) | Steady rows/s | Peak RSS | Peak PSS |",
        "|---|---|---|---|---|---|",
    ]
    for kind, (empty, full, rate) in runs.items():
        lines.append(
            f"| {kind} | {empty[0]:.1f} s | {full[0]:.1f} s | {rate:,.0f} | {full[1] / 2**30:.2f} GiB "
            f"| {full[2] / 2**30:.2f} GiB |"
        )
    lines.append("")
    lines += [f"{k} key / {base} key: **{runs[k][2] / runs[base][2]:.2f}x** (target ≥ 0.8x)" for k in kinds[1:]]
    lines += ["", f"| Round | {' | '.join(f'{k} job' for k in kinds)} |", "|---|" + "---|" * len(kinds)]
    lines += [f"| {r + 1} | {' | '.join(f'{fulls[k][r][0]:.1f} s' for k in kinds)} |" for r in range(args.repeat)]
    write_report(lines, prefix="mysql-keys-")


if __name__ == "__main__":
    main()
