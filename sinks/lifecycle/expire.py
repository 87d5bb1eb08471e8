"""Snapshot expiry and rollback: remove snapshots and every file only they reference.

The retention rules are ``sinks.lifecycle.retention``. Deletion follows Java's ``ExpireSnapshotsImpl``:
a data file goes when an expired snapshot (or the first kept one) added or removed it and
neither the first kept snapshot nor a tag reads it (checked by name: compaction's level upgrade
re-adds the same file); changelog files of expired snapshots go with them; manifests and
manifest lists go unless the first kept snapshot or a tag lists them. Snapshot files are deleted
last, then the EARLIEST hint moves, so a run that dies half-way is finished by the next one.
Rollback sweeps the same way, with the rollback target as the kept snapshot.

When ``changelog.*`` retention outlives the snapshots' (Paimon's decoupled changelog), an
expired snapshot leaves ``changelog/changelog-<id>`` behind with the files its changelog needs —
its changelog files and manifests, or with ``changelog-producer=none`` the level-0 input files
and data manifests — and those go by the changelog retention (Java's ``ExpireChangelogImpl``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from sinks.crash_points import crash_point
from sinks.lifecycle.retention import RetentionOptions, expire_changelog_until, expire_until
from sinks.store.changelogs import (
    long_lived_changelog_ids,
    long_lived_changelog_path,
    read_long_lived_changelog,
    remove_changelog_hints,
    set_changelog_hint,
    write_long_lived_changelog,
)
from sinks.store.files import FILE_SOURCE_COMPACT, data_file_path
from sinks.store.manifests import ManifestWalker
from sinks.store.tables import open_table, tag_snapshots

if TYPE_CHECKING:
    from sinks.store.paimon_types import Changelog, FileIO, FileStoreTable, Snapshot

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class ExpireReport:
    table: str
    expired_snapshots: int
    earliest_kept: int | None
    data_files_deleted: int
    changelog_files_deleted: int
    manifests_deleted: int
    expired_changelogs: int = 0


def expire_snapshots(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    overrides: Mapping[str, str] | None = None,
    now_ms: int | None = None,
) -> ExpireReport:
    """Expire one table's snapshots by its retention options (``overrides`` win over them)."""
    table = open_table(warehouse, catalog_options, identifier)
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
    tags = tag_snapshots(table)
    if end is None or first_kept is None:
        changelogs = _expire_changelogs(table, opts, now, consumer_next, tags)
        return ExpireReport(identifier, 0, earliest.id, 0, 0, 0, changelogs)
    expired = [snapshots[i] for i in sorted(snapshots) if i < end]
    manager_dir = manager.snapshot_dir
    keep = _Keep.of(table, opts)
    # Files the first kept snapshot removed were last read by an expired one: theirs to go too.
    counts = _sweep(table, removed=expired, boundary=first_kept, tags=tags, also_removed_by=first_kept, keep=keep)
    if keep.changelog:
        _keep_changelogs(table, expired)
    crash_point("expiry-manifests-deleted")
    # Snapshot files last: until they are gone the run can be repeated.
    _delete(table.file_io, [manager.get_snapshot_path(s.id) for s in expired])
    table.file_io.overwrite_file_utf8(f"{manager_dir}/EARLIEST", str(end))
    changelogs = _expire_changelogs(table, opts, now, consumer_next, tags)
    report = ExpireReport(identifier, len(expired), end, *counts, expired_changelogs=changelogs)
    log.info(
        "snapshots expired",
        table=identifier,
        expired=report.expired_snapshots,
        earliest_kept=end,
        data_files=report.data_files_deleted,
        changelog_files=report.changelog_files_deleted,
        manifests=report.manifests_deleted,
        changelogs_kept=keep.changelog,
        changelogs_expired=changelogs,
    )
    return report


@dataclass(frozen=True, slots=True)
class _Keep:
    """What expiring snapshots must leave for a decoupled changelog (Java's ``SnapshotDeletion``)."""

    changelog: bool = False  # changelog files and changelog manifest lists
    input_files: bool = False  # changelog-producer=none: level-0 input files and data manifests

    @classmethod
    def of(cls, table: FileStoreTable, opts: RetentionOptions) -> _Keep:
        if not opts.changelog_decoupled:
            return cls()
        producer = str(table.options.options.to_map().get("changelog-producer", "none")).strip().lower()
        return cls(changelog=True, input_files=producer == "none")


