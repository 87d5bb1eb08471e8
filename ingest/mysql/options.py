"""``--mysql-conf``: every Flink CDC MySQL source option a Paimon script may pass, with what lakecdc
does with it (``ingest.conf_options``), and the start-up checks of a MySQL job's source options."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ingest.conf_options import ConfOption, OptionTable, Treatment, whole_number
from ingest.durations import interval_ms
from ingest.mysql.ssl import SSL_KEYS, SslSettings
from ingest.mysql.startup import STARTUP_MODES, StartupMode
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


def _regex(value: str) -> str | None:
    try:
        re.compile(value)
    except re.error as exc:
        return f"is not a valid regular expression: {exc}"
    return None


MYSQL_OPTIONS = OptionTable(
    "--mysql-conf",
    (
        ConfOption("hostname", H, "server host", "127.0.0.1"),
        ConfOption("port", H, "server port (default 3306)", "3307", whole_number),
        ConfOption("username", H, "user with SELECT, REPLICATION SLAVE and REPLICATION CLIENT", "cdc"),
        ConfOption(
            "password", H, "password (or password-file, or the LAKECDC_MYSQL_PASSWORD environment variable)", "pw"
        ),
        ConfOption("password-file", H, "file holding the password (lakecdc's extra)", "/run/secrets/mysql"),
        ConfOption("database-name", H, "database name, a regular expression", "shop", _regex),
        ConfOption("table-name", H, "table name regular expression (mysql-sync-table only)", "orders", _regex),
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
            "initial (default), earliest-offset, latest-offset, specific-offset or timestamp",
            "latest-offset",
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
        ConfOption(
            "scan.incremental.snapshot.chunk.size",
            H,
            "rows per snapshot chunk (default 32768; Flink CDC: 8096)",
            "8096",
            whole_number,
        ),
        ConfOption(
            "scan.startup.timestamp-millis",
            H,
            "start time (epoch milliseconds) for scan.startup.mode=timestamp",
            "1700000000000",
            whole_number,
        ),
        ConfOption("connect.timeout", H, "connection timeout, e.g. 30s", "30s", _duration),
        ConfOption(
            "debezium.include.schema.comments",
            N,
            "lakecdc always copies column and table comments",
            "true",
        ),
        ConfOption(
            "heartbeat.interval",
            N,
            "every micro-batch moves the binlog offset to the server's current position, which is what Flink "
            "CDC's heartbeats do for idle tables",
            "30s",
            _duration,
        ),
        *(ConfOption(key, H, what, "") for key, what in SSL_KEYS.items() if key != "ssl.mode"),
        ConfOption("ssl.mode", H, SSL_KEYS["ssl.mode"], "required"),
        ConfOption(
            "jdbc.properties.*",
            H,
            "Connector/J's TLS properties (sslMode, useSSL, requireSSL, verifyServerCertificate) and tinyInt1isBit "
            "are applied; the others have no effect (logged)",
            "useSSL=false",
        ),
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
    mode = conf.get("scan.startup.mode", StartupMode.INITIAL)
    if mode not in STARTUP_MODES:
        raise ValueError(
            f"scan.startup.mode '{mode}' is not supported; use {', '.join(STARTUP_MODES[:-1])} or {STARTUP_MODES[-1]}"
        )
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
