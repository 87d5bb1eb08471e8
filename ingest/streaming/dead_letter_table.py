"""The dead-letter table on the driver: created with its own fixed schema, key and options, apart from the
job's table policy (``--primary-keys``, ``--partition-keys`` and ``--table-conf`` are for the data tables:
a job-wide merge engine or sequence field would not fit it), and checked when it exists already."""

from __future__ import annotations

import structlog

from ingest.pipeline.dead_letters import DEAD_LETTER_OPTIONS, DEAD_LETTER_SCHEMA
from schema_evolution.errors import LakeCdcError
from sinks.layout import TableLayout
from sinks.table.catalog import Catalog

log = structlog.get_logger(__name__)


class DeadLetterTableError(LakeCdcError):
    """An existing table named by --dead-letter-table that is not a dead-letter table."""


class DeadLetterTable:
    """Loads (first use: creates) the dead-letter table; its layout for the micro-batches that write it."""

    def __init__(self, catalog: Catalog, identifier: str) -> None:
        self.catalog = catalog
        self.identifier = identifier
        self._layout: TableLayout | None = None

    def layout(self) -> TableLayout:
        if self._layout is None:
            layout = self.catalog.load_layout(self.identifier)
            if layout is None:
                schema = DEAD_LETTER_SCHEMA
                layout = self.catalog.create_table(
                    self.identifier,
                    schema.fields,
                    schema.primary_keys,
                    (),
                    DEAD_LETTER_OPTIONS,
                    "lakecdc dead letters: messages that could not be synced, by source position",
                )
                log.info("dead-letter table created", table=self.identifier)
            self._check(layout)
            self._layout = layout
        return self._layout

    def _check(self, layout: TableLayout) -> None:
        expected = [(n, str(t)) for n, t in DEAD_LETTER_SCHEMA.fields]
        actual = [(n, str(t)) for n, t in layout.fields]
        if actual[: len(expected)] != expected or layout.primary_keys != DEAD_LETTER_SCHEMA.primary_keys:
            raise DeadLetterTableError(
                f"--dead-letter-table '{self.identifier}' exists and is not a dead-letter table (columns "
                f"{[n for n, _ in actual]}, primary key {list(layout.primary_keys)}; expected "
                f"{[n for n, _ in expected]} keyed by {list(DEAD_LETTER_SCHEMA.primary_keys)}): name another table"
            )
