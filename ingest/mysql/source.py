"""``lakecdc-mysql``: a PySpark streaming data source reading MySQL / MariaDB directly — an initial
snapshot read in parallel by Spark tasks, then the binlog — with offsets in the Spark checkpoint.

The snapshot follows Flink CDC's incremental snapshot algorithm, without a global lock:

1. At the start the driver notes the binlog position P0 and splits each table into primary-key
   chunks (``mysql_client.plan_chunks``).
2. A chunk task notes the position LW, SELECTs its key range, notes HW, then reads the binlog
   from LW to HW and applies that table's changes in its range to what it read: the chunk is then
   exactly the table's rows in that range *as of HW*. It reports HW as a mark.
3. The driver keeps every chunk's HW beside the checkpoint, before committing the micro-batch
   (and never overwrites the HW of a chunk whose rows are already committed).
4. The binlog phase starts at P0; a row change at position p of a key in chunk c is emitted only
   when p > HW(c). Nothing is lost or emitted twice, and the table ends equal to the source.

Offsets: ``{"chunks": [[db, table, lo, hi], ...], "done": n, "binlog": [file, pos]}`` — chunks
(planned once) and how many are read, and where the binlog phase starts or resumes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import structlog
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from formats import mysql_values
from formats.events import DataChangeEvent, Op, SourceSchema
from ingest import logs
from ingest.mysql.client import (
    UNREACHABLE,
    Backoff,
    MySqlConnection,
    MySqlSourceError,
    captured_tables,
    check_server,
    connect,
    master_status,
    plan_chunks,
    position_after_gtids,
    position_at,
    query,
    quote,
    retrying,
    table_columns,
    table_comments,
    table_definitions,
    variables,
)
from ingest.mysql.gtid import GtidSet
from ingest.mysql.schema_history import SchemaHistory
from ingest.mysql.ssl import SslSettings
from ingest.pipeline.assembler import ChunkAssembler, GcPaused, ParseSpec
from ingest.pipeline.routing import TableRouter
from ingest.workers.memory import keep_pandas_out, release_unused_memory
from schema_evolution.errors import SourcePosition
from schema_evolution.mysql_ddl import DdlError, TableDef, apply_ddl, base_type, member_values
from schema_evolution.type_mapping import TypeMappingMode, parse_type_mapping
from sinks.local_files import write_atomically
from sinks.write.chunk_format import CHUNK_DDL

log = structlog.get_logger(__name__)

Position = tuple[str, int]
TOPIC = "mysql"
REGISTRY_FILE = "lakecdc-mysql-snapshot.json"


# Rows per snapshot chunk (``scan.incremental.snapshot.chunk.size``). Flink CDC's default is 8096;
# here each chunk is a Spark task that connects, notes LW and HW and may read the binlog between
# them, which cost ~18% of a 2M-row snapshot's read time at 8096 rows per chunk (README, Measured).
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

    def to_json(self) -> str:
        d = asdict(self)
        d["connection"].pop("password")  # travels as the separate, redacted option mysql.password
        return orjson.dumps(d).decode()

    @staticmethod
    def from_json(text: str, password: str = "") -> MySqlSourceSpec:
        d = orjson.loads(text)
        connection = d["connection"]
        connection["ssl"] = SslSettings(**connection["ssl"])
        d["connection"] = MySqlConnection(**connection, password=password)
        parse = d.pop("parse")
        parse["router"] = TableRouter(**parse["router"])
        for key in ("primary_keys", "metadata_columns", "computed_columns"):
            parse[key] = tuple(parse[key])
        if d.get("specific_position") is not None:
            d["specific_position"] = tuple(d["specific_position"])
        return MySqlSourceSpec(parse=ParseSpec(**parse), **d)


@dataclass(frozen=True)
class Chunk:
    database: str
    table: str
    lo: int | None
    hi: int | None

    def contains(self, key: Any) -> bool:
        return (self.lo is None or key >= self.lo) and (self.hi is None or key < self.hi)


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
    snapshot: dict[str, list[tuple[int | None, int | None, str, int]]] = field(default_factory=dict)
    # The server's row events do not name their columns: use the job's schema history.
    history: bool = False


def binlog_offset(position: Position) -> int:
    """A position as one increasing number (file index in the high bits), for chunk ordering."""
    match = re.search(r"(\d+)$", position[0])
    return (int(match.group(1)) if match else 0) << 32 | position[1]


class SnapshotRegistry:
    """The HW of every snapshot chunk whose rows were handed to a commit, kept beside the
    checkpoint (``<checkpoint>/lakecdc-mysql-snapshot.json``)."""

    def __init__(self, state_dir: str) -> None:
        self.path = Path(state_dir) / REGISTRY_FILE

    def load(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        data: dict[str, dict[str, Any]] = json.loads(self.path.read_text())
        return data

    def record(self, batch_id: int, marks: list[str], committed: Callable[[str], bool]) -> None:
        entries = self.load()
        changed = False
        for text in marks:
            mark = json.loads(text)
            key = str(mark["chunk"])
            if key in entries and committed(mark["target"]):
                continue  # a replay: the committed rows are as of the recorded HW
            entries[key] = {**mark, "batch": batch_id}
            changed = True
        if changed:
            write_atomically(self.path, json.dumps(entries, sort_keys=True))

    def by_table(self) -> dict[str, list[tuple[int | None, int | None, str, int]]]:
        out: dict[str, list[tuple[int | None, int | None, str, int]]] = {}
        for e in self.load().values():
            out.setdefault(f"{e['database']}.{e['table']}", []).append((e["lo"], e["hi"], e["hw"][0], e["hw"][1]))
        return out


class MySqlCdcDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "lakecdc-mysql"

    def schema(self) -> str:
        return CHUNK_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        logs.configure_once()
        spec = MySqlSourceSpec.from_json(self.options["lakecdc.spec"], self.options.get("mysql.password", ""))
        max_rows = int(self.options.get("lakecdc.maxrows", "0") or 0)
        return MySqlStreamReader(spec, max_rows)


class MySqlStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, spec: MySqlSourceSpec, max_rows: int) -> None:
        self.spec = spec
        self.max_rows = max_rows
        self._available_now: dict[str, Any] | None = None
        self._initial: dict[str, Any] | None = None

    # ----- driver side -----------------------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:
        # Spark may ask twice; the chunk plan and P0 must not differ between the answers.
        if self._initial is None:
            self._initial = self._plan_initial()
        return self._initial

    def _plan_initial(self) -> dict[str, Any]:
        spec = self.spec
        with connect(spec.connection) as c:
            full_metadata = check_server(c)
            position = master_status(c)
            if not full_metadata or spec.startup_mode in ("initial", "latest-offset"):
                position = self._start_history(c, full_metadata)
            chunks: list[list[Any]] = []
            if spec.startup_mode == "initial":
                for database, table in captured_tables(c, spec.database_regex, spec.table_regex):
                    if spec.parse.router.route(database, table) is None:
                        continue  # excluded by --including-tables / --excluding-tables
                    columns, keys = table_columns(c, database, table)
                    if not keys and not spec.parse.primary_keys:
                        if spec.require_primary_key:
                            raise MySqlSourceError(
                                f"table {database}.{table} has no primary key: give --primary-keys, or exclude it"
                            )
                        log.warning("table without primary key skipped", table=f"{database}.{table}")
                        continue
                    types = dict(columns)
                    split_keys = keys or list(spec.parse.primary_keys)
                    for lo, hi in plan_chunks(
                        c, database, table, split_keys, [types.get(k, "") for k in split_keys], spec.chunk_size
                    ):
                        chunks.append([database, table, lo, hi])
                table_sync = spec.parse.router.table is not None
                if not chunks and table_sync:
                    raise MySqlSourceError(
                        f"no table matches database-name '{spec.database_regex}' and table-name "
                        f"'{spec.table_regex}' (full matches)"
                    )
                if not table_sync and not captured_tables(c, spec.database_regex, ".*"):
                    # Paimon's message for mysql-sync-database.
                    raise MySqlSourceError(
                        f"No tables found in MySQL database {spec.database_regex}, or MySQL database does not exist."
                    )
            elif spec.startup_mode == "earliest-offset":
                files = query(c, "SHOW BINARY LOGS")
                position = (str(files[0][0]), 4)
            elif spec.startup_mode == "specific-offset" and spec.specific_gtids:
                position = position_after_gtids(spec.connection, GtidSet.parse(spec.specific_gtids), spec.server_id)
            elif spec.startup_mode == "specific-offset":
                assert spec.specific_position is not None
                position = spec.specific_position
            elif spec.startup_mode == "timestamp":
                assert spec.startup_timestamp_ms is not None
                position = position_at(spec.connection, spec.startup_timestamp_ms, spec.server_id)
        log.info("mysql source start", mode=spec.startup_mode, chunks=len(chunks), binlog=list(position))
        return {"chunks": chunks, "done": 0, "binlog": list(position)}

    def _start_history(self, c: Any, full_metadata: bool) -> Position:
        """The table definitions at the start position: the first entry of the schema history
        that names (without ``binlog_row_metadata=FULL``) and types the binlog's row values.
        Only the current definitions can be read, so the start must be now (initial,
        latest-offset), and no DDL may fall between the position and the definitions: read
        again until none did."""
        spec = self.spec
        if spec.startup_mode not in ("initial", "latest-offset"):
            assert not full_metadata
            raise MySqlSourceError(
                f"scan.startup.mode={spec.startup_mode} needs binlog_row_metadata=FULL on the server: without it "
                f"column names come from a schema history that starts now (use initial or latest-offset)"
            )
        for _ in range(10):
            before = master_status(c)
            tables = table_definitions(c, spec.database_regex)
            after = master_status(c)
            if before == after or not _ddl_between(spec, before, after):
                SchemaHistory(spec.state_dir).start(before, tables)
                log.info("schema history started", tables=len(tables), row_metadata_full=full_metadata)
                return before
        raise MySqlSourceError("DDL kept running while the table definitions were read; start the job again")

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_rows) if self.max_rows > 0 else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = {"binlog": list(retrying(self.spec.connection, master_status))}

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        chunks = start["chunks"]
        if start["done"] < len(chunks):
            step = len(chunks)
            if isinstance(limit, ReadMaxRows) and limit.max_rows > 0:
                step = max(1, limit.max_rows // self.spec.chunk_size)
            return {**start, "done": min(len(chunks), start["done"] + step)}
        if self._available_now is not None:
            latest: Position = tuple(self._available_now["binlog"])
        else:
            latest = retrying(self.spec.connection, master_status)
        if binlog_offset(latest) <= binlog_offset(tuple(start["binlog"])):
            return start
        # The snapshot is complete: its chunks live on in the registry, not in every offset.
        return {"chunks": [], "done": 0, "binlog": list(latest)}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        parts: list[InputPartition] = []
        history = SchemaHistory(self.spec.state_dir).exists()
        if end["chunks"]:
            for i in range(start["done"], end["done"]):
                database, table, lo, hi = end["chunks"][i]
                parts.append(ChunkPartition(i, Chunk(database, table, lo, hi), history))
        if binlog_offset(tuple(end["binlog"])) > binlog_offset(tuple(start["binlog"])):
            snapshot = SnapshotRegistry(self.spec.state_dir).by_table()
            parts.append(BinlogPartition(tuple(start["binlog"]), tuple(end["binlog"]), snapshot, history))
        return parts

    def commit(self, end: dict[str, Any]) -> None:
        pass

    # ----- executor side ---------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        logs.configure_once()
        keep_pandas_out()
        with GcPaused():
            if isinstance(partition, ChunkPartition):
                yield from read_chunk(self.spec, partition)
            else:
                assert isinstance(partition, BinlogPartition)
                yield from read_binlog(self.spec, partition)
        release_unused_memory()


class _Tables:
    """Column types and keys of the captured tables, from information_schema (refreshed on DDL)."""

    def __init__(self, spec: MySqlSourceSpec, c: Any, history: dict[str, TableDef] | None = None) -> None:
        self.spec = spec
        self.c = c
        self.history = history  # the schema history's definitions, kept current by the reader
        self._types: dict[str, dict[str, str]] = {}
        self._keys: dict[str, list[str]] = {}
        self._comments: dict[str, tuple[dict[str, str], str | None]] = {}
        self._schemas: dict[tuple[str, tuple[str, ...]], SourceSchema] = {}
        self._normalizers: dict[tuple[str, tuple[str, ...]], mysql_values.RowNormalizer] = {}

    def refresh(self, database: str, table: str) -> None:
        name = f"{database}.{table}"
        definition = self.history.get(name) if self.history is not None else None
        if definition is not None:
            columns, keys = _columns_of(definition), list(definition.primary_key)
            comments = ({c.name: c.comment for c in definition.columns if c.comment}, definition.comment)
        else:  # no history, or one that gave up on this table (FULL row metadata only)
            columns, keys = table_columns(self.c, database, table)
            comments = table_comments(self.c, database, table)
        self._types[name] = dict(columns)
        self._keys[name] = keys
        self._comments[name] = comments
        self._schemas = {k: v for k, v in self._schemas.items() if k[0] != name}
        self._normalizers = {k: v for k, v in self._normalizers.items() if k[0] != name}

    def invalidate(self, name: str) -> None:
        self._types.pop(name, None)
        self._schemas = {k: v for k, v in self._schemas.items() if k[0] != name}
        self._normalizers = {k: v for k, v in self._normalizers.items() if k[0] != name}

    def types(self, database: str, table: str) -> dict[str, str]:
        name = f"{database}.{table}"
        if name not in self._types:
            self.refresh(database, table)
        return self._types[name]

    def keys(self, database: str, table: str) -> list[str]:
        self.types(database, table)
        return self._keys[f"{database}.{table}"]

    def source_schema(self, database: str, table: str, columns: Sequence[str] | None = None) -> SourceSchema:
        """The table's columns (all, or ``columns``) with types, keys and comments."""
        types = self.types(database, table)
        comments, table_comment = self._comments[f"{database}.{table}"]
        names = list(types) if columns is None else columns
        return mysql_values.source_schema(
            [(c, types[c]) for c in names], self.keys(database, table), comments, table_comment
        )

    def schema(self, database: str, table: str, columns: tuple[str, ...]) -> SourceSchema:
        name = f"{database}.{table}"
        found = self._schemas.get((name, columns))
        if found is None:
            types = self.types(database, table)
            if any(c not in types for c in columns):
                self.refresh(database, table)
                types = self.types(database, table)
            missing = [c for c in columns if c not in types]
            if missing:
                raise MySqlSourceError(f"table {name}: binlog rows name columns {missing} the table does not have")
            found = self.source_schema(database, table, columns)
            self._schemas[(name, columns)] = found
        return found

    def normalizer(self, database: str, table: str, columns: tuple[str, ...]) -> mysql_values.RowNormalizer:
        """``RowNormalizer`` for row images with ``columns`` (binlog rows: naive UTC TIMESTAMPs)."""
        key = (f"{database}.{table}", columns)
        found = self._normalizers.get(key)
        if found is None:
            schema = self.schema(database, table, columns)
            types = {name: typ or "TEXT" for name, typ in schema.fields}
            zone = mysql_values.server_zone(self.spec.server_time_zone)
            found = mysql_values.RowNormalizer(types, zone, True, _to_string(self.spec))
            self._normalizers[key] = found
        return found


