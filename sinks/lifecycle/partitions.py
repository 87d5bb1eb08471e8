"""Dropping partitions: by name (``lakecdc drop-partition``) and by age (partition expiry after a
sync job's commits, and ``lakecdc expire-partitions``). A drop is one OVERWRITE snapshot without
the partitions' files, as Paimon's ``dropPartitions`` commits it; the files go with snapshot expiry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import structlog

from sinks.lifecycle.partition_expiry import ExpiryPlan, PartitionExpiryOptions, PartitionInfo, plan
from sinks.store import manifests, tables

if TYPE_CHECKING:
    from sinks.store.paimon_types import FileStoreTable

log = structlog.get_logger(__name__)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def drop_partitions(
    table: FileStoreTable, partitions: Sequence[tuple[Any, ...]], batch_size: int | None = None
) -> None:
    """Drop partitions given as typed values in partition-key order; one commit per batch."""
    keys = [f.name for f in table.partition_keys_fields]
    specs = [dict(zip(keys, values, strict=True)) for values in partitions]
    step = batch_size or len(specs) or 1
    for i in range(0, len(specs), step):
        commit = table.new_batch_write_builder().new_commit()
        try:
            commit.truncate_partitions(specs[i : i + step])
        finally:
            commit.close()


def expire_partitions(
    warehouse: str,
    catalog_options: Mapping[str, str],
    identifier: str,
    overrides: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
) -> ExpiryPlan:
    """Drop the partitions the table's ``partition.expiration-*`` options (with ``overrides``)
    find expired at local time ``now``; returns what was dropped."""
    table = tables.open_table(warehouse, catalog_options, identifier)
    opts = PartitionExpiryOptions.from_table_options({**table.options.options.to_map(), **(overrides or {})})
    keys = [f.name for f in table.partition_keys_fields]
    if opts.expiration_ms is None or not keys:
        return ExpiryPlan((), ())
    typed: dict[tuple[str | None, ...], tuple[Any, ...]] = {}
    newest: dict[tuple[str | None, ...], int] = {}
    for (partition, _bucket), files in manifests.live_files(table).items():
        text = tuple(_text(v) for v in partition)
        typed[text] = partition
        created = max((f.creation_time_epoch_millis() or 0 for f in files), default=0)
        newest[text] = max(newest.get(text, 0), created)
    infos = [PartitionInfo(text, newest[text]) for text in typed]
    result = plan(opts, keys, infos, now or dt.datetime.now())
    if result.unreadable:
        log.warning(
            "partitions without a readable time never expire; drop them with drop-partition, or set "
            "partition.expiration-strategy=update-time",
            table=identifier,
            partitions=[dict(zip(keys, values, strict=True)) for values in result.unreadable[:10]],
        )
    if result.expired:
        drop_partitions(table, [typed[values] for values in result.expired], opts.batch_size)
        log.info(
            "partitions expired",
            table=identifier,
            partitions=[dict(zip(keys, values, strict=True)) for values in result.expired],
        )
    return result