def _keep_changelogs(table: FileStoreTable, expired: Sequence[Snapshot]) -> None:
    """Write ``changelog/changelog-<id>`` for each expired snapshot, then the LATEST hint."""
    for snapshot in expired:
        write_long_lived_changelog(table, snapshot)
    if expired:
        set_changelog_hint(table, "LATEST", expired[-1].id)


def _expire_changelogs(
    table: FileStoreTable, opts: RetentionOptions, now: int, consumer_next: int | None, tags: Sequence[Snapshot]
) -> int:
    """Expire long-lived changelogs past the changelog retention: their changelog files (or, with
    changelog-producer=none, the input files their deltas removed), their manifests, then the
    changelog files themselves and the EARLIEST hint. Returns how many expired. Once the
    retention no longer outlives the snapshots', every kept changelog goes (Java's
    ``expireAll``, which its expire_changelogs procedure runs for this case)."""
    ids = long_lived_changelog_ids(table)
    snapshot = table.snapshot_manager().get_latest_snapshot()
    if not ids or snapshot is None:
        return 0
    earliest_id, latest_id = ids[0], ids[-1]
    read: dict[int, Changelog] = {}
    for cid in {*(i for i in ids if i <= earliest_id + opts.expire_limit), latest_id}:
        changelog = read_long_lived_changelog(table, cid)
        if changelog is not None:
            read[cid] = changelog
    boundary: Changelog | None = None
    if opts.changelog_decoupled:
        times = {i: c.time_millis for i, c in read.items()}
        end = expire_changelog_until(times, snapshot.id, now, opts, consumer_next)
        boundary = read.get(end) if end is not None else None
        if end is None or boundary is None:
            return 0
    else:
        end = latest_id + 1
    expired = [read[i] for i in sorted(read) if i < end]
    reader = ManifestWalker(table)
    in_tags: set[str] = set()
    for tagged in tags:
        in_tags |= reader.live_data(tagged)
    doomed: dict[str, str] = {}
    for changelog in expired:
        if changelog.changelog_manifest_list:
            for manifest in reader.manifest_list(changelog.changelog_manifest_list):
                for e in reader.entries(manifest):
                    doomed[e.file.file_name] = data_file_path(table, tuple(e.partition.values), e.bucket, e.file)
        else:  # changelog-producer=none: the input files its delta removed (kept at snapshot expiry)
            removed: dict[str, str] = {}
            added: set[str] = set()
            for manifest in reader.manifest_list(changelog.delta_manifest_list):
                for e in reader.entries(manifest):
                    if e.kind == 0:
                        added.add(e.file.file_name)  # a level upgrade removes and re-adds a file
                    else:
                        path = data_file_path(table, tuple(e.partition.values), e.bucket, e.file)
                        removed[e.file.file_name] = path
            doomed.update({n: p for n, p in removed.items() if n not in added and n not in in_tags})
    earliest_snapshot = table.snapshot_manager().try_get_earliest_snapshot(snapshot.id)
    in_use = reader.live_data(earliest_snapshot)  # never what the table still reads
    doomed = {n: p for n, p in doomed.items() if n not in in_use}
    kept: set[str] = set()
    for keeper in (*([boundary] if boundary is not None else []), earliest_snapshot, *tags):
        kept |= reader.manifest_names(keeper, (keeper.base_manifest_list, keeper.delta_manifest_list))
    doomed_manifests: set[str] = set()
    for changelog in expired:
        lists = (
            (changelog.changelog_manifest_list,)
            if changelog.changelog_manifest_list
            else (changelog.delta_manifest_list, changelog.base_manifest_list)
        )
        # (index manifests are the snapshots' expiry's to delete, as Java's ChangelogDeletion)
        doomed_manifests |= reader.manifest_names(changelog, lists, index=False)
    _delete(table.file_io, list(doomed.values()))
    manifest_dir = f"{table.table_path.rstrip('/')}/manifest"
    _delete(table.file_io, [f"{manifest_dir}/{n}" for n in doomed_manifests - kept])
    _delete(table.file_io, [long_lived_changelog_path(table, c.id) for c in expired])
    if boundary is not None:
        set_changelog_hint(table, "EARLIEST", end)
    else:
        remove_changelog_hints(table)
    log.info("changelogs expired", expired=len(expired), earliest_kept=end, files=len(doomed))
    return len(expired)


