"""``lakecdc rescale``: rewrite a fixed-bucket table (or one partition of it) into a new bucket
count, as Paimon's rescale action does — set ``bucket``, then overwrite the data with itself.

The rows are read as of the latest snapshot through the table as it was (its old bucket count)
and written through the table as it is now, in one OVERWRITE commit, so readers see either the
old or the new layout, never a mix. Stop the job that writes the table first (Paimon asks the
same): a writer that started before the rescale still writes the old bucket count.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import structlog

from sinks.compaction import compactor, deletion_vectors
from sinks.store import tables

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RescaleReport:
    table: str
    old_buckets: int
    new_buckets: int
    rows: int
    snapshot: int | None


def rescale(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    bucket_num: int,
    partition: Mapping[str, Any] | None = None,
) -> RescaleReport:
    """Rewrite ``identifier`` (or its ``partition``, typed values by key) into ``bucket_num`` buckets."""
    from pypaimon import CatalogFactory
    from pypaimon.schema.schema_change import SchemaChange
    from pypaimon_rust.datafusion import PaimonCatalog

    if bucket_num < 1:
        raise ValueError(f"--bucket-num must be 1 or more, got {bucket_num}")
    tables.table_location(warehouse, identifier)  # a safe name inside the warehouse, before anything is read
    options = {**catalog_options, "warehouse": warehouse}
    before = PaimonCatalog(options).get_table(identifier)  # the table as it is: its bucket count, its data
    old = int(before.schema().options().get("bucket", "-1"))
    if old < 1:
        raise ValueError(
            f"{identifier} has bucket={old}: only fixed-bucket tables can be rescaled (dynamic tables size "
            f"their buckets themselves)"
        )
    keys = list(before.schema().partition_keys())
    if partition is not None and sorted(partition) != sorted(keys):
        raise ValueError(f"--partition must name every partition key of the table: {', '.join(keys) or '(none)'}")
    # The whole table is read and a partition's rows picked here: simple and exact, not the
    # fastest for one partition of a large table.
    read = before.new_read_builder()
    splits = read.new_scan().plan().splits()

    CatalogFactory.create(options).alter_table(identifier, [SchemaChange.set_option("bucket", str(bucket_num))], False)
    after = PaimonCatalog(options).get_table(identifier)
    builder = after.new_batch_write_builder().with_overwrite(dict(partition) if partition is not None else {})
    write = builder.new_write()
    rows = 0
    try:
        reader = read.new_read().read_arrow(splits)
        try:
            for batch in reader:
                if partition is not None:
                    batch = _only(batch, partition)
                if batch.num_rows:
                    write.write_arrow(batch)
                    rows += batch.num_rows
        finally:
            reader.close()
        messages = write.prepare_commit()
    finally:
        write.close()
    commit = builder.new_commit()
    try:
        commit.commit(messages)
    finally:
        commit.close()
    table_options = after.schema().options()
    if deletion_vectors.enabled(table_options) or compactor.needs_level0_lifted(table_options):
        # Their readers skip level 0, where the rewrite put everything: compact now, or the table
        # would read empty until the writing job's next compaction.
        compactor.compact(warehouse, catalog_options, identifier, f"lakecdc-rescale-{uuid.uuid4()}", 2**63 - 1)
    latest = PaimonCatalog(options).get_table(identifier).latest_snapshot()
    log.info("table rescaled", table=identifier, buckets=f"{old} -> {bucket_num}", rows=rows, partition=partition)
    return RescaleReport(identifier, old, bucket_num, rows, None if latest is None else latest.id())


def _only(batch: pa.RecordBatch, partition: Mapping[str, Any]) -> pa.RecordBatch:
    import pyarrow.compute as pc

    mask = None
    for key, value in partition.items():
        col = batch.column(batch.schema.names.index(key))
        term = pc.is_null(col) if value is None else pc.equal(col, pa.scalar(value, col.type))
        mask = term if mask is None else pc.and_(mask, term)
    return batch if mask is None else batch.filter(mask)
