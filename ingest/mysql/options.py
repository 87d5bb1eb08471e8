"""``--mysql-conf``: every Flink CDC MySQL source option a Paimon script may pass, with what lakecdc
does with it (``ingest.conf_options``), and the start-up checks of a MySQL job's source options."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ingest.conf_options import ConfOption, OptionTable, Treatment, boolean, regex, whole_number
from ingest.durations import interval_ms
from ingest.mysql.backoff import OUTAGE_OPTION, OUTAGE_TIMEOUT_S
from ingest.mysql.ssl import SSL_KEYS, SslSettings
from ingest.mysql.startup import RESNAPSHOT_OPTION, STARTUP_MODES, StartupMode
from ingest.source import Action
from schema_evolution.type_mapping import TypeMappingMode, parse_type_mapping

H, N, R = Treatment.HONOURED, Treatment.NO_EFFECT, Treatment.REFUSED


def _duration(value: str) -> str | None:
    try:
        interval_ms(value)
    except ValueError:
        return "is not a duration (e.g. 30s)"
    return None


def _server_id(value: str) -> str | None:
    return None if re.fullmatch(r"\s*\d+\s*(-\s*\d+\s*)?", value) else "is not a number or a range a-b"


def _positive(value: str) -> str | None:
    return None if value.strip().isdigit() and int(value) > 0 else "is not a positive whole number"


def _number(value: str) -> str | None:
    try:
        float(value)
    except ValueError:
        return "is not a number"
    return None


def _false_only(value: str) -> str | None:
    return None if value.strip().lower() == "false" else "must be false (see README, Paimon options)"


def skip_ddl_positions(value: str) -> tuple[tuple[str, int], ...]:
    """``scan.schema-history.skip-ddl``: binlog positions ``file:pos``, comma-separated."""
    positions = []
    for item in value.split(","):
        if item.strip():
            file, sep, pos = item.strip().rpartition(":")
            if not sep or not file or not pos.isdigit():
                raise ValueError(f"'{item.strip()}' is not a binlog position file:pos")
            positions.append((file, int(pos)))
    return tuple(positions)


def _positions(value: str) -> str | None:
    try:
        skip_ddl_positions(value)
    except ValueError as exc:
        return str(exc)
    return None


def _startup_mode(value: str) -> str | None:
    if value.strip().lower() in STARTUP_MODES:
        return None
    # Paimon's message (MySqlActionUtils.buildMySqlSource), after lakecdc's.
    return (
        f"is not a startup mode: use {', '.join(STARTUP_MODES)} (Unknown scan.startup.mode='{value}'. Valid "
        f"scan.startup.mode for MySQL CDC are [{', '.join(STARTUP_MODES)}])"
    )


def _default_only(default: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        if value.strip().lower() == default:
            return None
        return f"must be {default}: lakecdc converts values as Flink CDC does by default; other modes would change them"

    return check


_DATA_CHANGING = "it changes which rows or values are captured, and lakecdc does not run Debezium"
# debezium.* (Paimon hands them to Flink CDC's Debezium engine, prefix stripped). lakecdc reads the
# binlog itself: keys that only tune the engine have no effect; keys that change the data are refused.
DEBEZIUM_OPTIONS = (
    ConfOption("debezium.include.schema.comments", N, "lakecdc always copies column and table comments", "true"),
    *(
        ConfOption(f"debezium.{key}", N, f"Debezium engine {what}; lakecdc reads the binlog itself", example)
        for key, what, example in (
            ("snapshot.mode", "snapshot mode, unused by Flink CDC's incremental snapshot", "initial"),
            ("snapshot.locking.mode", "locking, unused by Flink CDC's incremental snapshot", "none"),
            ("max.batch.size", "tuning", "2048"),
            ("max.queue.size", "tuning", "8192"),
            ("poll.interval.ms", "tuning", "500"),
            ("connect.keep.alive", "tuning", "true"),
            ("connect.keep.alive.interval.ms", "tuning", "60000"),
        )
    ),
    *(
        ConfOption(
            f"debezium.{key}",
            N,
            f"{default} only (Flink CDC's value, which lakecdc's match)",
            default,
            _default_only(default),
            other,
        )
        for key, default, other in (
            ("decimal.handling.mode", "precise", "string"),
            ("bigint.unsigned.handling.mode", "precise", "long"),
            ("binary.handling.mode", "bytes", "base64"),
            ("time.precision.mode", "adaptive_time_microseconds", "connect"),
        )
    ),
    ConfOption(
        "debezium.event.deserialization.failure.handling.mode",
        N,
        "fail only: lakecdc always stops on an event it cannot read (skip or warn would lose changes)",
        "fail",
        _default_only("fail"),
        "skip",
    ),
    ConfOption("debezium.database.ssl.mode", H, "TLS mode, Debezium's name for ssl.mode (verify_ca, ...)", "required"),
    *(
        ConfOption(f"debezium.{key}", R, f"{what}: {_DATA_CHANGING}", example)
        for key, what, example in (
            ("skipped.operations", "skips inserts, updates or deletes", "d"),
            ("column.include.list", "drops columns", "db.t.a"),
            ("column.exclude.list", "drops columns", "db.t.a"),
            ("column.mask.*", "masks column values", "with.4.chars=db.t.a"),
            ("column.truncate.*", "truncates column values", "to.10.chars=db.t.a"),
            (
                "database.ssl.*",
                "Java keystores cannot be read (give PEM files as ssl.ca, ssl.cert, ssl.key)",
                "truststore=/etc/ts.jks",
            ),
        )
    ),
    ConfOption(
        "debezium.*",
        R,
        f"other Debezium properties are refused: many change what is captured or how values are converted ("
        f"{_DATA_CHANGING}); an unknown one is not silently ignored",
        "tombstones.on.delete=false",
    ),
)
# jdbc.properties.* (Connector/J properties of Paimon's JDBC connections).
JDBC_OPTIONS = (
    ConfOption("jdbc.properties.sslMode", H, "TLS mode, as ssl.mode", "REQUIRED"),
    ConfOption("jdbc.properties.useSSL", H, "false disables TLS; true prefers it", "false", boolean),
    ConfOption("jdbc.properties.requireSSL", H, "true requires TLS", "true", boolean),
    ConfOption(
        "jdbc.properties.verifyServerCertificate",
        H,
        "true verifies the server certificate (needs ssl.ca)",
        "true",
        boolean,
    ),
    *(
        ConfOption(
            f"jdbc.properties.{key}*",
            R,
            "Java keystores cannot be read by lakecdc; give the certificates "
            "as PEM files with ssl.ca (and ssl.cert, ssl.key)",
            "Url=file:/etc/keystore.jks",
        )
        for key in ("trustCertificateKeyStore", "clientCertificateKeyStore")
    ),
    ConfOption(
        "jdbc.properties.tinyInt1isBit",
        N,
        "TINYINT(1) is BOOLEAN unless --type-mapping tinyint1-not-bool (Paimon's equivalent of false); true "
        "together with tinyint1-not-bool is refused, as in Paimon",
        "true",
        boolean,
    ),
    ConfOption(
        "jdbc.properties.useInformationSchema", N, "lakecdc always reads comments from information_schema", "true"
    ),
    ConfOption(
        "jdbc.properties.*",
        N,
        "other Connector/J properties tune Java's driver; lakecdc's connections are pymysql's",
        "characterEncoding=utf8",
    ),
)


MYSQL_OPTIONS = OptionTable(
    "--mysql-conf",
    (
        ConfOption("hostname", H, "server host", "127.0.0.1"),
        ConfOption("port", H, "server port (default 3306)", "3307", whole_number),
        ConfOption("username", H, "user with SELECT, REPLICATION SLAVE and REPLICATION CLIENT", "cdc"),
        ConfOption(
            "password",
            H,
            "password; keep it off the command line with password=${env:NAME} or password=${file:/path} (any "
            "value may be written so), password-file, or the LAKECDC_MYSQL_PASSWORD environment variable",
            "pw",
        ),
        ConfOption("password-file", H, "file holding the password (lakecdc's extra)", "/run/secrets/mysql"),
        ConfOption("database-name", H, "database name, a regular expression", "shop", regex),
        ConfOption("table-name", H, "table name regular expression (mysql-sync-table only)", "orders", regex),
        ConfOption(
            "server-id",
            H,
            "replica server id, or a range a-b (one id per parallel snapshot reader)",
            "5400-5408",
            _server_id,
        ),
        ConfOption(
            "server-time-zone",
            H,
            "the server's time zone, for TIMESTAMP columns (default UTC; Paimon's default is the JVM's zone)",
            "America/New_York",
        ),
        ConfOption(
            "scan.startup.mode",
            H,
            "initial (default), earliest-offset, latest-offset, specific-offset, timestamp or snapshot (the "
            "snapshot only; the binlog is never read, and the job ends with --available-now)",
            "latest-offset",
            _startup_mode,
            "abc",
        ),
        ConfOption("scan.startup.specific-offset.file", H, "binlog file for specific-offset", "mysql-bin.000003"),
        ConfOption("scan.startup.specific-offset.pos", H, "binlog position for specific-offset", "4", whole_number),
        ConfOption(
            "scan.startup.specific-offset.gtid-set",
            H,
            "GTID set for specific-offset: start after these transactions (MySQL uuid:1-5 or MariaDB "
            "domain-server-seq)",
            "0-1-100",
        ),
        *(
            ConfOption(
                f"scan.startup.specific-offset.skip-{what}",
                R,
                f"skipping {what} after a binlog position is not supported: it would drop changes silently; "
                f"give the position after them instead",
                "1",
            )
            for what in ("events", "rows")
        ),
        ConfOption(
            "scan.startup.timestamp-millis",
            H,
            "start time (epoch milliseconds) for scan.startup.mode=timestamp",
            "1700000000000",
            whole_number,
        ),
        ConfOption(
            "scan.incremental.snapshot.chunk.size",
            H,
            "rows per snapshot chunk (default 32768; Flink CDC: 8096)",
            "8096",
            whole_number,
        ),
        ConfOption(
            "scan.snapshot.fetch.size",
            H,
            "rows per fetch while a snapshot chunk is read, streamed (without it, lakecdc reads a chunk in one "
            "buffered fetch, which is faster; Flink CDC's default is 1024)",
            "4096",
            _positive,
        ),
        ConfOption(
            "scan.incremental.snapshot.backfill.skip",
            H,
            "true: a snapshot chunk is not corrected by the binlog read while it was selected; the binlog "
            "phase applies every change after the chunk's start again (at least once: the table converges by "
            "primary key, but the changelog may repeat rows). Default false (exactly once)",
            "true",
            boolean,
        ),
        ConfOption(
            "scan.newly-added-table.enabled",
            H,
            "true (Paimon's default): on a restart from the checkpoint, tables that match now but were never "
            "captured (a changed table-name or --including-tables) get a snapshot, then their binlog changes; "
            "false: they are read from the binlog only, from the restart on (Flink CDC without the option). "
            "Either way tables created while the job runs are read from their first binlog row; scan.startup.mode "
            "initial only (other modes read every matching table from the binlog)",
            "false",
            boolean,
        ),
        ConfOption(
            "scan.incremental.snapshot.chunk.key-column",
            N,
            "Paimon's action does not forward it (its chunks are on the first primary-key column; lakecdc's too, "
            "or on the whole key of a composite one); the chunk column does not change the result",
            "id",
        ),
        ConfOption(
            "scan.incremental.snapshot.enabled",
            N,
            "Paimon always uses the incremental snapshot, as lakecdc does",
            "true",
            boolean,
        ),
        ConfOption(
            "scan.incremental.snapshot.unbounded-chunk-first.enabled",
            N,
            "chunk order only; lakecdc reads a table's chunks in key order",
            "true",
            boolean,
        ),
        ConfOption(
            "scan.incremental.close-idle-reader.enabled",
            N,
            "Flink reader lifecycle; lakecdc's read tasks end with their chunk",
            "true",
            boolean,
        ),
        ConfOption(
            "scan.read-changelog-as-append-only.enabled",
            N,
            "Paimon's action ignores it too",
            "true",
            boolean,
        ),
        ConfOption(
            "scan.parse.online.schema.changes.enabled",
            N,
            "false (the default) only: lakecdc does not follow gh-ost / pt-osc shadow tables, so true, which "
            "would promise their schema changes, is refused",
            "false",
            _false_only,
            "true",
        ),
        ConfOption(
            "use.legacy.json.format",
            N,
            "false only: lakecdc writes JSON columns as MySQL prints them (spaces after ':' and ','), the same text "
            "from the snapshot and the binlog; true, Flink CDC's compact binlog form, is refused (it would change "
            "the stored strings)",
            "false",
            _false_only,
            "true",
        ),
        ConfOption(
            "connect.timeout",
            H,
            "connection timeout, and how long a lost server is retried (default 30s)",
            "10s",
            _duration,
        ),
        ConfOption(
            OUTAGE_OPTION,
            H,
            "lakecdc's own: how long a server the job reached before and that went away (a restart, a failover) "
            f"is waited for before the job stops naming it (default {OUTAGE_TIMEOUT_S:g}s, or connect.timeout if "
            "longer); snapshot chunks are read again and the binlog reopened at the last transaction boundary",
            "10 min",
            _duration,
        ),
        ConfOption(
            "connect.max-retries",
            H,
            "at most this many retries of a connection to a server that is not reachable (still within "
            "connect.timeout); without it, retries last up to connect.timeout",
            "3",
            whole_number,
        ),
        *(
            ConfOption(key, N, f"{what}; lakecdc plans chunks and connections its own way", example, check)
            for key, what, example, check in (
                ("connection.pool.size", "Flink CDC's JDBC pool size", "20", whole_number),
                ("chunk-meta.group.size", "Flink state layout", "1000", whole_number),
                ("chunk-key.even-distribution.factor.upper-bound", "chunk-splitting heuristic", "1000.0", _number),
                ("chunk-key.even-distribution.factor.lower-bound", "chunk-splitting heuristic", "0.05", _number),
                ("split-key.even-distribution.factor.upper-bound", "chunk-splitting heuristic", "1000.0", _number),
                ("split-key.even-distribution.factor.lower-bound", "chunk-splitting heuristic", "0.05", _number),
            )
        ),
        ConfOption(
            "scan.schema-history.skip-ddl",
            H,
            "lakecdc's own: binlog positions file:pos (comma-separated) of DDL the schema history passes over "
            "(without binlog_row_metadata=FULL); for a statement of a captured table it cannot parse that "
            "changed no column (partitioning, indexes, table options): the stop names the position",
            "mysql-bin.000003:1234",
            _positions,
        ),
        ConfOption(
            RESNAPSHOT_OPTION,
            H,
            "lakecdc's own, Debezium's snapshot.mode=when_needed: true: when the checkpoint's binlog position is "
            "gone (purged, RESET MASTER, a failover without a GTID way back) the job logs a warning and takes a "
            "new snapshot of the captured tables from the server's current position, deleting in Paimon the keys "
            "the source no longer has, then reads the binlog on. Default false: the job stops with an error "
            "naming the position",
            "true",
            boolean,
        ),
        ConfOption(
            "heartbeat.interval",
            N,
            "every micro-batch moves the binlog offset to the server's current position, which is what Flink "
            "CDC's heartbeats do for idle tables",
            "30s",
            _duration,
        ),
        *(
            ConfOption(key, H, what, f"/etc/mysql/{key[4:]}.pem")  # the file must exist
            for key, what in SSL_KEYS.items()
            if key != "ssl.mode"
        ),
        ConfOption("ssl.mode", H, SSL_KEYS["ssl.mode"], "required"),
        *DEBEZIUM_OPTIONS,
        *JDBC_OPTIONS,
    ),
)


def check_mysql_conf(
    conf: Mapping[str, str], action: Action, type_mapping: str, metadata_columns: Sequence[str]
) -> list[str]:
    """Start-up checks of a MySQL job's ``--mysql-conf``; raises ``ValueError`` naming the option.
    Returns the keys that have no effect (the job logs them once)."""
    kafka_only = [c for c in metadata_columns if c not in ("database_name", "table_name", "op_ts")]
    if kafka_only:
        raise ValueError(
            f"--metadata-column {kafka_only} are Kafka's; the MySQL source has database_name, table_name, op_ts"
        )
    no_effect = MYSQL_OPTIONS.review(conf)
    if "scan.startup.specific-offset.gtid-set" in conf:
        from ingest.mysql.gtid import GtidSet

        GtidSet.parse(conf["scan.startup.specific-offset.gtid-set"])
    if (
        TypeMappingMode.TINYINT1_NOT_BOOL in parse_type_mapping(type_mapping)
        and conf.get("jdbc.properties.tinyInt1isBit", "").strip().lower() == "true"
    ):
        # Paimon's message (MySqlActionUtils): the mode is Connector/J's tinyInt1isBit=false.
        raise ValueError(
            "Type mapping option 'tinyint1-not-bool' conflicts with jdbc properties "
            "'jdbc.properties.tinyInt1isBit=true'. Option 'tinyint1-not-bool' is equal to "
            "'jdbc.properties.tinyInt1isBit=false'."
        )
    for key in ("hostname", "username", "database-name"):
        if not conf.get(key):
            raise ValueError(f"--mysql-conf {key}=... is required (Paimon: mysql_conf [{key}] must be specified.)")
    if action is Action.MYSQL_SYNC_TABLE and not conf.get("table-name"):
        raise ValueError(
            "--mysql-conf table-name=... is required for mysql-sync-table "
            "(Paimon: mysql_conf [table-name] must be specified.)"
        )
    if action is Action.MYSQL_SYNC_DATABASE and conf.get("table-name"):
        raise ValueError(
            "table-name cannot be set for mysql_sync_database. If you want to sync several MySQL tables "
            "into one Paimon table, use mysql_sync_table instead."
        )
    _check_startup(conf)
    from formats.mysql_values import server_zone

    server_zone(conf.get("server-time-zone"))
    SslSettings.from_conf(conf)
    return no_effect


def _check_startup(conf: Mapping[str, str]) -> None:
    mode = conf.get("scan.startup.mode", StartupMode.INITIAL).strip().lower()
    if mode == StartupMode.TIMESTAMP and not conf.get("scan.startup.timestamp-millis", "").strip().isdigit():
        raise ValueError("scan.startup.mode=timestamp needs scan.startup.timestamp-millis (epoch milliseconds)")
    if mode == StartupMode.SPECIFIC_OFFSET and not (
        (conf.get("scan.startup.specific-offset.file") and conf.get("scan.startup.specific-offset.pos"))
        or conf.get("scan.startup.specific-offset.gtid-set")
    ):
        raise ValueError(
            "scan.startup.mode=specific-offset needs scan.startup.specific-offset.gtid-set, or "
            "scan.startup.specific-offset.file and .pos"
        )
