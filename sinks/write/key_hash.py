"""Paimon's hash of a key, for whole Arrow columns at once.

Paimon places a row in a bucket by the hash of its key as a ``BinaryRow`` — the row's bytes
(header, null bits, one 8-byte slot per field, variable-length values after them, padded to
whole words) hashed with MurmurHash3 over 4-byte words, seed 42 (Java's ``BinaryRow.hashCode``).
A fixed-bucket table's bucket is ``abs(hash % buckets)``; a dynamic-bucket table's HASH index
lists the hashes of the keys each bucket holds. lakecdc needs the same numbers to split one
table's rows between parallel writers, so this module builds the rows' bytes in numpy (no Python
object per row) and hashes them column-wise.

Supported key types are those whose bytes are plain little-endian slots or inline/variable
strings: BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, DATE, TIME, DECIMAL up to precision 18,
TIMESTAMP / TIMESTAMP_LTZ up to precision 3, CHAR, VARCHAR, BINARY, VARBINARY. Other keys
(``hashable`` is False) are written by one writer, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from schema_evolution.types import PaimonType, Root

_INLINE = 7  # strings of up to 7 bytes live in their slot
_SEED = np.uint32(42)
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)
_SLOT_BYTES = {Root.BOOLEAN: 1, Root.TINYINT: 1, Root.SMALLINT: 2, Root.INT: 4, Root.DATE: 4, Root.TIME: 4}
_VARIABLE = (Root.CHAR, Root.VARCHAR, Root.BINARY, Root.VARBINARY)


def hashable(types: Sequence[PaimonType]) -> bool:
    """Whether ``hash_rows`` can hash keys of these types."""
    for t in types:
        if t.root in _SLOT_BYTES or t.root in _VARIABLE or t.root is Root.BIGINT:
            continue
        if t.root is Root.DECIMAL and (t.length or 10) <= 18:
            continue
        if t.root in (Root.TIMESTAMP, Root.TIMESTAMP_LTZ) and (t.length if t.length is not None else 6) <= 3:
            continue
        return False
    return bool(types)


def hash_rows(columns: Sequence[pa.Array], types: Sequence[PaimonType]) -> np.ndarray:
    """Java's ``BinaryRow.hashCode()`` of each row of ``columns`` (as int32)."""
    encoded = _encode(columns, types)
    out = np.empty(len(encoded.sizes), dtype=np.int32)
    for rows, region in encoded.groups:
        out[rows] = _murmur_words(region.view("<u4"), region.shape[1]).view(np.int32)
    return out


def row_bytes(columns: Sequence[pa.Array], types: Sequence[PaimonType]) -> list[bytes]:
    """Each row's ``BinaryRow`` bytes (without the 4-byte arity prefix manifests put before them)."""
    encoded = _encode(columns, types)
    buffer = encoded.buffer
    starts, sizes = encoded.starts.tolist(), encoded.sizes.tolist()
    return [buffer[s : s + n].tobytes() for s, n in zip(starts, sizes, strict=True)]


def bucket_of(hashes: np.ndarray, buckets: int) -> np.ndarray:
    """Paimon's default bucket function: ``Math.abs(hash % buckets)`` (Java's truncating %)."""
    return np.abs(np.fmod(hashes.astype(np.int64), buckets)).astype(np.int32)


