"""Parallel writers per table: Paimon's key hash computed column-wise, checked against pypaimon's
per-row implementation and against where pypaimon-rust itself puts keys; and several write tasks
splitting one table's micro-batches by bucket, read back through both readers."""

from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schema_evolution.arrow_types import to_arrow
from schema_evolution.types import (
    PaimonType,
    bigint,
    binary,
    boolean,
    char,
    date,
    double,
    int_,
    smallint,
    string,
    time,
    timestamp,
    timestamp_ltz,
    tinyint,
)
from schema_evolution.types import decimal as decimal_
from sinks.layout import TableLayout
from sinks.table.catalog import Catalog
from sinks.write import bucket_routing
from sinks.write.bucket_routing import Router, plan_routing, plan_routings
from sinks.write.chunk_format import (
    CHUNK_SCHEMA,
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
    serialize_batch,
)
from sinks.write.committer import Committer
from sinks.write.key_hash import bucket_of, hash_rows, hashable, row_bytes
from sinks.write.writer import WriteContext, write_chunks
from tests.paimon_read import read_pypaimon, read_rust

RNG = random.Random(7)


def _strings(n: int) -> list[str]:
    # lengths around the 7-byte inline limit and the 8-byte word size, multi-byte characters too
    return ["".join(RNG.choice("abcé😀xyz0189") for _ in range(RNG.choice([0, 1, 3, 6, 7, 8, 9, 15, 16, 17, 40])))
            for _ in range(n)]  # fmt: skip


VALUES: dict[str, tuple[PaimonType, list[Any]]] = {
    "int": (int_(), [RNG.randint(-(2**31), 2**31 - 1) for _ in range(200)]),
    "bigint": (bigint(), [RNG.randint(-(2**63), 2**63 - 1) for _ in range(200)]),
    "smallint": (smallint(), [RNG.randint(-(2**15), 2**15 - 1) for _ in range(200)]),
    "tinyint": (tinyint(), [RNG.randint(-128, 127) for _ in range(200)]),
    "boolean": (boolean(), [True, False]),
    "string": (string(), _strings(300)),
    "char": (char(5), _strings(50)),
    "binary": (
        binary(40),
        [bytes(RNG.randrange(256) for _ in range(RNG.choice([0, 5, 7, 8, 20]))) for _ in range(200)],
    ),
    "date": (date(), [dt.date(1970, 1, 1) + dt.timedelta(days=RNG.randint(-30000, 30000)) for _ in range(200)]),
    "decimal": (decimal_(18, 4), [decimal.Decimal(RNG.randint(-(10**17), 10**17)) / 10000 for _ in range(200)]),
    "timestamp3": (
        timestamp(3),
        [dt.datetime(1960, 1, 1) + dt.timedelta(milliseconds=RNG.randint(0, 3 * 10**12)) for _ in range(200)],
    ),
    "timestamp0": (
        timestamp(0),
        [dt.datetime(1960, 1, 1) + dt.timedelta(seconds=RNG.randint(0, 3 * 10**9)) for _ in range(200)],
    ),
}


def _pypaimon_hash(values: tuple[Any, ...], types: list[PaimonType]) -> int:
    from pypaimon.schema.data_types import AtomicType, DataField
    from pypaimon.write.row_key_extractor import RowKeyExtractor

    fields = [DataField(i, f"f{i}", AtomicType(t.sql().replace(" NOT NULL", ""))) for i, t in enumerate(types)]
    return int(np.uint32(RowKeyExtractor._binary_row_hash_code(values, fields)).view(np.int32))


@pytest.mark.parametrize("name", sorted(VALUES))
def test_hash_matches_pypaimons_binary_row_hash(name: str) -> None:
    typ, values = VALUES[name]
    ours = hash_rows([pa.array(values, to_arrow(typ))], [typ])
    assert ours.tolist() == [_pypaimon_hash((v,), [typ]) for v in values]


