"""The one place that creates and alters Paimon tables (through pypaimon's catalog).

Every call is idempotent: a replayed micro-batch re-applies the same changes and finds nothing
to do, and a crash between an ALTER and the data commit leaves a table that the replay accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import structlog
from pypaimon import CatalogFactory, Schema
from pypaimon.catalog.catalog_exception import DatabaseNotExistException, TableNotExistException
from pypaimon.schema.data_types import ArrayType, AtomicType, DataField, DataType
from pypaimon.schema.schema_change import SchemaChange as PaimonSchemaChange

from schema_evolution.evolution import AddColumn, SchemaChange, UpdateColumnComment, UpdateColumnType
from schema_evolution.types import PaimonType, Root, parse_type
from sinks.compaction.merge.options import MergeOptions
from sinks.layout import TableLayout
from sinks.store.tables import database_location, table_location

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable

log = structlog.get_logger(__name__)


def to_pypaimon_type(typ: PaimonType) -> DataType:
    if typ.root is Root.ARRAY:
        assert typ.element is not None
        return ArrayType(typ.nullable, to_pypaimon_type(typ.element))
    return AtomicType(typ.base_sql(), typ.nullable)


class Catalog:
    """A Paimon filesystem catalog at ``warehouse`` (any URI pypaimon supports).

    Every database and table name is checked before pypaimon sees it (``sinks.store.tables``): a
    name that is not safe as a directory name, or whose directory would not be inside the
    warehouse, raises ``UnsafeIdentifierError`` before anything is created or read."""

    def __init__(self, warehouse: str, options: Mapping[str, str] | None = None) -> None:
        self.warehouse = warehouse
        self.options = {**(options or {}), "warehouse": warehouse}
        self._catalog = CatalogFactory.create(dict(self.options))
        self._databases: set[str] = set()  # made or found by ensure_database

    def ensure_database(self, database: str) -> None:
        database_location(self.warehouse, database)
        if database not in self._databases:  # once per job, not once per table created
            self._catalog.create_database(database, True)
            self._databases.add(database)

    def list_tables(self, database: str) -> list[str]:
        database_location(self.warehouse, database)
        return sorted(self._catalog.list_tables(database))

    def existing_tables(self, databases: Sequence[str]) -> set[str]:
        """The ``database.table`` names in ``databases``, one listing per database (a database
        that does not exist has none). A name listed may still be a directory without a table."""
        out: set[str] = set()
        for database in dict.fromkeys(databases):
            database_location(self.warehouse, database)
            try:
                names = self._catalog.list_tables(database)
            except DatabaseNotExistException:
                continue
            out.update(f"{database}.{name}" for name in names)
        return out

    def load_layout(self, identifier: str) -> TableLayout | None:
        table_location(self.warehouse, identifier)
        try:
            table: FileStoreTable = self._catalog.get_table(identifier)
        except TableNotExistException:
            return None
        schema = table.table_schema
        options = {str(k): str(v) for k, v in table.options.options.to_map().items()}
        refuses: str | None = None
        if schema.primary_keys:
            try:
                merge = MergeOptions.from_table_options(options)
                refuses = merge.retraction_problem([f.name for f in schema.fields if f.name not in schema.primary_keys])
            except ValueError:
                pass  # options lakecdc cannot compact: compaction names them, writing is the writer's
        return TableLayout(
            identifier=identifier,
            fields=tuple((f.name, parse_type(str(f.type))) for f in schema.fields),
            primary_keys=tuple(schema.primary_keys),
            partition_keys=tuple(schema.partition_keys),
            schema_id=int(schema.id),
            refuses_retractions=refuses,
            comments=tuple((f.name, str(f.description)) for f in schema.fields if f.description),
            table_comment=schema.comment,
            options=tuple(sorted(options.items())),
        )

    def table_options(self, identifier: str) -> dict[str, str]:
        table_location(self.warehouse, identifier)
        table: FileStoreTable = self._catalog.get_table(identifier)
        return {str(k): str(v) for k, v in table.options.options.to_map().items()}

    def set_options(self, identifier: str, options: Mapping[str, str]) -> TableLayout:
        """Set table options (ALTER TABLE ... SET) and return the table's new layout."""
        table_location(self.warehouse, identifier)
        self._catalog.alter_table(
            identifier, [PaimonSchemaChange.set_option(k, v) for k, v in sorted(options.items())], False
        )
        log.info("table options set", table=identifier, options=dict(options))
        layout = self.load_layout(identifier)
        assert layout is not None
        return layout

    def latest_commit_user(self, identifier: str) -> str | None:
        """Who made the table's latest snapshot (None for a table without snapshots)."""
        table_location(self.warehouse, identifier)
        try:
            table: FileStoreTable = self._catalog.get_table(identifier)
        except TableNotExistException:
            return None
        snapshot = table.snapshot_manager().get_latest_snapshot()
        return None if snapshot is None else str(snapshot.commit_user)

    def create_table(
        self,
        identifier: str,
        fields: Sequence[tuple[str, PaimonType]],
        primary_keys: Sequence[str],
        partition_keys: Sequence[str],
        options: Mapping[str, str],
        comment: str | None = None,
        descriptions: Mapping[str, str] | None = None,
    ) -> TableLayout:
        table_location(self.warehouse, identifier)
        pk = set(primary_keys)
        data_fields = [
            DataField(
                i,
                name,
                to_pypaimon_type(typ.with_nullable(typ.nullable and name not in pk)),
                (descriptions or {}).get(name),
            )
            for i, (name, typ) in enumerate(fields)
        ]
        schema = Schema(
            fields=data_fields,
            partition_keys=list(partition_keys),
            primary_keys=list(primary_keys),
            options=dict(options),
            comment=comment,
        )
        self.ensure_database(identifier.split(".", 1)[0])
        self._catalog.create_table(identifier, schema, True)
        log.info("table created", table=identifier, primary_keys=list(primary_keys), fields=len(fields))
        layout = self.load_layout(identifier)
        assert layout is not None
        return layout

    def apply(self, layout: TableLayout, changes: Sequence[SchemaChange]) -> TableLayout:
        """Apply schema changes to the table and return its new layout."""
        if not changes:
            return layout
        table_location(self.warehouse, layout.identifier)
        paimon_changes: list[PaimonSchemaChange] = []
        current = layout.field_types()
        for change in changes:
            if isinstance(change, AddColumn):
                if change.name in current:  # already added by an earlier (replayed) batch
                    continue
                paimon_changes.append(
                    PaimonSchemaChange.add_column(change.name, to_pypaimon_type(change.type), change.comment)
                )
            elif isinstance(change, UpdateColumnType):
                if current.get(change.name) == change.new:
                    continue
                paimon_changes.append(
                    PaimonSchemaChange.update_column_type(change.name, to_pypaimon_type(change.new), True)
                )
            elif isinstance(change, UpdateColumnComment):
                if dict(layout.comments).get(change.name) != change.comment and change.name in current:
                    paimon_changes.append(PaimonSchemaChange.update_column_comment(change.name, change.comment))
            elif layout.table_comment != change.comment:  # UpdateTableComment
                paimon_changes.append(PaimonSchemaChange.update_comment(change.comment))
        if paimon_changes:
            self._catalog.alter_table(layout.identifier, paimon_changes, False)
            log.info(
                "table altered",
                table=layout.identifier,
                changes=[f"{type(c).__name__}({getattr(c, 'name', '')})" for c in changes],
            )
        new_layout = self.load_layout(layout.identifier)
        assert new_layout is not None
        return new_layout
