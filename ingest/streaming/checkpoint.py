"""A job's checkpoint and its commit user must belong together, and only one job may use them.

Exactly-once rests on batch id = commit identifier under the commit user kept beside Spark's
checkpoint: Paimon's ``filter_and_commit`` skips every identifier up to the latest this user
committed. A Spark checkpoint that was deleted (batch ids restart at 0) or restored from an older
backup (ids go back) beside a commit user with later commits would make Paimon skip new batches
as "already committed": data silently lost. So

- at start-up, Spark's latest planned batch must not be below the latest identifier the commit user
  committed to any table this checkpoint wrote (``lakecdc-tables.json`` lists them) or will write;
- before a table is first written in a run, the same check for that table;
- a commit that Paimon skips is accepted only for the batch Spark replays (planned, not finished).

Otherwise the job stops (``CheckpointMismatch``) naming the checkpoint, table and identifier.
Fencing (``sinks.write.lease``) keeps a second job off the checkpoint and the tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import structlog

from schema_evolution.errors import LakeCdcError
from sinks.filesystem import Directory
from sinks.state_files import StatePath, state_path, write_atomically
from sinks.write.lease import Fence

log = structlog.get_logger(__name__)

SPARK_DIR = "spark"
TABLES_FILE = "lakecdc-tables.json"
SKIPS_FILE = "lakecdc-skipped-offsets.json"  # every run's --skip-offsets, for audit


class CheckpointMismatch(LakeCdcError):
    """Spark's checkpoint is behind the commits of its commit user: new batches would be skipped."""


def _batch_ids(directory: StatePath) -> list[int]:
    try:
        return [int(p.name) for p in directory.iterdir() if p.name.isdigit()]
    except FileNotFoundError:
        return []


@dataclass(frozen=True, slots=True)
class SparkProgress:
    """Batch ids in Spark's checkpoint: the latest planned (offset log) and finished (commit log)."""

    planned: int | None
    finished: int | None

    @classmethod
    def read(cls, spark_checkpoint: StatePath) -> SparkProgress:
        planned = _batch_ids(spark_checkpoint / "offsets")
        finished = _batch_ids(spark_checkpoint / "commits")
        return cls(max(planned, default=None), max(finished, default=None))

    @property
    def replay(self) -> int | None:
        """The batch Spark runs again on start (planned, not finished): it may be committed already."""
        return self.planned if self.planned is not None and self.planned != self.finished else None

    def describe(self) -> str:
        if self.planned is None:
            return "has no batches (new or deleted): Spark numbers batches from 0 again"
        return f"has batches up to {self.planned}: Spark continues from {self.planned + (self.replay is None)}"


def record_skips(checkpoint: str, skips: Iterable[str], now: str) -> list[dict[str, object]]:
    """Keep a run's ``--skip-offsets`` beside its checkpoint (appended to the runs before): when they
    were given and from which batch on, so a skipped message stays auditable after the logs are gone.
    The whole record list."""
    path = state_path(checkpoint) / SKIPS_FILE
    runs: list[dict[str, object]] = json.loads(path.read_text()) if path.exists() else []
    progress = SparkProgress.read(state_path(checkpoint) / SPARK_DIR)
    first = progress.replay if progress.replay is not None else (progress.planned or -1) + 1
    runs.append({"given_at": now, "from_batch": first, "skip_offsets": list(skips)})
    write_atomically(path, json.dumps(runs, indent=1))
    return runs


def mismatch(
    checkpoint: str, user: str, progress: SparkProgress, table: str, last: int, limit: int
) -> CheckpointMismatch | None:
    """The refusal when commit user ``user`` committed identifier ``last`` to ``table`` beyond
    ``limit``, the highest batch id Spark's checkpoint has planned (Paimon would skip the new
    batches up to ``last``); else None."""
    if last <= limit:
        return None
    return CheckpointMismatch(
        f"checkpoint {checkpoint}: its Spark checkpoint ({state_path(checkpoint) / SPARK_DIR}) {progress.describe()}, "
        f"but its commit user {user} already committed batch {last} to table {table}; Paimon would skip new "
        f"batches up to {last} as already committed, losing their changes. Restore the Spark checkpoint that "
        f"belongs to this commit user, or start with a new --checkpoint (a new commit user: the source starts "
        f"again from its start-up position)"
    )


