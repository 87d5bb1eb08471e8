"""The streaming merge of a compaction unit: slice by slice it must give what merging the whole
unit gives, and a real table compacted in tiny slices must read back exactly in both readers."""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sinks.compaction import bucket_compaction, compactor, sorted_runs
from sinks.compaction.bucket_compaction import merge_rows
from sinks.store import data_files, manifests, tables
from sinks.store.files import KIND, SEQUENCE
from tests.sinks.compaction.test_compaction import USER, Reference, _assert_reads, _commit, _create

KEYS = ("k", "s")
SCHEMA = pa.schema(
    [(SEQUENCE, pa.int64()), (KIND, pa.int8()), ("k", pa.int32()), ("s", pa.string()), ("v", pa.int64())]
)


def _run(rows: list[tuple[int, str, int, int]], batch: int) -> list[pa.Table]:
    """One sorted run (rows sorted by key, then sequence) cut into batches of ``batch`` rows."""
    rows = sorted(rows, key=lambda r: (r[0], r[1].encode(), r[2]))
    cols = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    table = pa.table(
        [pa.array(cols[2], pa.int64()), pa.array([r[3] for r in rows], pa.int8()), pa.array(cols[0], pa.int32()),
         pa.array(cols[1], pa.string()), pa.array(cols[2], pa.int64())],
        schema=SCHEMA,
    )  # fmt: skip
    return [table.slice(i, batch) for i in range(0, table.num_rows, batch)]


def _merge(data: pa.Table) -> pa.Table:
    return merge_rows(data, KEYS, (), drop_delete=True)


row = st.tuples(st.integers(0, 6), st.sampled_from(["", "a", "b", "é", "z", "ab"]), st.integers(0, 3))


@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(st.lists(row, max_size=40), min_size=1, max_size=5),
    batch=st.integers(1, 9),
    unique=st.booleans(),
    batch_bytes=st.one_of(st.none(), st.integers(1, 400)),
)
def test_slices_merge_to_the_whole_units_merge(
    runs: list[list[tuple[int, str, int]]], batch: int, unique: bool, batch_bytes: int | None
) -> None:
    # Sequence numbers distinct across the unit, as a bucket's are; level-0 files may repeat a key
    # (a writer's buffer), upper levels hold it once (``unique``).
    seq = iter(range(10**6))
    built = []
    for r in runs:
        if unique:
            r = list({(k, s): (k, s, kind) for k, s, kind in r}.values())
        built.append([(k, s, next(seq), kind) for k, s, kind in r])
    whole = _merge(pa.concat_tables([t for r in built for t in _run(r, 10**6)] or [SCHEMA.empty_table()]))
    slices = list(sorted_runs.merged_slices([_run(r, batch) for r in built], KEYS, _merge, batch, batch_bytes))
    got = pa.concat_tables(slices) if slices else SCHEMA.empty_table()
    assert got.to_pylist() == whole.to_pylist()


def test_a_runs_buffer_stops_at_its_byte_bound() -> None:
    """Wide rows: a run buffers batches until the byte bound, not the rows bound, and always at
    least one more batch, so the merge goes on however small the bound."""
    cursor = sorted_runs._Run(_run([(i, "x" * 50, i, 0) for i in range(100)], 5))
    one = _run([(0, "x" * 50, 0, 0)] * 5, 5)[0].nbytes
    cursor.fill(1000, 3 * one)
    assert cursor.rows == 15
    cursor.fill(1000, 1)
    assert cursor.rows == 20
    cursor.fill(1000, None)
    assert cursor.rows == 100


def test_a_run_of_one_key_longer_than_a_batch() -> None:
    # The run that sets the cutoff holds nothing below it: the merge reads further, not forever.
    same = [(1, "x", i, 0) for i in range(20)]
    other = [(0, "a", 100, 0), (2, "b", 101, 0)]
    slices = list(sorted_runs.merged_slices([_run(same, 3), _run(other, 3)], KEYS, _merge, 3))
    assert [r["v"] for s in slices for r in s.to_pylist()] == [100, 19, 101]


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


@pytest.mark.parametrize("bucket", ["2", "-1"])
def test_a_table_compacted_in_tiny_slices_reads_back_exactly(
    wh: str, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of 7 rows and files rolled at 2 KB: every compaction runs through many slices and
    # writes several files per level, which must not overlap and must bound their rows' keys.
    monkeypatch.setattr(bucket_compaction, "STREAM_BATCH_ROWS", 7)
    _create(wh, {"bucket": bucket, "num-sorted-run.compaction-trigger": "3", "target-file-size": "2kb"})
    rng, ref = random.Random(11), Reference()
    for batch in range(12):
        _commit(wh, "db.t", batch, ref.changes(rng, 80, 400))
        compactor.compact(wh, {}, "db.t", USER, batch, full=batch == 11)
        if batch % 4 == 3:
            _assert_reads(wh, "db.t", ref.expected())
    table = tables.open_table(wh, {}, "db.t")
    levels: dict[Any, list[Any]] = {}
    for (_, b), metas in manifests.live_files(table).items():
        for m in metas:
            levels.setdefault((b, m.level), []).append(m)
    top = [ms for (_, level), ms in levels.items() if level > 0]
    assert top and max(len(ms) for ms in top) > 1  # the output rolled over to several files
    schema = data_files.keyed_schema(table)
    for (b, _), ms in levels.items():
        for m in ms:
            ids = data_files.read_data_file(table, (), b, m, schema).column("id").to_pylist()
            assert (ids[0], ids[-1], ids) == (m.min_key.values[0], m.max_key.values[0], sorted(set(ids)))
    for ms in top:
        bounds = sorted((m.min_key.values[0], m.max_key.values[0]) for m in ms)
        assert all(a[1] < b[0] for a, b in pairwise(bounds))
    _assert_reads(wh, "db.t", ref.expected())
