"""The deletion-vector index file format of MOW tables (``deletion-vectors.enabled=true``), as
Paimon writes it (what the vectors mean to compaction: ``sinks.compaction.deletion_vectors``).

A bucket's vectors live together in one index file (``DELETION_VECTORS`` in the index manifest),
rewritten whenever they change: a version byte (1), then per data file the vector as Java's
``BitmapDeletionVector.serializeTo`` writes it — a big-endian int ``n``, then ``n`` bytes (the
magic number and a portable RoaringBitmap of row positions), then the CRC-32 of those ``n`` bytes.
The index manifest records each vector's offset (of the int), ``n`` and cardinality.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from pyroaring import BitMap

INDEX_TYPE = "DELETION_VECTORS"
VERSION = 1
MAGIC = 1581511376  # BitmapDeletionVector.MAGIC_NUMBER


@dataclass(frozen=True, slots=True)
class VectorRange:
    """Where one data file's vector sits in an index file."""

    data_file: str
    offset: int
    length: int
    cardinality: int


def encode(vectors: Mapping[str, BitMap]) -> tuple[bytes, list[VectorRange]]:
    """One index file holding ``vectors`` (empty ones left out), and where each one is."""
    out = bytearray([VERSION])
    ranges: list[VectorRange] = []
    for name in sorted(vectors):
        bitmap = vectors[name]
        if not bitmap:
            continue
        bitmap = BitMap(bitmap)
        bitmap.run_optimize()  # as Java does before serializing: runs of deleted rows stay small
        data = MAGIC.to_bytes(4, "big") + bitmap.serialize()
        ranges.append(VectorRange(name, len(out), len(data), len(bitmap)))
        out += len(data).to_bytes(4, "big") + data + (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "big")
    return bytes(out), ranges


def decode(content: bytes, where: VectorRange, source: str) -> BitMap:
    """The vector at ``where`` in an index file's ``content`` (``source`` names it in errors)."""
    size = int.from_bytes(content[where.offset : where.offset + 4], "big")
    data = content[where.offset + 4 : where.offset + 4 + size]
    if size != where.length or len(data) != size or int.from_bytes(data[:4], "big") != MAGIC:
        raise ValueError(
            f"deletion vector of {where.data_file} in {source} at offset {where.offset} is not a bitmap vector "
            f"of {where.length} bytes (found {size}); the index file is damaged or of another format"
        )
    crc = int.from_bytes(content[where.offset + 4 + size : where.offset + 8 + size], "big")
    if crc != zlib.crc32(data) & 0xFFFFFFFF:
        raise ValueError(f"deletion vector of {where.data_file} in {source} fails its checksum")
    return BitMap.deserialize(data[4:])
