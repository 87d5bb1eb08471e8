"""``spark.read.format("paimon")``: a Spark batch reader of Paimon tables over pypaimon-rust.

A Python data source (``pyspark.sql.datasource``), so it needs no Paimon JAR: the driver plans
the table's splits with pypaimon-rust, each split travels to an executor in Paimon's own
serialized form, and the executor reads it into Arrow (merging primary-key rows, dropping
deletes). Options follow Paimon's Spark reader:

    spark.read.format("paimon")
        .option("warehouse", "/wh").option("table", "ods.orders")   # or .load("/wh/ods.db/orders")
        .option("scan.snapshot-id", "3")          # time travel to a snapshot ...
        .option("scan.tag-name", "daily-01")      # ... or to a tag
        .option("incremental-between", "3,7")     # changes in snapshots (3, 7], or between two tags
        .option("incremental-between-scan-mode", "delta")   # auto (default) | delta | changelog
        .load()

Incremental reads add a leading ``rowkind`` column (+I, -U, +U, -D): without it a change set of
a primary-key table cannot be told apart from its state. ``register(spark)`` makes the format
known to a session; lakecdc's own sessions have it.

The warehouse (or table path) is a relative or absolute local path or a ``file:`` URI; a relative
one is resolved on the driver, against the Spark driver's working directory. The ``warehouse``
option may also be ``s3://bucket/path``, with ``catalog.s3.endpoint``, ``catalog.s3.access-key`` ...
options (or the AWS_* environment of Spark's Python workers, where the source is planned); a
``load()`` path is local only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from schema_evolution.arrow_types import to_arrow
from schema_evolution.types import parse_type
from sinks.filesystem import with_environment
from sinks.table.locations import resolve_location, resolve_warehouse

ROW_KIND = "rowkind"
_SCAN_MODES = ("auto", "delta", "changelog")


class PaimonReadError(ValueError):
    """Options that do not name a readable table or version; the message says which and why."""


@dataclass(frozen=True)
class ReadSpec:
    """What to read, resolved from the reader options on the driver."""

    warehouse: str
    table: str
    catalog_options: tuple[tuple[str, str], ...] = ()
    snapshot_id: int | None = None
    tag_name: str | None = None
    incremental: tuple[int, int] | None = None
    scan_mode: str = "auto"

    @staticmethod
    def from_options(options: Mapping[str, str]) -> ReadSpec:
        opts = {k.lower(): v for k, v in options.items()}
        warehouse, table = opts.get("warehouse"), opts.get("table")
        path = opts.get("path")
        if path and not (warehouse and table):
            warehouse, table = _split_table_path(_local(path, "load() path"))
        if not warehouse or not table or "." not in table:
            raise PaimonReadError(
                "give the table as .option('warehouse', '/wh').option('table', 'db.t'), or as .load('/wh/db.db/t')"
            )
        warehouse = _local(warehouse, "option 'warehouse'", resolve_warehouse)  # or s3://bucket/path
        snapshot = opts.get("scan.snapshot-id", opts.get("snapshot-id"))
        tag = opts.get("scan.tag-name", opts.get("tag-name"))
        between = opts.get("incremental-between")
        chosen = [
            n
            for n, v in (("scan.snapshot-id", snapshot), ("scan.tag-name", tag), ("incremental-between", between))
            if v
        ]
        if len(chosen) > 1:
            raise PaimonReadError(f"{' and '.join(chosen)} cannot be combined: give one version to read")
        mode = opts.get("incremental-between-scan-mode", "auto").lower()
        if mode not in _SCAN_MODES:
            raise PaimonReadError(f"incremental-between-scan-mode '{mode}': expected one of {', '.join(_SCAN_MODES)}")
        catalog = tuple(
            sorted((k[len("catalog.") :], v) for k, v in options.items() if k.lower().startswith("catalog."))
        )
        catalog = tuple(sorted(with_environment(warehouse, dict(catalog)).items()))  # s3.* from AWS_* if unset
        spec = ReadSpec(warehouse, table, catalog, scan_mode=mode, tag_name=tag or None)
        if snapshot:
            spec = replace(spec, snapshot_id=_snapshot_number(snapshot, "scan.snapshot-id"))
        if between:
            spec = replace(spec, incremental=_between(between, spec))
        return spec

    def open_table(self) -> Any:
        from pypaimon_rust.datafusion import PaimonCatalog

        catalog = PaimonCatalog({**dict(self.catalog_options), "warehouse": self.warehouse})
        try:
            return catalog.get_table(self.table)
        except Exception as exc:
            raise PaimonReadError(f"Paimon table '{self.table}' in '{self.warehouse}': {exc}") from None


def _local(location: str, option: str, resolve: Callable[[str, str], str] = resolve_location) -> str:
    """An absolute local path (executors need it: they do not share the driver's directory)."""
    try:
        return resolve(location, option)
    except ValueError as exc:
        raise PaimonReadError(str(exc)) from None


def _split_table_path(path: str) -> tuple[str, str]:
    p = PurePosixPath(path.rstrip("/"))
    if not p.parent.name.endswith(".db"):
        raise PaimonReadError(f"'{path}' is not a Paimon table path (<warehouse>/<database>.db/<table>)")
    return str(p.parent.parent), f"{p.parent.name[: -len('.db')]}.{p.name}"


def _snapshot_number(text: str, option: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise PaimonReadError(f"{option} '{text}' is not a snapshot id") from None
    if value < 1:
        raise PaimonReadError(f"{option} must be a snapshot id of 1 or more, got {value}")
    return value


def _between(text: str, spec: ReadSpec) -> tuple[int, int]:
    """Paimon's ``incremental-between``: two snapshot ids, or two tag names, comma-separated."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise PaimonReadError(f"incremental-between '{text}': expected 'start,end' (snapshot ids or tag names)")
    if all(p.isdigit() for p in parts):
        start, end = (int(p) for p in parts)
    else:
        tags = {t.name(): t.snapshot_id() for t in spec.open_table().list_tags()}
        missing = [p for p in parts if p not in tags]
        if missing:
            raise PaimonReadError(f"incremental-between '{text}': no tag {', '.join(missing)} in '{spec.table}'")
        start, end = tags[parts[0]], tags[parts[1]]
    if start >= end:
        raise PaimonReadError(f"incremental-between '{text}': the start must be before the end")
    return start, end


def arrow_schema(table: Any, with_row_kind: bool) -> pa.Schema:
    """The Arrow schema Spark sees: the table's fields (all nullable, as Spark reads them); TIME is
    Spark's TIME, which Arrow carries as nanoseconds."""
    fields = []
    for f in table.schema().fields():
        typ = to_arrow(parse_type(f.field_type()))
        fields.append(pa.field(f.name(), pa.time64("ns") if pa.types.is_time(typ) else typ, nullable=True))
    if with_row_kind:
        fields.insert(0, pa.field(ROW_KIND, pa.string(), nullable=True))
    return pa.schema(fields)


@dataclass(frozen=True)
class SplitPartition(InputPartition):
    split: bytes


class PaimonDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "paimon"

    def schema(self) -> StructType:
        from pyspark.sql.pandas.types import from_arrow_schema

        spec = ReadSpec.from_options(self.options)
        schema = arrow_schema(spec.open_table(), spec.incremental is not None)
        return from_arrow_schema(schema, prefer_timestamp_ntz=True)

    def reader(self, schema: StructType) -> DataSourceReader:
        return PaimonReader(ReadSpec.from_options(self.options), schema)


class PaimonReader(DataSourceReader):
    def __init__(self, spec: ReadSpec, schema: StructType) -> None:
        self.spec = spec
        self.schema = schema

    def _builder(self, table: Any) -> Any:
        options: dict[str, str] = {}
        if self.spec.snapshot_id is not None:
            options["scan.snapshot-id"] = str(self.spec.snapshot_id)
        if self.spec.tag_name is not None:
            options["scan.tag-name"] = self.spec.tag_name
        builder = table.new_read_builder(options or None)
        if self.spec.incremental is not None:
            builder = builder.with_include_row_kind(True)
        return builder

    def partitions(self) -> list[InputPartition]:
        table = self.spec.open_table()
        self._check_version(table)
        builder = self._builder(table)
        if self.spec.incremental is not None:
            start, end = self.spec.incremental
            scan = builder.new_incremental_scan(start, end, self.spec.scan_mode)
        else:
            scan = builder.new_scan()
        return [SplitPartition(split.serialize()) for split in scan.plan().splits()]

    def _check_version(self, table: Any) -> None:
        ids = {s.id() for s in table.list_snapshots()}
        if self.spec.snapshot_id is not None and self.spec.snapshot_id not in ids:
            raise PaimonReadError(f"'{self.spec.table}' has no snapshot {self.spec.snapshot_id} (expired?)")
        if self.spec.tag_name is not None and self.spec.tag_name not in {t.name() for t in table.list_tags()}:
            raise PaimonReadError(f"'{self.spec.table}' has no tag '{self.spec.tag_name}'")
        if self.spec.incremental is not None and self.spec.incremental[1] not in ids:
            raise PaimonReadError(f"'{self.spec.table}' has no snapshot {self.spec.incremental[1]} (expired?)")

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pypaimon_rust.datafusion import Split
        from pyspark.sql.pandas.types import to_arrow_schema

        assert isinstance(partition, SplitPartition)
        target = to_arrow_schema(self.schema, timezone="UTC")
        table = self.spec.open_table()
        reader = self._builder(table).new_read().read_arrow([Split.deserialize(partition.split)])
        try:
            for batch in reader:
                yield _conform(batch, target)
        finally:
            reader.close()


def _conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """Spark takes only batches of exactly its declared Arrow schema (nullability and timestamp
    units included): cast each column by name."""
    names = batch.schema.names
    arrays = []
    for field in target:
        column = batch.column(names.index(field.name))
        if column.type != field.type:
            column = column.cast(field.type)
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def register(spark: Any) -> None:
    """Make ``spark.read.format("paimon")`` available in ``spark`` (lakecdc's sessions have it).

    The reader needs pyarrow and pypaimon-rust in Spark's Python workers. Without ``PYSPARK_PYTHON``
    Spark starts ``python3`` from ``PATH``, often not the virtualenv's: in a local session the
    reader's workers then run this interpreter (the session's other Python functions are unchanged).
    A cluster's executors need ``PYSPARK_PYTHON`` (or ``spark.pyspark.python``) naming a Python that has them.
    """
    context = spark.sparkContext
    if os.environ.get("PYSPARK_PYTHON") or not str(context.master).startswith("local"):
        spark.dataSource.register(PaimonDataSource)
        return
    # The data source's Python function takes the interpreter the context names at registration.
    previous, context.pythonExec = context.pythonExec, sys.executable
    try:
        spark.dataSource.register(PaimonDataSource)
    finally:
        context.pythonExec = previous
