"""Driver side of a micro-batch: commit each table's messages once, exactly once.

``filter_and_commit`` skips identifiers this commit user already committed, so a micro-batch
that Spark replays after a crash (same id, same offsets) commits nothing twice — per table, even
when the crash fell between two tables' commits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import structlog

from schema_evolution.identifiers import UnsafeIdentifierError
from sinks.filesystem import Directory, directory
from sinks.store.tables import inside_warehouse, table_location

log = structlog.get_logger(__name__)


class Committer:
    """Commits to the tables of one warehouse under one stable commit user."""

    def __init__(self, warehouse: str, catalog_options: Mapping[str, str], commit_user: str) -> None:
        self.warehouse = warehouse
        self.catalog_options = dict(catalog_options)
        self.commit_user = commit_user

    def is_committed(self, table: str, batch_id: int) -> bool:
        """Whether this commit user already committed identifier ``batch_id`` (or a later one) to
        ``table``: what ``filter_and_commit`` would skip."""
        last = self.last_identifier(table)
        return last is not None and last >= batch_id

    def last_identifier(self, table: str) -> int | None:
        """The latest identifier this commit user committed to ``table`` (None: none, or no table);
        ``filter_and_commit`` skips every identifier up to it."""
        from pypaimon.catalog.catalog_exception import TableNotExistException

        from sinks.store.tables import open_table

        try:
            paimon_table = open_table(self.warehouse, self.catalog_options, table)
        except TableNotExistException:
            return None
        manager = paimon_table.snapshot_manager()
        snapshot = manager.get_latest_snapshot()
        while snapshot is not None:
            if snapshot.commit_user == self.commit_user:
                return int(snapshot.commit_identifier)
            snapshot = manager.get_snapshot_by_id(snapshot.id - 1) if snapshot.id > 1 else None
        return None

    def table_directory(self, table: str) -> Directory | None:
        """Where ``table`` keeps its files (a local path, or a ``StoreLocation`` on object storage, with
        the catalog options that reach it); None when there is no such table yet."""
        from pypaimon.catalog.catalog_exception import TableNotExistException

        from sinks.store.tables import open_table

        try:
            location = str(open_table(self.warehouse, self.catalog_options, table).table_path)
        except TableNotExistException:
            return None
        if not inside_warehouse(self.warehouse, location, 2):  # the lease file goes there: never outside
            raise UnsafeIdentifierError("table", table, f"its directory {location} is not inside the warehouse")
        return directory(location, self.catalog_options)

    def commit(self, table: str, batch_id: int, messages: Sequence[bytes]) -> bool:
        """Commit ``messages`` as identifier ``batch_id``; False when it was committed before."""
        # Imported and created here, on the calling thread: pypaimon-rust objects must stay on
        # the thread that made them, and foreachBatch callbacks run on varying py4j threads.
        from pypaimon_rust.datafusion import CommitMessage, PaimonCatalog

        table_location(self.warehouse, table)
        catalog = PaimonCatalog({**self.catalog_options, "warehouse": self.warehouse})
        builder = catalog.get_table(table).new_stream_write_builder().with_commit_user(self.commit_user)
        commit = builder.new_commit()
        try:
            decoded = [CommitMessage.deserialize(m) for m in messages]
            committed = commit.filter_and_commit({batch_id: decoded})
        finally:
            commit.close()
        if committed:
            log.info("committed", table=table, batch=batch_id, messages=len(messages))
        else:
            log.info("already committed, skipped", table=table, batch=batch_id)
        return bool(committed)
