"""``lakecdc``: the command line, argument-compatible with Apache Paimon's CDC actions.

A Paimon script such as ``flink run paimon-flink-action.jar kafka_sync_database --warehouse …``
runs by replacing the launcher with ``lakecdc kafka-sync-database --warehouse …``: actions and
options are accepted with ``_`` or ``-`` (``--primary_keys`` and ``--primary-keys``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Collection, Sequence
from typing import Any

import structlog
from pydantic import ValidationError

from ingest import logs
from ingest.cli import maintenance as maintenance_cli
from ingest.cli.paimon_actions import ALL
from ingest.cli.paimon_args import Normalised, PaimonArgsError, action_name, normalise
from ingest.cli.pairs import key_values
from ingest.cli.secrets import resolve_conf
from ingest.source import Action, SourceKind

SYNC_ACTIONS = tuple(action.value for action in Action)
VERBOSE = ("-v", "--verbose")
VERBOSE_HELP = "a failure with its Python and Java traces, and Spark's task errors in the log"
BOOLEAN = ["true", "false"]


def _opt(parser: argparse.ArgumentParser, name: str, **kw: Any) -> None:
    """Add ``--a-b`` with its ``--a_b`` spelling."""
    spellings = [f"--{name}"]
    if "-" in name:
        spellings.append(f"--{name.replace('-', '_')}")
    parser.add_argument(*spellings, dest=name.replace("-", "_"), **kw)


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def _add_sync_parser(sub: Any, action: Action) -> None:
    p = sub.add_parser(action.value, help=f"Paimon's {action.replace('-', '_')} action on Spark")
    _opt(p, "warehouse", default=None, help="Paimon warehouse: a relative or absolute path, or a file: URI")
    _opt(p, "database", default=None, help="target Paimon database")
    if not action.database_sync:
        _opt(p, "table", default=None, help="target Paimon table")
    else:
        _add_database_sync_options(p, action)
    _opt(p, "partition-keys", default=None, help="comma-separated partition keys")
    _opt(p, "primary-keys", default=None, help="comma-separated primary keys (default: the source's)")
    _opt(p, "type-mapping", default="", help="comma-separated type mapping options")
    _opt(
        p,
        "sync-primary-keys-from-source-schema",
        default="true",
        choices=BOOLEAN,
        help="use the source's primary keys when --primary-keys is not given (default true)",
    )
    _opt(p, "computed-column", action="append", default=None, help="computed column 'name=func(args)' (repeatable)")
    _opt(p, "metadata-column", action="append", default=None, help="metadata columns, e.g. topic,offset,op_ts")
    _opt(p, "metadata-column-prefix", default=None, help="prefix of the metadata columns' names")
    if action.source is SourceKind.KAFKA:
        _opt(p, "kafka-conf", action="append", help="Kafka source option key=value (repeatable)")
    else:
        _opt(p, "mysql-conf", action="append", help="MySQL source option key=value (repeatable)")
    _opt(p, "catalog-conf", action="append", help="Paimon catalog option key=value (repeatable)")
    _opt(p, "table-conf", action="append", help="Paimon table option key=value (repeatable)")
    _opt(p, "checkpoint", default=None, help="checkpoint directory (default: under the warehouse)")
    _opt(p, "trigger-interval", default=None, help="micro-batch interval, e.g. 10s (default 10 seconds)")
    _opt(p, "max-offsets-per-trigger", type=int, default=None, help="messages per micro-batch at most")
    _opt(
        p,
        "parallel-write-min-rows",
        type=int,
        default=None,
        help="rows of one table in a micro-batch from which one task per core writes it, by bucket (default 50000)",
    )
    _opt(p, "available-now", default=None, choices=BOOLEAN, help="true: process what is there now, then stop")
    _opt(p, "log-payloads", default=None, choices=BOOLEAN, help="true: message values in error texts, DDL in logs")
    _opt(p, "spark-conf", action="append", help="Spark configuration key=value (repeatable)")
    _opt(p, "config", default=None, help="a YAML or TOML file of these options (the command line, then LAKECDC_*, win)")
    _opt(p, "metrics-port", type=int, default=None, help="serve Prometheus metrics on this port (0: a free one)")
    _opt(p, "metrics-host", default=None, help="address the metrics port binds to (default 127.0.0.1)")
    _opt(
        p,
        "progress",
        default=None,
        choices=("auto", "bar", "log"),
        help="auto (default): a progress bar when stderr is a terminal; bar; log: a log line per micro-batch",
    )
    _add_bad_input_options(p)


def _add_bad_input_options(p: argparse.ArgumentParser) -> None:
    """Dead letters and skips (README: Bad input and dead letters)."""
    _opt(
        p,
        "errors-tolerance",
        default=None,
        type=str.lower,
        choices=["none", "all"],
        help="none (default): a bad message stops the job; all: it goes to --dead-letter-table",
    )
    _opt(p, "dead-letter-table", default=None, help="database.table of bad messages (with --errors-tolerance all)")
    _opt(p, "max-dead-letters", type=int, default=None, help="stop when a micro-batch has more dead letters")
    _opt(
        p,
        "skip-offsets",
        action="append",
        default=None,
        help="topic:partition:offset[,...] (MySQL: binlog-file:position) of messages to move past (repeatable)",
    )


def _add_database_sync_options(p: argparse.ArgumentParser, action: Action) -> None:
    _opt(p, "table-prefix", default="", help="prefix for created table names")
    _opt(p, "table-suffix", default="", help="suffix for created table names")
    _opt(p, "including-tables", default=".*", help="regex of source tables to sync")
    _opt(p, "excluding-tables", default=None, help="regex of source tables to skip")
    _opt(
        p, "ignore-incompatible", default="false", choices=BOOLEAN, help="true: skip tables whose schema cannot evolve"
    )
    if action is Action.MYSQL_SYNC_DATABASE:
        _opt(p, "merge-shards", default="true", choices=BOOLEAN, help="false: <db>_<table> names")
        _opt(
            p,
            "mode",
            default="divided",
            type=str.lower,  # Paimon's MultiTablesSinkMode is case-insensitive
            choices=["divided", "combined"],
            help="see README (both pick up new tables)",
        )
    _opt(p, "including-dbs", default=".*", help="regex of source databases to sync")
    _opt(p, "excluding-dbs", default=None, help="regex of source databases to skip")
    _opt(p, "table-mapping", action="append", default=None, help="source_table=paimon_table (repeatable)")
    _opt(p, "table-prefix-db", action="append", default=None, help="db=prefix for that db's tables")
    _opt(p, "table-suffix-db", action="append", default=None, help="db=suffix for that db's tables")
    _opt(
        p,
        "multiple-table-partition-keys",
        action="append",
        default=None,
        help="table=col1,col2: partition keys of one table (repeatable)",
    )


def package_version() -> str:
    """lakecdc's version from the installed package's metadata (pyproject's ``version``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lakecdc")
    except PackageNotFoundError:  # a source tree on PYTHONPATH that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lakecdc",
        description=f"lakecdc {package_version()}: stream CDC changes into Apache Paimon tables with Spark "
        "Structured Streaming, exactly once.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    for action in Action:
        _add_sync_parser(sub, action)
    q = sub.add_parser("query", help="run SQL over the Paimon tables of a warehouse (DataFusion)")
    q.add_argument("sql", help='e.g. "SELECT * FROM orders LIMIT 10" or \'SELECT * FROM "orders$snapshots"\'')
    _opt(q, "warehouse", required=True, help="Paimon warehouse: a relative or absolute path, or a file: URI")
    _opt(q, "database", default="default", help="database of unqualified table names")
    _opt(q, "catalog-conf", action="append", help="Paimon catalog option key=value (repeatable)")
    _opt(q, "max-rows", type=int, default=100, help="rows to print at most (default 100)")
    _opt(q, "output", choices=["table", "csv", "json"], default="table", help="output format")
    maintenance_cli.add_parsers(sub, _opt)
    s = sub.add_parser("status", help="a sync job's last micro-batch, offsets, lag and tables, from its checkpoint")
    _opt(s, "checkpoint", required=True, help="the job's checkpoint directory")
    _opt(s, "warehouse", default=None, help="the warehouse, for the tables' latest snapshots")
    _opt(s, "catalog-conf", action="append", help="Paimon catalog option key=value (repeatable)")
    _opt(s, "kafka-conf", action="append", help="Kafka options (properties.bootstrap.servers=...): show the lag")
    _opt(s, "output", choices=["text", "json"], default="text", help="output format")
    for action_parser in {id(p): p for p in sub.choices.values()}.values():
        action_parser.add_argument(*VERBOSE, dest="verbose", action="store_true", help=VERBOSE_HELP)
    return parser


def _require(
    args: argparse.Namespace, action: str, catalog_conf: dict[str, str], present: Collection[str] = ()
) -> None:
    """Paimon's required arguments, with its message (``Argument 'x' is required. ...``); ``present``:
    the settings a configuration file or the environment gives."""
    paimon = action.replace("-", "_")
    needed = ["database"]
    if hasattr(args, "table") and action not in maintenance_cli.TABLE_OPTIONAL:
        needed.append("table")
    needed += maintenance_cli.REQUIRED.get(action, ())
    for conf in ("mysql_conf", "kafka_conf"):
        if hasattr(args, conf):
            needed.append(conf)
    for name in needed:
        if not getattr(args, name) and name not in present:
            raise ValueError(
                f"--{name.replace('_', '-')} is required (Paimon: Argument '{name}' is required. "
                f"Run '{paimon} --help' for more information.)"
            )
    if not args.warehouse and "warehouse" not in catalog_conf and "warehouse" not in present:
        raise ValueError("--warehouse (or --catalog-conf warehouse=...) is required")


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, Normalised | None]:
    """A command line, read by Paimon's rules (``ingest.cli.paimon_args``) then by argparse."""
    parser = build_parser()
    out = ["--verbose" if arg == "-v" else arg for arg in argv]  # -v: Paimon's rules read --name only
    normalised = None
    if out and not out[0].startswith("-"):
        out[0] = action_name(out[0])
        if out[0] in ALL:
            normalised = normalise(out[0], out[1:])
            out = [out[0], *normalised.argv]
    args = parser.parse_args(out)
    # The options the command line gives (the rest may come from the environment or --config's file)
    args.given = frozenset(a.lstrip("-").split("=")[0].replace("-", "_") for a in out[1:] if a.startswith("--"))
    return args, normalised


