"""A snapshot's manifests: the live data files it reads, and the one walker over manifest lists,
manifests and index manifests that expiry, rollback and orphan removal share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sinks.store.files import BucketKey
from sinks.store.tables import latest_snapshot

if TYPE_CHECKING:
    from sinks.store.paimon_types import (
        DataFileMeta,
        FileStoreTable,
        IndexManifestEntry,
        ManifestEntry,
        ManifestFileMeta,
        Snapshot,
    )


def manifest_entries(table: FileStoreTable, manifests: Sequence[ManifestFileMeta]) -> list[ManifestEntry]:
    """Live ADD entries of a manifest list (ADD/DELETE pairs cancelled), stats kept."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    if not manifests:
        return []
    return list(ManifestFileManager(table).read_entries_parallel(list(manifests), drop_stats=False))


def snapshot_manifests(table: FileStoreTable, snapshot: Snapshot) -> list[ManifestFileMeta]:
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    return list(ManifestListManager(table).read_all(snapshot))


def live_files(table: FileStoreTable, snapshot: Snapshot | None = None) -> dict[BucketKey, list[DataFileMeta]]:
    """The data files a snapshot reads (the latest by default), by (partition values, bucket)."""
    snapshot = snapshot if snapshot is not None else latest_snapshot(table)
    out: dict[BucketKey, list[DataFileMeta]] = {}
    if snapshot is None:
        return out
    for entry in manifest_entries(table, snapshot_manifests(table, snapshot)):
        out.setdefault((tuple(entry.partition.values), int(entry.bucket)), []).append(entry.file)
    return out


class ManifestWalker:
    """Reads a table's manifest lists, manifests and index manifests for one maintenance run
    (expiry, rollback, orphan removal); with ``cache`` each manifest file is read once."""

    def __init__(self, table: FileStoreTable, cache: bool = True) -> None:
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager
        from pypaimon.manifest.manifest_list_manager import ManifestListManager

        self.table = table
        self.lists = ManifestListManager(table)
        self.files = ManifestFileManager(table)
        self.manifest_dir = f"{table.table_path.rstrip('/')}/manifest"
        self._cache = cache
        self._entries: dict[str, list[ManifestEntry]] = {}

    def existing_list(self, name: str | None) -> list[ManifestFileMeta] | None:
        """A manifest list's manifests; None when it is not named or gone (a long-lived changelog
        names the data lists its snapshot's expiry removed — Java's ``tryReadManifestList``)."""
        if not name or not self.table.file_io.exists(f"{self.manifest_dir}/{name}"):
            return None
        return list(self.lists.read(name))

    def manifest_list(self, name: str | None) -> list[ManifestFileMeta]:
        """A manifest list's manifests; none when it is not named or gone."""
        return self.existing_list(name) or []

    def entries(self, manifest: ManifestFileMeta) -> list[ManifestEntry]:
        """A manifest's entries (ADD and DELETE, statistics dropped)."""
        name = manifest.file_name
        if name in self._entries:
            return self._entries[name]
        entries = list(self.files.read(name, drop_stats=True))
        if self._cache:
            self._entries[name] = entries
        return entries

    def manifests_of(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        return self.manifest_list(snapshot.base_manifest_list) + self.manifest_list(snapshot.delta_manifest_list)

    def live_data(self, snapshot: Snapshot) -> set[str]:
        """Names of the data files a snapshot reads."""
        live: dict[tuple[Any, ...], str] = {}
        for manifest in self.manifests_of(snapshot):
            for e in self.entries(manifest):
                key = (tuple(e.partition.values), e.bucket, e.file.level, e.file.file_name)
                if e.kind == 0:
                    live[key] = e.file.file_name
                else:
                    live.pop(key, None)
        return set(live.values())

    def index_entries(self, snapshot: Snapshot) -> list[IndexManifestEntry]:
        """A snapshot's index manifest entries (none without an index manifest)."""
        if not snapshot.index_manifest:
            return []
        from pypaimon.manifest.index_manifest_file import IndexManifestFile

        return list(IndexManifestFile(self.table).read(snapshot.index_manifest))

    def index_files(self, snapshot: Snapshot) -> dict[str, str]:
        """Index manifest entries of a snapshot as {file name: path}."""
        entries = self.index_entries(snapshot)
        if not entries:
            return {}
        factory = self.table.path_factory()
        out: dict[str, str] = {}
        for e in entries:
            if e.kind == 0:
                path = factory.bucket_index_path(tuple(e.partition.values), e.bucket, e.index_file)
                out[e.index_file.file_name] = path
        return out

    def manifest_names(self, snapshot: Snapshot, lists: Sequence[str | None], index: bool = True) -> set[str]:
        """The manifest lists named and the manifests they list (lists that no longer exist
        skipped: a decoupled changelog names the data lists its snapshot's expiry already removed),
        and with ``index`` the snapshot's index manifest."""
        out: set[str] = set()
        for name in lists:
            manifests = self.manifest_list(name)
            if manifests:
                out.add(str(name))
                out.update(m.file_name for m in manifests)
        if index and snapshot.index_manifest:
            out.add(snapshot.index_manifest)
        return out
