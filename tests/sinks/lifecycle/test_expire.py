"""Snapshot expiry against real files: after it, exactly the files kept snapshots and tags read
remain, and every kept snapshot and tag still reads its rows (both libraries)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from schema_evolution.types import int_, varchar
from sinks.compaction import compactor
from sinks.lifecycle import expire
from sinks.store import changelogs, files, manifests, tables
from sinks.table.catalog import Catalog
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import USER, Reference, _commit


def _read_snapshot(wh: str, snapshot_id: int) -> list[dict[str, Any]]:
    table = tables.open_table(wh, {}, "db.t").copy({"scan.snapshot-id": str(snapshot_id)})
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda r: r["id"])


def _referenced(wh: str) -> set[str]:
    """Every file a snapshot or tag on disk reads, computed independently of sinks.lifecycle.expire."""
    table = tables.open_table(wh, {}, "db.t")
    snapshots = list(table.snapshot_manager().list_snapshots())
    tags = table.tag_manager()
    snapshots += [tags.get(n).trim_to_snapshot() for n in tags.list_tags()]
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    lists = ManifestListManager(table)
    out: set[str] = set()
    for s in snapshots:
        for (partition, bucket), metas in manifests.live_files(table, s).items():
            out.update(files.data_file_path(table, partition, bucket, m) for m in metas)
        for name in (s.base_manifest_list, s.delta_manifest_list, s.changelog_manifest_list):
            if name:
                out.add(f"{table.table_path}/manifest/{name}")
                out.update(f"{table.table_path}/manifest/{m.file_name}" for m in lists.read(name))
        if s.changelog_manifest_list:
            for e in manifests.manifest_entries(table, lists.read(s.changelog_manifest_list)):
                out.add(files.data_file_path(table, tuple(e.partition.values), e.bucket, e.file))
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
            latest = tables.latest_snapshot(tables.open_table(wh, {}, "db.t"))
            assert latest is not None
            expected[latest.id] = ref.expected()
            if latest.id == 5 and "t5" not in tables.open_table(wh, {}, "db.t").tag_manager().list_tags():
                tables.open_table(wh, {}, "db.t").create_tag("t5")
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
    table = tables.open_table(wh, {}, "db.t")
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
    table = tables.open_table(wh, {}, "db.t")
    table.create_tag("late", latest - 2)
    report = expire.rollback_to(wh, {}, "db.t", str(latest - 20))
    assert (report.snapshot, report.removed_snapshots) == (latest - 20, 20)
    assert report.data_files_deleted > 0 and report.manifests_deleted > 0
    assert read_rust(wh, "db.t") == expected[latest - 20] == read_pypaimon(wh, "db.t")
    table = tables.open_table(wh, {}, "db.t")
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


def _changelog_rows(wh: str, changelog: Any) -> list[tuple[Any, ...]]:
    """A kept changelog's rows, read from its changelog manifest list and files as Java's
    streaming reader does: (row kind, id, v), sorted."""
    import pyarrow.parquet as pq
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table = tables.open_table(wh, {}, "db.t")
    rows = []
    for e in manifests.manifest_entries(table, ManifestListManager(table).read(changelog.changelog_manifest_list)):
        data = pq.read_table(files.data_file_path(table, tuple(e.partition.values), e.bucket, e.file))
        for r in data.to_pylist():
            rows.append(({0: "+I", 1: "-U", 2: "+U", 3: "-D"}[r[files.KIND]], r["id"], r["v"]))
    return sorted(rows, key=repr)


def _referenced_with_changelogs(wh: str) -> set[str]:
    """``_referenced`` plus what the changelogs kept beyond their snapshots read."""
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table = tables.open_table(wh, {}, "db.t")
    lists = ManifestListManager(table)
    out = _referenced(wh)
    for cid in changelogs.long_lived_changelog_ids(table):
        changelog = changelogs.read_long_lived_changelog(table, cid)
        assert changelog is not None
        if not changelog.changelog_manifest_list:
            continue
        out.add(f"{table.table_path}/manifest/{changelog.changelog_manifest_list}")
        listed = lists.read(changelog.changelog_manifest_list)
        out.update(f"{table.table_path}/manifest/{m.file_name}" for m in listed)
        for e in manifests.manifest_entries(table, listed):
            out.add(files.data_file_path(table, tuple(e.partition.values), e.bucket, e.file))
    return out


def test_decoupled_changelog_outlives_its_snapshots(history: tuple[str, dict[int, list[dict[str, Any]]]]) -> None:
    wh, expected = history
    latest = max(expected)
    table = tables.open_table(wh, {}, "db.t")
    # What each snapshot's changelog holds, through pypaimon-rust, while the snapshots exist.
    before = {sid: sorted(read_changelog_of(wh, sid), key=repr) for sid in range(latest - 19, latest - 5)}
    assert any(before.values())
    retention = {"snapshot.num-retained.min": "6", "snapshot.time-retained": "1 ms", "snapshot.expire.limit": "1000"}
    report = expire.expire_snapshots(
        wh, {}, "db.t", {**retention, "changelog.num-retained.min": "20", "changelog.time-retained": "1 ms"}
    )
    # Snapshots expire as before; their changelogs stay for the newest 20 snapshots' worth.
    assert (report.expired_snapshots, report.earliest_kept) == (latest - 6, latest - 5)
    assert report.changelog_files_deleted == 0 and report.expired_changelogs == latest - 20
    table = tables.open_table(wh, {}, "db.t")
    assert [s.id for s in table.snapshot_manager().list_snapshots()] == list(range(latest - 5, latest + 1))
    assert changelogs.long_lived_changelog_ids(table) == list(range(latest - 19, latest - 5))
    changelog_dir = Path(table.table_path) / "changelog"
    assert ((changelog_dir / "EARLIEST").read_text(), (changelog_dir / "LATEST").read_text()) == (
        str(latest - 19),
        str(latest - 6),
    )
    for sid, rows in before.items():
        changelog = changelogs.read_long_lived_changelog(table, sid)
        assert changelog is not None and changelog.id == sid and changelog.commit_kind in ("APPEND", "COMPACT")
        if changelog.changelog_manifest_list:
            assert _changelog_rows(wh, changelog) == rows
        else:
            assert rows == []
    # Exactly the files the kept snapshots, tags and changelogs read are left; the table reads right.
    assert _on_disk(wh) == _referenced_with_changelogs(wh)
    assert read_rust(wh, "db.t") == expected[latest] == read_pypaimon(wh, "db.t")
    # remove-orphan-files counts the kept changelogs' files as referenced.
    from sinks.lifecycle import orphans

    assert orphans.remove_orphan_files(wh, {}, "db.t", older_than_ms=2**62, dry_run=True).orphans == ()
    # A shorter changelog retention later: the older kept changelogs go with their files.
    again = expire.expire_snapshots(
        wh, {}, "db.t", {**retention, "changelog.num-retained.min": "8", "changelog.time-retained": "1 ms"}
    )
    assert again.expired_snapshots == 0 and again.expired_changelogs == 12
    table = tables.open_table(wh, {}, "db.t")
    assert changelogs.long_lived_changelog_ids(table) == [latest - 7, latest - 6]
    assert _on_disk(wh) == _referenced_with_changelogs(wh)
    # Rolling back to a tag older than the kept changelogs removes them too.
    expire.rollback_to(wh, {}, "db.t", "t5")
    table = tables.open_table(wh, {}, "db.t")
    assert changelogs.long_lived_changelog_ids(table) == []
    assert read_rust(wh, "db.t") == expected[5] and _on_disk(wh) == _referenced_with_changelogs(wh)


def read_changelog_of(wh: str, snapshot_id: int) -> list[tuple[Any, ...]]:
    """One snapshot's changelog rows through pypaimon-rust: (row kind, id, v)."""
    import pyarrow as pa
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": wh}).get_table("db.t")
    rb = t.new_read_builder().with_include_row_kind(True)
    batches = rb.new_read().read(
        rb.new_incremental_scan(snapshot_id - 1, snapshot_id, mode="changelog").plan().splits()
    )
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return [(r["rowkind"], r["id"], r["v"]) for r in rows]