def test_hash_of_composite_keys_with_nulls() -> None:
    n = 300
    a = pa.array([RNG.randint(0, 10**12) for _ in range(n)], pa.int64())
    s = pa.array([None if i % 4 == 0 else v for i, v in enumerate(_strings(n))])
    d = pa.array([RNG.randint(-5, 5) for _ in range(n)], pa.int32())
    types = [bigint(), string(), int_()]
    ours = hash_rows([a, s, d], types)
    expected = [_pypaimon_hash(v, types) for v in zip(a.to_pylist(), s.to_pylist(), d.to_pylist(), strict=True)]
    assert ours.tolist() == expected
    # the bytes of a null-free 1-column row: header, then the value in its slot
    assert row_bytes([pa.array([5], pa.int32())], [int_()]) == [bytes(8) + (5).to_bytes(8, "little")]


def test_hash_of_equal_width_keys_matches_pypaimons() -> None:
    """Keys of one length (UUIDs, fixed-width codes) are copied as one block: also when the array is
    a slice of a larger one, with a second fixed-width string key, and next to a shorter value."""
    uuids = [str(uuid.UUID(int=RNG.getrandbits(128))) for _ in range(400)]
    whole = pa.array(uuids)
    sliced = whole.slice(17, 300)
    assert hash_rows([sliced], [string()]).tolist() == [_pypaimon_hash((v,), [string()]) for v in uuids[17:317]]
    codes = pa.array([f"code-{i:010d}" for i in range(300)])
    types = [string(), bigint(), string()]
    ids = pa.array(range(300), pa.int64())
    ours = hash_rows([sliced, ids, codes], types)
    expected = [_pypaimon_hash(v, types) for v in zip(uuids[17:317], range(300), codes.to_pylist(), strict=True)]
    assert ours.tolist() == expected
    mixed = pa.array([*uuids[:5], "short", *uuids[5:10]])  # one value of another length: the general path
    assert hash_rows([mixed], [string()]).tolist() == [_pypaimon_hash((v,), [string()]) for v in mixed.to_pylist()]


def test_hashable_types() -> None:
    assert hashable([bigint(), string(), date(), decimal_(18, 2), timestamp(3), timestamp_ltz(0), time(0)])
    assert not hashable([double()])
    assert not hashable([decimal_(20, 2)])
    assert not hashable([timestamp(6)])
    assert not hashable([])
    # sliced arrays (chunks are slices of larger buffers) hash like fresh ones
    values = pa.array(["aaaaaaaaaaaa", "b", "cccccccccccccccccc", "dd"])
    assert (
        hash_rows([values.slice(1, 3)], [string()]).tolist()
        == hash_rows([pa.array(values[1:].to_pylist())], [string()]).tolist()
    )


def _write_rust(wh: str, table: str, batch: pa.RecordBatch, commit_id: int) -> None:
    from pypaimon_rust.datafusion import PaimonCatalog

    builder = PaimonCatalog({"warehouse": wh}).get_table(table).new_stream_write_builder().with_commit_user("u")
    write = builder.new_write()
    write.write_arrow(batch)
    messages = write.prepare_commit(True, commit_id)
    commit = builder.new_commit()
    commit.filter_and_commit({commit_id: messages})
    commit.close()


def test_fixed_buckets_are_where_pypaimon_rust_puts_keys(tmp_path: Path) -> None:
    """pypaimon-rust, left to place rows itself, must agree with ``abs(hash % N)`` for every key."""
    wh = str(tmp_path / "wh")
    fields = [("a", bigint()), ("s", string()), ("d", date()), ("m", decimal_(12, 2)), ("v", int_())]
    Catalog(wh).create_table("db.t", fields, ["a", "s", "d", "m"], [], {"bucket": "7"})
    n = 2000
    a = pa.array([RNG.randint(-(10**12), 10**12) for _ in range(n)], pa.int64())
    s = pa.array(_strings(n))
    d = pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=RNG.randint(0, 900)) for _ in range(n)], pa.date32())
    m = pa.array([decimal.Decimal(RNG.randint(-(10**9), 10**9)) / 100 for _ in range(n)], pa.decimal128(12, 2))
    batch = pa.RecordBatch.from_arrays(
        [a, s, d, m, pa.array(range(n), pa.int32()), pa.array([INSERT] * n, pa.int8())],
        names=["a", "s", "d", "m", "v", VALUE_KIND],
    )
    _write_rust(wh, "db.t", batch, 1)
    expected = bucket_of(hash_rows([a, s, d, m], [bigint(), string(), date(), decimal_(12, 2)]), 7)
    placed = np.full(n, -1)
    for path in (tmp_path / "wh" / "db.db" / "t").glob("bucket-*/data-*.parquet"):
        bucket = int(path.parent.name.split("-")[1])
        placed[pq.read_table(path, columns=["v"]).column("v").to_numpy()] = bucket
    assert (placed == expected).all()
    assert len(set(placed.tolist())) == 7


