"""Snapshot expiry: delete old snapshots and every file only they reference.

The retention rules are ``sinks.retention``. Deletion follows Java's ``ExpireSnapshotsImpl``:
a data file goes when a snapshot in the expired range (or the first kept one) removed it and no
kept snapshot or tag still reads it (compaction's level upgrade re-adds the same file, hence
the check by name); changelog files of expired snapshots go with them; manifests and manifest
lists go unless a kept snapshot or tag lists them. Snapshot files are deleted last, then the
EARLIEST hint moves. A run that dies half-way is finished by the next one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from sinks import paimon_store as store
from sinks.retention import RetentionOptions, expire_until

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class ExpireReport:
    table: str
    expired_snapshots: int
    earliest_kept: int | None
    data_files_deleted: int
    changelog_files_deleted: int
    manifests_deleted: int


class _Reader:
    """Manifest reads for one expiry run, each manifest file read once."""

    def __init__(self, table: Any) -> None:
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager
        from pypaimon.manifest.manifest_list_manager import ManifestListManager

        self.table = table
        self.lists = ManifestListManager(table)
        self.files = ManifestFileManager(table)
        self._entries: dict[str, list[Any]] = {}

    def manifest_list(self, name: str | None) -> list[Any]:
        return [] if not name else list(self.lists.read(name))

    def entries(self, manifest: Any) -> list[Any]:
        name = manifest.file_name
        if name not in self._entries:
            self._entries[name] = list(self.files.read(name, drop_stats=True))
        return self._entries[name]

    def manifests_of(self, snapshot: Any) -> list[Any]:
        return self.manifest_list(snapshot.base_manifest_list) + self.manifest_list(snapshot.delta_manifest_list)

    def live_data(self, snapshot: Any) -> set[str]:
        live: dict[tuple[Any, ...], str] = {}
        for manifest in self.manifests_of(snapshot):
            for e in self.entries(manifest):
                key = (tuple(e.partition.values), e.bucket, e.file.level, e.file.file_name)
                if e.kind == 0:
                    live[key] = e.file.file_name
                else:
                    live.pop(key, None)
        return set(live.values())

    def index_files(self, snapshot: Any) -> dict[str, str]:
        """Index manifest entries of a snapshot as {file name: path}."""
        if not snapshot.index_manifest:
            return {}
        from pypaimon.manifest.index_manifest_file import IndexManifestFile

        factory = self.table.path_factory()
        out: dict[str, str] = {}
        for e in IndexManifestFile(self.table).read(snapshot.index_manifest):
            if e.kind == 0:
                path = factory.bucket_index_path(tuple(e.partition.values), e.bucket, e.index_file)
                out[e.index_file.file_name] = path
        return out


def _tag_snapshots(table: Any) -> list[Any]:
    manager = table.tag_manager()
    out = []
    for name in manager.list_tags():
        tag = manager.get(name)
        if tag is not None:
            out.append(tag.trim_to_snapshot())
    return out


def expire_snapshots(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    overrides: Mapping[str, str] | None = None,
    now_ms: int | None = None,
) -> ExpireReport:
    """Expire one table's snapshots by its retention options (``overrides`` win over them)."""
    table = store.open_table(warehouse, catalog_options, identifier)
    opts = RetentionOptions.from_table_options({**table.options.options.to_map(), **(overrides or {})})
    manager = table.snapshot_manager()
    snapshots = {s.id: s for s in manager.list_snapshots()}
    consumer_next = table.consumer_manager().min_next_snapshot()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    end = expire_until({i: s.time_millis for i, s in snapshots.items()}, now, opts, consumer_next)
    if end is None:
        return ExpireReport(identifier, 0, min(snapshots, default=None), 0, 0, 0)
    expired = [snapshots[i] for i in sorted(snapshots) if i < end]
    kept = [snapshots[i] for i in sorted(snapshots) if i >= end]
    protected = kept + _tag_snapshots(table)
    reader = _Reader(table)

    # Data files still read by a kept snapshot or a tag: the first kept snapshot's live files plus
    # whatever later kept snapshots added, and each tag's live files.
    live_data: set[str] = set(reader.live_data(kept[0]))
    for snapshot in kept[1:]:
        for manifest in reader.manifest_list(snapshot.delta_manifest_list):
            live_data.update(e.file.file_name for e in reader.entries(manifest) if e.kind == 0)
    for tagged in _tag_snapshots(table):
        live_data |= reader.live_data(tagged)

    # Data files removed by the expired snapshots and the first kept one.
    doomed_data: dict[str, str] = {}
    for snapshot in [*expired[1:], kept[0]]:
        for manifest in reader.manifest_list(snapshot.delta_manifest_list):
            for e in reader.entries(manifest):
                if e.kind == 1 and e.file.file_name not in live_data:
                    partition = tuple(e.partition.values)
                    doomed_data[e.file.file_name] = store.data_file_path(table, partition, e.bucket, e.file)
    # The changelog of an expired snapshot goes with it (its files are never shared).
    doomed_changelog: dict[str, str] = {}
    for snapshot in expired:
        for manifest in reader.manifest_list(snapshot.changelog_manifest_list):
            for e in reader.entries(manifest):
                partition = tuple(e.partition.values)
                doomed_changelog[e.file.file_name] = store.data_file_path(table, partition, e.bucket, e.file)

    kept_manifests: set[str] = set()
    kept_index: dict[str, str] = {}
    for snapshot in protected:
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list, snapshot.changelog_manifest_list):
            if name:
                kept_manifests.add(name)
                kept_manifests.update(m.file_name for m in reader.manifest_list(name))
        if snapshot.index_manifest:
            kept_manifests.add(snapshot.index_manifest)
            kept_index.update(reader.index_files(snapshot))
    doomed_manifests: set[str] = set()
    doomed_index: dict[str, str] = {}
    for snapshot in expired:
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list, snapshot.changelog_manifest_list):
            if name:
                doomed_manifests.add(name)
                doomed_manifests.update(m.file_name for m in reader.manifest_list(name))
        if snapshot.index_manifest:
            doomed_manifests.add(snapshot.index_manifest)
            doomed_index.update(reader.index_files(snapshot))
    doomed_manifests -= kept_manifests

    file_io = table.file_io
    _delete(file_io, list(doomed_data.values()) + list(doomed_changelog.values()))
    _delete(file_io, [p for name, p in doomed_index.items() if name not in kept_index])
    # Manifests, manifest lists and index manifests all live in manifest/.
    manifest_dir = f"{table.table_path.rstrip('/')}/manifest"
    _delete(file_io, [f"{manifest_dir}/{name}" for name in doomed_manifests])
    # Snapshot files last: until they are gone the run can be repeated.
    _delete(file_io, [manager.get_snapshot_path(s.id) for s in expired])
    file_io.overwrite_file_utf8(f"{manager.snapshot_dir}/EARLIEST", str(end))
    report = ExpireReport(identifier, len(expired), end, len(doomed_data), len(doomed_changelog), len(doomed_manifests))
    log.info(
        "snapshots expired",
        table=identifier,
        expired=report.expired_snapshots,
        earliest_kept=end,
        data_files=report.data_files_deleted,
        changelog_files=report.changelog_files_deleted,
        manifests=report.manifests_deleted,
    )
    return report


def _delete(file_io: Any, paths: Iterable[str]) -> None:
    for path in paths:
        file_io.delete_quietly(path)
