"""``make bench-lookup``: does a lookup compaction's cost follow the commit or the bucket?

    python -m bench.lookup [--keys 100000 1000000] [--commits 15]

One bucket is filled with N keys and fully compacted (one top-level file), then small commits
(200 changes: -U/+U updates of random keys) each get the compaction a sync job runs after a
commit. ``changelog-producer=lookup`` and the ``first-row`` engine both look each level-0 key up
in the upper levels. Every configuration runs twice in the same process: with the worker's file
cache at its default and with ``lookup.cache-max-memory-size=0`` (the floor: the upper level read
at every commit). MOW tables (``deletion-vectors.enabled=true``) look the keys up to mark their
older rows in deletion vectors; they run a third time compacting the bucket fully after each
commit, which is what lakecdc did for them before it wrote deletion vectors. Reported: the median
compaction time per commit. Results go to bench/results/lookup-<UTC time>.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from bench.results import write_report
from schema_evolution.types import bigint, int_, varchar
from sinks.compaction import compactor, lookup_cache
from sinks.table.catalog import Catalog

ROWS = 200


def _commit(wh: str, batch: int, data: pa.RecordBatch) -> None:
    from pypaimon_rust.datafusion import PaimonCatalog

    builder = PaimonCatalog({"warehouse": wh}).get_table("db.t").new_stream_write_builder().with_commit_user("bench")
    write = builder.new_write()
    write.write_arrow(data)
    messages = write.prepare_commit(True, batch)
    commit = builder.new_commit()
    commit.filter_and_commit({batch: messages})
    commit.close()


def _rows(ids: list[int], qty: list[int], kinds: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(ids, pa.int32()),
            pa.array([f"n{i}" for i in ids]),
            pa.array(qty, pa.int64()),
            pa.array(kinds, pa.int8()),
        ],
        names=["id", "name", "qty", "_VALUE_KIND"],
    )


def run(root: Path, engine: str, keys: int, commits: int, cache: bool, full: bool = False) -> float:
    """Median seconds of the compaction after each small commit (``engine`` "mow": deduplicate
    with deletion vectors; ``full``: a full compaction after each commit)."""
    wh = str(root / f"{engine}-{keys}-{cache}-{full}")
    options = {"bucket": "1", "merge-engine": "deduplicate" if engine == "mow" else engine}
    options["changelog-producer"] = {"first-row": "none", "mow": "input"}.get(engine, "lookup")
    if engine == "mow":
        options["deletion-vectors.enabled"] = "true"
    if not cache:
        options["lookup.cache-max-memory-size"] = "0"
    Catalog(wh).create_table("db.t", [("id", int_()), ("name", varchar(20)), ("qty", bigint())], ["id"], [], options)
    _commit(wh, 0, _rows(list(range(keys)), [0] * keys, [0] * keys))
    compactor.compact(wh, {}, "db.t", "bench", 0, full=True)
    lookup_cache.FILES.clear()
    rng = random.Random(1)
    times = []
    for batch in range(1, commits + 1):
        if engine == "first-row":  # new keys only: first-row keeps the first row of a key anyway
            ids = [keys + batch * ROWS + i for i in range(ROWS)]
            data = _rows(ids, [batch] * ROWS, [0] * ROWS)
        else:
            picked = rng.sample(range(keys), ROWS // 2)
            ids = [k for k in picked for _ in (0, 1)]
            data = _rows(ids, [batch - 1 if i % 2 == 0 else batch for i in range(ROWS)], [1, 2] * (ROWS // 2))
        _commit(wh, batch, data)
        started = time.perf_counter()
        compactor.compact(wh, {}, "db.t", "bench", batch, full=full)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--commits", type=int, default=15)
    args = parser.parse_args()
    lines = [
        "# Lookup compaction benchmark",
        "",
        f"One bucket of N keys in one top-level file, then {args.commits} commits of {ROWS} changes, each"
        " followed by the job's compaction; one process. Median milliseconds per commit's compaction; the"
        " floor reads the upper level at every commit (`lookup.cache-max-memory-size=0`).",
        "",
        "| Table | Keys in the bucket | Cache (ms) | Floor, no cache (ms) | Floor / cache |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-lookup-") as tmp:
        for engine in ("deduplicate", "first-row"):
            for keys in args.keys:
                cached = run(Path(tmp), engine, keys, args.commits, True)
                floor = run(Path(tmp), engine, keys, args.commits, False)
                label = "changelog-producer=lookup" if engine == "deduplicate" else "merge-engine=first-row"
                lines.append(
                    f"| {label} | {keys:,} | {cached * 1000:.0f} | {floor * 1000:.0f} | {floor / cached:.2f}x |"
                )
                print(lines[-1], flush=True)
        lines += [
            "",
            "MOW (`deletion-vectors.enabled=true`): the compaction after each commit lifts level 0 and marks the"
            " older rows of its keys in deletion vectors; the floor compacts the bucket fully after each commit"
            " (lakecdc's MOW before deletion vectors).",
            "",
            "| Table | Keys in the bucket | Deletion vectors (ms) | Same, no cache (ms) | Full compaction (ms) |"
            " Full / deletion vectors |",
            "|---|---|---|---|---|---|",
        ]
        for keys in args.keys:
            cached = run(Path(tmp), "mow", keys, args.commits, True)
            uncached = run(Path(tmp), "mow", keys, args.commits, False)
            full = run(Path(tmp), "mow", keys, args.commits, True, full=True)
            lines.append(
                f"| MOW | {keys:,} | {cached * 1000:.0f} | {uncached * 1000:.0f} | {full * 1000:.0f} |"
                f" {full / cached:.1f}x |"
            )
            print(lines[-1], flush=True)
    write_report(lines, "lookup-")


if __name__ == "__main__":
    main()
