"""Every argument of Paimon's actions that lakecdc offers, and lakecdc's own, with what lakecdc does
with each (README's "Paimon options" table is generated from this; ``tests/ingest/cli`` walks it).

Read from Paimon's action factories (``docs/research/paimon-options.md`` §1): an option is
**honoured** (the same meaning as in Paimon, or lakecdc's own), accepted with **no effect** (it tunes
Flink, which lakecdc does not run), or **refused** with the reason.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ingest.cli.maintenance import ACTIONS
from ingest.conf_options import Treatment

H, N, R = Treatment.HONOURED, Treatment.NO_EFFECT, Treatment.REFUSED

KAFKA_TABLE, KAFKA_DB = "kafka-sync-table", "kafka-sync-database"
MYSQL_TABLE, MYSQL_DB = "mysql-sync-table", "mysql-sync-database"
SYNC = (MYSQL_TABLE, MYSQL_DB, KAFKA_TABLE, KAFKA_DB)
TABLE_SYNC = (MYSQL_TABLE, KAFKA_TABLE)
DB_SYNC = (MYSQL_DB, KAFKA_DB)
MAINTENANCE = ACTIONS  # the maintenance commands (ingest.cli.maintenance)
ALL = (*SYNC, *MAINTENANCE)
WITH_TABLE = (*TABLE_SYNC, *MAINTENANCE)


class Kind(enum.Enum):
    SINGLE = "one value"
    REPEATED = "repeatable"
    BOOLEAN = "true or false"
    FLAG = "no value"


@dataclass(frozen=True)
class ActionOption:
    """``--name`` of ``actions``. ``bare`` is what a boolean given without a value means here (None:
    refused, as Paimon's ``false`` reading of it is rarely what a script means). ``paimon`` is False
    for lakecdc's own options. ``example`` is a value the README walk passes (None for a flag)."""

    name: str
    actions: tuple[str, ...]
    treatment: Treatment
    what: str
    example: str | None
    kind: Kind = Kind.SINGLE
    bare: bool | None = None
    paimon: bool = True


def _o(
    name: str, actions: tuple[str, ...], treatment: Treatment, what: str, example: str | None, **kw: object
) -> ActionOption:
    return ActionOption(name, actions, treatment, what, example, **kw)  # type: ignore[arg-type]


_PATH = (
    "Parameter 'path' is deprecated. Please use '--catalog_conf warehouse=<warehouse>' to specify warehouse if "
    "needed, and use 'database' to specify database and 'table' to specify table. (Paimon's message)"
)
_FLINK = "tunes the Flink job; lakecdc runs on Spark (spark-conf, and one write task per core)"

ACTION_OPTIONS: tuple[ActionOption, ...] = (
    # -- every action
    _o("warehouse", ALL, H, "Paimon warehouse (or --catalog-conf warehouse=..., which wins, as in Paimon)", "wh"),
    _o(
        "catalog-conf",
        ALL,
        H,
        "Paimon catalog option key=value (README: --catalog-conf keys)",
        "a=b",
        kind=Kind.REPEATED,
    ),
    _o("database", ALL, H, "Paimon database", "dw"),
    _o("table", WITH_TABLE, H, "Paimon table (remove-orphan-files: optional, * or absent = every table)", "orders"),
    _o("path", ALL, R, _PATH, "/wh/db.db/t"),
    _o("force-start-flink-job", ALL, N, "starts a Flink job for local actions", "true", kind=Kind.BOOLEAN),
    # -- sync actions
    _o(
        "mysql-conf",
        (MYSQL_TABLE, MYSQL_DB),
        H,
        "MySQL source option k=v (README: --mysql-conf)",
        "a=b",
        kind=Kind.REPEATED,
    ),
    _o(
        "kafka-conf",
        (KAFKA_TABLE, KAFKA_DB),
        H,
        "Kafka source option k=v (README: --kafka-conf)",
        "a=b",
        kind=Kind.REPEATED,
    ),
    _o(
        "table-conf",
        SYNC,
        H,
        "Paimon table option k=v, for created tables and altered into existing ones (README: --table-conf keys)",
        "a=b",
        kind=Kind.REPEATED,
    ),
    _o(
        "table-conf",
        ("expire-partitions",),
        H,
        "table options k=v for this run (partition.*)",
        "partition.expiration-max-num=5",
        kind=Kind.REPEATED,
    ),
    _o(
        "table-conf",
        ("compact",),
        R,
        "dynamic options of a compaction run are not applied yet; set the table's "
        "options with ALTER TABLE (or a sync job's --table-conf) instead",
        "a=b",
        kind=Kind.REPEATED,
    ),
    _o("partition-keys", SYNC, H, "comma-separated partition keys of created tables", "pt"),
    _o("primary-keys", SYNC, H, "comma-separated primary keys (default: the source's)", "id"),
    _o("type-mapping", SYNC, H, "comma-separated type mapping options (README: type mapping)", "to-nullable"),
    _o(
        "computed-column",
        SYNC,
        H,
        "name=function(args), one per occurrence (README: computed columns)",
        "c=upper(v)",
        kind=Kind.REPEATED,
    ),
    _o(
        "metadata-column",
        SYNC,
        H,
        "metadata columns, comma-separated or one per occurrence (Paimon's kafka_sync_database ignores them; "
        "lakecdc adds them)",
        "op_ts",
        kind=Kind.REPEATED,
    ),
    _o("metadata-column-prefix", SYNC, H, "prefix of the metadata columns' names", "__"),
    _o(
        "sync-primary-keys-from-source-schema",
        SYNC,
        H,
        "without --primary-keys, take the source's keys (true, the default) or create tables without keys",
        "false",
        kind=Kind.BOOLEAN,
    ),
    _o(
        "use-pkeys-from-source-for-paimon-schema",
        SYNC,
        N,
        "no action reads it; Paimon's own ITCases pass it",
        None,
        kind=Kind.FLAG,
    ),
    _o("table-prefix", DB_SYNC, H, "prefix of created table names", "ods_"),
    _o("table-suffix", DB_SYNC, H, "suffix of created table names", "_cdc"),
    _o(
        "table-prefix-db",
        DB_SYNC,
        H,
        "db=prefix: prefix of that source database's tables",
        "shop=s_",
        kind=Kind.REPEATED,
    ),
    _o(
        "table-suffix-db",
        DB_SYNC,
        H,
        "db=suffix: suffix of that source database's tables",
        "shop=_s",
        kind=Kind.REPEATED,
    ),
    _o(
        "table-mapping",
        DB_SYNC,
        H,
        "source_table=paimon_table (wins over prefixes and suffixes)",
        "a=b",
        kind=Kind.REPEATED,
    ),
    _o("including-tables", DB_SYNC, H, "regular expression of source tables to sync", "orders|users"),
    _o("excluding-tables", DB_SYNC, H, "regular expression of source tables to skip (wins)", "tmp_.*"),
    _o("including-dbs", DB_SYNC, H, "regular expression of source databases to sync", "shop"),
    _o("excluding-dbs", DB_SYNC, H, "regular expression of source databases to skip", "test"),
    _o(
        "multiple-table-partition-keys",
        DB_SYNC,
        H,
        "table=c1,c2: partition keys of one table",
        "t=pt",
        kind=Kind.REPEATED,
    ),
    _o(
        "ignore-incompatible",
        DB_SYNC,
        H,
        "skip tables whose schema cannot evolve, instead of failing (Paimon's kafka_sync_database ignores it; "
        "lakecdc honours it). A bare flag is true here",
        "true",
        kind=Kind.BOOLEAN,
        bare=True,
    ),
    _o(
        "merge-shards",
        (MYSQL_DB,),
        H,
        "false: tables of several databases go to <db>_<table>",
        "false",
        kind=Kind.BOOLEAN,
    ),
    _o("merge-shards", (KAFKA_DB,), N, "Paimon's kafka_sync_database ignores it too", "false", kind=Kind.BOOLEAN),
    _o("mode", (MYSQL_DB,), H, "divided (default) or combined: both pick up new tables (README)", "combined"),
    _o("mode", (KAFKA_DB,), N, "Paimon's kafka_sync_database ignores it too (always combined)", "combined"),
    _o("eager-init", DB_SYNC, N, "initialises Flink committers eagerly", "true", kind=Kind.BOOLEAN),
    # -- lakecdc's own (sync)
    _o("checkpoint", SYNC, H, "checkpoint directory (default: under the warehouse)", "ck", paimon=False),
    _o("trigger-interval", SYNC, H, "micro-batch interval (default 10 seconds)", "5s", paimon=False),
    _o(
        "max-offsets-per-trigger",
        SYNC,
        H,
        "messages per micro-batch at most (default 500000; Kafka: and about 512 MiB of messages); MySQL: the "
        "snapshot's estimated rows (at most 256 chunks), then binlog events, each micro-batch ending at a "
        "transaction boundary",
        "1000",
        paimon=False,
    ),
    _o(
        "parallel-write-min-rows",
        SYNC,
        H,
        "rows of one table from which one task per core writes it",
        "10",
        paimon=False,
    ),
    _o(
        "available-now",
        SYNC,
        H,
        "process what is there now, then stop (a bare flag is true)",
        "true",
        kind=Kind.BOOLEAN,
        bare=True,
        paimon=False,
    ),
    _o(
        "log-payloads",
        SYNC,
        H,
        "show message values in error texts and DDL text in logs (default: positions, fields, sizes only)",
        "true",
        kind=Kind.BOOLEAN,
        bare=True,
        paimon=False,
    ),
    _o(
        "errors-tolerance",
        SYNC,
        H,
        "none (default): a message that cannot be parsed, converted or routed stops the job before its "
        "micro-batch commits; all: it goes to --dead-letter-table in the same commit (README: Bad input)",
        "all",
        paimon=False,
    ),
    _o(
        "dead-letter-table",
        SYNC,
        H,
        "database.table of dead letters (required with --errors-tolerance all, refused without)",
        "ods.dlq",
        paimon=False,
    ),
    _o(
        "max-dead-letters",
        SYNC,
        H,
        "stop the job, before committing, when one micro-batch has more dead letters (default: no limit)",
        "100",
        paimon=False,
    ),
    _o(
        "skip-offsets",
        SYNC,
        H,
        "topic:partition:offset[,...] (MySQL: binlog-file:position) of messages to move past with the same "
        "checkpoint; each is logged, and dead-lettered as SkippedByOperator when there is a dead-letter table",
        "orders:0:42",
        kind=Kind.REPEATED,
        paimon=False,
    ),
    _o(
        "config",
        SYNC,
        H,
        "a YAML or TOML file of the job's options; the command line, then LAKECDC_* variables, win "
        "(README: Configuration files)",
        "job.yaml",
        paimon=False,
    ),
    _o(
        "verbose",
        ALL,
        H,
        "(or -v) a failure with its Python and Java traces, and Spark's task errors in the log (default: "
        "lakecdc's own error as the last line)",
        None,
        kind=Kind.FLAG,
        paimon=False,
    ),
    _o(
        "spark-conf",
        SYNC,
        H,
        "Spark configuration key=value",
        "spark.driver.memory=2g",
        kind=Kind.REPEATED,
        paimon=False,
    ),
    _o(
        "metrics-port",
        SYNC,
        H,
        "serve the job's Prometheus metrics on this port (0: a free one; README: Monitoring)",
        "9464",
        paimon=False,
    ),
    _o("metrics-host", SYNC, H, "address the metrics port binds to (default 127.0.0.1)", "0.0.0.0", paimon=False),
    _o(
        "progress",
        SYNC,
        H,
        "auto (default): a progress bar when stderr is a terminal, else a log line per micro-batch; bar; log",
        "log",
        paimon=False,
    ),
    # -- compact
    _o(
        "partition",
        ("compact", "drop-partition", "rescale"),
        H,
        "k=v[,k2=v2], one partition per occurrence (rescale: one)",
        "pt=1",
        kind=Kind.REPEATED,
    ),
    _o(
        "compact-strategy",
        ("compact",),
        H,
        "full (the default here: the command runs once, as Paimon's batch mode does) or minor",
        "minor",
    ),
    _o("where", ("compact",), R, "a SQL partition filter is not parsed yet: use --partition", "pt = 1"),
    _o("order-strategy", ("compact",), R, "sort compaction (order, zorder, hilbert) is not implemented", "zorder"),
    _o("order-by", ("compact",), R, "sort compaction is not implemented", "a,b"),
    _o("partition-idle-time", ("compact",), R, "compacting only idle partitions is not implemented", "1 h"),
    _o("buckets", ("compact",), R, "compacting chosen buckets only is not implemented", "0-3"),
    # -- expire-snapshots
    _o("retain-max", ("expire-snapshots",), H, "keep at most this many snapshots", "5"),
    _o("retain-min", ("expire-snapshots",), H, "keep at least this many snapshots", "1"),
    _o(
        "older-than",
        ("expire-snapshots", "remove-orphan-files"),
        H,
        "local time 'yyyy-MM-dd HH:mm:ss' (or yyyy-MM-dd, or with .SSS)",
        "2024-01-01 00:00:00",
    ),
    _o("max-deletes", ("expire-snapshots",), H, "expire at most this many snapshots in this run", "10"),
    _o(
        "options",
        ("expire-snapshots",),
        H,
        "k=v,k2=v2: table options for this run, applied before the table's own are read",
        "snapshot.num-retained.min=1",
    ),
    # -- tags, rollback
    _o("tag-name", ("create-tag", "delete-tag"), H, "tag name (delete-tag: comma-separated names)", "t1"),
    _o("snapshot", ("create-tag",), H, "snapshot id (default: the latest)", "1"),
    _o("time-retained", ("create-tag",), H, "how long the tag is kept, e.g. '7 d'", "7 d"),
    _o("version", ("rollback-to",), H, "snapshot id (digits) or tag name", "tag1"),
    # -- remove-orphan-files
    _o(
        "dry-run",
        ("remove-orphan-files",),
        H,
        "true: only list them. A bare flag is true here",
        "true",
        kind=Kind.BOOLEAN,
        bare=True,
    ),
    _o("parallelism", ("remove-orphan-files",), N, _FLINK, "4"),
    # -- expire-partitions
    _o(
        "expiration-time",
        ("expire-partitions",),
        H,
        "e.g. '7 d' (default: the table's partition.expiration-time)",
        "7 d",
    ),
    _o(
        "timestamp-formatter",
        ("expire-partitions",),
        H,
        "Java pattern of the partition time, e.g. yyyyMMdd",
        "yyyyMMdd",
    ),
    _o("timestamp-pattern", ("expire-partitions",), H, "how partition values make the time, e.g. '$dt'", "$dt"),
    _o("expire-strategy", ("expire-partitions",), H, "values-time (default) or update-time", "update-time"),
    _o("max-expires", ("expire-partitions",), H, "drop at most this many partitions (the procedure's argument)", "10"),
    # -- rescale
    _o("bucket-num", ("rescale",), H, "the new number of buckets (required here)", "4"),
    _o("scan-parallelism", ("rescale",), N, _FLINK, "2"),
    _o("sink-parallelism", ("rescale",), N, _FLINK, "2"),
)