def _columns_of(definition: TableDef) -> list[tuple[str, str]]:
    """A definition's columns as ``table_columns`` gives them (NOT NULL appended to the type)."""
    return [(c.name, c.type + ("" if c.nullable else " NOT NULL")) for c in definition.columns]


_TEXT = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json"})
_BINARY = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


class _RowColumns:
    """Names the columns of row events before they are decoded. With ``binlog_row_metadata=FULL``
    the server does, and this only checks it still does. Otherwise the names, signedness,
    character sets and ENUM/SET values come from ``tables`` (the schema history), set on the
    table map that precedes each row event; a column count that differs stops the reader rather
    than attach values to the wrong columns."""

    def __init__(
        self,
        tables: dict[str, TableDef] | None,
        captured: Callable[[str, str], bool],
        forget: Callable[[str, Position, str], None] | None = None,
    ) -> None:
        self.tables = tables
        self.captured = captured
        # FULL row metadata: where the history disagrees with the names the server sends, drop
        # the table from the history (its types then come from the server) instead of failing.
        self.forget = forget

    def __call__(self, event: Any, position: Position) -> None:
        database, table = str(event.schema), str(event.table)
        if not self.captured(database, table):
            return
        name = f"{database}.{table}"
        where = f"binlog {position[0]}:{position[1]}, table {name}"
        named = all(col.name is not None for col in event.columns)
        if named and self.forget is not None and self.tables is not None:
            kept = self.tables.get(name)
            if kept is not None and kept.names() != [col.name for col in event.columns]:
                self.forget(name, position, f"the server names columns {[col.name for col in event.columns]}")
            return
        if self.tables is None:
            if not named:
                raise MySqlSourceError(
                    f"{where}: row events no longer name their columns (binlog_row_metadata is no longer "
                    f"FULL); set binlog_row_metadata=FULL again, or start from a new checkpoint"
                )
            return
        definition = self.tables.get(name)
        if definition is None:
            raise MySqlSourceError(f"{where}: the table is not in the schema history; start from a new checkpoint")
        if len(definition.columns) != len(event.columns):
            raise MySqlSourceError(
                f"{where}: the row events have {len(event.columns)} columns, the schema history "
                f"{len(definition.columns)} ({', '.join(definition.names())}); set binlog_row_metadata=FULL "
                f"and start from a new checkpoint"
            )
        for col, known in zip(event.columns, definition.columns, strict=True):
            if col.name is not None and col.name != known.name:
                raise MySqlSourceError(
                    f"{where}: the server names column {col.name} where the schema history has {known.name}; "
                    f"start from a new checkpoint"
                )
            col.name = known.name
            base = base_type(known.type)
            col.unsigned = " unsigned" in known.type or " zerofill" in known.type
            if base == "enum":
                col.enum_values = ["", *member_values(known.type)]
            elif base == "set":
                col.set_values = member_values(known.type)
            if base in _TEXT and known.charset:
                col.character_set_name = known.charset
            elif base in _BINARY:
                col.character_set_name = "binary"  # raw bytes, not decoded text


