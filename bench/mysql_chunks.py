"""One snapshot chunk's read time in-process (#27): ``ingest.mysql.snapshot.read_chunk`` reading
its SELECT as text (the default) and through pymysql's decoders (``as_text=False``), alternately,
by this process's CPU seconds (the machine is shared), beside the one-process pymysql read of the same
rows (wall time); and whether both give the same chunk rows.

    python -m bench.mysql_chunks [--rows 131072] [--chunk 32768] [--rounds 3]

No Spark: the figures are the read task's own work (connection, watermarks, SELECT, normalizing,
Arrow chunks), without the writer. Printed, not written to bench/results.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import pyarrow as pa

from bench.mysql import DDL, _floor_snapshot, _load
from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.mysql.client import MySqlConnection
from ingest.mysql.snapshot import read_chunk
from ingest.mysql.spec import Chunk, ChunkPartition, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from sinks.write.chunk_format import deserialize_batch


def _chunks(spec: MySqlSourceSpec, rows: int, size: int, as_text: bool) -> tuple[float, list[Any]]:
    started = time.process_time()
    out: list[pa.RecordBatch] = []
    for i, lo in enumerate(range(0, rows, size)):
        out.extend(read_chunk(spec, ChunkPartition(i, Chunk("shop", "orders", lo, lo + size)), as_text))
    return time.process_time() - started, out


def _data(batches: list[pa.RecordBatch]) -> list[Any]:
    return [(r["table"], r["rows"], deserialize_batch(r["data"]).to_pylist() if r["data"] else None)
            for b in batches for r in b.to_pylist()]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=131_072)
    parser.add_argument("--chunk", type=int, default=32_768)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with LocalMariaDB() as db:
        db.execute("CREATE DATABASE shop", DDL.format(t="shop.orders"))
        _load(db, "orders", args.rows)
        conn = MySqlConnection("127.0.0.1", db.port, "root", ROOT_PASSWORD, 10)
        spec = MySqlSourceSpec(conn, "shop", "orders", "initial", ParseSpec("mysql", TableRouter("ods")), "/tmp")
        text_s, text = _chunks(spec, args.rows, args.chunk, True)
        decoded_s, decoded = _chunks(spec, args.rows, args.chunk, False)
        print("same chunk rows:", _data(text) == _data(decoded))
        for r in range(args.rounds):
            floor_s, n = _floor_snapshot(db, "orders")
            text_s, _ = _chunks(spec, args.rows, args.chunk, True)
            decoded_s, _ = _chunks(spec, args.rows, args.chunk, False)
            print(f"round {r + 1}: floor {n / floor_s:,.0f} rows/s; CPU of this process: as text {text_s:.2f} s,"
                  f" decoded {decoded_s:.2f} s;"
                  f" load {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
