"""Names of the pypaimon types ``sinks`` works with, for annotations (import them under
``TYPE_CHECKING``): the rest of ``sinks`` names pypaimon's types through here, so only
``sinks.store`` imports pypaimon's internals. pypaimon 2.1.0 ships no ``py.typed``, so mypy
sees these as ``Any``; they say what a value is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypaimon.changelog.changelog import Changelog
    from pypaimon.common.file_io import FileIO
    from pypaimon.index.index_file_meta import IndexFileMeta
    from pypaimon.manifest.index_manifest_entry import IndexManifestEntry
    from pypaimon.manifest.schema.data_file_meta import DataFileMeta
    from pypaimon.manifest.schema.manifest_entry import ManifestEntry
    from pypaimon.manifest.schema.manifest_file_meta import ManifestFileMeta
    from pypaimon.manifest.schema.simple_stats import SimpleStats
    from pypaimon.schema.data_types import DataField
    from pypaimon.snapshot.snapshot import Snapshot
    from pypaimon.table.file_store_table import FileStoreTable

__all__ = [
    "Changelog",
    "DataField",
    "DataFileMeta",
    "FileIO",
    "FileStoreTable",
    "IndexFileMeta",
    "IndexManifestEntry",
    "ManifestEntry",
    "ManifestFileMeta",
    "SimpleStats",
    "Snapshot",
]
