"""One partition's messages through a ``ChunkAssembler`` into chunk-row batches, in offset order: the
default loop, and the loop with dead letters and operator skips (kept apart, so the default loop
carries none of their checks)."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import structlog

from formats import Parser
from ingest.pipeline.assembler import ChunkAssembler
from ingest.pipeline.dead_letters import skipped_offsets
from ingest.pipeline.gc_pause import GcPaused
from ingest.pipeline.parse_spec import ParseSpec

log = structlog.get_logger(__name__)


Message = tuple[bytes | None, bytes | None, int, int | None, int]


def assemble(
    spec: ParseSpec, topic: str, partition: int, messages: Iterator[Message], parser: Parser | None = None
) -> Iterator[pa.RecordBatch]:
    """Chunk-row batches for ``(value, key, offset, timestamp_ms, timestamp_type)`` messages of
    one partition (``parser``: the source's own, else the format's registry entry's)."""
    assembler = ChunkAssembler(spec, topic, partition, parser=parser)
    skips = skipped_offsets(spec.skip_offsets, topic, partition)
    if spec.dead_letter_table is not None or skips:
        yield from _assemble_tolerant(assembler, skips, messages)
        return
    with GcPaused():
        for value, key, offset, ts, ts_type in messages:
            assembler.add(value, key, offset, ts, ts_type)
            if assembler._ready:
                batch = assembler.take()
                if batch is not None:
                    yield batch
        last = assembler.finish()
    if last is not None:
        yield last


def _assemble_tolerant(
    assembler: ChunkAssembler, skips: frozenset[int], messages: Iterator[Message]
) -> Iterator[pa.RecordBatch]:
    """``assemble`` with dead letters and skipped offsets (the default loop stays free of their checks)."""
    add = assembler.add_tolerant if assembler.spec.dead_letter_table is not None else assembler.add
    with GcPaused():
        for value, key, offset, ts, ts_type in messages:
            if offset in skips:
                assembler.skip(value, key, offset)
                log.warning(
                    "message skipped (--skip-offsets)",
                    topic=assembler.topic,
                    partition=assembler.partition,
                    offset=offset,
                    dead_letter_table=assembler.spec.dead_letter_table,
                )
                continue
            add(value, key, offset, ts, ts_type)
            if assembler._ready:
                batch = assembler.take()
                if batch is not None:
                    yield batch
        last = assembler.finish()
    if last is not None:
        yield last