def _sweep(
    table: FileStoreTable,
    removed: Sequence[Snapshot],
    boundary: Snapshot,
    tags: Sequence[Snapshot],
    also_removed_by: Snapshot | None = None,
    keep: _Keep = _Keep(),
) -> tuple[int, int, int]:
    """Delete the files that ``removed`` snapshots reference and neither ``boundary`` (the kept
    snapshot next to them: the first kept one for expiry, the target of a rollback) nor a tag
    reads: data files their deltas added or removed, their changelog, manifests, index files.

    The boundary alone speaks for every kept snapshot: a manifest or data file leaves a table's
    lists once and never comes back (a compaction's level upgrade re-adds a file, but only while
    it is live), so anything a removed snapshot shares with any kept snapshot is also in the
    boundary. ``keep`` leaves what a decoupled changelog still needs. Returns (data files,
    changelog files, manifests) deleted."""
    reader = ManifestWalker(table)
    live_data: set[str] = reader.live_data(boundary)
    for tagged in tags:
        live_data |= reader.live_data(tagged)

    doomed_data: dict[str, str] = {}
    deltas = [*removed, *([also_removed_by] if also_removed_by is not None else [])]
    for snapshot in deltas:
        for manifest in reader.manifest_list(snapshot.delta_manifest_list):
            for e in reader.entries(manifest):
                if keep.input_files and (e.file.file_source or 0) != FILE_SOURCE_COMPACT:
                    continue  # the changelog of a changelog-producer=none table: kept with it
                if e.file.file_name not in live_data:
                    partition = tuple(e.partition.values)
                    doomed_data[e.file.file_name] = data_file_path(table, partition, e.bucket, e.file)
    # A snapshot's changelog goes with it (changelog files are never shared), unless it is kept.
    doomed_changelog: dict[str, str] = {}
    for snapshot in () if keep.changelog else removed:
        for manifest in reader.manifest_list(snapshot.changelog_manifest_list):
            for e in reader.entries(manifest):
                partition = tuple(e.partition.values)
                doomed_changelog[e.file.file_name] = data_file_path(table, partition, e.bucket, e.file)

    def metadata(
        snapshots: Iterable[Snapshot], lists: Callable[[Snapshot], tuple[str | None, ...]]
    ) -> tuple[set[str], dict[str, str]]:
        manifests: set[str] = set()
        index: dict[str, str] = {}
        for snapshot in snapshots:
            for name in lists(snapshot):
                if name:
                    manifests.add(name)
                    manifests.update(m.file_name for m in reader.manifest_list(name))
            if snapshot.index_manifest:
                manifests.add(snapshot.index_manifest)
                index.update(reader.index_files(snapshot))
        return manifests, index

    def every_list(s: Snapshot) -> tuple[str | None, ...]:
        return (s.base_manifest_list, s.delta_manifest_list, s.changelog_manifest_list)

    def doomed_lists(s: Snapshot) -> tuple[str | None, ...]:
        data = () if keep.input_files else (s.base_manifest_list, s.delta_manifest_list)
        return (*data, *(() if keep.changelog else (s.changelog_manifest_list,)))

    kept_manifests, kept_index = metadata([boundary, *tags], every_list)
    doomed_manifests, doomed_index = metadata(removed, doomed_lists)
    doomed_manifests -= kept_manifests
    file_io = table.file_io
    _delete(file_io, list(doomed_data.values()) + list(doomed_changelog.values()))
    _delete(file_io, [p for name, p in doomed_index.items() if name not in kept_index])
    crash_point("expiry-data-deleted")
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
    table = open_table(warehouse, catalog_options, identifier)
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
    # Changelogs kept beyond their snapshots that are newer than the target go too (a tag may be
    # older than them).
    later = [i for i in long_lived_changelog_ids(table) if i > target_id]
    removed += [c for c in (read_long_lived_changelog(table, i) for i in later) if c is not None]
    kept_tags = [t.trim_to_snapshot() for t in tags.values() if t.trim_to_snapshot().id <= target_id]
    boundary = snapshots.get(target_id) or next(t for t in kept_tags if t.id == target_id)
    table.rollback_to(target)
    counts = _sweep(table, removed=removed, boundary=boundary, tags=kept_tags)
    _delete(table.file_io, [long_lived_changelog_path(table, i) for i in later])
    left = long_lived_changelog_ids(table)
    if later and left:
        set_changelog_hint(table, "LATEST", left[-1])
    elif later:
        remove_changelog_hints(table)
    report = RollbackReport(identifier, target_id, len(removed), *counts)
    log.info("rolled back", table=identifier, snapshot=target_id, removed_snapshots=len(removed))
    return report


def _delete(file_io: FileIO, paths: Iterable[str]) -> None:
    for path in paths:
        file_io.delete_quietly(path)
