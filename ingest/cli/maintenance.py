"""The table-maintenance actions of the command line, with the arguments of Paimon's actions:
``compact``, ``expire-snapshots``, ``expire-partitions``, ``create-tag``, ``delete-tag``, ``rollback-to``,
``drop-partition``, ``remove-orphan-files``.

They run in this process (no Spark): compaction merges buckets on a thread pool, and every
action is safe beside a running sync job except ``rollback-to`` and ``rescale``, which rewrite what a
writer builds on: they take the table's lease (``sinks.write.lease``) for their run, so they are
refused while a sync job writes the table, and a job cannot start writing it meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from ingest import logs
from schema_evolution.errors import LakeCdcError

ACTIONS = (
    "compact",
    "expire-snapshots",
    "create-tag",
    "delete-tag",
    "rollback-to",
    "remove-orphan-files",
    "drop-partition",
    "expire-partitions",
    "rescale",
)

# Paimon's batch commits use Long.MAX_VALUE as identifier (BatchWriteBuilder.COMMIT_IDENTIFIER); a
# fresh commit user per run keeps the sync jobs' exactly-once identifier checks unaffected.
BATCH_IDENTIFIER = 2**63 - 1

# Arguments an action cannot run without (Paimon's getRequired), beyond --database and --table.
REQUIRED = {
    "create-tag": ("tag_name",),
    "delete-tag": ("tag_name",),
    "rollback-to": ("version",),
    "drop-partition": ("partition",),
    "rescale": ("bucket_num",),
}
TABLE_OPTIONAL = ("compact", "remove-orphan-files")


def add_parsers(sub: Any, opt: Callable[..., None]) -> None:
    # --warehouse, --database and the REQUIRED arguments are checked with Paimon's message (ingest.cli.main).
    def common(p: argparse.ArgumentParser, table_required: bool = True) -> None:
        opt(p, "warehouse", default=None, help="Paimon warehouse: a relative or absolute path, or a file: URI")
        opt(p, "database", default=None, help="Paimon database")
        opt(p, "table", default=None, help="Paimon table" + ("" if table_required else " (default: every table)"))
        opt(p, "catalog-conf", action="append", help="Paimon catalog option key=value (repeatable)")

    p = sub.add_parser("compact", help="compact a table's buckets (Paimon's compact action)")
    common(p, table_required=False)
    opt(p, "partition", action="append", help="only this partition, k=v[,k2=v2] (repeatable)")
    opt(p, "compact-strategy", choices=["full", "minor"], default="full", help="full (default) or minor")
    p = sub.add_parser("expire-snapshots", help="expire old snapshots and delete the files only they used")
    common(p)
    opt(p, "retain-max", type=int, default=None, help="keep at most this many snapshots")
    opt(p, "retain-min", type=int, default=None, help="keep at least this many snapshots")
    opt(p, "older-than", default=None, help="expire snapshots older than this local time, 'yyyy-MM-dd HH:mm:ss'")
    opt(p, "max-deletes", type=int, default=None, help="expire at most this many snapshots in this run")
    opt(p, "options", default=None, help="k=v,k2=v2: table options for this run (read before the table's own)")
    p = sub.add_parser("create-tag", help="tag a snapshot (the latest by default)")
    common(p)
    opt(p, "tag-name", default=None, help="name of the tag")
    opt(p, "snapshot", type=int, default=None, help="snapshot id (default: the latest)")
    opt(p, "time-retained", default=None, help="how long the tag is kept, e.g. '7 d'")
    p = sub.add_parser("delete-tag", help="delete tags")
    common(p)
    opt(p, "tag-name", default=None, help="tag name, or several separated by commas")
    p = sub.add_parser("rollback-to", help="roll a table back to a snapshot or tag (stop the writing job first)")
    common(p)
    opt(p, "version", default=None, help="snapshot id or tag name")
    p = sub.add_parser("drop-partition", help="drop partitions (an OVERWRITE snapshot without their files)")
    common(p)
    opt(p, "partition", action="append", default=None, help="k=v[,k2=v2] (repeatable)")
    p = sub.add_parser("expire-partitions", help="drop partitions older than an expiration time (Paimon's rules)")
    common(p)
    opt(p, "expiration-time", default=None, help="e.g. '7 d' (default: the table's partition.expiration-time)")
    opt(p, "timestamp-formatter", default=None, help="Java pattern of the partition time, e.g. 'yyyyMMdd'")
    opt(p, "timestamp-pattern", default=None, help="how partition values make the time, e.g. '$dt $hour:00:00'")
    opt(p, "expire-strategy", default=None, choices=["values-time", "update-time"], help="values-time (default)")
    opt(p, "max-expires", type=int, default=None, help="drop at most this many partitions (default 100)")
    opt(p, "table-conf", action="append", default=None, help="table option k=v for this run (repeatable)")
    p = sub.add_parser("rescale", help="rewrite a fixed-bucket table or partition into a new bucket count")
    common(p)
    opt(p, "bucket-num", type=int, default=None, help="the new number of buckets")
    opt(p, "partition", action="append", default=None, help="only this partition, k=v[,k2=v2]")
    p = sub.add_parser("remove-orphan-files", help="delete files no snapshot or tag refers to (older than a day)")
    common(p, table_required=False)
    opt(p, "older-than", default=None, help="only files older than this local time (default: one day ago)")
    opt(p, "dry-run", default="false", choices=["true", "false"], help="true: only list them")


def run(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.filesystem import with_environment
    from sinks.table.locations import resolve_warehouse

    try:
        args.warehouse = resolve_warehouse(args.warehouse)
        catalog_conf = with_environment(args.warehouse, catalog_conf)  # s3.* from AWS_* when not given
        logs.register_secrets(v for k, v in catalog_conf.items() if logs.is_secret_name(k))
        return _ACTIONS[args.action](args, catalog_conf)
    except ValueError as exc:
        print(logs.redact_text(f"lakecdc: error: {exc}"), file=sys.stderr)
        return 2
    except LakeCdcError as exc:  # a lease held by a running sync job
        print(logs.redact_text(f"lakecdc: error: {exc}"), file=sys.stderr)
        return 1


def _tables(args: argparse.Namespace, catalog_conf: dict[str, str]) -> list[str]:
    if args.table:
        return [f"{args.database}.{args.table}"]
    from sinks.table.catalog import Catalog

    names = Catalog(args.warehouse, catalog_conf).list_tables(args.database)
    if not names:
        raise ValueError(f"database {args.database} has no tables")
    return [f"{args.database}.{name}" for name in names]


@contextlib.contextmanager
def _exclusive(args: argparse.Namespace, catalog_conf: dict[str, str], identifier: str) -> Iterator[None]:
    """Hold ``identifier``'s lease while an action that a running writer must not see runs; a live
    sync job's lease refuses it (``LeaseHeld`` names the job), with the job's rules of expiry and
    LAKECDC_FORCE_LEASE."""
    from ingest.job import lease_settings
    from sinks.write.committer import Committer
    from sinks.write.lease import Fence, Owner

    directory = Committer(args.warehouse, catalog_conf, "").table_directory(identifier)
    if directory is None:
        yield  # no such table: the action reports it
        return
    ttl, force = lease_settings()
    fence = Fence(Owner.this_process(f"lakecdc {args.action} (pid {os.getpid()})"), ttl, force)
    try:
        fence.hold(directory, f"table {identifier}")
        yield
    finally:
        fence.close()


def _partitions(values: Sequence[str] | None) -> list[dict[str, str]]:
    out = []
    for spec in values or ():
        parts: dict[str, str] = {}
        for item in spec.split(","):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"--partition expects k=v[,k2=v2], got '{spec}'")
            parts[key.strip()] = value.strip()
        out.append(parts)
    return out


def _compact(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.compaction import compactor
    from sinks.compaction.append_compactor import NotCompactable

    def threads(tasks: Sequence[compactor.Task]) -> list[Any]:
        with ThreadPoolExecutor(max_workers=max(1, min(len(tasks), os.cpu_count() or 1))) as pool:
            return list(pool.map(compactor.compact_task, tasks))

    partitions = _partitions(args.partition)
    for table in _tables(args, catalog_conf):
        try:
            report = compactor.compact(
                args.warehouse,
                catalog_conf,
                table,
                f"lakecdc-compact-{uuid.uuid4()}",
                BATCH_IDENTIFIER,
                full=args.compact_strategy == "full",
                partitions=partitions,
                runner=threads,
            )
        except NotCompactable as exc:
            if args.table:
                raise
            print(f"lakecdc: {table}: skipped: {exc}", file=sys.stderr)
            continue
        if report.buckets == 0:
            print(f"lakecdc: {table}: nothing to compact")
        elif report.committed:
            print(
                f"lakecdc: {table}: compacted {report.buckets} buckets, {report.files_before} files into "
                f"{report.files_after}, {report.manifests_merged} manifests merged, {report.seconds:.1f} s"
            )
        else:
            print(f"lakecdc: {table}: compaction lost a race with another commit, nothing changed; run it again")
    return 0


# The forms Paimon's DateTimeUtils.parseTimestampData reads for --older-than (a local time).
_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


def _local_time_ms(text: str, option: str) -> int:
    for form in _TIME_FORMATS:
        try:
            return int(datetime.strptime(text.strip(), form).timestamp() * 1000)
        except ValueError:
            continue
    raise ValueError(f"--{option} '{text}' is not 'yyyy-MM-dd HH:mm:ss' (or yyyy-MM-dd, or with .SSS)")


def _table_conf(values: Sequence[str] | None, option: str = "table-conf") -> dict[str, str]:
    out = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--{option} expects key=value, got '{item}'")
        out[key.strip()] = value.strip()
    return out


def _drop_partition(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.compaction.compactor import partition_values
    from sinks.lifecycle.partitions import drop_partitions
    from sinks.store.tables import open_table

    table = open_table(args.warehouse, catalog_conf, f"{args.database}.{args.table}")
    values = [partition_values(table, spec) for spec in _partitions(args.partition)]
    drop_partitions(table, values)
    print(f"lakecdc: {args.database}.{args.table}: dropped {len(values)} partition(s)")
    return 0


def _rescale(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.compaction.compactor import partition_values
    from sinks.compaction.rescale import rescale
    from sinks.store.tables import open_table

    identifier = f"{args.database}.{args.table}"
    partition = None
    if args.partition:
        specs = _partitions(args.partition)
        if len(specs) != 1:
            raise ValueError("rescale takes one --partition at a time")
        table = open_table(args.warehouse, catalog_conf, identifier)
        values = partition_values(table, specs[0])
        partition = dict(zip([f.name for f in table.partition_keys_fields], values, strict=True))
    with _exclusive(args, catalog_conf, identifier):
        report = rescale(args.warehouse, catalog_conf, identifier, args.bucket_num, partition)
    print(
        f"lakecdc: {identifier}: {report.rows} rows rewritten from {report.old_buckets} into "
        f"{report.new_buckets} buckets (snapshot {report.snapshot}). Restart the job that writes this table."
    )
    return 0


def _expire_partitions(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.lifecycle.partitions import expire_partitions

    given = {
        "partition.expiration-time": args.expiration_time,
        "partition.timestamp-formatter": args.timestamp_formatter,
        "partition.timestamp-pattern": args.timestamp_pattern,
        "partition.expiration-strategy": args.expire_strategy,
        "partition.expiration-max-num": None if args.max_expires is None else str(args.max_expires),
    }
    overrides = {**_table_conf(args.table_conf), **{k: v for k, v in given.items() if v is not None}}
    table = f"{args.database}.{args.table}"
    result = expire_partitions(args.warehouse, catalog_conf, table, overrides)
    print(f"lakecdc: {table}: {len(result.expired)} partition(s) expired")
    for values in result.expired:
        print(f"  {', '.join('NULL' if v is None else v for v in values)}")
    if result.unreadable:
        print(f"lakecdc: {len(result.unreadable)} partition(s) have no readable time and were kept", file=sys.stderr)
    return 0


def _orphans(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.lifecycle.orphans import remove_orphan_files

    cutoff = _local_time_ms(args.older_than, "older-than") if args.older_than else None
    if args.table == "*":  # Paimon: '*' (or no --table) means every table of the database
        args.table = None
    for table in _tables(args, catalog_conf):
        report = remove_orphan_files(args.warehouse, catalog_conf, table, cutoff, dry_run=args.dry_run == "true")
        verb = "deleted" if report.deleted else "found (dry run)"
        print(f"lakecdc: {table}: {len(report.orphans)} orphan files {verb}")
        for path in report.orphans:
            print(f"  {path}")
    return 0


def _expire(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.lifecycle.expire import expire_snapshots

    # Paimon's --options: k=v,k2=v2, applied to the table before its options are read.
    overrides = _table_conf(args.options.split(",") if args.options else (), "options")
    if args.retain_max is not None:
        overrides["snapshot.num-retained.max"] = str(args.retain_max)
    if args.retain_min is not None:
        overrides["snapshot.num-retained.min"] = str(args.retain_min)
    if args.max_deletes is not None:
        overrides["snapshot.expire.limit"] = str(args.max_deletes)
    now_ms = None
    if args.older_than is not None:
        # Snapshots from before the cut-off are old enough: retention measured from the cut-off.
        now_ms = _local_time_ms(args.older_than, "older-than")
        overrides["snapshot.time-retained"] = "0 ms"
    table = f"{args.database}.{args.table}"
    report = expire_snapshots(args.warehouse, catalog_conf, table, overrides, now_ms=now_ms)
    print(
        f"lakecdc: {table}: {report.expired_snapshots} snapshots expired (earliest kept {report.earliest_kept}); "
        f"deleted {report.data_files_deleted} data files, {report.changelog_files_deleted} changelog files, "
        f"{report.manifests_deleted} manifests"
        + (f"; {report.expired_changelogs} kept changelogs expired" if report.expired_changelogs else "")
    )
    return 0


def _create_tag(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.store.tables import open_table

    table = open_table(args.warehouse, catalog_conf, f"{args.database}.{args.table}")
    table.create_tag(args.tag_name, args.snapshot, False, args.time_retained)
    tag = table.tag_manager().get(args.tag_name)
    print(f"lakecdc: tag '{args.tag_name}' created on snapshot {tag.trim_to_snapshot().id}")
    return 0


def _delete_tag(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.store.tables import open_table

    table = open_table(args.warehouse, catalog_conf, f"{args.database}.{args.table}")
    missing = []
    for name in (n.strip() for n in args.tag_name.split(",") if n.strip()):
        if table.delete_tag(name):
            print(f"lakecdc: tag '{name}' deleted")
        else:
            missing.append(name)
    if missing:
        raise ValueError(f"no such tag: {', '.join(missing)}")
    return 0


def _rollback(args: argparse.Namespace, catalog_conf: dict[str, str]) -> int:
    from sinks.lifecycle.expire import rollback_to

    identifier = f"{args.database}.{args.table}"
    with _exclusive(args, catalog_conf, identifier):
        report = rollback_to(args.warehouse, catalog_conf, identifier, args.version)
    print(
        f"lakecdc: {report.table} rolled back to snapshot {report.snapshot}: {report.removed_snapshots} snapshots "
        f"removed, {report.data_files_deleted} data files, {report.changelog_files_deleted} changelog files and "
        f"{report.manifests_deleted} manifests deleted. A sync job writing this table must start from a new "
        f"checkpoint to write the rolled-back changes again."
    )
    return 0


_ACTIONS: dict[str, Callable[[argparse.Namespace, dict[str, str]], int]] = {
    "compact": _compact,
    "expire-snapshots": _expire,
    "create-tag": _create_tag,
    "delete-tag": _delete_tag,
    "rollback-to": _rollback,
    "remove-orphan-files": _orphans,
    "drop-partition": _drop_partition,
    "expire-partitions": _expire_partitions,
    "rescale": _rescale,
}
