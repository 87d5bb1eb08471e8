"""COMPACT commits (sinks.store.commits): a compaction that lost a race with another commit is
given up, its output deleted, and the table reads as the winner left it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyroaring import BitMap

from sinks.compaction import compactor
from sinks.store import commits, files, index, tables
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from tests.sinks.compaction.test_compaction import COMPACTOR, USER, _assert_reads, _commit, _create


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def test_compaction_that_lost_a_race_is_dropped(wh: str) -> None:
    _create(wh, {})
    for b in range(3):
        _commit(wh, "db.t", b, [(b, f"x{b}", INSERT), (9, f"n{b}", INSERT if b == 0 else UPDATE_AFTER)])
    first = compactor.plan(wh, {}, "db.t", full=True)
    second = compactor.plan(wh, {}, "db.t", full=True)
    table = tables.open_table(wh, {}, "db.t")
    won = commits.commit_compaction(table, "c1", 1, compactor.run_locally(first))
    lost_changes = compactor.run_locally(second)
    lost = commits.commit_compaction(table, "c2", 1, lost_changes)
    assert won.committed and not lost.committed and "conflicts" in (lost.conflict or "")
    # The loser's files are gone, the winner's are what the table reads.
    for change in lost_changes:
        for meta in change.after:
            assert not Path(files.data_file_path(table, change.partition, change.bucket, meta)).exists()
    _assert_reads(wh, "db.t", [{"id": 0, "v": "x0"}, {"id": 1, "v": "x1"}, {"id": 2, "v": "x2"}, {"id": 9, "v": "n2"}])


def test_mow_compaction_over_replaced_vectors_is_a_lost_race(wh: str) -> None:
    # Two compactions that read the same deletion vectors: the second to commit would drop the
    # first one's deletions, so it is given up and its index file removed.
    _create(wh, {"bucket": "1", "deletion-vectors.enabled": "true"})
    _commit(wh, "db.t", 0, [(i, f"v{i}", INSERT) for i in range(10)])
    assert compactor.compact(wh, {}, "db.t", USER, 0).committed
    _commit(wh, "db.t", 1, [(1, "v1", UPDATE_BEFORE), (1, "x", UPDATE_AFTER)])
    assert compactor.compact(wh, {}, "db.t", USER, 1).committed
    table = tables.open_table(wh, {}, "db.t")
    (key, stale), *_ = index.vector_index_files(table, tables.latest_snapshot(table)).items()
    _commit(wh, "db.t", 2, [(2, "v2", DELETE)])
    assert compactor.compact(wh, {}, "db.t", USER, 2).committed  # replaces the bucket's index file
    late = index.write_vectors(table, key[0], key[1], {"some-file": BitMap([0])})
    change = commits.CompactChange(key[0], key[1], [], [], index_before=list(stale), index_after=[late])
    result = commits.commit_compaction(table, COMPACTOR, 3, [change])
    assert not result.committed and "deletion vectors of bucket 0" in (result.conflict or "")
    assert not table.file_io.exists(table.path_factory().bucket_index_path(key[0], key[1], late))
    expected = [{"id": i, "v": "x" if i == 1 else f"v{i}"} for i in range(10) if i != 2]
    _assert_reads(wh, "db.t", expected)
