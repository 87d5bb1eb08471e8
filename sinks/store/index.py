"""A bucket's deletion-vector index files (MOW tables): which a snapshot holds, and reading,
writing and deleting them. Their format is ``sinks.store.deletion_vector_files``."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyroaring import BitMap

from sinks.store import deletion_vector_files
from sinks.store.files import BucketKey

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable, IndexFileMeta, Snapshot


def vector_index_files(table: FileStoreTable, snapshot: Snapshot | None) -> dict[BucketKey, list[IndexFileMeta]]:
    """A snapshot's deletion-vector index files (pypaimon IndexFileMeta), by (partition, bucket)."""
    out: dict[BucketKey, list[IndexFileMeta]] = {}
    if snapshot is None or not snapshot.index_manifest:
        return out
    from pypaimon.manifest.index_manifest_file import IndexManifestFile

    for entry in IndexManifestFile(table).read(snapshot.index_manifest):
        if entry.index_file.index_type == deletion_vector_files.INDEX_TYPE:
            out.setdefault((tuple(entry.partition.values), int(entry.bucket)), []).append(entry.index_file)
    return out


def read_vectors(
    table: FileStoreTable, partition: tuple[Any, ...], bucket: int, index_files: Sequence[IndexFileMeta]
) -> dict[str, BitMap]:
    """The deletion vectors of a bucket's data files, from its index files."""
    vectors: dict[str, BitMap] = {}
    for meta in index_files:
        path = table.path_factory().bucket_index_path(partition, bucket, meta, table.file_io)
        with table.file_io.new_input_stream(path) as stream:
            content = stream.read()
        for name, r in (meta.dv_ranges or {}).items():
            where = deletion_vector_files.VectorRange(name, int(r.offset), int(r.length), int(r.cardinality or 0))
            vectors[name] = vectors.get(name, BitMap()) | deletion_vector_files.decode(content, where, path)
    return vectors


def write_vectors(
    table: FileStoreTable, partition: tuple[Any, ...], bucket: int, vectors: Mapping[str, BitMap]
) -> IndexFileMeta | None:
    """A new index file holding a bucket's deletion vectors (None when none is left)."""
    from pypaimon.index.deletion_vector_meta import DeletionVectorMeta
    from pypaimon.index.index_file_meta import IndexFileMeta

    content, ranges = deletion_vector_files.encode(vectors)
    if not ranges:
        return None
    meta = IndexFileMeta(
        index_type=deletion_vector_files.INDEX_TYPE,
        file_name=f"index-{uuid.uuid4()}-0",
        file_size=len(content),
        row_count=len(ranges),
        dv_ranges={r.data_file: DeletionVectorMeta(r.data_file, r.offset, r.length, r.cardinality) for r in ranges},
    )
    path = table.path_factory().bucket_index_path(partition, bucket, meta)
    with table.file_io.new_output_stream(path) as stream:
        stream.write(content)
    return meta


def delete_index_files(
    table: FileStoreTable, partition: tuple[Any, ...], bucket: int, metas: Iterable[IndexFileMeta]
) -> None:
    for meta in metas:
        table.file_io.delete_quietly(table.path_factory().bucket_index_path(partition, bucket, meta))