def test_dynamic_index_holds_our_hashes(tmp_path: Path) -> None:
    """pypaimon-rust's HASH index of a partitioned dynamic-bucket table lists exactly the hashes
    computed here, under the partition bytes computed here."""
    wh = str(tmp_path / "wh")
    fields = [("dt", string()), ("id", bigint()), ("v", int_())]
    Catalog(wh).create_table("db.t", fields, ["dt", "id"], ["dt"], {})
    ids = list(range(0, 3000, 3))
    dts = ["2026-11-25" if i % 2 else "2026-11-26" for i in ids]
    columns = [pa.array(dts), pa.array(ids, pa.int64()), pa.array([1] * len(ids), pa.int32())]
    batch = pa.RecordBatch.from_arrays(
        [*columns, pa.array([INSERT] * len(ids), pa.int8())], names=["dt", "id", "v", VALUE_KIND]
    )
    _write_rust(wh, "db.t", batch, 1)
    layout = Catalog(wh).load_layout("db.t")
    assert layout is not None
    routing = _routing(wh, layout, 2)
    assert routing is not None and routing.dynamic and [n for n, _ in routing.key_fields] == ["id"]
    router = Router(routing)
    hashes = hash_rows([pa.array(ids, pa.int64())], [bigint()])
    for day in ("2026-11-25", "2026-11-26"):
        index = router._index(row_bytes([pa.array([day])], [string()])[0])
        mine = {h for h, d in zip(hashes.tolist(), dts, strict=True) if d == day}
        assert set(index.hashes.tolist()) == mine
        # every one of them is found in the bucket pypaimon-rust gave it (its only bucket, 0)
        assert set(index.buckets(np.array(sorted(mine), np.int32)).tolist()) == {0}


def _routing(wh: str, layout: TableLayout, writers: int) -> bucket_routing.Routing | None:
    routings = plan_routings(wh, {}, {layout.identifier: bucket_routing.MIN_ROWS}, {layout.identifier: layout}, writers)
    return routings.get(layout.identifier)


def _layout(keys: tuple[str, ...], parts: tuple[str, ...] = (), **types: PaimonType) -> TableLayout:
    return TableLayout("db.t", tuple(types.items()), keys, parts, 0)


def test_plan_routing_rules() -> None:
    base = _layout(("id",), id=bigint(), v=string())
    assert plan_routing(base, {}, 2, "/x", None) is not None
    assert plan_routing(base, {}, 1, "/x", None) is None
    assert plan_routing(base, {"sink.parallelism": "1"}, 2, "/x", None) is None
    assert plan_routing(base, {"sink.parallelism": "3"}, 2, "/x", None).writers == 3  # type: ignore[union-attr]
    assert plan_routing(base, {"bucket": "1"}, 2, "/x", None) is None
    assert plan_routing(base, {"bucket": "3"}, 4, "/x", None).writers == 3  # type: ignore[union-attr]
    assert plan_routing(base, {"bucket": "4", "bucket-function.type": "mod"}, 2, "/x", None) is None
    assert plan_routing(base, {"dynamic-bucket.max-buckets": "1"}, 2, "/x", None) is None
    fixed = plan_routing(base, {"bucket": "4", "bucket-key": "v"}, 2, "/x", None)
    assert fixed is not None and fixed.key_fields == (("v", string()),)
    # cross-partition updates (the key lacks the partition column) keep one writer
    assert plan_routing(_layout(("id",), ("p",), id=bigint(), p=string()), {}, 2, "/x", None) is None
    trimmed = plan_routing(_layout(("p", "id"), ("p",), id=bigint(), p=string()), {}, 2, "/x", None)
    assert trimmed is not None and trimmed.key_fields == (("id", bigint()),)
    assert plan_routing(_layout(("id",), id=double()), {}, 2, "/x", None) is None
    assert plan_routing(_layout(("id",), id=bigint()), {"bucket": "2"}, 2, "/x", None) is not None
    assert plan_routing(TableLayout("db.t", (("v", int_()),), (), (), 0), {}, 2, "/x", None) is None


