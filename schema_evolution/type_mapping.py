"""``--type-mapping`` options, as named by Apache Paimon's CDC actions."""

from __future__ import annotations

from enum import Enum


class TypeMappingMode(Enum):
    """One ``--type-mapping`` option; the value is the CLI spelling."""

    TINYINT1_NOT_BOOL = "tinyint1-not-bool"
    TO_NULLABLE = "to-nullable"
    TO_STRING = "to-string"
    CHAR_TO_STRING = "char-to-string"
    LONGTEXT_TO_BYTES = "longtext-to-bytes"
    DECIMAL_NO_CHANGE = "decimal-no-change"
    BIGINT_UNSIGNED_TO_BIGINT = "bigint-unsigned-to-bigint"
    ALLOW_NON_STRING_TO_STRING = "allow-non-string-to-string"


def parse_type_mapping(text: str | None) -> frozenset[TypeMappingMode]:
    """Parse ``"tinyint1-not-bool,to_nullable"`` (either spelling); unknown names are an error."""
    if not text:
        return frozenset()
    modes: set[TypeMappingMode] = set()
    for raw in text.split(","):
        name = raw.strip().lower().replace("_", "-")
        if not name:
            continue
        try:
            modes.add(TypeMappingMode(name))
        except ValueError:
            known = ", ".join(m.value for m in TypeMappingMode)
            raise ValueError(f"unknown --type-mapping option '{raw.strip()}'; known options: {known}") from None
    return frozenset(modes)
