"""Deletion-vector index files: the bytes pypaimon's own vector writes, read back by pypaimon's
reader at the recorded offsets."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyroaring import BitMap

from sinks.store import deletion_vector_files as dv


def test_index_file_holds_each_vector_as_java_serializes_it(tmp_path: Path) -> None:
    from pypaimon.common.file_io import FileIO
    from pypaimon.deletionvectors.bitmap_deletion_vector import BitmapDeletionVector
    from pypaimon.deletionvectors.deletion_vector import DeletionVector
    from pypaimon.table.source.deletion_file import DeletionFile

    vectors = {"data-b.parquet": BitMap([0, 5, 70_000]), "data-a.parquet": BitMap(range(3)), "empty": BitMap()}
    content, ranges = dv.encode(vectors)
    assert content[0] == dv.VERSION and [r.data_file for r in ranges] == ["data-a.parquet", "data-b.parquet"]
    path = tmp_path / "index-x-0"
    path.write_bytes(content)
    io = FileIO.get(str(tmp_path), {})
    for r in ranges:
        # laid out as pypaimon's BitmapDeletionVector lays it out, and its reader finds it at the offset
        own = BitmapDeletionVector()
        for position in vectors[r.data_file]:
            own.delete(position)
        theirs = own.serialize()
        ours = content[r.offset : r.offset + r.length + 8]
        assert ours[4:8] == theirs[4:8] == dv.MAGIC.to_bytes(4, "big")
        assert int.from_bytes(ours[:4], "big") == r.length and len(ours) == r.length + 8
        read = DeletionVector.read(io, DeletionFile(str(path), r.offset, r.length, r.cardinality))
        assert set(read.bit_map()) == set(vectors[r.data_file]) and r.cardinality == len(vectors[r.data_file])
        assert dv.decode(content, r, "index-x-0") == vectors[r.data_file]
    damaged = bytearray(content)
    damaged[ranges[0].offset + 9] ^= 0xFF
    with pytest.raises(ValueError, match=r"data-a\.parquet in index-x-0 fails its checksum"):
        dv.decode(bytes(damaged), ranges[0], "index-x-0")
    with pytest.raises(ValueError, match="not a bitmap vector"):
        dv.decode(content, dv.VectorRange("data-a.parquet", ranges[0].offset + 1, ranges[0].length, 3), "index-x-0")
