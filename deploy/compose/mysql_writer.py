"""Keeps changing the compose stack's ``shop`` tables: new orders, status changes, cancellations and
customer moves, so that ``mysql-sync-database`` has a stream of inserts, updates and deletes.

    python -m deploy.compose.mysql_writer --host mysql --password lakecdc [--iterations 0] [--interval 0.5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import time
from pathlib import Path

import pymysql

STATUSES = ("new", "paid", "shipped", "delivered")
CITIES = ("London", "Paris", "Berlin", "Lisbon", "Oslo", "Boston")


def connect(args: argparse.Namespace, timeout_s: float = 120.0) -> pymysql.connections.Connection:
    """A connection to ``shop``, waiting for the server (it may still be starting)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return pymysql.connect(
                host=args.host, port=args.port, user=args.user, password=args.password, database="shop",
                autocommit=True,
            )  # fmt: skip
        except pymysql.err.OperationalError as exc:
            if time.monotonic() > deadline:
                raise SystemExit(f"mysql_writer: MySQL at {args.host}:{args.port} not reachable: {exc}") from None
            time.sleep(1)


def step(cur: pymysql.cursors.Cursor, rnd: random.Random) -> None:
    """One change: mostly new orders and status changes, sometimes a cancellation or a move."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    roll = rnd.random()
    if roll < 0.4:
        cur.execute(
            "INSERT INTO orders (customer_id, amount, status, updated_at) VALUES (%s, %s, 'new', %s)",
            (rnd.randint(1, 4), f"{rnd.randint(100, 99999) / 100:.2f}", now),
        )
    elif roll < 0.85:
        cur.execute("SELECT id, status FROM orders ORDER BY RAND() LIMIT 1")
        row = cur.fetchone()
        if row is not None and row[1] != STATUSES[-1]:
            status = STATUSES[STATUSES.index(row[1]) + 1]
            cur.execute("UPDATE orders SET status = %s, updated_at = %s WHERE id = %s", (status, now, row[0]))
    elif roll < 0.95:
        cur.execute("DELETE FROM orders WHERE status = 'new' ORDER BY RAND() LIMIT 1")
    else:
        cur.execute("UPDATE customers SET city = %s WHERE id = %s", (rnd.choice(CITIES), rnd.randint(1, 4)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="mysql")
    ap.add_argument("--port", type=int, default=3306)
    ap.add_argument("--user", default="root")
    ap.add_argument("--password", default="lakecdc")
    ap.add_argument("--iterations", type=int, default=0, help="changes to make; 0: keep going")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between changes")
    ap.add_argument("--ready-file", default="/tmp/writer-ready", help="touched after the first change")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    conn = connect(args)
    done = 0
    with conn.cursor() as cur:
        while args.iterations == 0 or done < args.iterations:
            step(cur, rnd)
            done += 1
            if done == 1 and args.ready_file:
                Path(args.ready_file).touch()
            if args.interval:
                time.sleep(args.interval)
    conn.close()
    print(f"mysql_writer: {done} changes made", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
