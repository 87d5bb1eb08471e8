"""``make bench-maintenance``: what table maintenance buys and costs over a long stream of commits.

    python -m bench.maintenance [--commits 1000] [--rows 200]

The same stream of small commits (pypaimon-rust, as a sync job writes them: inserts and -U/+U
updates over 20k keys, 2 buckets) goes into one table per mode:

- none: no maintenance (what a table got before lakecdc compacted);
- mor: Paimon's default universal compaction after each commit, plus snapshot expiry;
- cow: ``full-compaction.delta-commits=1`` (one file per bucket after every commit), plus expiry;
- mow: ``deletion-vectors.enabled=true`` (readers skip level 0 and merge nothing; level 0 lifted
  after every commit, the older rows of its keys marked in deletion vectors), plus expiry;
- lookup: ``changelog-producer=lookup`` (level 0 lifted after every commit, writing that commit's
  changelog from the bucket's upper levels), plus expiry;
- full-changelog: ``changelog-producer=full-compaction`` with ``full-compaction.delta-commits=1``
  (COW that also writes the changelog of each full compaction), plus expiry.

Reported per mode: the time to read the whole table and to commit, at the end; the maintenance
time per commit; files and manifests the table reads; bytes on disk. Results go to
bench/results/maintenance-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from bench.results import write_report
from schema_evolution.types import bigint, int_, varchar
from sinks.compaction import compactor
from sinks.lifecycle import expire
from sinks.store import manifests, tables
from sinks.table.catalog import Catalog

KEYS = 20_000
MODES: dict[str, dict[str, str]] = {
    "none": {"write-only": "true"},
    "mor": {"snapshot.time-retained": "10 s"},
    "cow": {"full-compaction.delta-commits": "1", "snapshot.time-retained": "10 s"},
    "mow": {"deletion-vectors.enabled": "true", "snapshot.time-retained": "10 s"},
    "lookup": {"changelog-producer": "lookup", "snapshot.time-retained": "10 s"},
    "full-changelog": {
        "changelog-producer": "full-compaction",
        "full-compaction.delta-commits": "1",
        "snapshot.time-retained": "10 s",
    },
}


def _batch(rng: random.Random, known: dict[int, int], rows: int, batch: int) -> pa.RecordBatch:
    ids: list[int] = []
    names: list[str] = []
    qty: list[int] = []
    kinds: list[int] = []
    while len(ids) < rows:
        key = rng.randrange(KEYS)
        if key in known:
            ids += [key, key]
            names += [f"n{key}", f"n{key}"]
            qty += [known[key], batch]
            kinds += [1, 2]
        else:
            ids.append(key)
            names.append(f"n{key}")
            qty.append(batch)
            kinds.append(0)
        known[key] = batch
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int32()), pa.array(names), pa.array(qty, pa.int64()), pa.array(kinds, pa.int8())],
        names=["id", "name", "qty", "_VALUE_KIND"],
    )


def _read_seconds(wh: str) -> tuple[float, tuple[int, int]]:
    """Median time of a full-table aggregate, and its result (row count, sum of qty)."""
    from pypaimon_rust.datafusion import SQLContext

    times = []
    result = (0, 0)
    for _ in range(3):
        ctx = SQLContext()
        ctx.register_catalog("p", {"warehouse": wh}, "db")
        started = time.perf_counter()
        table = pa.Table.from_batches(ctx.sql("SELECT count(*) AS n, sum(qty) AS q FROM t"))
        times.append(time.perf_counter() - started)
        result = (int(table.column(0)[0].as_py()), int(table.column(1)[0].as_py()))
    return statistics.median(times), result


def run_mode(root: Path, mode: str, commits: int, rows: int) -> dict[str, Any]:
    from pypaimon_rust.datafusion import PaimonCatalog

    wh = str(root / mode)
    options = {"changelog-producer": "input", "bucket": "2", **MODES[mode]}
    Catalog(wh).create_table("db.t", [("id", int_()), ("name", varchar(20)), ("qty", bigint())], ["id"], [], options)
    rng, known = random.Random(1), dict[int, int]()
    commit_s: list[float] = []
    maintenance_s: list[float] = []
    commit_counter = 0
    for batch in range(commits):
        table = PaimonCatalog({"warehouse": wh}).get_table("db.t")
        builder = table.new_stream_write_builder().with_commit_user("bench")
        write = builder.new_write()
        write.write_arrow(_batch(rng, known, rows, batch))
        messages = write.prepare_commit(True, batch)
        commit = builder.new_commit()
        started = time.perf_counter()
        commit.filter_and_commit({batch: messages})
        commit_s.append(time.perf_counter() - started)
        commit.close()
        if mode != "none":
            started = time.perf_counter()
            commit_counter += 1
            every = int(MODES[mode].get("full-compaction.delta-commits", "0"))
            full = bool(every) and commit_counter % every == 0
            compactor.compact(wh, {}, "db.t", "bench", batch, full=full)
            expire.expire_snapshots(wh, {}, "db.t")
            maintenance_s.append(time.perf_counter() - started)
    read_s, row_count = _read_seconds(wh)
    paimon_table = tables.open_table(wh, {}, "db.t")
    files = sum(len(m) for m in manifests.live_files(paimon_table).values())
    manifest_count = len(manifests.snapshot_manifests(paimon_table, tables.latest_snapshot(paimon_table)))
    disk = sum(p.stat().st_size for p in Path(wh).rglob("*") if p.is_file())
    tail = commit_s[-100:]
    return {
        "mode": mode,
        "read_s": read_s,
        "rows": row_count,
        "commit_first_ms": 1000 * statistics.mean(commit_s[:100]),
        "commit_last_ms": 1000 * statistics.mean(tail),
        "maintenance_ms": 1000 * statistics.mean(maintenance_s) if maintenance_s else 0.0,
        "files": files,
        "manifests": manifest_count,
        "snapshots": len(paimon_table.snapshot_manager().list_snapshots()),
        "disk_mb": disk / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-maint-") as tmp:
        for mode in MODES:
            started = time.monotonic()
            result = run_mode(Path(tmp), mode, args.commits, args.rows)
            result["wall_s"] = time.monotonic() - started
            results.append(result)
            print(result, flush=True)
    base = results[0]
    lines = [
        f"# Maintenance benchmark, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"{args.commits} commits of {args.rows} changes (inserts and -U/+U updates over {KEYS} keys), 2 buckets,"
        " one process; read = `SELECT count(*), sum(qty)` through pypaimon-rust (median of 3); every mode"
        f" gave the same result {base['rows']}.",
        "",
        "| Mode | Read (s) | vs none | Commit, first 100 (ms) | Commit, last 100 (ms) | Maintenance per commit (ms)"
        " | Files read | Manifests | Snapshots | Disk (MiB) | Wall (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        assert r["rows"] == base["rows"], f"modes disagree on the table's contents: {r['rows']} vs {base['rows']}"
        lines.append(
            f"| {r['mode']} | {r['read_s']:.3f} | {r['read_s'] / base['read_s']:.2f}x | {r['commit_first_ms']:.1f} "
            f"| {r['commit_last_ms']:.1f} | {r['maintenance_ms']:.1f} | {r['files']} | {r['manifests']} "
            f"| {r['snapshots']} | {r['disk_mb']:.1f} | {r['wall_s']:.0f} |"
        )
    write_report(lines, "maintenance-")


if __name__ == "__main__":
    main()