def _ddl_between(spec: MySqlSourceSpec, start: Position, end: Position) -> bool:
    """Whether a statement that may change a table definition lies between two positions."""
    found: list[str] = []

    def on_query(text: str, _db: str | None, _ts: int, _position: Position) -> None:
        if text.strip().upper() not in ("BEGIN", "COMMIT", "ROLLBACK"):
            found.append(text)

    for _ in _binlog_rows(spec, start, end, spec.server_id, set(), on_query):
        pass
    return bool(found)


def _assembler(spec: MySqlSourceSpec, partition: int) -> ChunkAssembler:
    return ChunkAssembler(spec.parse, TOPIC, partition)


def _to_string(spec: MySqlSourceSpec) -> bool:
    """``--type-mapping to-string``: values become the text Paimon's MySQL action writes."""
    return TypeMappingMode.TO_STRING in parse_type_mapping(spec.parse.type_mapping)


class _ChunkChanged(Exception):
    """The chunk's table changed while the chunk was read: read it again."""


ChunkRows = tuple[dict[tuple[Any, ...], dict[str, Any]], dict[str, str], Position, SourceSchema]


def _read_chunk_rows(spec: MySqlSourceSpec, part: ChunkPartition) -> ChunkRows:
    """The chunk's rows as of its HW: (rows by key, column types, HW, schema)."""
    chunk = part.chunk
    name = f"{chunk.database}.{chunk.table}"
    with connect(spec.connection) as c:
        tables = _Tables(spec, c)
        types = tables.types(chunk.database, chunk.table)
        keys = tables.keys(chunk.database, chunk.table) or list(spec.parse.primary_keys)
        columns = tuple(types)
        schema = tables.source_schema(chunk.database, chunk.table)
        if keys != schema.primary_keys:
            schema = replace(schema, primary_keys=tuple(keys))
        low = master_status(c)
        where, args = "", []
        if chunk.lo is not None or chunk.hi is not None:
            key = quote(keys[0])
            parts = []
            if chunk.lo is not None:
                parts.append(f"{key} >= %s")
                args.append(chunk.lo)
            if chunk.hi is not None:
                parts.append(f"{key} < %s")
                args.append(chunk.hi)
            where = " WHERE " + " AND ".join(parts)
        select = ", ".join(quote(col) for col in columns)
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        with c.cursor() as cur:
            cur.execute(f"SELECT {select} FROM {quote(chunk.database)}.{quote(chunk.table)}{where}", args)
            for values in cur.fetchall_unbuffered() if hasattr(cur, "fetchall_unbuffered") else cur.fetchall():
                row = dict(zip(columns, values, strict=True))
                rows[tuple(row[k] for k in keys)] = row
        high = master_status(c)
        if high != low:
            # Changes committed while the SELECT ran: apply those of this range, so the chunk is
            # exactly the table's rows as of HW.
            namer = None
            on_ddl = None
            if part.history:
                definitions = table_definitions(c, re.escape(chunk.database), (chunk.database, chunk.table))
                namer = _RowColumns(definitions, lambda d, t: f"{d}.{t}" == name)

                def on_ddl(text: str, default_db: str | None, _ts: int, position: Position) -> None:
                    try:
                        changed = apply_ddl(definitions, text, default_db)
                    except DdlError:
                        changed = {name: None}
                    if name in changed:
                        raise _ChunkChanged(f"binlog {position[0]}:{position[1]}: {text[:200]}")

            for op, _db, _table, before, after, _pos, _ts in _binlog_rows(
                spec, low, high, spec.server_id + 1 + part.index % spec.server_id_range, {name}, on_ddl, namer
            ):
                image = after if after is not None else before
                assert image is not None
                key_values = tuple(image[k] for k in keys)
                if len(keys) == 1 and not chunk.contains(key_values[0]):
                    continue
                if before is not None:
                    rows.pop(tuple(before[k] for k in keys), None)
                if op is not Op.DELETE and after is not None:
                    rows[key_values] = {col: after.get(col) for col in columns}
    return rows, types, high, schema


