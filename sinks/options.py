"""Validation of ``--table-conf``: Paimon table options the Rust writer does not honour are
refused at start-up instead of being accepted and silently ignored (see shared/DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_PK_OPTIONS = {"changelog-producer": "input"}

# option -> {value that is refused: why}. A value of None refuses the option whatever its value.
_REFUSED: dict[str, dict[str | None, str]] = {
    "changelog-producer": {
        "lookup": "lakecdc does not yet produce a changelog during compaction; use 'input' (the default)",
        "full-compaction": "lakecdc does not yet produce a changelog during compaction; use 'input'",
    },
    "merge-engine": {
        "first-row": "first-row tables show no data until a compaction, which lakecdc does not yet run",
        "partial-update": "partial-update is not yet supported by lakecdc's writer",
        "aggregation": "aggregation is not yet supported by lakecdc's writer",
    },
    "deletion-vectors.enabled": {
        "true": "deletion-vector tables show no data until a compaction, which lakecdc does not yet run",
    },
    "bucket": {"-2": "postpone buckets (-2) are invisible until rescaled; use a fixed bucket count or -1"},
    "file.format": {"orc": "the Rust writer cannot write ORC here; use parquet (the default) or avro"},
    "full-compaction.delta-commits": {None: "lakecdc does not yet compact tables"},
    "num-sorted-run.stop-trigger": {None: "lakecdc does not yet compact tables"},
}


def validate_table_options(options: Mapping[str, str], has_primary_key: bool) -> None:
    """Raise ``ValueError`` naming the option for anything lakecdc would not honour."""
    for key, value in options.items():
        refused = _REFUSED.get(key)
        if refused is None:
            continue
        reason = refused.get(None) or refused.get(str(value).strip().lower())
        if reason is not None:
            raise ValueError(f"--table-conf {key}={value} is not supported: {reason}")
    if not has_primary_key and options.get("changelog-producer", "none") != "none":
        raise ValueError("changelog-producer needs a primary-key table; drop it or give --primary-keys")


def table_options(user: Mapping[str, str], has_primary_key: bool) -> dict[str, str]:
    """The options a new table is created with: lakecdc's defaults overlaid by the user's."""
    options = dict(DEFAULT_PK_OPTIONS) if has_primary_key else {}
    options.update(user)
    validate_table_options(options, has_primary_key)
    return options
