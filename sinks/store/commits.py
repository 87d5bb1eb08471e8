"""Compaction results committed as one COMPACT snapshot, with Paimon's conflict detection."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sinks.store.files import delete_data_files
from sinks.store.index import delete_index_files, vector_index_files
from sinks.store.manifests import manifest_entries

if TYPE_CHECKING:
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    from sinks.store.paimon_types import (
        DataFileMeta,
        FileStoreTable,
        IndexFileMeta,
        IndexManifestEntry,
        ManifestEntry,
        ManifestFileMeta,
        Snapshot,
    )


@dataclass(slots=True)
class CompactChange:
    """One bucket's compaction result: the files it replaces and the files replacing them."""

    partition: tuple[Any, ...]
    bucket: int
    before: list[DataFileMeta]
    after: list[DataFileMeta]
    changelog: list[DataFileMeta] = field(default_factory=list)
    # MOW tables: the bucket's deletion-vector index files this compaction replaces, and the one
    # replacing them (none when no vector is left)
    index_before: list[IndexFileMeta] = field(default_factory=list)
    index_after: list[IndexFileMeta] = field(default_factory=list)


class _MergingManifestList:
    """Stands in for pypaimon's ManifestListManager inside one COMPACT commit: when the table's
    manifest list has grown past ``manifest.merge-min-count``, the new snapshot's base list is
    the live entries rewritten into a few manifests (Paimon's full manifest compaction), so
    commit and planning time stay flat over a long stream. Conflict detection keeps reading
    through the real manager (pypaimon hands it to its scanner at construction)."""

    def __init__(self, inner: ManifestListManager, table: FileStoreTable, min_count: int, target_size: int) -> None:
        self.inner = inner
        self.table = table
        self.min_count = min_count
        self.target_size = target_size
        self.merged = 0

    def write(self, name: str, metas: list[ManifestFileMeta]) -> None:
        self.inner.write(name, metas)

    def read_all(self, snapshot: Snapshot | None) -> list[ManifestFileMeta]:
        metas = list(self.inner.read_all(snapshot))
        if len(metas) < self.min_count:
            return metas
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager

        entries = manifest_entries(self.table, metas)
        merged = ManifestFileManager(self.table).rolling_write(entries, self.target_size, f"manifest-{uuid.uuid4()}")
        self.merged = len(metas)
        return list(merged)


def _manifest_merge_min_count(table: FileStoreTable) -> int:
    text = table.options.options.to_map().get("manifest.merge-min-count", "30")
    return max(2, int(text))


@dataclass(frozen=True, slots=True)
class CompactCommit:
    committed: bool
    manifests_merged: int = 0
    conflict: str | None = None


def commit_compaction(
    table: FileStoreTable, commit_user: str, identifier: int, changes: Sequence[CompactChange]
) -> CompactCommit:
    """Commit compaction results as one COMPACT snapshot, with Paimon's conflict detection: a
    compaction whose input files another commit removed meanwhile is given up (its output
    deleted) rather than committed over newer data."""
    from pypaimon.manifest.index_manifest_entry import IndexManifestEntry
    from pypaimon.manifest.schema.manifest_entry import ManifestEntry
    from pypaimon.table.row.generic_row import GenericRow
    from pypaimon.write.file_store_commit import FileStoreCommit

    commit = FileStoreCommit(table.new_snapshot_commit(), table, commit_user)
    merging = _MergingManifestList(
        commit.manifest_list_manager, table, _manifest_merge_min_count(table), commit.manifest_target_size
    )
    commit.manifest_list_manager = merging
    entries: list[ManifestEntry] = []
    changelog: list[ManifestEntry] = []
    index_deletes: list[IndexManifestEntry] = []
    index_adds: list[IndexManifestEntry] = []
    for change in changes:
        partition = GenericRow(list(change.partition), table.partition_keys_fields)
        index_deletes += [IndexManifestEntry(1, partition, change.bucket, f) for f in change.index_before]
        index_adds += [IndexManifestEntry(0, partition, change.bucket, f) for f in change.index_after]
        total = table.total_buckets
        entries += [ManifestEntry(kind=1, partition=partition, bucket=change.bucket, total_buckets=total, file=f)
                    for f in change.before]  # fmt: skip
        entries += [ManifestEntry(kind=0, partition=partition, bucket=change.bucket, total_buckets=total, file=f)
                    for f in change.after]  # fmt: skip
        changelog += [
            ManifestEntry(kind=0, partition=partition, bucket=change.bucket, total_buckets=total, file=f)
            for f in change.changelog
        ]
    vectors_read = {
        (c.partition, c.bucket): {f.file_name for f in c.index_before}
        for c in changes
        if c.index_after or c.index_before
    }

    def plan(snapshot: Snapshot | None) -> list[ManifestEntry]:
        # pypaimon detects removed data files only: a compaction that rewrote a bucket's
        # deletion vectors from an index file another commit has replaced since would drop
        # that commit's deletions, so it is a lost race too.
        if vectors_read:
            now = vector_index_files(table, snapshot)
            for key, names in vectors_read.items():
                if {f.file_name for f in now.get(key, [])} != names:
                    raise RuntimeError(
                        f"File deletion conflicts detected: the deletion vectors of bucket {key[1]} of partition "
                        f"{key[0]} changed since the compaction read them"
                    )
        return entries

    try:
        commit._try_commit(
            commit_kind="COMPACT",
            commit_identifier=identifier,
            commit_entries_plan=plan,
            changelog_entries=changelog,
            detect_conflicts=True,
            allow_rollback=False,
            index_deletes=index_deletes or None,
            index_adds=index_adds or None,
        )
    except RuntimeError as e:
        # Only a detected conflict is certain not to have committed; after any other failure the
        # snapshot may exist, so the output files stay (remove-orphan-files clears them if not).
        if "conflicts detected" not in str(e):
            raise
        for change in changes:
            delete_data_files(table, change.partition, change.bucket, change.after + change.changelog)
            delete_index_files(table, change.partition, change.bucket, change.index_after)
        return CompactCommit(False, conflict=str(e))
    finally:
        commit.close()
    return CompactCommit(True, merging.merged)