def committed_tables(checkpoint: str) -> list[str]:
    """The tables a job on ``checkpoint`` has committed to (or was about to)."""
    try:
        return list(json.loads((state_path(checkpoint) / TABLES_FILE).read_text()))
    except FileNotFoundError:
        return []


class CheckpointGuard:
    """The processor's checks around a batch: leases before writing, the commit user's identifiers
    before a table's first commit of the run, and no skipped commit but the replayed batch's."""

    def __init__(
        self,
        checkpoint: str,
        user: str,
        progress: SparkProgress,
        last_identifier: Callable[[str], int | None],
        table_directory: Callable[[str], Directory | None],
        fence: Fence | None = None,
    ) -> None:
        self.checkpoint = checkpoint
        self.user = user
        self.progress = progress
        self.last_identifier = last_identifier
        self.table_directory = table_directory
        self.fence = fence
        self.tables = committed_tables(checkpoint)
        self.checked: set[str] = set()
        self.directories: dict[str, Directory] = {}

    def check_start(self, tables: Iterable[str]) -> None:
        """At start-up: the tables this checkpoint wrote, and ``tables``, against Spark's checkpoint."""
        limit = self.progress.planned if self.progress.planned is not None else -1
        for table in dict.fromkeys([*self.tables, *tables]):
            self._check_table(table, limit)

    def _check_table(self, table: str, limit: int) -> None:
        last = self.last_identifier(table)
        refusal = None if last is None else mismatch(self.checkpoint, self.user, self.progress, table, last, limit)
        if refusal is not None:
            raise refusal
        self.checked.add(table)

    def hold(self, tables: Iterable[str]) -> None:
        """Take the lease of each table before writing it (a second job's refusal names the holder)."""
        if self.fence is None:
            return
        for table in tables:
            if table not in self.directories and (directory := self.table_directory(table)) is not None:
                self.fence.hold(directory, f"table {table}")
                self.directories[table] = directory

    def before_write(self, batch_id: int, tables: Iterable[str]) -> None:
        """Before any writer of the batch: the tables' leases, and each table new to this run
        checked against the batch id (a new batch must be beyond every identifier its commit user
        committed; the replayed one may equal it)."""
        tables = list(tables)
        self.hold(tables)
        limit = batch_id if batch_id == self.progress.replay else batch_id - 1
        for table in tables:
            if table not in self.checked:
                self._check_table(table, limit)

    def before_commit(self, tables: Iterable[str]) -> None:
        """Before the batch's first commit: tables new to ``lakecdc-tables.json`` are added (the
        file is written only then)."""
        new = [t for t in tables if t not in self.tables]
        if new:
            self.tables += new
            write_atomically(state_path(self.checkpoint) / TABLES_FILE, json.dumps(self.tables))

    def before_table_commit(self, table: str) -> None:
        if self.fence is not None:
            self.fence.check(*([self.directories[table]] if table in self.directories else []))

    def skipped(self, table: str, batch_id: int) -> None:
        """Paimon skipped ``batch_id`` for ``table``: fine for the replayed batch, never otherwise."""
        if batch_id != self.progress.replay:
            raise CheckpointMismatch(
                f"checkpoint {self.checkpoint}: Paimon skipped batch {batch_id} of table {table} as already "
                f"committed by commit user {self.user}, but Spark never ran that batch on this checkpoint "
                f"(its checkpoint {self.progress.describe()}). Stopped before Spark records the batch. Restore "
                f"the Spark checkpoint that belongs to this commit user, or start with a new --checkpoint"
            )
