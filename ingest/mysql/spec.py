"""What the MySQL source reads (``MySqlSourceSpec``, JSON in the ``lakecdc.spec`` option), binlog
positions, and the input partitions a micro-batch is planned into: snapshot chunks and a binlog range.
Shared by the driver's planning (``source``) and the read tasks (``snapshot``, ``binlog``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec
from pyspark.sql.datasource import (
    InputPartition,
)

from ingest.mysql.client import (
    MySqlConnection,
)
from ingest.mysql.key_bounds import decode_bound
from ingest.pipeline.assembler import ChunkAssembler
from ingest.pipeline.parse_spec import ParseSpec
from schema_evolution.mysql_tables import TableDef
from schema_evolution.type_mapping import TypeMappingMode, parse_type_mapping

Position = tuple[str, int]
TOPIC = "mysql"


# Rows per snapshot chunk (``scan.incremental.snapshot.chunk.size``). Flink CDC's default is 8096;
# here each chunk is a Spark task that connects, notes LW and HW and may read the binlog between
# them, which cost ~18% of a 2M-row snapshot's read time at 8096 rows per chunk (bench/README.md).
DEFAULT_CHUNK_SIZE = 32768


@dataclass(frozen=True)
class MySqlSourceSpec:
    """What the source reads and how it parses; JSON in the ``lakecdc.spec`` option (no password)."""

    connection: MySqlConnection
    database_regex: str
    table_regex: str
    startup_mode: str
    parse: ParseSpec
    state_dir: str
    server_id: int = 5400
    server_id_range: int = 64
    server_time_zone: str = "UTC"
    chunk_size: int = DEFAULT_CHUNK_SIZE
    specific_position: tuple[str, int] | None = None
    specific_gtids: str | None = None  # a GTID set: start after its transactions (preferred over the position)
    startup_timestamp_ms: int | None = None
    require_primary_key: bool = True
    # scan.newly-added-table.enabled (Paimon's default: true): on a restart, snapshot the tables that
    # newly match; false: they are read from the binlog only (Flink CDC's behaviour without it).
    newly_added_tables: bool = True
    skip_backfill: bool = False  # scan.incremental.snapshot.backfill.skip: at-least-once snapshot chunks
    # scan.snapshot.fetch.size: rows per fetch of a chunk's SELECT, on an unbuffered cursor. Without it
    # the chunk is read in one buffered fetch: ~25% faster to read (pymysql's unbuffered cursor costs
    # more per row), and the chunk's rows are held whole anyway until its HW.
    fetch_size: int | None = None
    # scan.schema-history.skip-ddl: binlog positions of DDL the schema history passes over (the
    # operator says they changed no column of a captured table)
    skip_ddl: tuple[tuple[str, int], ...] = ()
    # scan.snapshot.when-needed: re-snapshot the captured tables when the checkpoint's binlog position
    # is gone (``ingest.mysql.resnapshot``); the warehouse is where the re-snapshot reads Paimon's keys
    resnapshot_when_needed: bool = False
    warehouse: str = ""

    def to_json(self) -> str:
        d = msgspec.to_builtins(self)
        del d["connection"]["password"]  # travels as the separate, redacted option mysql.password
        return msgspec.json.encode(d).decode()

    @staticmethod
    def from_json(text: str, password: str = "") -> MySqlSourceSpec:
        spec = msgspec.json.decode(text, type=MySqlSourceSpec)
        return replace(spec, connection=replace(spec.connection, password=password))


@dataclass(frozen=True)
class Chunk:
    database: str
    table: str
    # int, str, bytes, date, datetime or Decimal on the first key column, or a tuple of those on the
    # whole key (``key_chunks``); None: open
    lo: Any
    hi: Any

    def __post_init__(self) -> None:
        # bounds come from an offset's JSON tagged (``key_bounds.encode_bound``)
        object.__setattr__(self, "lo", decode_bound(self.lo))
        object.__setattr__(self, "hi", decode_bound(self.hi))

    def contains(self, key: tuple[Any, ...], in_range: Callable[[Any, Any, Any], bool] | None = None) -> bool:
        """Whether the key (the tuple of its columns' values) lies in [lo, hi): by ``in_range`` where
        given (string bounds, compared in their collation, and binary, temporal and decimal ones:
        ``key_chunks.key_range_test``), else by Python's order (integer bounds) of the first key
        column, or of the whole key where the bounds are tuples."""
        if in_range is not None:
            return in_range(key, self.lo, self.hi)
        return (self.lo is None or _at_or_after(key, self.lo)) and (self.hi is None or not _at_or_after(key, self.hi))


def _at_or_after(key: tuple[Any, ...], bound: Any) -> bool:
    return key[: len(bound)] >= bound if isinstance(bound, tuple) else key[0] >= bound


@dataclass(frozen=True)
class ChunkPartition(InputPartition):
    index: int
    chunk: Chunk
    history: bool = False  # the server's row events do not name their columns


@dataclass(frozen=True)
class BinlogPartition(InputPartition):
    start: Position
    end: Position
    # "db.table" -> [(lo, hi, hw file, hw pos)]: which binlog changes the snapshot already holds
    snapshot: dict[str, list[tuple[Any, Any, str, int]]] = field(default_factory=dict)
    # The server's row events do not name their columns: the job's schema history as of ``start``
    # ("db.table" -> definition), read by the driver (the read task never opens the state folder; the
    # DDL it follows goes back to the driver as marks, ``schema_history.history_mark``). None: no history.
    definitions: dict[str, TableDef] | None = None


def binlog_offset(position: Position) -> int:
    """A position as one increasing number (file index in the high bits), for chunk ordering."""
    match = re.search(r"(\d+)$", position[0])
    return (int(match.group(1)) if match else 0) << 32 | position[1]


# The assembler partition of binlog rows (snapshot chunks use their index).
BINLOG_PARTITION = 1 << 20


def chunk_assembler(spec: MySqlSourceSpec, partition: int) -> ChunkAssembler:
    return ChunkAssembler(spec.parse, TOPIC, partition)


def values_as_text(spec: MySqlSourceSpec) -> bool:
    """``--type-mapping to-string``: values become the text Paimon's MySQL action writes."""
    return TypeMappingMode.TO_STRING in parse_type_mapping(spec.parse.type_mapping)