def read_chunk(spec: MySqlSourceSpec, part: ChunkPartition) -> Iterator[pa.RecordBatch]:
    import pymysql

    chunk = part.chunk
    zone = mysql_values.server_zone(spec.server_time_zone)
    to_string = _to_string(spec)
    name = f"{chunk.database}.{chunk.table}"
    # Nothing is handed on before the chunk is complete, so a chunk whose connection dropped (a
    # server restart, a failover) or whose table was altered meanwhile is simply read again.
    backoff, changes = Backoff(spec.connection.connect_timeout), 0
    while True:
        try:
            rows, types, high, schema = _read_chunk_rows(spec, part)
            break
        except _ChunkChanged as exc:
            changes += 1
            if changes > 3:
                raise MySqlSourceError(
                    f"table {name} kept changing while its snapshot chunk was read ({exc})"
                ) from None
            log.warning("table changed while its snapshot chunk was read; reading it again", table=name, ddl=str(exc))
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            # 1927: the connection was killed, 1317: the query interrupted (KILL, a failover)
            if code not in (*UNREACHABLE, 1927, 1317) and not isinstance(exc, pymysql.err.InterfaceError):
                raise
            if backoff.expired():
                raise MySqlSourceError(
                    f"lost the connection to MySQL while reading a snapshot chunk of {name} and could not get it back "
                    f"within connect.timeout ({exc}); the job can be restarted from its checkpoint"
                ) from None
            log.warning(
                "connection lost while reading a snapshot chunk; reading it again", table=name, wait_s=backoff.wait
            )
            backoff.sleep()
    assembler = _assembler(spec, part.index)
    position = SourcePosition(TOPIC, part.index, binlog_offset(high))
    # Snapshot rows come from a UTC session: TIMESTAMPs are UTC, made server-zone here.
    normalized = mysql_values.RowNormalizer(types, zone, True, to_string)
    events = [
        DataChangeEvent(
            Op.INSERT,
            chunk.database,
            chunk.table,
            schema,
            None,
            normalized(row),
            0,  # op_ts of snapshot rows is 0, as in Paimon
        )
        for row in rows.values()
    ]
    # The table's schema even when this chunk (or the whole table) has no rows: Paimon creates the
    # table at start-up from the source schema.
    assembler.declare(DataChangeEvent(Op.INSERT, chunk.database, chunk.table, schema, None, {}, 0), position)
    for start in range(0, len(events), 4096):
        assembler.add_events(events[start : start + 4096], position)
        batch = assembler.take()
        if batch is not None:
            yield batch
    target = spec.parse.router.route(chunk.database, chunk.table) or name
    assembler.mark(
        json.dumps(
            {
                "chunk": part.index,
                "database": chunk.database,
                "table": chunk.table,
                "target": target,
                "lo": chunk.lo,
                "hi": chunk.hi,
                "hw": list(high),
                "rows": len(rows),
            }
        )
    )
    batch = assembler.finish()
    if batch is not None:
        yield batch
    log.info("snapshot chunk read", table=name, chunk=part.index, rows=len(rows), hw=list(high))


