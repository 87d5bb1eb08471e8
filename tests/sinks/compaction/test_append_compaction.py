"""Append-table compaction against real Paimon files: many small commits written by pypaimon-rust,
compacted, and read back through both pypaimon and pypaimon-rust."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schema_evolution.evolution import diff
from schema_evolution.types import bigint, int_, string, varchar
from sinks.compaction import compactor
from sinks.compaction.append_compactor import NotCompactable
from sinks.compaction.append_picks import COMPACT_AGE, PartitionAges
from sinks.store import commits, files, manifests, tables
from sinks.table.catalog import Catalog
from tests.paimon_read import read_changelog, read_pypaimon, read_rust

USER = "writer"
COMPACTOR = "compactor"


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def _create(wh: str, options: dict[str, str], partitioned: bool = False) -> Catalog:
    catalog = Catalog(wh)
    fields = [("id", int_()), ("v", varchar(20))] + ([("p", string())] if partitioned else [])
    catalog.create_table("db.a", fields, [], ["p"] if partitioned else [], options)
    return catalog


def _commit(wh: str, batch: int, rows: list[tuple[Any, ...]]) -> None:
    """One micro-batch as lakecdc writes an append table: a new pypaimon-rust writer, one commit."""
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": wh}).get_table("db.a")
    builder = t.new_stream_write_builder().with_commit_user(USER)
    write = builder.new_write()
    names = [f.name for f in tables.open_table(wh, {}, "db.a").table_schema.fields]
    columns = list(zip(*rows, strict=True))
    arrays = [pa.array(columns[0], pa.int32()), pa.array(columns[1], pa.string())]
    arrays += [pa.array(c) for c in columns[2:]]
    arrays += [pa.nulls(len(rows), pa.int64()) for _ in names[len(arrays) :]]
    write.write_arrow(pa.RecordBatch.from_arrays(arrays, names=names))
    assert builder.new_commit().filter_and_commit({batch: write.prepare_commit(True, batch)}) == 1


def _files(wh: str) -> dict[files.BucketKey, list[Any]]:
    return manifests.live_files(tables.open_table(wh, {}, "db.a"))


def _assert_reads(wh: str, expected: list[dict[str, Any]]) -> None:
    def rows(read: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(tuple((k, v is None, str(v)) for k, v in sorted(r.items())) for r in read)

    assert rows(read_rust(wh, "db.a")) == rows(expected)
    assert rows(read_pypaimon(wh, "db.a")) == rows(expected)


def test_small_files_of_an_unaware_table_merge_and_read_the_same(wh: str) -> None:
    _create(wh, {})
    expected = []
    for batch in range(12):
        rows = [(batch * 10 + i, f"b{batch}") for i in range(3)]
        _commit(wh, batch, rows)
        expected += [{"id": i, "v": v} for i, v in rows]
    report = compactor.compact(wh, {}, "db.a", COMPACTOR, 2**63 - 1)
    # twelve small files, the default compaction.min.file-num of 5: one bin of all of them
    assert (report.committed, report.buckets, report.files_before, report.files_after) == (True, 1, 12, 1)
    _assert_reads(wh, expected)
    table = tables.open_table(wh, {}, "db.a")
    latest = tables.latest_snapshot(table)
    assert latest is not None and latest.commit_kind == "COMPACT"
    ((key, (meta,)),) = _files(wh).items()
    assert (key, meta.level, meta.row_count, meta.file_source) == (((), 0), 0, 36, files.FILE_SOURCE_COMPACT)
    # a streaming reader sees every insert once: the COMPACT snapshot is no new data
    assert sorted(read_changelog(wh, "db.a", mode="delta"), key=repr) == sorted(
        (("+I", r["id"], r["v"]) for r in expected), key=repr
    )
    # too few small files left for another compaction
    assert not compactor.plan(wh, {}, "db.a", full=False)


def test_fixed_buckets_keep_their_write_order(wh: str) -> None:
    _create(wh, {"bucket": "2", "bucket-key": "id", "compaction.min.file-num": "3"})
    for batch in range(4):
        _commit(wh, batch, [(k, f"b{batch}") for k in range(6)])
    report = compactor.compact(wh, {}, "db.a", COMPACTOR, 2**63 - 1)
    assert (report.buckets, report.files_before, report.files_after) == (2, 6, 2)
    table = tables.open_table(wh, {}, "db.a")
    for (partition, bucket), metas in _files(wh).items():
        compacted = [m for m in metas if m.file_source == files.FILE_SOURCE_COMPACT]
        (meta,) = compacted
        rows = pq.read_table(files.data_file_path(table, partition, bucket, meta)).to_pylist()
        # the first three commits' rows, commit after commit, in the order they were written
        assert [r["v"] for r in rows] == sorted(r["v"] for r in rows)
        assert {r["v"] for r in rows} == {"b0", "b1", "b2"}
        assert (meta.min_sequence_number, meta.max_sequence_number) == (0, len(rows) - 1)
    _assert_reads(wh, [{"id": k, "v": f"b{b}"} for b in range(4) for k in range(6)])
    # full: everything after the leading large files, here all of a bucket's files
    report = compactor.compact(wh, {}, "db.a", COMPACTOR, 2**63 - 1, full=True)
    assert report.files_before == 0  # two files per bucket are fewer than a full compaction's three
    _commit(wh, 4, [(k, "b4") for k in range(6)])
    report = compactor.compact(wh, {}, "db.a", COMPACTOR, 2**63 - 1, full=True)
    assert (report.buckets, report.files_before, report.files_after) == (2, 6, 2)


def test_old_schemas_partitions_and_the_partition_filter(wh: str) -> None:
    catalog = _create(wh, {"compaction.min.file-num": "2"}, partitioned=True)
    _commit(wh, 0, [(1, "a", "x"), (2, "b", "y")])
    layout = catalog.load_layout("db.a")
    assert layout is not None
    catalog.apply(layout, diff("db.a", layout.fields, [*layout.fields, ("n", bigint())]))
    _commit(wh, 1, [(3, "c", "x", 7), (4, "d", "y", 8)])
    report = compactor.compact(wh, {}, "db.a", COMPACTOR, 2**63 - 1, partitions=[{"p": "x"}])
    assert (report.buckets, report.files_before, report.files_after) == (1, 2, 1)
    _assert_reads(
        wh,
        [
            {"id": 1, "v": "a", "p": "x", "n": None},
            {"id": 2, "v": "b", "p": "y", "n": None},
            {"id": 3, "v": "c", "p": "x", "n": 7},
            {"id": 4, "v": "d", "p": "y", "n": 8},
        ],
    )
    table = tables.open_table(wh, {}, "db.a")
    counts = {k[0]: len(v) for k, v in _files(wh).items()}
    assert counts == {("x",): 1, ("y",): 2}
    (meta,) = _files(wh)[(("x",), 0)]
    assert meta.schema_id == int(table.table_schema.id)


def test_output_rolls_over_at_the_target_file_size(wh: str) -> None:
    _create(
        wh, {"target-file-size": "512 kb", "compaction.small-file-ratio": "1", "source.split.open-file-cost": "1 kb"}
    )
    for batch in range(6):
        _commit(wh, batch, [(batch * 20_000 + i, f"value-{batch}-{i:06d}") for i in range(20_000)])
    # the whole partition's small files in one task: several output files of about 512 KiB
    report = compactor.compact(wh, {}, "db.a", COMPACTOR, 2**63 - 1, full=True)
    assert report.committed and report.files_before == 6 and report.files_after > 1
    metas = [m for ms in _files(wh).values() for m in ms]
    assert sum(m.row_count for m in metas) == 120_000
    starts = sorted((m.min_sequence_number, m.max_sequence_number) for m in metas)
    assert starts[0][0] == 0 and all(b[0] == a[1] + 1 for a, b in pairwise(starts))
    assert len(read_rust(wh, "db.a")) == 120_000 == len(read_pypaimon(wh, "db.a"))


def test_leftover_files_of_a_quiet_partition_merge_after_waiting(wh: str) -> None:
    _create(wh, {})
    for batch in range(2):
        _commit(wh, batch, [(batch, "x")])
    ages = PartitionAges()
    for _ in range(COMPACT_AGE):
        assert compactor.plan(wh, {}, "db.a", full=False, ages=ages) == []
    (task,) = compactor.plan(wh, {}, "db.a", full=False, ages=ages)
    assert len(task.files) == 2


def test_a_compaction_that_lost_a_race_is_dropped(wh: str) -> None:
    _create(wh, {"compaction.min.file-num": "2"})
    for batch in range(3):
        _commit(wh, batch, [(batch, "x")])
    first = compactor.plan(wh, {}, "db.a", full=False)
    second = compactor.plan(wh, {}, "db.a", full=False)
    table = tables.open_table(wh, {}, "db.a")
    assert commits.commit_compaction(table, "c1", 1, compactor.run_locally(first)).committed
    lost = compactor.run_locally(second)
    assert not commits.commit_compaction(table, "c2", 1, lost).committed
    for change in lost:
        for meta in change.after:
            assert not Path(files.data_file_path(table, change.partition, change.bucket, meta)).exists()
    _assert_reads(wh, [{"id": b, "v": "x"} for b in range(3)])


def test_row_tracking_tables_are_refused(wh: str) -> None:
    _create(wh, {"row-tracking.enabled": "true"})
    with pytest.raises(NotCompactable, match="row-tracking"):
        compactor.plan(wh, {}, "db.a", full=True)
