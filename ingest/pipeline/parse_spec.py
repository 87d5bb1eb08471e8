"""What a read task needs to turn one source's messages into chunks: the ``ParseSpec`` pickled into
every read task (format, routing, type mapping, metadata and computed columns, bad-input handling)."""

from __future__ import annotations

from dataclasses import dataclass

from ingest.pipeline.chunk_builder import DEFAULT_CHUNK_ROWS
from ingest.pipeline.routing import TableRouter


@dataclass(frozen=True)
class ParseSpec:
    """How to turn a topic's messages into chunks; pickled into every read task."""

    format: str
    router: TableRouter
    primary_keys: tuple[str, ...] = ()
    type_mapping: str = ""
    chunk_rows: int = DEFAULT_CHUNK_ROWS
    metadata_columns: tuple[str, ...] = ()
    metadata_prefix: str = ""
    computed_columns: tuple[str, ...] = ()
    metadata_not_null: bool = False
    # the format's bulk path for plain DML where its registry entry has one (same results, see
    # formats.bulk); off in tests that compare both paths
    bulk_path: bool = True
    # --catalog-conf case-sensitive=false: column and key names in lower case, computed columns'
    # references matched whatever their case (Paimon's CDC actions)
    case_sensitive: bool = True
    # --log-payloads: error texts may show message values (schema_evolution.payloads)
    log_payloads: bool = False
    # --errors-tolerance all: the dead-letter table ("database.table") that messages which cannot be
    # parsed, converted or routed go to instead of stopping the job (None: --errors-tolerance none)
    dead_letter_table: str | None = None
    # --skip-offsets: (topic, partition, offset) of messages the operator moves past
    skip_offsets: tuple[tuple[str, int, int], ...] = ()
