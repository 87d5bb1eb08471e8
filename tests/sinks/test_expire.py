"""Snapshot expiry against real files: after it, exactly the files kept snapshots and tags read
remain, and every kept snapshot and tag still reads its rows (both libraries)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from schema_evolution.types import int_, varchar
from sinks import compactor, expire
from sinks import paimon_store as store
from sinks.catalog import Catalog
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.test_compaction import USER, Reference, _commit


def _read_snapshot(wh: str, snapshot_id: int) -> list[dict[str, Any]]:
    table = store.open_table(wh, {}, "db.t").copy({"scan.snapshot-id": str(snapshot_id)})
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda r: r["id"])


def _referenced(wh: str) -> set[str]:
    """Every file a snapshot or tag on disk reads, computed independently of sinks.expire."""
    table = store.open_table(wh, {}, "db.t")
    snapshots = list(table.snapshot_manager().list_snapshots())
    tags = table.tag_manager()
    snapshots += [tags.get(n).trim_to_snapshot() for n in tags.list_tags()]
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    lists = ManifestListManager(table)
    out: set[str] = set()
    for s in snapshots:
        for (partition, bucket), metas in store.live_files(table, s).items():
            out.update(store.data_file_path(table, partition, bucket, m) for m in metas)
        for name in (s.base_manifest_list, s.delta_manifest_list, s.changelog_manifest_list):
            if name:
                out.add(f"{table.table_path}/manifest/{name}")
                out.update(f"{table.table_path}/manifest/{m.file_name}" for m in lists.read(name))
        if s.changelog_manifest_list:
            for e in store.manifest_entries(table, lists.read(s.changelog_manifest_list)):
                out.add(store.data_file_path(table, tuple(e.partition.values), e.bucket, e.file))
    return out


def _on_disk(wh: str) -> set[str]:
    root = Path(wh) / "db.db" / "t"
    return {
        str(p)
        for p in root.rglob("*")
        if p.is_file() and (p.parent.name.startswith("bucket-") or p.parent.name == "manifest")
    }


@pytest.fixture
def history(tmp_path: Path) -> tuple[str, dict[int, list[dict[str, Any]]]]:
    """40 micro-batches with updates and deletes, compacted as they go, a tag at snapshot 5;
    returns the warehouse and the expected rows per snapshot."""
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table(
        "db.t", [("id", int_()), ("v", varchar(20))], ["id"], [],
        {"changelog-producer": "input", "bucket": "2", "num-sorted-run.compaction-trigger": "2",
         "manifest.merge-min-count": "6"},
    )  # fmt: skip
    rng, ref = random.Random(3), Reference()
    expected: dict[int, list[dict[str, Any]]] = {}
    for batch in range(40):
        _commit(wh, "db.t", batch, ref.changes(rng, 20, 40))
        # The data snapshot, and the compaction snapshot (if any) that reads the same rows.
        for step in ("data", "compaction"):
            if step == "compaction":
                compactor.compact(wh, {}, "db.t", USER, batch)
            latest = store.latest_snapshot(store.open_table(wh, {}, "db.t"))
            expected[latest.id] = ref.expected()
            if latest.id == 5 and "t5" not in store.open_table(wh, {}, "db.t").tag_manager().list_tags():
                store.open_table(wh, {}, "db.t").create_tag("t5")
    assert sorted(expected) == list(range(1, max(expected) + 1))
    return wh, expected


def test_expiry_keeps_exactly_what_kept_snapshots_and_tags_read(
    history: tuple[str, dict[int, list[dict[str, Any]]]],
) -> None:
    wh, expected = history
    latest = max(expected)
    before = _on_disk(wh)
    assert before == _referenced(wh)  # nothing orphaned so far
    report = expire.expire_snapshots(
        wh,
        {},
        "db.t",
        {"snapshot.num-retained.min": "6", "snapshot.time-retained": "1 ms", "snapshot.expire.limit": "1000"},
    )
    assert (report.expired_snapshots, report.earliest_kept) == (latest - 6, latest - 5)
    assert report.data_files_deleted > 0 and report.changelog_files_deleted > 0 and report.manifests_deleted > 0
    table = store.open_table(wh, {}, "db.t")
    assert [s.id for s in table.snapshot_manager().list_snapshots()] == list(range(latest - 5, latest + 1))
    assert (Path(table.snapshot_manager().snapshot_dir) / "EARLIEST").read_text() == str(latest - 5)
    after = _on_disk(wh)
    assert after == _referenced(wh) and after < before
    for sid in range(latest - 5, latest + 1):
        assert _read_snapshot(wh, sid) == expected[sid]
    tagged = table.tag_manager().get("t5").trim_to_snapshot()
    assert tagged.id == 5
    tag_table = table.copy({"scan.tag-name": "t5"})
    builder = tag_table.new_read_builder()
    tag_rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    assert sorted(tag_rows, key=lambda r: r["id"]) == expected[5]
    assert read_rust(wh, "db.t") == expected[latest] == read_pypaimon(wh, "db.t")
    # Nothing more to do now; a second run changes nothing.
    again = expire.expire_snapshots(
        wh, {}, "db.t", {"snapshot.num-retained.min": "6", "snapshot.time-retained": "1 ms"}
    )
    assert again.expired_snapshots == 0 and _on_disk(wh) == after


def test_default_retention_keeps_young_snapshots(history: tuple[str, dict[int, list[dict[str, Any]]]]) -> None:
    wh, expected = history
    before = _on_disk(wh)
    # Everything is younger than the default hour: nothing expires.
    assert expire.expire_snapshots(wh, {}, "db.t").expired_snapshots == 0
    assert _on_disk(wh) == before
    assert len(os.listdir(Path(wh) / "db.db" / "t" / "snapshot")) >= len(expected)


def test_rollback_to_snapshot_then_tag_cleans_what_it_orphaned(
    history: tuple[str, dict[int, list[dict[str, Any]]]],
) -> None:
    wh, expected = history
    latest = max(expected)
    table = store.open_table(wh, {}, "db.t")
    table.create_tag("late", latest - 2)
    report = expire.rollback_to(wh, {}, "db.t", str(latest - 20))
    assert (report.snapshot, report.removed_snapshots) == (latest - 20, 20)
    assert report.data_files_deleted > 0 and report.manifests_deleted > 0
    assert read_rust(wh, "db.t") == expected[latest - 20] == read_pypaimon(wh, "db.t")
    table = store.open_table(wh, {}, "db.t")
    assert table.tag_manager().list_tags() == ["t5"]  # the tag of a removed snapshot went with it
    assert _on_disk(wh) == _referenced(wh)
    # A writer continues on the rolled-back table (a new commit user: the old one's identifiers
    # are ahead of what the table now holds).
    expire.rollback_to(wh, {}, "db.t", "t5")
    assert read_rust(wh, "db.t") == expected[5] == read_pypaimon(wh, "db.t")
    assert _on_disk(wh) == _referenced(wh)
    _commit(wh, "db.t", 0, [(1000, "after", 0)], user="next-job")
    assert read_rust(wh, "db.t") == sorted([*expected[5], {"id": 1000, "v": "after"}], key=lambda r: r["id"])
    with pytest.raises(ValueError, match="no tag 'nope'"):
        expire.rollback_to(wh, {}, "db.t", "nope")
    with pytest.raises(ValueError, match="no snapshot 999"):
        expire.rollback_to(wh, {}, "db.t", "999")