def _murmur_words(words: np.ndarray, nbytes: int) -> np.ndarray:
    """MurmurHash3 (32-bit) of each row of a (rows, words) uint32 matrix, as Paimon's
    ``MurmurHashUtils.hashBytesByWords``."""
    columns = np.ascontiguousarray(words.T)  # one contiguous vector per word position
    h = np.full(words.shape[0], _SEED, dtype=np.uint32)
    for j in range(columns.shape[0]):
        k = columns[j] * _C1
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        k *= _C2
        h ^= k
        h = (h << np.uint32(13)) | (h >> np.uint32(19))
        h = h * np.uint32(5) + np.uint32(0xE6546B64)
    h ^= np.uint32(nbytes)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def _encode(columns: Sequence[pa.Array], types: Sequence[PaimonType]) -> _Encoded:
    """All rows' bytes back to back in one uint8 buffer, with each row's start and size (both
    multiples of 8, as in Java, so each slot is one aligned uint64)."""
    if not hashable(types):
        raise ValueError(f"no vectorized BinaryRow encoding for key types {[t.sql() for t in types]}")
    arity = len(types)
    n = len(columns[0]) if columns else 0
    header = ((arity + 63 + 8) // 64) * 8
    fixed = header + 8 * arity
    slots = np.zeros((n, arity), dtype=np.uint64)
    nulls = np.zeros((n, header), dtype=np.uint8)
    var_sizes = np.zeros((n, arity), dtype=np.int64)  # padded bytes in the variable part
    strings: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # field, offsets, lengths, data
    for i, (col, typ) in enumerate(zip(columns, types, strict=True)):
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        valid = np.ones(n, dtype=bool) if col.null_count == 0 else ~np.asarray(col.is_null(), dtype=bool)
        if not valid.all():
            bit = i + 8  # the first byte holds the row kind
            nulls[~valid, bit // 8] |= np.uint8(1 << (bit % 8))
        if typ.root in _VARIABLE:
            offsets, lengths, data = _binary_parts(col)
            lengths = np.where(valid, lengths, 0)
            inline = lengths <= _INLINE
            slots[:, i] = _inline_slots(offsets, lengths, data, inline & valid)
            var_sizes[:, i] = np.where(inline, 0, (lengths + 7) // 8 * 8)
            strings.append((i, offsets, lengths, data))
        else:
            slots[:, i] = np.where(valid, _slot_values(col, typ), 0)
    sizes = fixed + var_sizes.sum(axis=1)
    # Rows of equal size are laid out next to each other, so each size is one (rows, bytes) matrix.
    order = np.argsort(sizes, kind="stable")
    starts = np.zeros(n, dtype=np.int64)
    if n:
        ordered = sizes[order]
        starts[order] = np.concatenate([[0], np.cumsum(ordered)[:-1]])
    total = int(sizes.sum()) if n else 0
    buffer = np.zeros(total, dtype=np.uint8)
    var_at = fixed + np.cumsum(var_sizes, axis=1) - var_sizes  # each field's offset in its row
    for i, offsets, lengths, data in strings:
        long_ = var_sizes[:, i] > 0
        if not long_.any():
            continue
        rows = np.flatnonzero(long_)
        slots[rows, i] = (var_at[rows, i].astype(np.uint64) << np.uint64(32)) | lengths[rows].astype(np.uint64)
        if _copy_equal_widths(buffer, sizes, var_at[:, i], offsets, lengths, data, long_):
            continue
        count = lengths[rows]
        # scatter each long value's bytes to its row's variable part
        within = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        src = np.repeat(offsets[rows], count) + within
        dst = np.repeat(starts[rows] + var_at[rows, i], count) + within
        buffer[dst] = data[src]
    groups: list[tuple[np.ndarray, np.ndarray]] = []
    if n:
        bounds = np.flatnonzero(np.diff(sizes[order])) + 1
        any_null = bool(nulls.any())
        for rows in np.split(order, bounds):
            size = int(sizes[rows[0]])
            first = int(starts[rows[0]])
            region = buffer[first : first + size * len(rows)].reshape(len(rows), size)
            # one size for all rows (fixed-width keys): rows are in order, no gathering needed
            picked: slice | np.ndarray = slice(None) if len(rows) == n else rows
            if any_null:
                region[:, :header] = nulls[picked]
            slot_words = region.view("<u8")
            for i in range(arity):
                slot_words[:, header // 8 + i] = slots[picked, i]
            groups.append((rows, region))
    return _Encoded(buffer, starts, sizes, groups)


def _copy_equal_widths(
    buffer: np.ndarray,
    sizes: np.ndarray,
    at: np.ndarray,
    offsets: np.ndarray,
    lengths: np.ndarray,
    data: np.ndarray,
    long_: np.ndarray,
) -> bool:
    """Copy a field's values into their rows as one 2-D block when every row is the same size,
    holds the field at the same place, and every value is long and of one length (UUIDs,
    fixed-width codes): the values then lie back to back in ``data``. The general scatter
    builds three index arrays of one int64 per byte, which made hashing a 36-character key
    cost 6x an integer's. False (nothing copied) otherwise."""
    n = len(sizes)
    if not (long_.all() and (lengths == lengths[0]).all() and (sizes == sizes[0]).all() and (at == at[0]).all()):
        return False
    width, size, first, start = int(lengths[0]), int(sizes[0]), int(at[0]), int(offsets[0])
    buffer.reshape(n, size)[:, first : first + width] = data[start : start + n * width].reshape(n, width)
    return True


@dataclass(frozen=True, slots=True)
class _Encoded:
    buffer: np.ndarray  # every row's bytes
    starts: np.ndarray  # row i's bytes are buffer[starts[i] : starts[i] + sizes[i]]
    sizes: np.ndarray
    groups: list[tuple[np.ndarray, np.ndarray]]  # (row numbers, their bytes as a matrix), per size


def _binary_parts(col: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets, lengths and the data buffer of a string/binary array (nulls have length 0)."""
    if pa.types.is_large_string(col.type) or pa.types.is_large_binary(col.type):
        col = col.cast(pa.large_binary())
        offset_type: type[np.signedinteger[Any]] = np.int64
    else:
        col = col.cast(pa.binary())
        offset_type = np.int32
    bufs = col.buffers()
    offsets = np.frombuffer(bufs[1], dtype=offset_type)[col.offset : col.offset + len(col) + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, dtype=np.uint8)
    return offsets[:-1], np.diff(offsets), data


def _inline_slots(offsets: np.ndarray, lengths: np.ndarray, data: np.ndarray, inline: np.ndarray) -> np.ndarray:
    """Slots of values of up to 7 bytes: the bytes little-endian, ``0x80 | length`` in the top byte."""
    out = np.zeros(len(lengths), dtype=np.uint64)
    rows = np.flatnonzero(inline)
    if len(rows) == 0:
        return out
    out[rows] = (np.uint64(0x80) | lengths[rows].astype(np.uint64)) << np.uint64(56)
    for j in range(_INLINE):
        has = rows[lengths[rows] > j]
        if len(has):
            out[has] |= data[offsets[has] + j].astype(np.uint64) << np.uint64(8 * j)
    return out


def _slot_values(col: pa.Array, typ: PaimonType) -> np.ndarray:
    """The uint64 content of a fixed-width value's slot (narrow types fill only their low bytes)."""
    root = typ.root
    if root is Root.BOOLEAN:
        return np.asarray(col.fill_null(False), dtype=np.uint64)
    if root is Root.DECIMAL:
        assert typ.length is not None and typ.scale is not None
        col = col.cast(pa.decimal128(typ.length, typ.scale)).fill_null(0)
        # a compact decimal's slot is its unscaled value: the low word of the 128-bit integer
        words = np.frombuffer(col.buffers()[1], dtype="<i8")[2 * col.offset : 2 * (col.offset + len(col))]
        return words[0::2].view(np.uint64).copy()
    if root in (Root.TIMESTAMP, Root.TIMESTAMP_LTZ):
        unit = col.type.unit if pa.types.is_timestamp(col.type) else "ms"
        raw = np.asarray(col.cast(pa.timestamp(unit, col.type.tz if pa.types.is_timestamp(col.type) else None))
                         .cast(pa.int64()).fill_null(0), dtype=np.int64)  # fmt: skip
        per_ms = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}[unit]
        millis = raw * 1000 if per_ms == 0 else np.floor_divide(raw, per_ms)
        return millis.view(np.uint64)
    if root is Root.DATE:
        values = np.asarray(col.cast(pa.int32()).fill_null(0), dtype=np.int64)
    elif root is Root.TIME:
        values = np.asarray(pc.cast(col.cast(pa.time32("ms")), pa.int32()).fill_null(0), dtype=np.int64)
    else:
        values = np.asarray(col.fill_null(0), dtype=np.int64)
    width = _SLOT_BYTES.get(root, 8)
    if width == 8:
        return values.view(np.uint64)
    return (values & ((1 << (8 * width)) - 1)).astype(np.uint64)
