"""Long-lived changelogs (Paimon's decoupled changelog): ``changelog/changelog-<id>`` files that
keep an expired snapshot's changelog readable, and the directory's EARLIEST / LATEST hints."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sinks.store.paimon_types import Changelog, FileStoreTable, Snapshot


def _changelog_dir(table: FileStoreTable) -> str:
    return f"{table.table_path.rstrip('/')}/changelog"


def long_lived_changelog_ids(table: FileStoreTable) -> list[int]:
    """Ids of the changelogs kept beyond their snapshots, ascending (listed: Java's hints are only
    hints)."""
    out = []
    for status in table.file_io.list_status(_changelog_dir(table)):
        name = str(status.path).rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("changelog-") and name[len("changelog-") :].isdigit():
            out.append(int(name[len("changelog-") :]))
    return sorted(out)


def long_lived_changelog_path(table: FileStoreTable, changelog_id: int) -> str:
    return f"{_changelog_dir(table)}/changelog-{changelog_id}"


def read_long_lived_changelog(table: FileStoreTable, changelog_id: int) -> Changelog | None:
    """The changelog (a pypaimon Snapshot) of ``changelog_id``, or None when it is gone."""
    from pypaimon.changelog.changelog import Changelog

    try:
        return Changelog.try_from_path(table.file_io, long_lived_changelog_path(table, changelog_id))
    except FileNotFoundError:
        return None


def write_long_lived_changelog(table: FileStoreTable, snapshot: Snapshot) -> None:
    """Keep an expiring snapshot's metadata as ``changelog/changelog-<id>`` (Java's Changelog)."""
    from pypaimon.changelog.changelog import Changelog
    from pypaimon.common.json_util import JSON

    # The same JSON as a snapshot file (pypaimon's ChangelogManager.commit_changelog calls a
    # to_json its Changelog lacks).
    text = JSON.to_json(Changelog.from_snapshot(snapshot), indent=2)
    table.file_io.overwrite_file_utf8(long_lived_changelog_path(table, snapshot.id), text)


def set_changelog_hint(table: FileStoreTable, which: str, changelog_id: int) -> None:
    """Write the changelog directory's EARLIEST or LATEST hint, as Java's ChangelogManager."""
    table.file_io.overwrite_file_utf8(f"{_changelog_dir(table)}/{which}", str(changelog_id))


def remove_changelog_hints(table: FileStoreTable) -> None:
    for which in ("EARLIEST", "LATEST"):
        table.file_io.delete_quietly(f"{_changelog_dir(table)}/{which}")
