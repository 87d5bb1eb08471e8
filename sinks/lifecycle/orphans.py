"""Removal of orphan files: data, changelog, manifest and index files no snapshot, tag or kept
changelog refers to.

They come from writes that never committed: a micro-batch replayed after a crash (its first
attempt's files), a compaction that lost a race and died before cleaning up, a failed commit.
Like Paimon's ``remove_orphan_files``, only files older than a cut-off are removed, so files a
running writer has written but not yet committed are left alone. What counts as referenced is
conservative: every file named by any manifest that any snapshot or tag lists.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow.fs as pafs
import structlog

from sinks.filesystem import FileEntry, is_object_store, open_filesystem, walk_files
from sinks.store import changelogs
from sinks.store.manifests import ManifestWalker
from sinks.store.tables import open_table, tag_snapshots

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable

log = structlog.get_logger(__name__)

DEFAULT_OLDER_THAN_MS = 24 * 3600 * 1000  # Paimon's default: one day


@dataclass(frozen=True, slots=True)
class OrphanReport:
    table: str
    orphans: tuple[str, ...]
    deleted: bool


def _referenced(table: FileStoreTable) -> set[str]:
    """File names (not paths) that snapshots and tags reach."""
    walker = ManifestWalker(table, cache=False)
    snapshots = list(table.snapshot_manager().list_snapshots())
    snapshots += tag_snapshots(table)
    # changelogs kept beyond their snapshots (changelog.* retention) still read their files
    kept = (changelogs.read_long_lived_changelog(table, i) for i in changelogs.long_lived_changelog_ids(table))
    snapshots += [c for c in kept if c is not None]
    names: set[str] = set()
    seen_manifests: set[str] = set()
    for snapshot in snapshots:
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list, snapshot.changelog_manifest_list):
            manifests = walker.existing_list(name)
            if name is None or manifests is None:
                continue  # a long-lived changelog names data lists its snapshot's expiry removed
            names.add(name)
            for manifest in manifests:
                names.add(manifest.file_name)
                if manifest.file_name in seen_manifests:
                    continue
                seen_manifests.add(manifest.file_name)
                for entry in walker.entries(manifest):
                    names.add(entry.file.file_name)
                    names.update(entry.file.extra_files or ())
        if snapshot.index_manifest:
            names.add(snapshot.index_manifest)
            names.update(e.index_file.file_name for e in walker.index_entries(snapshot))
    return names


def _candidates(files: Iterable[FileEntry]) -> list[FileEntry]:
    """Files in the table's bucket, manifest and index directories (partition directories
    included); snapshot, schema, tag and consumer files are never candidates."""
    return [f for f in files if f.parent.startswith("bucket-") or f.parent in ("manifest", "index")]


def remove_orphan_files(
    warehouse: str,
    catalog_options: dict[str, str],
    identifier: str,
    older_than_ms: int | None = None,
    dry_run: bool = False,
) -> OrphanReport:
    """Delete (or with ``dry_run`` only list) the table's unreferenced files older than the cut-off
    (epoch ms; default one day ago). Local and mounted warehouses, and ``s3://`` ones (listed and
    deleted through ``sinks.filesystem`` with the catalog's options; an object's time is its upload)."""
    table = open_table(warehouse, catalog_options, identifier)
    location = str(table.table_path)
    fs, root = open_filesystem(location, {**catalog_options, "warehouse": warehouse})
    if fs.get_file_info(root).type != pafs.FileType.Directory and not is_object_store(location):
        raise ValueError(f"remove-orphan-files reads the table's directory; {root} is not a local path")
    cutoff = older_than_ms if older_than_ms is not None else int(time.time() * 1000) - DEFAULT_OLDER_THAN_MS
    referenced = _referenced(table)
    orphans = [f for f in _candidates(walk_files(fs, root)) if f.name not in referenced and f.mtime_ms < cutoff]
    if not dry_run:
        for entry in orphans:
            with contextlib.suppress(FileNotFoundError):  # gone already
                fs.delete_file(entry.path)
    log.info("orphan files", table=identifier, count=len(orphans), deleted=not dry_run)
    prefix = location.split("://", 1)[0] + "://" if is_object_store(location) else ""
    return OrphanReport(identifier, tuple(sorted(prefix + f.path for f in orphans)), not dry_run)
