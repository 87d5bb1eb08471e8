"""Validation of ``--table-conf``: Paimon table options the Rust writer does not honour are
refused at start-up instead of being accepted and silently ignored (see shared/DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from sinks.compaction import deletion_vectors, lookup_cache
from sinks.compaction.lsm import CompactionOptions
from sinks.compaction.merge.options import MergeOptions
from sinks.compaction.record_expiry import RecordExpiry
from sinks.lifecycle.auto_tags import AutoTagOptions
from sinks.lifecycle.partition_expiry import PartitionExpiryOptions
from sinks.lifecycle.retention import RetentionOptions
from sinks.write import bucket_routing

DEFAULT_PK_OPTIONS = {"changelog-producer": "input"}

# A table of at least this many columns is created with Parquet dictionaries off, unless --table-conf
# says otherwise. pypaimon-rust's Parquet writer keeps a dictionary per column of each file it writes:
# 15,720 rows of a 1,000-column table took one writer ~740 MiB over its input with dictionaries and
# ~280 MiB without (and a third of the time); 500k rows of 10 columns, 89 vs 69 MiB (bench/README.md,
# "a 1,000-column table"). The files stay plain Parquet, read by every reader.
WIDE_TABLE_COLUMNS = 128
WIDE_TABLE_OPTIONS = {"parquet.enable.dictionary": "false"}

# option -> {value that is refused: why}. A value of None refuses the option whatever its value.
REFUSED_OPTIONS: dict[str, dict[str | None, str]] = {
    # Found by writing and reading back (AGENTS.md): pypaimon-rust 0.4 aggregates across the delete.
    "aggregation.remove-record-on-delete": {
        "true": "pypaimon-rust's writer and reader do not apply it (they aggregate across the delete)"
    },
    "bucket": {"-2": "postpone buckets (-2) are invisible until rescaled; use a fixed bucket count or -1"},
    "file.format": {"orc": "the Rust writer cannot write ORC here; use parquet (the default) or avro"},
    # Found by writing with each option and reading back (AGENTS.md): accepted, then not honoured.
    "sequence.snapshot-ordering": {None: "the readers ignore it: rows would merge by sequence number only"},
    "rowkind.field": {None: "lakecdc writes each change's row kind itself (+I/-U/+U/-D from the source)"},
    "primary-key": {None: "the catalog keeps it as a plain option, not as keys: give --primary-keys"},
    "partition": {None: "the catalog keeps it as a plain option, not as partition keys: give --partition-keys"},
    "data-file.external-paths": {None: "lakecdc's compaction and expiry handle files in the table directory only"},
    "deletion-vectors.bitmap64": {
        "true": "pypaimon and pypaimon-rust read 32-bit bitmap deletion vectors only (the default)"
    },
}
# Paimon's CoreOptions marked @Immutable: fixed when the table is created (Paimon's actions skip them
# in --table-conf for an existing table; so does lakecdc, with a warning).
IMMUTABLE_OPTIONS = frozenset(
    {
        "type",
        "bucket-key",
        "bucket-function.type",
        "data-file.path-directory",
        "merge-engine",
        "sequence.snapshot-ordering",
        "aggregation.remove-record-on-delete",
        "partial-update.remove-record-on-delete",
        "partial-update.remove-record-on-sequence-group",
        "rowkind.field",
        "primary-key",
        "primary-key.nullable",
        "partition",
        "dynamic-bucket.initial-buckets",
        "force-lookup",
        "row-tracking.enabled",
        "data-evolution.enabled",
        "index-file-in-data-file-dir",
        "blob-field",
        "blob-descriptor-field",
        "blob-view-field",
        "pk-clustering-override",
    }
)
# Read options (time travel, incremental reads): set on a table they break its writer or its reads.
# Give them to a reader instead (spark.read.format("paimon").option(...), lakecdc query ... VERSION AS OF).
READ_OPTIONS = (
    "scan.snapshot-id",
    "scan.tag-name",
    "scan.timestamp",
    "scan.timestamp-millis",
    "scan.mode",
    "scan.watermark",
    "scan.file-creation-time-millis",
    "scan.creation-time-millis",
    "incremental-between",
    "incremental-between-timestamp",
    "incremental-between-scan-mode",
)


def validate_table_options(options: Mapping[str, str], has_primary_key: bool, retractions: bool = False) -> None:
    """Raise ``ValueError`` naming the option for anything lakecdc would not honour; with
    ``retractions`` (the source carries updates and deletes), also for a merge engine that would
    make the table unreadable on the first one."""
    for key, value in options.items():
        if key in READ_OPTIONS:
            raise ValueError(
                f"--table-conf {key} is a read option: give it to a reader (spark.read.format('paimon')"
                f".option(...), or VERSION AS OF in lakecdc query), not to the table"
            )
        refused = REFUSED_OPTIONS.get(key)
        if refused is None:
            continue
        reason = refused.get(None) or refused.get(str(value).strip().lower())
        if reason is not None:
            raise ValueError(f"--table-conf {key}={value} is not supported: {reason}")
    if not has_primary_key and options.get("changelog-producer", "none") != "none":
        raise ValueError("changelog-producer needs a primary-key table; drop it or give --primary-keys")
    try:
        compaction = CompactionOptions.from_table_options(options)
        order = str(options.get("sequence.field.sort-order", "ascending")).strip().lower()
        if order not in ("ascending", "descending"):
            raise ValueError(f"option sequence.field.sort-order='{order}': expected ascending or descending")
        RetentionOptions.from_table_options(options)
        AutoTagOptions.from_table_options(options)
        PartitionExpiryOptions.from_table_options(options)
        merge = MergeOptions.from_table_options(options)
        expiry = RecordExpiry.from_table_options(options)
        lookup_cache.budget(options)
        bucket_routing.check_options(options)
    except ValueError as exc:
        raise ValueError(f"--table-conf: {exc}") from None
    if expiry is not None and not has_primary_key:
        raise ValueError("--table-conf record-level.expire-time applies to primary-key tables (give --primary-keys)")
    if has_primary_key and deletion_vectors.enabled(options) and merge.engine in ("partial-update", "aggregation"):
        raise ValueError(
            f"--table-conf deletion-vectors.enabled=true is not supported with merge-engine={merge.engine}: "
            f"pypaimon-rust neither writes nor reads such tables; drop one of the two options"
        )
    problem = merge.retraction_problem() if retractions and has_primary_key else None
    if problem is not None:
        raise ValueError(f"--table-conf: {problem}")
    if (
        has_primary_key
        and str(options.get("file.format", "parquet")).strip().lower() != "parquet"
        and not compaction.write_only
    ):
        raise ValueError(
            f"--table-conf file.format={options['file.format']} is not supported: lakecdc compacts Parquet "
            f"files only; use parquet (the default), or write-only=true and compact with another engine"
        )


def table_options(user: Mapping[str, str], has_primary_key: bool, columns: int = 0) -> dict[str, str]:
    """The options a new table of ``columns`` columns is created with: lakecdc's defaults overlaid by
    the user's."""
    options = dict(DEFAULT_PK_OPTIONS) if has_primary_key else {}
    if columns >= WIDE_TABLE_COLUMNS:
        options.update(WIDE_TABLE_OPTIONS)
    if str(user.get("merge-engine", "")).strip().lower() == "first-row":
        options["changelog-producer"] = "none"  # Paimon allows only none or lookup with first-row
    options.update(user)
    validate_table_options(options, has_primary_key)
    return options