def settings_from_args(args: argparse.Namespace) -> Any:
    from ingest.cli import config_file
    from ingest.cli.settings import SyncSettings

    action = Action(args.action)
    catalog_conf = key_values(args.catalog_conf, "catalog-conf")
    file_values = config_file.load(args.config, SyncSettings.model_fields) if getattr(args, "config", None) else {}
    from_env = {name for name in SyncSettings.model_fields if f"LAKECDC_{name.upper()}" in os.environ}
    _require(args, action.value, catalog_conf, {*file_values, *from_env})
    values: dict[str, Any] = {
        "action": action,
        "warehouse": catalog_conf.get("warehouse", args.warehouse),
        "database": args.database,
        "partition_keys": _csv(args.partition_keys),
        "primary_keys": _csv(args.primary_keys),
        "type_mapping": args.type_mapping or "",
        "sync_primary_keys_from_source_schema": args.sync_primary_keys_from_source_schema == "true",
        "computed_columns": tuple(args.computed_column or ()),
        "metadata_columns": tuple(c.strip() for m in args.metadata_column or () for c in m.split(",") if c.strip()),
        "metadata_column_prefix": args.metadata_column_prefix or "",
        "kafka_conf": key_values(getattr(args, "kafka_conf", None), "kafka-conf"),
        "mysql_conf": key_values(getattr(args, "mysql_conf", None), "mysql-conf"),
        "catalog_conf": catalog_conf,
        "table_conf": key_values(args.table_conf, "table-conf"),
        "spark_conf": key_values(args.spark_conf, "spark-conf"),
    }
    if not action.database_sync:
        values["table"] = args.table
    else:
        values.update(
            table_prefix=args.table_prefix,
            merge_shards=getattr(args, "merge_shards", "true") == "true",
            mode=getattr(args, "mode", "divided"),
            table_suffix=args.table_suffix,
            including_tables=args.including_tables,
            excluding_tables=args.excluding_tables,
            ignore_incompatible=args.ignore_incompatible == "true",
            including_dbs=args.including_dbs,
            excluding_dbs=args.excluding_dbs,
            table_mapping=key_values(args.table_mapping, "table-mapping"),
            table_prefix_db=key_values(args.table_prefix_db, "table-prefix-db"),
            table_suffix_db=key_values(args.table_suffix_db, "table-suffix-db"),
            multiple_table_partition_keys={
                k: _csv(v)
                for k, v in key_values(args.multiple_table_partition_keys, "multiple-table-partition-keys").items()
            },
        )
    # Only what the command line gives: the rest may come from LAKECDC_* environment variables.
    for name in ("checkpoint", "trigger_interval", "max_offsets_per_trigger", "parallel_write_min_rows"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    if args.available_now is not None:
        values["available_now"] = args.available_now == "true"
    for name in ("errors_tolerance", "dead_letter_table", "max_dead_letters"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    if args.skip_offsets:
        values["skip_offsets"] = tuple(args.skip_offsets)
    if args.log_payloads is not None:
        values["log_payloads"] = args.log_payloads == "true"
    for name in ("metrics_port", "metrics_host", "progress"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    given = getattr(args, "given", None)
    if given is not None:  # only what the command line gives beats the environment and the file
        kept = {"action", *given, *(f for f, dest in CLI_DESTS.items() if dest in given)}
        if "warehouse" in catalog_conf:
            kept.add("warehouse")
        values = {k: v for k, v in values.items() if k in kept}
    with config_file.values(file_values):
        return SyncSettings(**values)


# Settings whose command-line option is named differently.
CLI_DESTS = {"computed_columns": "computed_column", "metadata_columns": "metadata_column"}


def main(argv: Sequence[str] | None = None) -> int:
    logs.configure()
    try:
        args, normalised = parse_args(sys.argv[1:] if argv is None else argv)
    except PaimonArgsError as exc:
        print(f"lakecdc: error: {exc}", file=sys.stderr)
        return 2
    if args.action is None:
        build_parser().print_help()
        return 2
    if args.verbose:
        logs.configure(verbose=True)
    if normalised is not None:
        log = structlog.get_logger("lakecdc")
        if normalised.no_effect:
            log.warning("accepted for compatibility with Paimon; no effect in lakecdc", options=normalised.no_effect)
        for note in normalised.notes:
            log.warning(note)
    if args.action == "query":
        return _query(args)
    if args.action == "status":
        from ingest.cli.status import run_status

        return run_status(args)
    if args.action in maintenance_cli.ACTIONS:
        try:
            catalog_conf = resolve_conf(key_values(args.catalog_conf, "catalog-conf"), "--catalog-conf")
            _require(args, args.action, catalog_conf)
        except ValueError as exc:
            print(f"lakecdc: error: {exc}", file=sys.stderr)
            return 2
        args.warehouse = catalog_conf.get("warehouse", args.warehouse)
        return maintenance_cli.run(args, catalog_conf)
    try:
        settings = settings_from_args(args)
    except ValidationError as exc:
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            msg = str(err["msg"]).removeprefix("Value error, ")
            print(logs.redact_text(f"lakecdc: error: {where + ': ' if where else ''}{msg}"), file=sys.stderr)
        return 2
    except ValueError as exc:
        print(logs.redact_text(f"lakecdc: error: {exc}"), file=sys.stderr)
        return 2

    if settings.no_effect_options:
        structlog.get_logger("lakecdc").warning(
            "accepted for compatibility with Paimon; no effect in lakecdc", options=settings.no_effect_options
        )
    from ingest.job import JobFailed, root_cause, run
    from ingest.spark_conf import running_spark

    log = structlog.get_logger("lakecdc")
    spark_before = running_spark() is not None
    try:
        result = run(settings)
    except JobFailed as exc:
        return _failed(log, str(exc), exc.terminal, not spark_before)
    except Exception as exc:  # not ours: its text (the trace with -v)
        return _failed(log, f"{type(exc).__name__}: {root_cause(exc)}", True, not spark_before)
    s = result.stats
    log.info(
        "job stopped on a signal" if result.stopped else "job finished",
        change_events=s.events,
        rows=s.rows,
        batches=s.batches,
        seconds=round(result.seconds, 1),
        events_per_second=round(result.events_per_second),
        commits=s.commits,
        replayed_commits_skipped=s.skipped_commits,
        dead_letters=s.dead_letters,
    )
    print(
        f"lakecdc: {s.events} change events ({s.rows} rows with -U/+U pairs) in {s.batches} micro-batches, "
        f"{result.seconds:.1f} s, {result.events_per_second:,.0f} events/s; "
        f"{s.commits} commits, {s.skipped_commits} replayed commits skipped"
        + (f"; {s.dead_letters} dead letters" if s.dead_letters else "")
        + ("; stopped on a signal after its last micro-batch committed" if result.stopped else "")
    )
    return 0


def _failed(log: Any, message: str, terminal: bool, started_spark: bool) -> int:
    """The fatal error: a log event (with the trace under -v), then the CLI's last line; before them
    the SparkContext the job started is stopped, so what its JVM prints as it stops comes first (one
    that ran before the job, a caller's, is left running)."""
    from ingest.spark_conf import running_spark, stop_spark

    if started_spark and (context := running_spark()) is not None:
        stop_spark(context)
    log.error("job failed", error=message, terminal=terminal, exc_info=logs.is_verbose())
    print(logs.redact_text(f"lakecdc: job failed: {message}"), file=sys.stderr)
    return 1


def _query(args: argparse.Namespace) -> int:
    from sinks.table.query import run_query

    try:
        catalog_conf = resolve_conf(key_values(args.catalog_conf, "catalog-conf"), "--catalog-conf")
        table = run_query(args.warehouse, args.sql, args.database, catalog_conf)
    except ValueError as exc:
        print(logs.redact_text(f"lakecdc: error: {exc}"), file=sys.stderr)
        return 2
    except Exception as exc:  # DataFusion/Paimon errors: show their text, not a traceback
        print(logs.redact_text(f"lakecdc: query failed: {exc}"), file=sys.stderr)
        return 1
    shown = table.slice(0, args.max_rows)
    if args.output == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(shown, sys.stdout.buffer)
    elif args.output == "json":
        import orjson

        for row in shown.to_pylist():
            sys.stdout.write(orjson.dumps(row, default=str).decode() + "\n")
    else:
        print(shown.to_pandas().to_string(index=False) if shown.num_rows else "(no rows)")
    if table.num_rows > shown.num_rows:
        print(f"({table.num_rows - shown.num_rows} more rows; --max-rows to show them)", file=sys.stderr)
    return 0