BinlogRow = tuple[Op, str, str, dict[str, Any] | None, dict[str, Any] | None, Position, int]


def _binlog_rows(
    spec: MySqlSourceSpec,
    start: Position,
    end: Position,
    server_id: int,
    only: set[str] | None,
    on_ddl: Callable[[str, str | None, int, Position], None] | None = None,
    on_table_map: Callable[[Any, Position], None] | None = None,
) -> Iterator[BinlogRow]:
    """Row changes of the captured tables between two binlog positions, in binlog order."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import QueryEvent, RotateEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, TableMapEvent, UpdateRowsEvent, WriteRowsEvent

    db_re, table_re = re.compile(spec.database_regex), re.compile(spec.table_regex)
    stream = BinLogStreamReader(
        connection_settings=spec.connection.replication_settings(),
        server_id=server_id,
        resume_stream=True,
        log_file=start[0],
        log_pos=start[1],
        blocking=False,
        # is_mariadb=True makes mysql-replication stream by GTID from the start of the binlog and
        # ignore log_file/log_pos; MariaDB serves the file/position dump (and its events decode) without it.
        is_mariadb=False,
        # Never drop an event silently (mysql-replication's default drops what it cannot decode).
        filter_non_implemented_events=False,
        freeze_schema=False,
    )
    end_offset = binlog_offset(end)
    reached = False
    try:
        for event in stream:
            log_pos = int(event.packet.log_pos)
            position: Position = (str(stream.log_file), log_pos)
            if isinstance(event, RotateEvent) or log_pos == 0:
                continue
            if binlog_offset(position) > end_offset:
                reached = True
                break
            if isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
                database, table = str(event.schema), str(event.table)
                if not (db_re.fullmatch(database) and table_re.fullmatch(table)):
                    continue
                if only is not None and f"{database}.{table}" not in only:
                    continue
                ts = int(event.timestamp) * 1000
                for row in event.rows:
                    if isinstance(event, WriteRowsEvent):
                        yield Op.INSERT, database, table, None, row["values"], position, ts
                    elif isinstance(event, UpdateRowsEvent):
                        yield Op.UPDATE, database, table, row["before_values"], row["after_values"], position, ts
                    else:
                        yield Op.DELETE, database, table, row["values"], None, position, ts
            elif isinstance(event, TableMapEvent) and on_table_map is not None:
                on_table_map(event, position)
            elif isinstance(event, QueryEvent) and on_ddl is not None:
                text = event.query if isinstance(event.query, str) else event.query.decode("utf-8", "replace")
                schema = event.schema.decode() if isinstance(event.schema, bytes) else event.schema
                on_ddl(text, schema or None, int(event.timestamp) * 1000, position)
            elif type(event).__name__ == "NotImplementedEvent":
                raise MySqlSourceError(
                    f"binlog event at {position[0]}:{position[1]} cannot be decoded (a compressed binlog?); "
                    f"set log_bin_compress=OFF (MariaDB) or binlog_transaction_compression=OFF (MySQL)"
                )
            if binlog_offset(position) >= end_offset:
                reached = True
                break
    finally:
        stream.close()
    if not reached:
        raise MySqlSourceError(
            f"the binlog ended before position {end[0]}:{end[1]}; was it purged? The job must start over "
            f"with a new checkpoint (scan.startup.mode=initial)"
        )


_DDL_TABLE = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?:ALTER|CREATE|DROP|RENAME|TRUNCATE)\s+(?:TABLE\s+)?(?:IF\s+(?:NOT\s+)?EXISTS\s+)?"
    r"(?:`?(\w+)`?\.)?`?(\w+)`?",
    re.IGNORECASE | re.DOTALL,
)


def read_binlog(spec: MySqlSourceSpec, part: BinlogPartition) -> Iterator[pa.RecordBatch]:
    assembler = _assembler(spec, 1 << 20)
    counted = 0
    skipped: set[str] = set()
    db_re, table_re = re.compile(spec.database_regex), re.compile(spec.table_regex)
    history = SchemaHistory(spec.state_dir) if part.history else None
    definitions = history.as_of(binlog_offset(part.start)) if history is not None else None
    with connect(spec.connection) as c:
        # With FULL row metadata the rows name their columns and the history gives their types;
        # where it cannot follow a DDL, the server's current definition serves, as without one.
        full = variables(c, "binlog_row_metadata").get("binlog_row_metadata", "").upper() == "FULL"
        tables = _Tables(spec, c, definitions)

        def forget(name: str, position: Position, why: str) -> None:
            assert history is not None and definitions is not None
            definitions.pop(name, None)
            tables.invalidate(name)
            history.record(binlog_offset(position), position, {name: None})
            log.warning("schema history gave up on a table; its definition is read from the server", table=name,
                        why=why)  # fmt: skip

        namer = _RowColumns(
            definitions, lambda d, t: bool(db_re.fullmatch(d) and table_re.fullmatch(t)), forget if full else None
        )

        def declare(database: str, table: str, ts: int, position: Position) -> None:
            # The table's schema goes to the driver at once, as Paimon applies a DDL: a table
            # created while the job runs exists before its first row (Paimon's combined mode), an
            # added column before the next row. Tables without a primary key are skipped.
            try:
                columns = list(tables.types(database, table).items())
                keys = tables.keys(database, table)
            except Exception:  # dropped again since: nothing to declare
                return
            if columns and (keys or spec.parse.primary_keys):
                schema = tables.source_schema(database, table)
                event = DataChangeEvent(Op.INSERT, database, table, schema, None, {}, ts)
                assembler.declare(event, SourcePosition(TOPIC, 1 << 20, binlog_offset(position)))

        def on_ddl(text: str, default_db: str | None, ts: int, position: Position) -> None:
            changed: list[str] = []
            if history is not None and definitions is not None:
                try:
                    changes = apply_ddl(definitions, text, default_db)
                except DdlError as exc:
                    match = _DDL_TABLE.match(text)
                    if not full or match is None:
                        raise MySqlSourceError(
                            f"binlog {position[0]}:{position[1]}: {exc}. Without binlog_row_metadata=FULL lakecdc "
                            f"must follow every DDL of the captured databases; set binlog_row_metadata=FULL and "
                            f"start from a new checkpoint"
                        ) from None
                    forget(f"{match.group(1) or default_db}.{match.group(2)}", position, str(exc))
                    changes = {}
                    changed = [f"{match.group(1) or default_db}.{match.group(2)}"]
                changes = {n: d for n, d in changes.items() if db_re.fullmatch(n.split(".", 1)[0])}
                if changes:
                    for n, d in changes.items():
                        if d is None:
                            definitions.pop(n, None)
                        else:
                            definitions[n] = d
                    history.record(binlog_offset(position), position, changes)
                    changed += [n for n, d in changes.items() if d is not None]
            else:
                match = _DDL_TABLE.match(text)
                if match is not None and (match.group(1) or default_db) is not None:
                    if re.match(r"^\s*(?:/\*.*?\*/\s*)*(?:CREATE|ALTER)\s+TABLE", text, re.IGNORECASE | re.DOTALL):
                        changed = [f"{match.group(1) or default_db}.{match.group(2)}"]
                    else:
                        tables.invalidate(f"{match.group(1) or default_db}.{match.group(2)}")
            for name in changed:
                database, table = name.split(".", 1)
                tables.invalidate(name)
                if db_re.fullmatch(database) and table_re.fullmatch(table):
                    declare(database, table, ts, position)

        for op, database, table, before, after, position, ts in _binlog_rows(
            spec, part.start, part.end, spec.server_id, None, on_ddl, namer
        ):
            image = after if after is not None else before
            assert image is not None
            keys = tables.keys(database, table) or list(spec.parse.primary_keys)
            if not keys:
                if spec.require_primary_key:
                    raise MySqlSourceError(
                        f"table {database}.{table} has no primary key: give --primary-keys, or exclude it"
                    )
                if f"{database}.{table}" not in skipped:
                    skipped.add(f"{database}.{table}")
                    log.warning("rows of a table without primary key skipped", table=f"{database}.{table}")
                continue
            ranges = part.snapshot.get(f"{database}.{table}")
            if ranges:
                key = image[keys[0]] if len(keys) == 1 else None
                hw = next(
                    (
                        (f, p)
                        for lo, hi, f, p in ranges
                        if key is None or ((lo is None or key >= lo) and (hi is None or key < hi))
                    ),
                    None,
                )
                if hw is not None and binlog_offset(position) <= binlog_offset(hw):
                    continue  # already in that chunk's snapshot rows
            columns = tuple(image)
            schema = tables.schema(database, table, columns)
            normalized = tables.normalizer(database, table, columns)
            event = DataChangeEvent(
                op,
                database,
                table,
                schema,
                None if before is None else normalized(before),
                None if after is None else normalized(after),
                ts,
            )
            assembler.add_events([event], SourcePosition(TOPIC, 1 << 20, binlog_offset(position)), ts)
            counted += 1
            if counted % 4096 == 0:
                batch = assembler.take()
                if batch is not None:
                    yield batch
    batch = assembler.finish()
    if batch is not None:
        yield batch
    log.info("binlog read", start=list(part.start), end=list(part.end), rows=counted)