@pytest.mark.parametrize(
    "option", ["sink.parallelism=0", "sink.parallelism=two", "dynamic-bucket.max-buckets=-3",
               "dynamic-bucket.target-row-num=lots"],
)  # fmt: skip
def test_routing_options_are_checked_at_start_up(option: str) -> None:
    from sinks.table.options import validate_table_options

    key, value = option.split("=")
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        validate_table_options({key: value}, has_primary_key=True)


# --- several write tasks per table, end to end through write_chunks and the committer ---------


def _chunk(rows: Sequence[tuple[str, int, int | None, int]], first: int) -> dict[str, Any]:
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([r[0] for r in rows]),
            pa.array([r[1] for r in rows], pa.int64()),
            pa.array([r[2] for r in rows], pa.int32()),
            pa.array([r[3] for r in rows], pa.int8()),
        ],
        names=["p", "id", "v", VALUE_KIND],
    )
    position = {
        "topic": "t",
        "kafka_partition": 0,
        "first_offset": first,
        "last_offset": first + len(rows),
        "seq": first,
    }
    counts = {"rows": len(rows), "events": len(rows)}
    return {"table": "db.t", **position, "schema": None, **counts, "data": serialize_batch(batch), "ddl": None}


def _write_batch(wh: str, batch_id: int, chunks: list[dict[str, Any]], writers: int) -> None:
    """What a micro-batch does: plan on the 'driver', ``writers`` tasks each read every chunk."""
    layout = Catalog(wh).load_layout("db.t")
    assert layout is not None
    routing = _routing(wh, layout, writers) if writers > 1 else None
    groups = routing.writers if routing is not None else 1
    ctx = WriteContext(wh, {}, "u", batch_id, {"db.t": layout}, {"db.t": routing} if routing else {})
    messages: list[bytes] = []
    for group in range(groups):
        data = pa.RecordBatch.from_pylist(chunks, schema=CHUNK_SCHEMA)
        data = data.append_column("write_group", pa.array([group] * len(chunks), pa.int32()))
        for out in write_chunks([data], ctx):
            messages += out.column("message").to_pylist()
    assert Committer(wh, {}, "u").commit("db.t", batch_id, messages)


def _by_key(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["p"], r["id"]))


def _placement(wh: Path) -> dict[tuple[str, int], set[int]]:
    """(partition, key) -> the buckets whose files hold it."""
    where: dict[tuple[str, int], set[int]] = {}
    for path in (wh / "db.db" / "t").glob("**/bucket-*/data-*.parquet"):
        bucket = int(path.parent.name.split("-")[1])
        t = pq.ParquetFile(path).read(columns=["p", "id"])
        for p, key in zip(t.column("p").to_pylist(), t.column("id").to_pylist(), strict=True):
            where.setdefault((p, key), set()).add(bucket)
    return where


