"""Small snapshot chunks packed into one read task, read one after another on one connection.

Every snapshot chunk used to be its own Spark task with its own connection. For a whole small table
(ten rows) that task cost ~40 ms of the two cores in Spark and ~11 ms in Python (a third of it the
connection) for a few milliseconds of reading: 1,000 small tables spent ~10 s per 256 of them
(bench-scale). A micro-batch's chunks estimated at less than a chunk's rows (``snapshot_batches``)
are so packed, consecutive ones together, each pack holding at most a chunk's estimated rows and
``MAX_PACK`` chunks, and the micro-batch keeps at least one task per core where it has the chunks.

Nothing else changes: each chunk of a pack is read exactly as alone (its own LW, consistent read, HW
and back-fill, its own mark), and its rows are handed on before the next chunk is read, so memory
is still one chunk's. Which chunks share a task is not in the offset: a replayed micro-batch may pack
them differently and reads the same chunks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import InputPartition

from ingest.mysql.client import MySqlConnection, connect
from ingest.mysql.key_diff import KeyScan, ResnapshotChunkPartition
from ingest.mysql.spec import Chunk, ChunkPartition

# A pack's chunks are retried together if its task fails, and a task's progress shows only when it
# ends: 64 small tables are ~1 s of reading.
MAX_PACK = 64


@dataclass(frozen=True)
class ChunkPack(InputPartition):
    """Snapshot chunks one task reads in turn (each as ``read_chunk`` reads it alone)."""

    parts: tuple[ChunkPartition, ...]


def chunk_partitions(
    chunks: Sequence[Sequence[Any]], first: int, history: bool, scans: dict[str, Any] | None
) -> list[ChunkPartition]:
    """The read partitions of ``chunks`` (``[db, table, lo, hi]`` of an offset), numbered from
    ``first``; ``scans``: a re-snapshot's Paimon key scans by table (``key_diff``)."""
    out: list[ChunkPartition] = []
    for i, (database, table, lo, hi) in enumerate(chunks, first):
        chunk = Chunk(database, table, lo, hi)
        if scans is None:
            out.append(ChunkPartition(i, chunk, history))
        else:
            scan = scans.get(f"{database}.{table}")
            out.append(ResnapshotChunkPartition(i, chunk, history, None if scan is None else KeyScan.from_json(scan)))
    return out


def pack_chunks(
    parts: Sequence[ChunkPartition], rows: Sequence[int], chunk_size: int, tasks: int
) -> list[InputPartition]:
    """``parts`` (a micro-batch's chunks, ``rows`` their estimated rows) as read tasks: chunks
    estimated at fewer than ``chunk_size`` rows are packed with the consecutive small chunks after
    them, up to ``chunk_size`` estimated rows and ``MAX_PACK`` chunks a pack, and no more than
    needed to leave ``tasks`` packs; other chunks stay tasks of their own. Packs take their first
    chunk's place."""
    small = sum(1 for n in rows if n < chunk_size)
    # the small chunks spread evenly over k packs: at least one per task, at most MAX_PACK in each
    k = min(small, max(tasks, -(-small // MAX_PACK)))
    sizes = [small // k + (1 if j < small % k else 0) for j in range(k)][::-1] if k else []
    out: list[InputPartition] = []
    pack: list[ChunkPartition] = []
    packed_rows = 0

    def close() -> None:
        nonlocal pack, packed_rows
        if pack:
            out.append(pack[0] if len(pack) == 1 else ChunkPack(tuple(pack)))
        pack, packed_rows = [], 0

    for part, n in zip(parts, rows, strict=True):
        if n >= chunk_size:
            out.append(part)  # (an open pack stays open: small chunks after it join it)
            continue
        if pack and (len(pack) >= sizes[-1] or packed_rows + n > chunk_size):
            if len(pack) >= sizes[-1] and len(sizes) > 1:
                sizes.pop()
            close()
        pack.append(part)
        packed_rows += n
    close()
    return out


class PackConnection:
    """One connection for a pack's chunks, opened when first used. A chunk that fails on it closes it
    (the connection may be broken, or mid-result), and the next use connects again."""

    def __init__(self, conn: MySqlConnection) -> None:
        self.conn = conn
        self._open: contextlib.ExitStack | None = None
        self._c: Any = None

    @contextlib.contextmanager
    def use(self) -> Iterator[Any]:
        if self._open is None:
            stack = contextlib.ExitStack()
            self._c = stack.enter_context(connect(self.conn))
            self._open = stack
        try:
            yield self._c
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._open is not None:
            stack, self._open, self._c = self._open, None, None
            with contextlib.suppress(Exception):
                stack.close()

    def __enter__(self) -> PackConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
