"""Driver side, before a micro-batch is written: create missing tables and evolve existing ones
so that every chunk of the batch fits its table (a schema change is committed before the data
that needs it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from schema_evolution.errors import IncompatibleTypeChange, LakeCdcError
from schema_evolution.evolution import Comments, diff
from schema_evolution.type_mapping import TypeMappingMode
from sinks.compaction.merge.options import MergeOptions
from sinks.compaction.record_expiry import RecordExpiry
from sinks.crash_points import crash_point
from sinks.layout import RecordSchema, TableLayout
from sinks.state_files import state_path, write_atomically
from sinks.table.catalog import Catalog
from sinks.table.options import (
    IMMUTABLE_OPTIONS,
    WIDE_TABLE_COLUMNS,
    WIDE_TABLE_OPTIONS,
    table_options,
    validate_table_options,
)

log = structlog.get_logger(__name__)

# Existing tables a kafka-sync-table job accepted without Paimon's start-up check: no message gave a
# schema to check when it first started (Paimon then skips the check and evolves the table), kept
# beside the checkpoint so a restart keeps the decision.
UNCHECKED_FILE = "lakecdc-unchecked-tables"


def note_unchecked(state_dir: str, table: str) -> None:
    """Keeps ``table`` as accepted without a start-up check (see ``UNCHECKED_FILE``)."""
    path = state_path(state_dir) / UNCHECKED_FILE
    tables = set(path.read_text().split()) if path.exists() else set()
    if table not in tables:
        write_atomically(path, "\n".join(sorted(tables | {table})))


class TableDefinitionError(LakeCdcError):
    """A table that cannot be created as asked (keys missing from the source, ...)."""


@dataclass
class TablePolicy:
    """How tables are created and evolved, from the job's settings."""

    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    table_conf: Mapping[str, str] = field(default_factory=dict)
    modes: frozenset[TypeMappingMode] = frozenset()
    ignore_incompatible: bool = False
    # table name (Paimon's, or the source's) -> its partition keys (--multiple-table-partition-keys)
    multiple_partition_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # database sync, as Paimon: keys the source table lacks fall back (primary keys to the source's,
    # partition keys to none) instead of failing
    lenient_keys: bool = False
    # --sync-primary-keys-from-source-schema: without --primary-keys, use the source's keys
    source_primary_keys: bool = True
    # MySQL actions, as Paimon's: a table with no key to take (none given, the source tables have
    # none or disagree) is refused rather than created as an append table (Kafka actions create one)
    require_primary_keys: bool = False


class IncompatibleTable(LakeCdcError):
    """An existing Paimon table that the source table cannot be synced into."""


class SchemaChangeRefused(IncompatibleTypeChange):
    """A source column changed to a type its Paimon column cannot take, after start-up: Paimon's message
    first, then lakecdc's."""

    def __init__(self, table: str, exc: IncompatibleTypeChange) -> None:
        self.table, self.column, self.old, self.new = table, exc.column, exc.old, exc.new
        paimon = f"Cannot convert field {exc.column} from type {exc.old} to {exc.new} of Paimon table {table}."
        LakeCdcError.__init__(self, f"{paimon}\n({exc})")


class ShardsNotMergeable(IncompatibleTypeChange):
    """Two source tables synced into one Paimon table disagree on a column's type at start-up: Paimon's
    message (``JdbcSchemaUtils.mergeSchema``) first, then lakecdc's."""

    def __init__(self, first: str, other: str, exc: IncompatibleTypeChange) -> None:
        self.table, self.column, self.old, self.new = exc.table, exc.column, exc.old, exc.new
        paimon = (
            f"Column {exc.column} have different types when merging schemas.\n"
            f"Current table '{first}' field: `{exc.column}` {exc.old}\n"
            f"To be merged table '{other}' field: `{exc.column}` {exc.new}"
        )
        LakeCdcError.__init__(
            self,
            f"{paimon}\n(source tables {first} and {other} go into one Paimon table, {exc.table}, but their column "
            f"{exc.column} has types Paimon cannot merge, {exc.old} and {exc.new}: narrow table-name to tables "
            f"whose columns agree, or sync them into separate tables)",
        )


def _java_list(items: Sequence[str]) -> str:
    """A list as Paimon's messages print it (Java's ``List.toString``): ``[a, b]``."""
    return "[" + ", ".join(items) + "]"