def test_decoupled_changelog_without_a_changelog_producer_keeps_the_input_files(tmp_path: Path) -> None:
    """changelog-producer=none: a snapshot's changelog is its level-0 input files, so those stay
    (compaction removed them from the table) until the changelog expires."""
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table(
        "db.t", [("id", int_()), ("v", varchar(20))], ["id"], [],
        {"changelog-producer": "none", "num-sorted-run.compaction-trigger": "2"},
    )  # fmt: skip
    rng, ref = random.Random(5), Reference()
    for batch in range(12):
        _commit(wh, "db.t", batch, ref.changes(rng, 10, 30))
        compactor.compact(wh, {}, "db.t", USER, batch)
    table = tables.open_table(wh, {}, "db.t")
    latest_snapshot = tables.latest_snapshot(table)
    assert latest_snapshot is not None
    latest = latest_snapshot.id
    retention = {"snapshot.num-retained.min": "2", "snapshot.time-retained": "1 ms", "snapshot.expire.limit": "1000"}
    expire.expire_snapshots(wh, {}, "db.t", {**retention, "changelog.num-retained.min": "1000"})
    table = tables.open_table(wh, {}, "db.t")
    kept = changelogs.long_lived_changelog_ids(table)
    assert kept == list(range(1, latest - 1))
    # Every input file a kept changelog added is still on disk, though the table no longer reads most.
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    lists = ManifestListManager(table)
    inputs = set()
    for cid in kept:
        changelog = changelogs.read_long_lived_changelog(table, cid)
        assert changelog is not None
        for e in manifests.manifest_entries(table, lists.read(changelog.delta_manifest_list)):
            if e.file.file_source == 0:
                inputs.add(files.data_file_path(table, tuple(e.partition.values), e.bucket, e.file))
    assert inputs and all(Path(p).exists() for p in inputs)
    assert not inputs <= _referenced(wh)
    assert read_rust(wh, "db.t") == ref.expected() == read_pypaimon(wh, "db.t")
    # The changelog retention reached: they go, but for the newest, which always stays while the
    # changelog is decoupled.
    report = expire.expire_snapshots(
        wh, {}, "db.t", {**retention, "changelog.num-retained.min": "2", "changelog.time-retained": "2 ms"}
    )
    assert report.expired_changelogs == len(kept) - 1
    assert changelogs.long_lived_changelog_ids(tables.open_table(wh, {}, "db.t")) == kept[-1:]
    assert not any(Path(p).exists() for p in inputs - _referenced(wh) - _inputs_of(wh, kept[-1]))
    assert read_rust(wh, "db.t") == ref.expected() == read_pypaimon(wh, "db.t")
    # Retention back to the snapshots': the last one goes too, and only what the snapshots read is left.
    assert expire.expire_snapshots(wh, {}, "db.t", retention).expired_changelogs == 1
    assert changelogs.long_lived_changelog_ids(tables.open_table(wh, {}, "db.t")) == []
    assert not any(Path(p).exists() for p in inputs - _referenced(wh))
    assert not (Path(tables.open_table(wh, {}, "db.t").table_path) / "changelog" / "EARLIEST").exists()


def _inputs_of(wh: str, changelog_id: int) -> set[str]:
    """Files a kept changelog's delta adds or removes (it still needs both)."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table = tables.open_table(wh, {}, "db.t")
    changelog = changelogs.read_long_lived_changelog(table, changelog_id)
    assert changelog is not None
    out = set()
    for manifest in ManifestListManager(table).read(changelog.delta_manifest_list):
        for e in ManifestFileManager(table).read(manifest.file_name, drop_stats=True):
            out.add(files.data_file_path(table, tuple(e.partition.values), e.bucket, e.file))
    return out
