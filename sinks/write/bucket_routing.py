"""Several writers for one table in one micro-batch, each writing its own buckets.

Paimon allows one writer per bucket per commit, not one per table: a micro-batch of a large
table is written by ``writers`` tasks, task ``g`` writing the buckets ``b`` with ``b % writers ==
g`` (as Paimon's Flink sink spreads buckets over its channels). Every task reads all of the
table's chunks and works out each row's bucket the same way, so they agree without talking:

- fixed-bucket tables (``bucket`` = N > 1): ``abs(hash(bucket key) % N)``, Paimon's default
  bucket function;
- dynamic-bucket tables (``bucket=-1``): a key the table's HASH index holds stays in its bucket.
  A new key goes to the lowest bucket of its group (``abs(hash % writers)``, Paimon's assigner
  rule) that is below ``dynamic-bucket.target-row-num``, or to a new bucket of that group — all
  decided from the index as of the snapshot the batch starts from, so one micro-batch may carry
  a bucket past the target by the new keys it brings (Paimon's assigners count key by key).

pypaimon-rust writes a row to the bucket it is given and adds new keys to that bucket's HASH
index, so the index stays Paimon's. Tables this cannot serve — cross-partition updates (keys
without the partition columns), a non-default bucket function, key types ``key_hash`` cannot
encode — keep one writer.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from schema_evolution.types import PaimonType
from sinks.layout import TableLayout
from sinks.option_values import whole_number
from sinks.write.key_hash import bucket_of, hash_rows, hashable, row_bytes

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

_EMPTY_PARTITION = bytes(8)  # BinaryRow of arity 0: just the header


@dataclass(frozen=True, slots=True)
class Routing:
    """How the write tasks of one table split its rows (shipped to executors)."""

    writers: int
    buckets: int  # N for a fixed-bucket table, -1 for dynamic
    key_fields: tuple[tuple[str, PaimonType], ...]  # bucket key (dynamic: the trimmed primary key)
    partition_fields: tuple[tuple[str, PaimonType], ...]
    location: str = ""  # dynamic: the table directory, where the HASH index is
    snapshot_id: int | None = None  # dynamic: the index as of this snapshot (None: empty table)
    target_row_num: int = 2_000_000
    max_buckets: int = -1

    @property
    def dynamic(self) -> bool:
        return self.buckets == -1


def check_options(options: Mapping[str, str]) -> None:
    """A ValueError naming the option for values the routing could not read (at start-up, not at
    the first large micro-batch)."""
    whole_number(options, "sink.parallelism", 1, minimum=1)
    whole_number(options, "dynamic-bucket.max-buckets", -1, minimum=-1)
    whole_number(options, "dynamic-bucket.target-row-num", 2_000_000, minimum=1)


def plan_routing(
    layout: TableLayout,
    options: Mapping[str, str],
    writers: int,
    location: str,
    snapshot_id: int | None,
) -> Routing | None:
    """The routing for ``writers`` tasks, or None when the table keeps one writer."""
    writers = whole_number(options, "sink.parallelism", writers, minimum=1)
    if writers < 2 or not layout.primary_keys:
        return None
    types = layout.field_types()
    bucket = whole_number(options, "bucket", -1)
    partitions = tuple((p, types[p]) for p in layout.partition_keys)
    if bucket == -1:
        if not set(layout.partition_keys) <= set(layout.primary_keys):
            return None  # cross-partition updates: Paimon keeps a global index for those
        if str(options.get("index-file-in-data-file-dir", "false")).strip().lower() == "true":
            return None
        keys = tuple((k, types[k]) for k in layout.primary_keys if k not in layout.partition_keys)
        if partitions and not hashable([t for _, t in partitions]):
            return None
        max_buckets = whole_number(options, "dynamic-bucket.max-buckets", -1, minimum=-1)
        if max_buckets > 0:
            writers = min(writers, max_buckets)
        target = whole_number(options, "dynamic-bucket.target-row-num", 2_000_000, minimum=1)
        if writers < 2 or not keys or not hashable([t for _, t in keys]):
            return None
        return Routing(writers, -1, keys, partitions, location, snapshot_id, target, max_buckets)
    if bucket < 2 or str(options.get("bucket-function.type", "default")).strip().lower() != "default":
        return None
    named = [k.strip() for k in str(options.get("bucket-key", "")).split(",") if k.strip()]
    names = named or [k for k in layout.primary_keys if k not in layout.partition_keys]
    keys = tuple((k, types[k]) for k in names)
    if not keys or not hashable([t for _, t in keys]):
        return None
    return Routing(min(writers, bucket), bucket, keys, partitions)


class Router:
    """Executor side: which rows of a chunk (aligned to the table's schema) a write task writes,
    and to which bucket."""

    def __init__(self, routing: Routing) -> None:
        self.routing = routing
        self._partitions: dict[bytes, _PartitionIndex] = {}
        self._files: tuple[FileSystem, dict[bytes, tuple[dict[int, int], dict[int, str]]]] | None = None

    def split(self, batch: pa.RecordBatch, group: int) -> list[tuple[int, pa.RecordBatch]]:
        """The rows of ``batch`` that write task ``group`` writes, per (partition, bucket) — as
        pypaimon-rust takes them — each in the chunk's order."""
        r = self.routing
        hashes = hash_rows([batch.column(n) for n, _ in r.key_fields], [t for _, t in r.key_fields])
        out = []
        for partition, rows in self._by_partition(batch):
            buckets = (
                bucket_of(hashes[rows], r.buckets) if not r.dynamic else self._index(partition).buckets(hashes[rows])
            )
            mine = buckets % r.writers == group
            if not mine.any():
                continue
            for bucket in np.unique(buckets[mine]).tolist():
                picked = rows[buckets == bucket]
                whole = len(picked) == batch.num_rows
                out.append((int(bucket), batch if whole else batch.take(pa.array(picked))))
        return out

    def _by_partition(self, batch: pa.RecordBatch) -> list[tuple[bytes, np.ndarray]]:
        """(the partition's BinaryRow bytes — dynamic tables only, else b"" —, its rows)."""
        fields = self.routing.partition_fields
        everything = np.arange(batch.num_rows)
        if not fields:
            return [(_EMPTY_PARTITION, everything)]
        codes = np.stack(
            [
                pc.dictionary_encode(batch.column(name), null_encoding="encode").indices.to_numpy(zero_copy_only=False)
                for name, _ in fields
            ],
            axis=1,
        )
        distinct, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if self.routing.dynamic:
            heads = batch.take(pa.array(first))
            keys = row_bytes([heads.column(n) for n, _ in fields], [t for _, t in fields])
        else:
            keys = [b""] * len(distinct)
        if len(distinct) == 1:
            return [(keys[0], everything)]
        return [(key, np.flatnonzero(inverse == i)) for i, key in enumerate(keys)]

    def _index(self, partition: bytes) -> _PartitionIndex:
        index = self._partitions.get(partition)
        if index is None:
            if self._files is None:
                self._files = _index_files(self.routing)
                live = {path for _, paths in self._files[1].values() for path in paths.values()}
                HASHES.retain(self.routing.location, live)
            fs, per_partition = self._files
            counts, paths = per_partition.get(partition, ({}, {}))
            by_bucket = {bucket: HASHES.get(path, fs, self.routing.location) for bucket, path in paths.items()}
            index = self._partitions[partition] = _PartitionIndex.build(counts, by_bucket, self.routing)
        return index


# Up to this many buckets in a partition, a batch's hashes are looked up in each bucket's cached
# index file in turn; above it, in one array of all of them. A 5M-key partition has a few buckets,
# and joining their files cost each write task ~120 MiB (the hashes, their buckets, the sort's
# order) at the moment both writers peak; a partition of hundreds of small buckets would pay a
# lookup per bucket instead.
FEW_BUCKETS = 16


@dataclass(frozen=True, slots=True)
class _PartitionIndex:
    """One partition's HASH index as of the batch's snapshot, and where its new keys go."""

    # sorted runs of hashes, in bucket order: each bucket's own file (``of_hash`` its bucket number)
    # or, past FEW_BUCKETS, all of them in one run (``of_hash`` the bucket of each hash)
    runs: tuple[np.ndarray, ...]
    of_hash: tuple[np.ndarray | int, ...]
    new_bucket: tuple[int, ...]  # per writer group: the bucket its new keys go to (-1: none left)
    existing: tuple[int, ...]  # all buckets, sorted (the fallback when a group has none left)
    writers: int

    @classmethod
    def build(cls, counts: Mapping[int, int], by_bucket: Mapping[int, np.ndarray], routing: Routing) -> _PartitionIndex:
        order = sorted(by_bucket)
        runs: tuple[np.ndarray, ...] = tuple(by_bucket[b] for b in order)
        of_hash: tuple[np.ndarray | int, ...] = tuple(order)
        if len(order) > FEW_BUCKETS:
            all_hashes = np.concatenate(runs)
            all_buckets = np.concatenate([np.full(len(by_bucket[b]), b, np.int32) for b in order])
            # (a stable sort of sorted runs merges them; equal hashes keep bucket order)
            at = np.argsort(all_hashes, kind="stable")
            runs, of_hash = (all_hashes[at],), (all_buckets[at],)
        used = set(counts)
        limit = routing.max_buckets if routing.max_buckets > 0 else 32767  # Java's Short.MAX_VALUE
        new_bucket = []
        for group in range(routing.writers):
            open_ = sorted(b for b in used if b % routing.writers == group and counts[b] < routing.target_row_num)
            if open_:
                new_bucket.append(open_[0])
                continue
            b = group
            while b in used:
                b += routing.writers
            new_bucket.append(b if b < limit else -1)
        return cls(runs, of_hash, tuple(new_bucket), tuple(sorted(used)), routing.writers)

    @property
    def hashes(self) -> np.ndarray:
        """Every hash the index holds (a test's view)."""
        return np.concatenate(self.runs) if self.runs else np.zeros(0, np.int32)

    def buckets(self, hashes: np.ndarray) -> np.ndarray:
        out = np.empty(len(hashes), dtype=np.int32)
        found = np.zeros(len(hashes), dtype=bool)
        if self.runs:
            # The chunk's hashes looked up in order: the binary searches then walk each run
            # forwards instead of at random (6x faster against a 5M-key index).
            order = np.argsort(hashes)
            wanted = hashes[order]
            hit_any = np.zeros(len(hashes), dtype=bool)
            bucket_of = np.empty(len(hashes), dtype=np.int32)
            for run, of in zip(self.runs, self.of_hash, strict=True):
                if not len(run):
                    continue
                at = np.minimum(np.searchsorted(run, wanted), len(run) - 1)
                # a hash two buckets hold (two keys' hashes collide) stays with the lower bucket
                hit = (run[at] == wanted) & ~hit_any
                bucket_of[hit] = of if isinstance(of, int) else of[at[hit]]
                hit_any |= hit
            found[order] = hit_any
            out[order] = bucket_of
        new = ~found
        if new.any():
            groups = np.abs(np.fmod(hashes[new].astype(np.int64), self.writers))
            chosen = np.asarray(self.new_bucket, dtype=np.int64)[groups]
            full = chosen < 0
            if full.any():  # dynamic-bucket.max-buckets reached: spread by hash over existing buckets
                existing = np.asarray(self.existing, dtype=np.int64)
                chosen[full] = existing[np.abs(hashes[new][full].astype(np.int64)) % len(existing)]
            out[new] = chosen
        return out


def _index_files(routing: Routing) -> tuple[FileSystem, dict[bytes, tuple[dict[int, int], dict[int, str]]]]:
    """The table's filesystem, and per partition the row count and HASH index file of each bucket,
    as of ``routing.snapshot_id`` (Paimon's index manifest). The files themselves are read only
    for the partitions a batch touches."""
    import fastavro
    import pyarrow.fs as pafs

    fs, root = pafs.FileSystem.from_uri(routing.location)
    if routing.snapshot_id is None:
        return fs, {}
    with fs.open_input_stream(f"{root}/snapshot/snapshot-{routing.snapshot_id}") as f:
        snapshot = json.loads(f.read())
    manifest = snapshot.get("indexManifest")
    if not manifest:
        return fs, {}
    live: dict[tuple[bytes, int], dict[str, Any]] = {}
    with fs.open_input_file(f"{root}/manifest/{manifest}") as f:
        for record in fastavro.reader(f):
            entry: dict[str, Any] = record  # type: ignore[assignment]
            if entry["_INDEX_TYPE"] != "HASH":
                continue
            key = (bytes(entry["_PARTITION"])[4:], int(entry["_BUCKET"]))  # drop the arity prefix
            if entry["_KIND"] == 0:
                if key in live:
                    raise RuntimeError(
                        f"{routing.location}: two HASH index files for bucket {key[1]} of one partition "
                        f"({live[key]['_FILE_NAME']}, {entry['_FILE_NAME']}); the table's dynamic-bucket "
                        f"index is damaged — rewrite the partition"
                    )
                live[key] = entry
            else:
                live.pop(key, None)
    per_partition: dict[bytes, tuple[dict[int, int], dict[int, str]]] = {}
    for (partition, bucket), entry in live.items():
        counts, paths = per_partition.setdefault(partition, ({}, {}))
        counts[bucket] = int(entry["_ROW_COUNT"])
        paths[bucket] = entry.get("_EXTERNAL_PATH") or f"{root}/index/{entry['_FILE_NAME']}"
    return fs, per_partition


class _HashFiles:
    """HASH index files read by this Python worker: files never change once written, so a bucket
    whose index did not change since the last batch is not read again (bounded, oldest out).

    A bucket that takes new keys gets a new index file every batch, and the file it replaces is
    never read again: ``retain`` drops a table's replaced files as soon as a task loads the table's
    index, instead of leaving them to the size bound. (A 5M-row UUID snapshot: each worker held 64
    MiB of mostly replaced files at the job's peak, where the live index was ~20 MiB.)"""

    def __init__(self, limit_bytes: int = 64 << 20) -> None:
        self._files: OrderedDict[str, np.ndarray] = OrderedDict()
        self._owners: dict[str, str] = {}  # path -> the table location it was read for
        self._bytes = 0
        self._limit = limit_bytes
        self._lock = threading.Lock()

    def get(self, path: str, fs: FileSystem, owner: str = "") -> np.ndarray:
        with self._lock:
            hashes = self._files.get(path)
            if hashes is not None:
                self._files.move_to_end(path)
                return hashes
        with fs.open_input_stream(path) as f:
            raw = f.read()
        if len(raw) % 4:
            raise RuntimeError(f"HASH index {path} is damaged: {len(raw)} bytes is not a multiple of 4")
        # Kept sorted, for the binary searches of ``_PartitionIndex``. (numpy's default sort: equal
        # integers need no stable order, and a stable sort of 2M hashes took 0.2 s instead of
        # 0.03 — every write task re-reads the open buckets' files, which change each batch.)
        hashes = np.sort(np.frombuffer(raw, dtype=">i4").astype(np.int32))
        with self._lock:
            if path not in self._files:
                self._files[path] = hashes
                self._owners[path] = owner
                self._bytes += hashes.nbytes
            while self._bytes > self._limit and len(self._files) > 1:
                self._drop(next(iter(self._files)))
        return hashes

    def retain(self, owner: str, live: set[str]) -> None:
        """Forget the files read for table ``owner`` that its current index no longer names."""
        with self._lock:
            for path in [p for p, o in self._owners.items() if o == owner and p not in live]:
                self._drop(path)

    @property
    def paths(self) -> list[str]:
        """The files held, oldest first (a test's view)."""
        with self._lock:
            return list(self._files)

    def _drop(self, path: str) -> None:
        self._bytes -= self._files.pop(path).nbytes
        del self._owners[path]


HASHES = _HashFiles()


# A table's micro-batch gets parallel writers from this many rows on: below it one writer is
# quick, and every extra writer adds a file per commit (and its bucket's index) for compaction.
MIN_ROWS = 50_000
# Every writer task decodes and hashes all of its table's rows, so writers beyond a few cost more
# than they save; sink.parallelism asks for more.
MAX_DEFAULT_WRITERS = 4


def plan_routings(
    warehouse: str,
    catalog_options: Mapping[str, str],
    rows: Mapping[str, int],
    layouts: Mapping[str, TableLayout],
    writers: int,
    min_rows: int = MIN_ROWS,
) -> dict[str, Routing]:
    """Driver side: the routing of each table with ``min_rows`` rows or more in this micro-batch."""
    writers = min(writers, MAX_DEFAULT_WRITERS)
    from pypaimon_rust.datafusion import PaimonCatalog

    catalog = None
    out: dict[str, Routing] = {}
    for table, count in rows.items():
        if count < min_rows or table not in layouts:
            continue
        catalog = catalog or PaimonCatalog({**catalog_options, "warehouse": warehouse})
        paimon = catalog.get_table(table)
        latest = paimon.latest_snapshot()
        routing = plan_routing(
            layouts[table], paimon.schema().options(), writers, paimon.location(), latest.id() if latest else None
        )
        if routing is not None:
            out[table] = routing
    return out
