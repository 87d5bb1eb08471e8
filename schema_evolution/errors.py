"""One error hierarchy for lakecdc, rooted at the bottom of the pure core (``schema_evolution``).

Every error says whether retrying can help: a *terminal* error needs a person (bad input, an
incompatible schema change, a wrong option); a *transient* one (a broker or server that is briefly
away) may pass on retry. Spark retries tasks blindly, so the job's driver looks at this flag to
decide whether to stop with a clear message instead of retrying.
"""

from __future__ import annotations

from dataclasses import dataclass

from schema_evolution.types import PaimonType


class LakeCdcError(Exception):
    """Base of lakecdc's domain errors."""

    terminal: bool = True


class TransientError(LakeCdcError):
    """A failure that may pass when the same work is retried (connection lost, timeout)."""

    terminal = False


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """Where a message came from, so that an error can point a person at it."""

    topic: str
    partition: int
    offset: int

    def __str__(self) -> str:
        return f"topic '{self.topic}', partition {self.partition}, offset {self.offset}"

    def skip_option(self) -> str:
        """How ``--skip-offsets`` names this position."""
        return f"{self.topic}:{self.partition}:{self.offset}"


@dataclass(frozen=True, slots=True)
class BinlogPosition(SourcePosition):
    """A MySQL binlog row event's position: ``topic`` is the binlog file, ``offset`` the position
    (``partition`` 0), as the dead-letter table keeps it."""

    def __str__(self) -> str:
        return f"binlog position {self.topic}:{self.offset}"

    def skip_option(self) -> str:
        return f"{self.topic}:{self.offset}"


class MalformedMessage(LakeCdcError):
    """A message that its format cannot parse. Terminal: retrying reads the same bytes."""

    def __init__(self, fmt: str, position: SourcePosition | None, reason: str) -> None:
        self.format = fmt
        self.position = position
        self.reason = reason
        where = f" at {position}" if position is not None else ""
        skip = position.skip_option() if position is not None else "<topic>:<partition>:<offset>"
        # Kafka cannot change or remove a message: say what the operator can do instead
        super().__init__(
            f"malformed {fmt} message{where}: {reason}. The job stopped before committing anything from "
            f"this micro-batch. To go on, restart it with --errors-tolerance all --dead-letter-table "
            f"<database.table> (bad messages go there) or --skip-offsets {skip} (this message only), "
            f"or with the right value.format."
        )


class UnsupportedChange(LakeCdcError):
    """A well-formed change that the target table cannot take (e.g. a delete into an append table)."""

    def __init__(self, table: str, position: SourcePosition | None, reason: str) -> None:
        self.table = table
        self.position = position
        where = f" (from {position})" if position is not None else ""
        super().__init__(f"table '{table}'{where}: {reason}")


class IncompatibleTypeChange(LakeCdcError):
    """A source column changed to a type the Paimon column cannot take (Paimon's ``canConvert``)."""

    def __init__(self, table: str, column: str, old: PaimonType, new: PaimonType, hint: str) -> None:
        self.table, self.column, self.old, self.new = table, column, old, new
        super().__init__(
            f"table '{table}', column '{column}': the source type changed from {old} to {new}, which "
            f"Paimon cannot convert. {hint}"
        )
