"""``lakecdc rescale``: a fixed-bucket table (or one partition) rewritten into a new bucket count
reads the same through both readers, and a writer continues on the new layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.cli.main import main
from schema_evolution.types import int_, string, varchar
from sinks.compaction.rescale import rescale
from sinks.store import index, manifests, tables
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import _commit


def _buckets(wh: str) -> set[tuple[tuple[object, ...], int]]:
    return set(manifests.live_files(tables.open_table(wh, {}, "db.t")))


def _reads(wh: str) -> list[dict[str, object]]:
    rows = read_rust(wh, "db.t")
    assert rows == read_pypaimon(wh, "db.t")
    return rows


@pytest.fixture
def table(tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table(
        "db.t", [("id", int_()), ("v", varchar(20))], ["id"], [], {"changelog-producer": "input", "bucket": "2"}
    )
    _commit(wh, "db.t", 0, [(i, f"v{i}", INSERT) for i in range(40)])
    _commit(wh, "db.t", 1, [(3, "v3", UPDATE_BEFORE), (3, "x", UPDATE_AFTER), (5, "v5", DELETE)])
    return wh


def test_rescale_keeps_the_rows_and_the_writer_continues(table: str) -> None:
    before = _reads(table)
    report = rescale(table, {}, "db.t", 4)
    assert (report.old_buckets, report.new_buckets, report.rows) == (2, 4, 39)
    assert _reads(table) == before
    assert {b for _, b in _buckets(table)} == {0, 1, 2, 3}
    kinds = [s.commit_kind for s in tables.open_table(table, {}, "db.t").snapshot_manager().list_snapshots()]
    assert kinds[-1] == "OVERWRITE"
    # the job's writer, restarted, writes the new layout: updates land on the rescaled rows
    _commit(table, "db.t", 2, [(3, "x", UPDATE_BEFORE), (3, "y", UPDATE_AFTER), (7, "v7", DELETE), (99, "n", INSERT)])
    expected = {r["id"]: r["v"] for r in before if r["id"] != 7} | {3: "y", 99: "n"}
    assert {r["id"]: r["v"] for r in _reads(table)} == expected


def test_rescale_one_partition(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table(
        "db.t",
        [("id", int_()), ("v", varchar(20)), ("p", string())],
        ["id", "p"],
        ["p"],
        {"changelog-producer": "input", "bucket": "1"},
    )
    import pyarrow as pa
    from pypaimon_rust.datafusion import PaimonCatalog

    builder = PaimonCatalog({"warehouse": wh}).get_table("db.t").new_stream_write_builder().with_commit_user("u")
    write = builder.new_write()
    rows = [(i, f"v{i}", "a" if i % 2 else "b") for i in range(200)]
    write.write_arrow(
        pa.RecordBatch.from_arrays(
            [pa.array([r[0] for r in rows], pa.int32()), pa.array([r[1] for r in rows]), pa.array([r[2] for r in rows]),
             pa.array([INSERT] * len(rows), pa.int8())],
            names=["id", "v", "p", "_VALUE_KIND"],
        )
    )  # fmt: skip
    assert builder.new_commit().filter_and_commit({0: write.prepare_commit(True, 0)}) == 1
    before = _reads(wh)
    args = ["rescale", "--warehouse", wh, "--database", "db", "--table", "t", "--bucket-num", "3"]
    assert main([*args, "--partition", "p=a"]) == 0
    assert _reads(wh) == before
    layout = _buckets(wh)
    assert {b for part, b in layout if part == ("a",)} == {0, 1, 2}
    assert {b for part, b in layout if part == ("b",)} == {0}


def test_only_fixed_bucket_tables_rescale(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", varchar(20))], ["id"], [], {"changelog-producer": "input"})
    with pytest.raises(ValueError, match="only fixed-bucket tables can be rescaled"):
        rescale(wh, {}, "db.t", 4)
    with pytest.raises(ValueError, match="--bucket-num must be 1 or more"):
        rescale(wh, {}, "db.t", 0)


@pytest.mark.parametrize(
    "options",
    [{"merge-engine": "first-row", "ignore-delete": "true"}, {"deletion-vectors.enabled": "true"}],
    ids=["first-row", "mow"],
)
def test_tables_whose_readers_skip_level0_read_the_same_right_after(tmp_path: Path, options: dict[str, str]) -> None:
    from sinks.compaction import compactor

    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", varchar(20))], ["id"], [], {"bucket": "2", **options})
    _commit(wh, "db.t", 0, [(i, f"v{i}", INSERT) for i in range(40)])
    compactor.compact(wh, {}, "db.t", "c", 0)
    _commit(wh, "db.t", 1, [(3, "v3", UPDATE_BEFORE), (3, "x", UPDATE_AFTER), (5, "v5", DELETE)])
    compactor.compact(wh, {}, "db.t", "c", 1)
    table = tables.open_table(wh, {}, "db.t")
    # MOW: the update and the delete are deletion vectors now, which the rewrite must not carry over.
    assert bool(index.vector_index_files(table, tables.latest_snapshot(table))) == ("merge-engine" not in options)
    before = _reads(wh)
    assert len(before) == (40 if "merge-engine" in options else 39)
    rescale(wh, {}, "db.t", 3)
    assert _reads(wh) == before
    assert len(_buckets(wh)) == 3
    table = tables.open_table(wh, {}, "db.t")
    live = {m.file_name for metas in manifests.live_files(table).values() for m in metas}
    for files in index.vector_index_files(table, tables.latest_snapshot(table)).values():
        for f in files:
            assert set(f.dv_ranges) <= live
