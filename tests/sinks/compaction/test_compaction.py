"""Compaction against real Paimon files: many small commits with updates and deletes written by
pypaimon-rust, compacted, and read back through both pypaimon and pypaimon-rust after every step."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyroaring import BitMap

from schema_evolution.types import bigint, int_, string, varchar
from sinks.compaction import compactor
from sinks.store import commits, files, index, manifests, tables
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from tests.paimon_read import read_changelog, read_pypaimon, read_rust

USER = "writer"
COMPACTOR = "compactor"


def _commit(wh: str, table: str, batch: int, rows: list[tuple[int, str | None, int]], user: str = USER) -> None:
    """One micro-batch as lakecdc writes it: a new pypaimon-rust writer, rows in order, one commit."""
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": wh}).get_table(table)
    builder = t.new_stream_write_builder().with_commit_user(user)
    write = builder.new_write()
    names = [f.name for f in tables.open_table(wh, {}, table).table_schema.fields]
    arrays: list[pa.Array] = [pa.array([r[0] for r in rows], pa.int32()), pa.array([r[1] for r in rows])]
    arrays += [pa.nulls(len(rows), pa.int64()) for _ in names[2:]]
    arrays.append(pa.array([r[2] for r in rows], pa.int8()))
    write.write_arrow(pa.RecordBatch.from_arrays(arrays, names=[*names, "_VALUE_KIND"]))
    messages = write.prepare_commit(True, batch)
    commit = builder.new_commit()
    assert commit.filter_and_commit({batch: messages}) == 1
    commit.close()


class Reference:
    """What the table must hold, and the changes the changelog must show."""

    def __init__(self) -> None:
        self.rows: dict[int, str | None] = {}

    def changes(self, rng: random.Random, size: int, key_space: int) -> list[tuple[int, str | None, int]]:
        out: list[tuple[int, str | None, int]] = []
        for _ in range(size):
            key = rng.randrange(key_space)
            if key not in self.rows:
                value = f"v{rng.randrange(10**6)}"
                out.append((key, value, INSERT))
                self.rows[key] = value
            elif rng.random() < 0.3:
                out.append((key, self.rows.pop(key), DELETE))
            else:
                value = f"v{rng.randrange(10**6)}"
                out += [(key, self.rows[key], UPDATE_BEFORE), (key, value, UPDATE_AFTER)]
                self.rows[key] = value
        return out

    def expected(self) -> list[dict[str, Any]]:
        return [{"id": k, "v": v} for k, v in sorted(self.rows.items())]


def _files(wh: str, table: str) -> dict[files.BucketKey, list[Any]]:
    return manifests.live_files(tables.open_table(wh, {}, table))


def _assert_reads(wh: str, table: str, expected: list[dict[str, Any]]) -> None:
    assert read_rust(wh, table) == expected
    assert read_pypaimon(wh, table) == expected


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def _create(wh: str, options: dict[str, str], partitioned: bool = False) -> Catalog:
    catalog = Catalog(wh)
    fields = [("id", int_()), ("v", varchar(20))] + ([("p", string())] if partitioned else [])
    catalog.create_table(
        "db.t", fields, ["id", "p"] if partitioned else ["id"], ["p"] if partitioned else [],
        {"changelog-producer": "input", **options},
    )  # fmt: skip
    return catalog


def test_long_stream_stays_bounded_and_exact(wh: str) -> None:
    # Two buckets, a trigger of 3: compaction after every commit keeps each bucket at no more
    # sorted runs than the trigger (one more always forces a merge), while the table equals the
    # reference after every step in both readers.
    _create(wh, {"bucket": "2", "num-sorted-run.compaction-trigger": "3", "manifest.merge-min-count": "8"})
    rng, ref = random.Random(7), Reference()
    changelog: list[tuple[Any, ...]] = []
    compactions = 0
    for batch in range(40):
        rows = ref.changes(rng, 30, 60)
        _commit(wh, "db.t", batch, rows)
        changelog += [({0: "+I", 1: "-U", 2: "+U", 3: "-D"}[k], i, v) for i, v, k in rows]
        report = compactor.compact(wh, {}, "db.t", USER, batch)
        compactions += report.committed
        for metas in _files(wh, "db.t").values():
            assert len({m.level for m in metas if m.level > 0}) + sum(m.level == 0 for m in metas) <= 3
        if batch % 5 == 4:
            _assert_reads(wh, "db.t", ref.expected())
    assert compactions >= 10
    _assert_reads(wh, "db.t", ref.expected())
    # Compaction adds no changelog: a streaming reader sees each input change exactly once.
    assert sorted(read_changelog(wh, "db.t"), key=repr) == sorted(changelog, key=repr)
    # Manifests were merged along the way: the snapshot's list stays short.
    table = tables.open_table(wh, {}, "db.t")
    assert len(manifests.snapshot_manifests(table, tables.latest_snapshot(table))) < 12
    # Compaction output: the original sequence numbers, file source COMPACT, exact retraction counts.
    for metas in _files(wh, "db.t").values():
        for m in metas:
            if m.file_source == files.FILE_SOURCE_COMPACT and m.level == 3:
                assert m.delete_row_count == 0


def test_writer_continues_after_compaction(wh: str) -> None:
    # The writer reads the bucket's highest sequence number when it next writes; compaction keeps
    # the original numbers, so updates written after a full compaction still win.
    _create(wh, {})
    _commit(wh, "db.t", 0, [(1, "a", INSERT), (2, "b", INSERT), (3, "c", INSERT)])
    _commit(wh, "db.t", 1, [(1, "a", UPDATE_BEFORE), (1, "a2", UPDATE_AFTER), (3, "c", DELETE)])
    report = compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True)
    assert (report.committed, report.files_before, report.files_after) == (True, 2, 1)
    (metas,) = _files(wh, "db.t").values()
    assert [(m.level, m.row_count, m.delete_row_count, m.max_sequence_number) for m in metas] == [(5, 2, 0, 4)]
    _commit(wh, "db.t", 2, [(1, "a2", UPDATE_BEFORE), (1, "a3", UPDATE_AFTER), (2, "b", DELETE), (3, "c3", INSERT)])
    _assert_reads(wh, "db.t", [{"id": 1, "v": "a3"}, {"id": 3, "v": "c3"}])
    # Nothing to do on a bucket that is one top-level run.
    assert compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True).files_after == 1
    assert not compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True).committed


def test_minor_compaction_keeps_retractions_for_older_levels(wh: str) -> None:
    # A delete merged into a middle level must survive there, or the older top-level row would
    # come back.
    _create(wh, {"num-sorted-run.compaction-trigger": "2", "compaction.max-size-amplification-percent": "100000"})
    # A top level much larger than the new files, so the minor merge leaves it alone.
    _commit(wh, "db.t", 0, [(i, f"a{i}", INSERT) for i in range(5000)])
    compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True)
    _commit(wh, "db.t", 1, [(1, "a1", DELETE), (2, "a2", UPDATE_BEFORE), (2, "b2", UPDATE_AFTER)])
    _commit(wh, "db.t", 2, [(3, "a3", DELETE)])
    report = compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1)
    assert report.committed
    (metas,) = _files(wh, "db.t").values()
    levels = sorted((m.level, m.delete_row_count) for m in metas)
    # Trigger 2 means num-levels 3: the top is level 2, the merged deletes (ids 1 and 3) sit at 1;
    # the -U of id 2 is superseded by its +U and merged away.
    assert levels == [(1, 2), (2, 0)]
    expected = [{"id": i, "v": "b2" if i == 2 else f"a{i}"} for i in range(5000) if i not in (1, 3)]
    _assert_reads(wh, "db.t", expected)


def test_partition_filter_and_refusals(wh: str) -> None:
    _create(wh, {}, partitioned=True)
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": wh}).get_table("db.t")
    for batch in range(2):
        builder = t.new_stream_write_builder().with_commit_user(USER)
        write = builder.new_write()
        write.write_arrow(
            pa.RecordBatch.from_arrays(
                [pa.array([1, 2], pa.int32()), pa.array([f"x{batch}"] * 2), pa.array(["a", "b"]),
                 pa.array([INSERT, INSERT], pa.int8())],
                names=["id", "v", "p", "_VALUE_KIND"],
            )
        )  # fmt: skip
        builder.new_commit().filter_and_commit({batch: write.prepare_commit(True, batch)})
    report = compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True, partitions=[{"p": "a"}])
    assert (report.buckets, report.files_before, report.files_after) == (1, 2, 1)
    levels = {k[0]: sorted(m.level for m in v) for k, v in _files(wh, "db.t").items()}
    assert levels == {("a",): [5], ("b",): [0, 0]}
    _assert_reads(wh, "db.t", [{"id": 1, "v": "x1", "p": "a"}, {"id": 2, "v": "x1", "p": "b"}])
    with pytest.raises(ValueError, match="every partition key"):
        compactor.plan(wh, {}, "db.t", full=True, partitions=[{"q": "a"}])


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("ascending", {1: "a", 2: "d", 3: "y", 4: "q"}),
        # the lowest sequence.field value wins; a NULL still loses
        ("descending", {1: "b", 2: "c", 3: "y", 4: "q"}),
    ],
)
@pytest.mark.parametrize("mow", [False, True], ids=["mor", "mow"])
def test_sequence_field_decides_as_before_compaction(wh: str, order: str, expected: dict[int, str], mow: bool) -> None:
    from pypaimon_rust.datafusion import PaimonCatalog

    options = {"changelog-producer": "input", "bucket": "1", "sequence.field": "ts", "sequence.field.sort-order": order}
    if mow:
        # MOW: the second commit's rows are lifted over the first's, which deletion vectors retire
        # only where the newer row wins; otherwise the older row is what the output keeps.
        options["deletion-vectors.enabled"] = "true"
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", varchar(20)), ("ts", bigint())], ["id"], [], options)
    commits: list[list[tuple[int, str, int | None]]] = [
        [(1, "a", 10), (2, "c", 5), (3, "x", None), (4, "p", 7)],
        [(1, "b", 5), (2, "d", 10), (3, "y", 1), (4, "q", 7)],  # equal ts: the later write wins
    ]
    # (more rows in the first commit, so that the compaction after the second one keeps its file)
    commits[0] += [(i, "filler", 0) for i in range(100, 400)]
    for batch, rows in enumerate(commits):
        builder = PaimonCatalog({"warehouse": wh}).get_table("db.t").new_stream_write_builder()
        write = builder.with_commit_user(USER).new_write()
        columns = list(zip(*rows, strict=True))
        arrays = [pa.array(columns[0], pa.int32()), pa.array(columns[1]), pa.array(columns[2], pa.int64())]
        arrays.append(pa.array([INSERT] * len(rows), pa.int8()))
        write.write_arrow(pa.RecordBatch.from_arrays(arrays, names=["id", "v", "ts", "_VALUE_KIND"]))
        assert builder.new_commit().filter_and_commit({batch: write.prepare_commit(True, batch)}) == 1
        if mow:
            assert compactor.compact(wh, {}, "db.t", COMPACTOR, batch).committed

    def values() -> dict[int, str]:
        rows = read_rust(wh, "db.t")
        assert [(r["id"], r["v"]) for r in rows] == [(r["id"], r["v"]) for r in read_pypaimon(wh, "db.t")]
        return {r["id"]: r["v"] for r in rows if r["id"] < 100}

    assert values() == expected  # the readers merge by sequence.field (MOW: the compaction did)
    if mow:
        assert len(next(iter(_files(wh, "db.t").values()))) == 2 and _vectors(wh, "db.t")
    assert compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True).committed
    assert len(next(iter(_files(wh, "db.t").values()))) == 1
    assert values() == expected  # and the compacted file keeps the same winners


def _vectors(wh: str, table: str) -> dict[files.BucketKey, dict[str, Any]]:
    t = tables.open_table(wh, {}, table)
    by_bucket = index.vector_index_files(t, tables.latest_snapshot(t))
    return {k: index.read_vectors(t, k[0], k[1], v) for k, v in by_bucket.items()}


@pytest.mark.parametrize(("trigger", "bucket"), [("5", "2"), ("2", "2"), ("5", "-1")])
def test_mow_tables_mark_older_versions_in_deletion_vectors(wh: str, trigger: str, bucket: str) -> None:
    # deletion-vectors.enabled: readers skip level 0 and merge nothing. After each commit the
    # compaction lifts level 0 and marks the older version of every key it brings as deleted in a
    # deletion vector, leaving the files above untouched (unless the universal rules pick them).
    from sinks.lifecycle import expire

    retain = {"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "4", "snapshot.time-retained": "1 ms"}
    options = {"bucket": bucket, "deletion-vectors.enabled": "true", "num-sorted-run.compaction-trigger": trigger}
    if bucket == "-1":  # dynamic buckets: the writer's HASH index and the vectors share the index manifest
        options["dynamic-bucket.target-row-num"] = "20"
    _create(wh, {**options, **retain})
    rng, ref = random.Random(3), Reference()
    shown: list[dict[str, Any]] = []
    marked = 0
    for batch in range(30):
        _commit(wh, "db.t", batch, ref.changes(rng, 25, 60))
        _assert_reads(wh, "db.t", shown)  # the commit is not visible before its compaction
        assert compactor.compact(wh, {}, "db.t", USER, batch).committed
        expire.expire_snapshots(wh, {}, "db.t")  # keeps the index files the kept snapshots read
        shown = ref.expected()
        _assert_reads(wh, "db.t", shown)
        vectors = _vectors(wh, "db.t")
        for key, metas in _files(wh, "db.t").items():
            assert all(m.level > 0 for m in metas)
            # a vector is only ever kept for a live file of its bucket, and within its rows
            for name, bitmap in vectors.get(key, {}).items():
                meta = next(m for m in metas if m.file_name == name)
                assert len(bitmap) > 0 and max(bitmap) < meta.row_count
        marked = max(marked, sum(len(b) for v in vectors.values() for b in v.values()))
    assert marked > 0  # updates and deletes were applied as deletion vectors, not only rewrites
    # Expiry removed the index files only expired snapshots read: those left are the kept ones'.
    from pypaimon.manifest.index_manifest_file import IndexManifestFile

    table = tables.open_table(wh, {}, "db.t")
    snapshots = table.snapshot_manager().list_snapshots()
    kept = {e.index_file.file_name for s in snapshots for e in IndexManifestFile(table).read(s.index_manifest)}
    assert any(index.vector_index_files(table, s) for s in snapshots)
    assert {p.name for p in (Path(wh) / "db.db" / "t" / "index").iterdir()} == kept
    # A full compaction folds the vectors into the files it rewrites (a bucket that is one
    # top-level file already is rewritten for its vector).
    if _vectors(wh, "db.t"):
        assert compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True).committed
    assert _vectors(wh, "db.t") == {}
    _assert_reads(wh, "db.t", shown)


def test_mow_with_ignore_delete_keeps_the_row_a_delete_would_remove(wh: str) -> None:
    _create(wh, {"bucket": "1", "deletion-vectors.enabled": "true", "ignore-delete": "true"})
    _commit(wh, "db.t", 0, [(1, "a", INSERT), (2, "b", INSERT)])
    assert compactor.compact(wh, {}, "db.t", USER, 0).committed
    _commit(wh, "db.t", 1, [(1, "a", DELETE), (2, "b", UPDATE_BEFORE), (2, "c", UPDATE_AFTER), (3, "d", INSERT)])
    assert compactor.compact(wh, {}, "db.t", USER, 1).committed
    _assert_reads(wh, "db.t", [{"id": 1, "v": "a"}, {"id": 2, "v": "c"}, {"id": 3, "v": "d"}])


def test_mow_full_compaction_rewrites_a_lone_top_file_with_a_vector(wh: str) -> None:
    # A vector on a bucket that is a single top-level file (written by another engine, e.g. a
    # DELETE): Java's full compaction rewrites the file without the deleted rows; so does lakecdc.
    _create(wh, {"bucket": "1", "deletion-vectors.enabled": "true"})
    _commit(wh, "db.t", 0, [(i, f"v{i}", INSERT) for i in range(5)])
    assert compactor.compact(wh, {}, "db.t", USER, 0).committed
    table = tables.open_table(wh, {}, "db.t")
    ((key, (top,)),) = manifests.live_files(table).items()
    # the file's rows are in key order: position 1 is id 1
    vector = index.write_vectors(table, key[0], key[1], {top.file_name: BitMap([1])})
    change = commits.CompactChange(key[0], key[1], [], [], index_after=[vector])
    assert commits.commit_compaction(table, "elsewhere", 1, [change]).committed
    expected = [{"id": i, "v": f"v{i}"} for i in (0, 2, 3, 4)]
    _assert_reads(wh, "db.t", expected)
    assert compactor.plan(wh, {}, "db.t", full=False) == []  # nothing new in level 0
    assert compactor.compact(wh, {}, "db.t", COMPACTOR, 2**63 - 1, full=True).committed
    assert _vectors(wh, "db.t") == {}
    assert [m.row_count for metas in _files(wh, "db.t").values() for m in metas] == [4]
    _assert_reads(wh, "db.t", expected)
