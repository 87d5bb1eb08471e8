"""Data files of a table's buckets: the columns and markers Paimon gives them, where they live,
and what their metadata (pypaimon's ``DataFileMeta``) says."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sinks.row_kinds import VALUE_KIND

if TYPE_CHECKING:
    from sinks.store.paimon_types import DataFileMeta, FileStoreTable

SEQUENCE = "_SEQUENCE_NUMBER"
KIND = VALUE_KIND  # the row kind (``sinks.row_kinds``)
# DataFileMeta.file_source: 0 = written from input (APPEND), 1 = produced by a compaction.
FILE_SOURCE_COMPACT = 1

# (partition values, bucket)
BucketKey = tuple[tuple[Any, ...], int]


def bucket_directory(table: FileStoreTable, partition: tuple[Any, ...], bucket: int) -> str:
    """A bucket's directory as Java and pypaimon-rust name it: partition values in Java's legacy
    text (``partition.legacy-name``, on by default: a DATE is its day number, ``d=19723``) and
    escaped as ``PartitionPathUtils`` does. pypaimon's plain ``bucket_path`` would give
    ``d=2024-01-02``, a directory no other reader looks in."""
    from pypaimon.utils.file_store_path_factory import canonical_data_file_path

    return str(canonical_data_file_path(table, partition, bucket, "_").rsplit("/", 1)[0])


def data_file_path(table: FileStoreTable, partition: tuple[Any, ...], bucket: int, meta: DataFileMeta) -> str:
    if meta.external_path:
        return str(meta.external_path)
    return f"{bucket_directory(table, partition, bucket)}/{meta.file_name}"


def delete_data_files(
    table: FileStoreTable, partition: tuple[Any, ...], bucket: int, metas: Iterable[DataFileMeta]
) -> None:
    for meta in metas:
        table.file_io.delete_quietly(data_file_path(table, partition, bucket, meta))


def with_level(meta: DataFileMeta, level: int) -> DataFileMeta:
    return replace(meta, level=level)


def min_value(table: FileStoreTable, meta: DataFileMeta, field_name: str) -> Any | None:
    """The minimum of a current column in a data file's value statistics (None: unknown). The
    column is found by field id in the schema the file was written with, so renames hold."""
    current = table.table_schema
    field_id = next((int(f.id) for f in current.fields if f.name == field_name), None)
    if field_id is None or meta.value_stats is None:
        return None
    schema = current if int(meta.schema_id) == int(current.id) else table.schema_manager.get_schema(int(meta.schema_id))
    name = next((f.name for f in schema.fields if int(f.id) == field_id), None)
    names = list(meta.value_stats_cols) if meta.value_stats_cols else [f.name for f in schema.fields]
    if name is None or name not in names:
        return None
    try:
        return meta.value_stats.min_values.get_field(names.index(name))
    except (IndexError, ValueError, TypeError):
        return None
