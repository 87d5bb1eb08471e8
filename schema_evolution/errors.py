"""Schema errors: terminal, each naming the table and column and the way forward."""

from __future__ import annotations

from formats.errors import LakeCdcError
from schema_evolution.types import PaimonType


class IncompatibleTypeChange(LakeCdcError):
    """A source column changed to a type the Paimon column cannot take (Paimon's ``canConvert``)."""

    def __init__(self, table: str, column: str, old: PaimonType, new: PaimonType, hint: str) -> None:
        self.table, self.column, self.old, self.new = table, column, old, new
        super().__init__(
            f"table '{table}', column '{column}': the source type changed from {old} to {new}, which "
            f"Paimon cannot convert. {hint}"
        )
