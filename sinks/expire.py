"""Snapshot expiry and rollback: remove snapshots and every file only they reference.

The retention rules are ``sinks.retention``. Deletion follows Java's ``ExpireSnapshotsImpl``:
a data file goes when an expired snapshot (or the first kept one) added or removed it and
neither the first kept snapshot nor a tag reads it (checked by name: compaction's level upgrade
re-adds the same file); changelog files of expired snapshots go with them; manifests and
manifest lists go unless the first kept snapshot or a tag lists them. Snapshot files are deleted
last, then the EARLIEST hint moves, so a run that dies half-way is finished by the next one.
Rollback sweeps the same way, with the rollback target as the kept snapshot.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
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
    latest = manager.get_latest_snapshot()
    if latest is None:
        return ExpireReport(identifier, 0, None, 0, 0, 0)
    earliest = manager.try_get_earliest_snapshot(latest.id)
    # Only snapshots that may expire in this run are read (the rest by their id): a stream
    # calls this after every commit.
    last_candidate = min(latest.id - opts.num_retained_min, earliest.id + opts.expire_limit - 1)
    snapshots = {earliest.id: earliest, latest.id: latest}
    for sid in range(earliest.id + 1, last_candidate + 1):
        snapshot = manager.get_snapshot_by_id(sid)
        if snapshot is not None:
            snapshots[sid] = snapshot
    consumer_next = table.consumer_manager().min_next_snapshot()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    end = expire_until({i: s.time_millis for i, s in snapshots.items()}, now, opts, consumer_next)
    first_kept = manager.get_snapshot_by_id(end) if end is not None else None
    if end is None or first_kept is None:
        return ExpireReport(identifier, 0, earliest.id, 0, 0, 0)
    expired = [snapshots[i] for i in sorted(snapshots) if i < end]
    manager_dir = manager.snapshot_dir
    # Files the first kept snapshot removed were last read by an expired one: theirs to go too.
    counts = _sweep(table, removed=expired, boundary=first_kept, tags=_tag_snapshots(table), also_removed_by=first_kept)
    # Snapshot files last: until they are gone the run can be repeated.
    _delete(table.file_io, [manager.get_snapshot_path(s.id) for s in expired])
    table.file_io.overwrite_file_utf8(f"{manager_dir}/EARLIEST", str(end))
    report = ExpireReport(identifier, len(expired), end, *counts)
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


def _sweep(
    table: Any, removed: Sequence[Any], boundary: Any, tags: Sequence[Any], also_removed_by: Any | None = None
) -> tuple[int, int, int]:
    """Delete the files that ``removed`` snapshots reference and neither ``boundary`` (the kept
    snapshot next to them: the first kept one for expiry, the target of a rollback) nor a tag
    reads: data files their deltas added or removed, their changelog, manifests, index files.

    The boundary alone speaks for every kept snapshot: a manifest or data file leaves a table's
    lists once and never comes back (a compaction's level upgrade re-adds a file, but only while
    it is live), so anything a removed snapshot shares with any kept snapshot is also in the
    boundary. Returns (data files, changelog files, manifests) deleted."""
    reader = _Reader(table)
    live_data: set[str] = reader.live_data(boundary)
    for tagged in tags:
        live_data |= reader.live_data(tagged)

    doomed_data: dict[str, str] = {}
    deltas = [*removed, *([also_removed_by] if also_removed_by is not None else [])]
    for snapshot in deltas:
        for manifest in reader.manifest_list(snapshot.delta_manifest_list):
            for e in reader.entries(manifest):
                if e.file.file_name not in live_data:
                    partition = tuple(e.partition.values)
                    doomed_data[e.file.file_name] = store.data_file_path(table, partition, e.bucket, e.file)
    # A snapshot's changelog goes with it (changelog files are never shared).
    doomed_changelog: dict[str, str] = {}
    for snapshot in removed:
        for manifest in reader.manifest_list(snapshot.changelog_manifest_list):
            for e in reader.entries(manifest):
                partition = tuple(e.partition.values)
                doomed_changelog[e.file.file_name] = store.data_file_path(table, partition, e.bucket, e.file)

    def metadata(snapshots: Iterable[Any]) -> tuple[set[str], dict[str, str]]:
        manifests: set[str] = set()
        index: dict[str, str] = {}
        for snapshot in snapshots:
            for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list, snapshot.changelog_manifest_list):
                if name:
                    manifests.add(name)
                    manifests.update(m.file_name for m in reader.manifest_list(name))
            if snapshot.index_manifest:
                manifests.add(snapshot.index_manifest)
                index.update(reader.index_files(snapshot))
        return manifests, index

    kept_manifests, kept_index = metadata([boundary, *tags])
    doomed_manifests, doomed_index = metadata(removed)
    doomed_manifests -= kept_manifests
    file_io = table.file_io
    _delete(file_io, list(doomed_data.values()) + list(doomed_changelog.values()))
    _delete(file_io, [p for name, p in doomed_index.items() if name not in kept_index])
    # Manifests, manifest lists and index manifests all live in manifest/.
    manifest_dir = f"{table.table_path.rstrip('/')}/manifest"
    _delete(file_io, [f"{manifest_dir}/{name}" for name in doomed_manifests])
    return len(doomed_data), len(doomed_changelog), len(doomed_manifests)


@dataclass(frozen=True, slots=True)
class RollbackReport:
    table: str
    snapshot: int
    removed_snapshots: int
    data_files_deleted: int
    changelog_files_deleted: int
    manifests_deleted: int


def rollback_to(warehouse: str, catalog_options: Mapping[str, str], identifier: str, version: str) -> RollbackReport:
    """Roll a table back to a snapshot id or a tag name (Paimon's rollback_to), then delete the
    files only the removed snapshots referenced. The writing job must be stopped."""
    table = store.open_table(warehouse, catalog_options, identifier)
    manager = table.snapshot_manager()
    snapshots = {s.id: s for s in manager.list_snapshots()}
    tags = {name: table.tag_manager().get(name) for name in table.tag_manager().list_tags()}
    if version.strip().isdigit():
        target_id = int(version)
        if target_id not in snapshots and not any(t.trim_to_snapshot().id == target_id for t in tags.values()):
            earliest = min(snapshots, default=None)
            raise ValueError(
                f"table {identifier} has no snapshot {target_id} (snapshots {earliest}..{max(snapshots, default=None)} "
                f"and tags {', '.join(sorted(tags)) or 'none'} exist)"
            )
        target: int | str = target_id
    else:
        if version not in tags:
            raise ValueError(f"table {identifier} has no tag '{version}' (tags: {', '.join(sorted(tags)) or 'none'})")
        target = version
        target_id = tags[version].trim_to_snapshot().id
    removed = [snapshots[i] for i in sorted(snapshots) if i > target_id]
    kept_tags = [t.trim_to_snapshot() for t in tags.values() if t.trim_to_snapshot().id <= target_id]
    boundary = snapshots.get(target_id) or next(t for t in kept_tags if t.id == target_id)
    table.rollback_to(target)
    counts = _sweep(table, removed=removed, boundary=boundary, tags=kept_tags)
    report = RollbackReport(identifier, target_id, len(removed), *counts)
    log.info("rolled back", table=identifier, snapshot=target_id, removed_snapshots=len(removed))
    return report


def _delete(file_io: Any, paths: Iterable[str]) -> None:
    for path in paths:
        file_io.delete_quietly(path)