class TablePreparer:
    """Creates and evolves tables; remembers tables skipped by ``--ignore-incompatible``.

    A table that already exists when the job first meets it must be compatible with the source,
    as Paimon's actions check at start-up: every source column present in it and convertible,
    unless the table was created by this job (its latest snapshot is this job's commit), in which
    case missing columns are simply added.
    """

    def __init__(
        self, catalog: Catalog, policy: TablePolicy, commit_user: str | None = None, state_dir: str | None = None
    ) -> None:
        self.catalog = catalog
        self.policy = policy
        self.commit_user = commit_user
        # Tables this job created (kept beside its checkpoint): a restart may add columns to
        # them even before they hold a snapshot (a MySQL table created empty, altered later).
        self._created_file = state_path(state_dir) / "lakecdc-created-tables" if state_dir else None
        self._created = (
            set(self._created_file.read_text().split())
            if self._created_file is not None and self._created_file.exists()
            else set()
        )
        unchecked = state_path(state_dir) / UNCHECKED_FILE if state_dir else None
        self._unchecked = set(unchecked.read_text().split()) if unchecked is not None and unchecked.exists() else set()
        self.skipped: set[str] = set()
        self._verified: set[str] = set()
        # Every table's layout as this job last loaded, created or altered it, kept across batches:
        # the job is the tables' only writer (leases), and each ALTER it makes returns the reloaded
        # table (``Catalog.apply``). A 1,000-table batch would otherwise read 1,000 schemas.
        self._layouts: dict[str, TableLayout] = {}

    def _missing(self, tables: Sequence[str]) -> set[str]:
        """Of the tables this job has not met yet, those the catalog does not have: one listing of
        each database (not a lookup per table); each listed one is loaded when first met."""
        new = [t for t in dict.fromkeys(tables) if t not in self._layouts and t not in self.skipped]
        if not new:
            return set()
        existing = self.catalog.existing_tables([t.split(".", 1)[0] for t in new])
        missing = {t for t in new if t not in existing}
        if missing:
            # Remembered as this job's before they are made, in one write: a crash between a
            # table's creation and its note cannot leave one of them looking foreign on restart.
            self._remember_created(missing)
        return missing

    def prepare(self, schemas: Sequence[tuple[str, RecordSchema]]) -> dict[str, TableLayout]:
        """``schemas`` in source order; returns the layout of every table that will be written."""
        layouts: dict[str, TableLayout] = {}
        created_from: dict[str, RecordSchema] = {}  # tables created in this call, and the shard that made them
        missing = self._missing([t for t, _ in schemas])
        for table, record in schemas:
            if table in self.skipped:
                continue
            try:
                layout = layouts.get(table) or self._layouts.get(table)
                if layout is None and table not in missing:
                    layout = self.catalog.load_layout(table)
                if layout is None:
                    shards = [r for t, r in schemas if t == table]
                    missing.discard(table)
                    self._remember_created({table})
                    layout = self._create(table, record, shards)
                    crash_point("table-created")
                    created_from[table] = record
                else:
                    first = table not in self._verified
                    if first:
                        layout = self._apply_table_conf(layout)
                        self._verify_existing(table, layout, record)
                    comments = Comments(dict(record.comments), dict(layout.comments), record.table_comment,
                                        layout.table_comment)  # fmt: skip
                    try:
                        changes = diff(table, layout.fields, record.fields, self.policy.modes, comments)
                    except IncompatibleTypeChange as exc:
                        first_shard = created_from.get(table)
                        if first_shard is not None and first_shard.source_table != record.source_table:
                            raise ShardsNotMergeable(first_shard.source_table, record.source_table, exc) from None
                        # A table made elsewhere that the source does not fit is refused at start-up
                        # as Paimon refuses it; later clashes are schema changes and say so.
                        if first and not self._ours(table):
                            raise self._incompatible(table, layout, record, str(exc)) from None
                        raise SchemaChangeRefused(table, exc) from None
                    narrow = len(layout.fields) < WIDE_TABLE_COLUMNS
                    layout = self.catalog.apply(layout, changes)
                    if changes:
                        crash_point("table-altered")
                    if len(layout.fields) >= WIDE_TABLE_COLUMNS and (first or narrow):
                        layout = self._widen(layout)
                self._verified.add(table)
                layouts[table] = self._layouts[table] = layout
            except LakeCdcError as exc:
                self._layouts.pop(table, None)  # loaded again when next met
                if not self.policy.ignore_incompatible:
                    raise
                log.warning("table skipped (--ignore-incompatible)", table=table, reason=str(exc))
                self.skipped.add(table)
                layouts.pop(table, None)
        return layouts

    def _apply_table_conf(self, layout: TableLayout) -> TableLayout:
        """``--table-conf`` on a table that already exists, as Paimon's actions do at start-up: options
        whose value differs are set on the table, except ``bucket`` (rescaling rewrites the data:
        ``lakecdc rescale``) and Paimon's immutable options, which are kept and named in a warning."""
        if not self.policy.table_conf:
            return layout
        table = layout.identifier
        current = dict(layout.options)
        changed = {k: str(v) for k, v in self.policy.table_conf.items() if current.get(k) != str(v)}
        kept = sorted(k for k in changed if k == "bucket" or k in IMMUTABLE_OPTIONS)
        if kept:
            log.warning(
                "--table-conf options not applied to an existing table: they cannot change once a table "
                "exists (bucket: use 'lakecdc rescale')",
                table=table,
                options={k: {"table": current.get(k), "asked": changed[k]} for k in kept},
            )
        changed = {k: v for k, v in changed.items() if k not in kept}
        if not changed:
            return layout
        try:
            validate_table_options({**current, **changed}, has_primary_key=layout.has_primary_key)
            expiry = RecordExpiry.from_table_options({**current, **changed})
            if expiry is not None:
                expiry.check_field([(n, str(t)) for n, t in layout.fields])
        except ValueError as exc:
            text = str(exc) if str(exc).startswith("--table-conf") else f"--table-conf: {exc}"
            raise TableDefinitionError(f"table '{table}': {text}") from None
        return self.catalog.set_options(table, changed)

    def _widen(self, layout: TableLayout) -> TableLayout:
        """A table that exists with, or has grown to, ``WIDE_TABLE_COLUMNS`` columns gets the options a
        table created that wide gets (Parquet dictionaries off: see ``sinks.table.options``), unless the
        table already sets them (made before lakecdc did this, or by ``--table-conf``, applied first).
        Checked when the job first meets the table and when a schema change makes it wide, against the
        options the layout was loaded with."""
        missing = {k: v for k, v in WIDE_TABLE_OPTIONS.items() if k not in dict(layout.options)}
        if not missing:
            return layout
        log.info(
            "a wide table gets the wide-table options for its next files (keep them with --table-conf)",
            table=layout.identifier,
            columns=len(layout.fields),
            options=missing,
        )
        return self.catalog.set_options(layout.identifier, missing)

    def _remember_created(self, tables: set[str]) -> None:
        if tables <= self._created:
            return
        self._created |= tables
        if self._created_file is not None:
            write_atomically(self._created_file, "\n".join(sorted(self._created)))

    def _ours(self, table: str) -> bool:
        """Whether this job made the table (in this run or an earlier one)."""
        return table in self._created or self.catalog.latest_commit_user(table) == self.commit_user

    def _verify_existing(self, table: str, layout: TableLayout, record: RecordSchema) -> None:
        current = layout.field_types()
        missing = [n for n, _ in record.fields if n not in current]
        # our own table, or one accepted unchecked at start-up: new source columns are simply added
        if missing and table not in self._unchecked and not self._ours(table):
            raise self._incompatible(table, layout, record)

    def _incompatible(self, table: str, layout: TableLayout, record: RecordSchema, why: str = "") -> IncompatibleTable:
        """Paimon's start-up refusal of an existing table the source does not fit, with both field lists."""
        pks = set(self.policy.primary_keys or record.primary_keys)

        def show(fields: Sequence[tuple[str, object]], keys: set[str]) -> str:
            parts = []
            for name, typ in fields:
                text = str(typ)
                if name in keys and not text.endswith("NOT NULL"):
                    text += " NOT NULL"
                parts.append(f"`{name}` {text}")
            return "[" + ", ".join(parts) + "]"

        return IncompatibleTable(
            f"Paimon schema and source table schema are not compatible.\n"
            f"Paimon fields are: {show(layout.fields, set(layout.primary_keys))}.\n"
            f"Source table fields are: {show(record.fields, pks)}\n"
            f"(table '{table}': {why + ' ' if why else ''}Sync into a new table, or drop or alter the existing one.)"
        )

    @staticmethod
    def _check_columns(table: str, record: RecordSchema, pks: Sequence[str], partition_keys: Sequence[str]) -> None:
        """Paimon's checks of a table to create (``CdcActionCommonUtils.buildPaimonSchema``), with its messages
        first: no duplicate columns, and every key a column (source, computed or metadata)."""
        names = [n for n, _ in record.fields]
        short = table.split(".", 1)[-1]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise TableDefinitionError(
                f"Table {short} contains duplicate columns: {_java_list(duplicates)}.\n"
                "Possible causes are: 1. computed columns or metadata columns contain duplicate fields; "
                "2. the catalog is case-insensitive and the table columns duplicate after they are all converted "
                "to lower-case."
            )
        for what, keys, flag in (("primary", pks, "--primary-keys"), ("partition", partition_keys, "--partition-keys")):
            missing = [k for k in keys if k not in names]
            if missing:
                raise TableDefinitionError(
                    f"For sink table {short}, not all specified {what} keys '{_java_list(keys)}' exist in source "
                    f"tables or computed columns '{_java_list(names)}'.\n(cannot create table '{table}': key "
                    f"column(s) {missing} are not in the source table '{record.source_table}' (columns: {names}). "
                    f"Fix {flag}.)"
                )

    def _create(self, table: str, record: RecordSchema, shards: Sequence[RecordSchema] = ()) -> TableLayout:
        names = [n for n, _ in record.fields]
        source_pks = record.primary_keys if self.policy.source_primary_keys else ()
        pks = self.policy.primary_keys or source_pks
        partition_keys = self.policy.partition_keys
        per_table = self.policy.multiple_partition_keys
        # Paimon's messages name the sink table without its database (short)
        short, source_short = table.split(".", 1)[1], record.source_table.split(".", 1)[-1]
        if short in per_table or source_short in per_table:
            partition_keys = per_table.get(short, per_table.get(source_short, ()))
        if self.policy.lenient_keys:
            if any(k not in names for k in pks):
                pks = source_pks if all(k in names for k in source_pks) else ()
            if any(k not in names for k in partition_keys):
                log.warning("partition keys not in the source table: none set", table=table, keys=partition_keys)
                partition_keys = ()
        if not self.policy.primary_keys and pks and any(s.primary_keys != record.primary_keys for s in shards):
            # Shards merged into one table keep a primary key only if they all agree on it.
            pks = ()
            if not self.policy.require_primary_keys:
                log.warning("source tables disagree on the primary key: creating an append table", table=table)
        if not pks and self.policy.require_primary_keys and self.policy.source_primary_keys:
            raise TableDefinitionError(
                f"Failed to set specified primary keys for sink table {short}. Also, can't infer primary keys "
                f"from source table schemas because source tables have no primary keys or have different "
                f"primary keys.\n(table '{table}': give --primary-keys, or --sync-primary-keys-from-source-schema "
                f"false to create an append table.)"
            )
        self._check_columns(table, record, pks, partition_keys)
        if pks and partition_keys:
            outside = [k for k in partition_keys if k not in pks]
            if outside:
                raise TableDefinitionError(
                    f"cannot create table '{table}': partition keys {outside} must be part of the primary "
                    f"keys {list(pks)}"
                )
        options = table_options(self.policy.table_conf, has_primary_key=bool(pks), columns=len(record.fields))
        try:
            MergeOptions.from_table_options(options).check_fields(names, pks)
            expiry = RecordExpiry.from_table_options(options)
            if expiry is not None:
                expiry.check_field([(n, str(t)) for n, t in record.fields])
        except ValueError as exc:
            raise TableDefinitionError(f"cannot create table '{table}': --table-conf: {exc}") from None
        if not pks:
            bucket = str(options.get("bucket", "-1")).strip()
            if bucket not in ("-1", "") and not options.get("bucket-key"):
                # Paimon's SchemaValidation.validateBucket; pypaimon would fail only at the first write
                raise TableDefinitionError(
                    f"You should define a 'bucket-key' for bucketed append mode.\n(table '{table}' has no primary "
                    f"key, so it is an append table, and --table-conf bucket={bucket} asks for fixed buckets: give "
                    f"--table-conf bucket-key=<columns>, bucket=-1, or --primary-keys)"
                )
            log.warning("source table has no primary key: creating an append table", table=table)
        return self.catalog.create_table(
            table, record.fields, pks, partition_keys, options, record.table_comment, dict(record.comments)
        )