@pytest.mark.parametrize(
    "options",
    [{}, {"dynamic-bucket.target-row-num": "150"}, {"bucket": "5"}],
    ids=["dynamic", "dynamic-small-target", "fixed-5"],
)
def test_parallel_writers_give_the_table_one_writer_gives(tmp_path: Path, options: dict[str, str]) -> None:
    """Random batches of inserts, updates and deletes over partitioned keys, written by two tasks
    per batch (some batches by one, as small batches are): the table equals the model after
    every batch, through both readers, and no key ever lives in two buckets."""
    wh = str(tmp_path / "wh")
    fields = [("p", string()), ("id", bigint()), ("v", int_())]
    Catalog(wh).create_table("db.t", fields, ["p", "id"], ["p"], {"changelog-producer": "input", **options})
    rng = random.Random(str(options))
    live: dict[tuple[str, int], int] = {}
    for batch_id in range(1, 9):
        chunks, first = [], 0
        for _ in range(rng.randrange(1, 4)):
            rows: list[tuple[str, int, int | None, int]] = []
            for _ in range(rng.randrange(50, 400)):
                key = (rng.choice(["a", "b", "c"]), rng.randrange(600))
                if key in live and rng.random() < 0.2:
                    rows.append((*key, live.pop(key), DELETE))
                elif key in live:
                    rows += [(*key, live[key], UPDATE_BEFORE), (*key, batch_id, UPDATE_AFTER)]
                    live[key] = batch_id
                else:
                    rows.append((*key, batch_id, INSERT))
                    live[key] = batch_id
            chunks.append(_chunk(rows, first))
            first += len(rows)
        _write_batch(wh, batch_id, chunks, writers=1 if batch_id == 4 else 2)
        expected = _by_key([{"p": p, "id": k, "v": v} for (p, k), v in live.items()])
        assert _by_key(read_rust(wh, "db.t")) == expected, f"after batch {batch_id}"
        placement = _placement(tmp_path / "wh")
        assert all(len(b) == 1 for b in placement.values()), "a key in two buckets"
    assert _by_key(read_pypaimon(wh, "db.t")) == expected
    buckets = Counter(b for bs in _placement(tmp_path / "wh").values() for b in bs)
    assert len(buckets) >= (5 if options.get("bucket") else 2)
    if "dynamic-bucket.target-row-num" in options:
        assert len(buckets) > 2  # full buckets made the groups open new ones


def test_routing_tolerates_a_worker_hash_cache(tmp_path: Path) -> None:
    """The HASH index files a worker read are kept; a later batch reads only changed buckets and
    still finds keys written in between."""
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", [("p", string()), ("id", bigint()), ("v", int_())], ["p", "id"], ["p"], {})
    _write_batch(wh, 1, [_chunk([("a", i, 1, INSERT) for i in range(100)], 0)], writers=2)
    _write_batch(wh, 2, [_chunk([("a", i, 2, INSERT) for i in range(100, 200)], 0)], writers=2)
    updates = [r for i in range(200) for r in (("a", i, 1, UPDATE_BEFORE), ("a", i, 3, UPDATE_AFTER))]
    _write_batch(wh, 3, [_chunk(updates, 0)], writers=2)
    assert read_rust(wh, "db.t") == [{"p": "a", "id": i, "v": 3} for i in range(200)]
    assert all(len(b) == 1 for b in _placement(tmp_path / "wh").values())


def test_partition_bytes_match_the_index_for_several_columns(tmp_path: Path) -> None:
    """Index entries are keyed by the partition's BinaryRow: two partition columns, one a string
    past the 7 bytes a slot holds, must give the bytes pypaimon-rust wrote."""
    wh = str(tmp_path / "wh")
    fields = [("region", string()), ("day", int_()), ("id", bigint()), ("v", int_())]
    Catalog(wh).create_table("db.t", fields, ["region", "day", "id"], ["region", "day"], {})
    n = 600
    region = ["eu" if i % 3 else "a-very-long-region-name" for i in range(n)]
    day = [i % 4 - 1 for i in range(n)]
    batch = pa.RecordBatch.from_arrays(
        [pa.array(region), pa.array(day, pa.int32()), pa.array(range(n), pa.int64()), pa.array([1] * n, pa.int32()),
         pa.array([INSERT] * n, pa.int8())],
        names=["region", "day", "id", "v", VALUE_KIND],
    )  # fmt: skip
    _write_rust(wh, "db.t", batch, 1)
    layout = Catalog(wh).load_layout("db.t")
    assert layout is not None
    routing = _routing(wh, layout, 2)
    assert routing is not None
    router = Router(routing)
    parts = router._by_partition(batch)
    assert len(parts) == len({(r, d) for r, d in zip(region, day, strict=True)})
    hashes = hash_rows([batch.column("id")], [bigint()])
    for partition, rows in parts:
        index = router._index(partition)
        assert set(index.hashes.tolist()) == set(hashes[rows].tolist()), "partition bytes differ from the index's"


@pytest.mark.parametrize("buckets", [1, 3, bucket_routing.FEW_BUCKETS + 5])
def test_index_lookups_by_bucket_and_joined_agree(buckets: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few buckets are searched one by one, many in one joined array: both find a known key's
    bucket, give a hash two buckets hold to the lower one, and send new keys to their group's bucket."""
    rng = np.random.default_rng(buckets)
    by_bucket = {
        b: np.sort(rng.integers(-(2**31), 2**31, 3_000, dtype=np.int64).astype(np.int32)) for b in range(buckets)
    }
    shared = by_bucket[buckets - 1][7]
    by_bucket[0] = np.sort(np.append(by_bucket[0], shared))  # a hash collision across buckets
    counts = {b: len(h) for b, h in by_bucket.items()}
    routing = bucket_routing.Routing(2, -1, (("id", bigint()),), (), target_row_num=3_000)
    known = np.concatenate([by_bucket[b][::50] for b in range(buckets)])
    new = rng.integers(-(2**31), 2**31, 500, dtype=np.int64).astype(np.int32)
    new = new[~np.isin(new, np.concatenate(list(by_bucket.values())))]
    queries = np.concatenate([known, [shared], new])
    results = []
    for few in (bucket_routing.FEW_BUCKETS, 0):
        monkeypatch.setattr(bucket_routing, "FEW_BUCKETS", few)
        results.append(bucket_routing._PartitionIndex.build(counts, by_bucket, routing).buckets(queries))
    assert (results[0] == results[1]).all()
    expected_known = np.concatenate([np.full(len(by_bucket[b][::50]), b) for b in range(buckets)])
    if buckets > 1:
        expected_known[np.isin(known, [shared])] = 0
    assert (results[0][: len(known)] == expected_known).all()
    assert results[0][len(known)] == 0
    # every bucket is full (3,000 rows or more): new keys open the group's next bucket
    first_free = {g: next(b for b in range(buckets, buckets + 2) if b % 2 == g) for g in (0, 1)}
    assert results[0][len(known) + 1 :].tolist() == [first_free[abs(int(h)) % 2] for h in new]


def test_worker_hash_cache_forgets_replaced_index_files(tmp_path: Path) -> None:
    """A table's cached HASH files that its current index no longer names are dropped when a task
    loads the index; files read for another table stay."""
    from pyarrow import fs as pafs

    local = pafs.LocalFileSystem()
    paths = []
    for n in range(3):
        path = tmp_path / f"index-{n}"
        path.write_bytes(np.array([n, n + 10], dtype=">i4").tobytes())
        paths.append(str(path))
    cache = bucket_routing._HashFiles()
    assert list(cache.get(paths[0], local, "wh/t")) == [0, 10]
    cache.get(paths[1], local, "wh/t")
    cache.get(paths[2], local, "wh/u")
    cache.retain("wh/t", {paths[1]})
    assert cache.paths == [paths[1], paths[2]]
    cache.retain("wh/u", set())
    assert cache.paths == [paths[1]]


def test_worker_hash_cache_holds_only_live_index_files(tmp_path: Path) -> None:
    """After batches that replace open buckets' index files, the worker keeps only the files named
    by the index the last batch was routed by."""
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", [("p", string()), ("id", bigint()), ("v", int_())], ["p", "id"], ["p"], {})
    live: set[str] = set()
    for batch_id in range(1, 5):
        layout = Catalog(wh).load_layout("db.t")
        assert layout is not None
        routing = _routing(wh, layout, 2)
        assert routing is not None
        _, per_partition = bucket_routing._index_files(routing)
        live = {path for _, files in per_partition.values() for path in files.values()}
        rows = [("a", i, batch_id, INSERT) for i in range(100 * batch_id, 100 * batch_id + 100)]
        _write_batch(wh, batch_id, [_chunk(rows, 0)], writers=2)
    held = [p for p in bucket_routing.HASHES.paths if p.startswith(str(tmp_path))]
    assert held and set(held) <= live
