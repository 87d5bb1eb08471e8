"""mysql-sync-* arguments are checked before Spark starts."""

from __future__ import annotations

import pytest

from ingest.cli.main import main
from ingest.mysql.job_source import MySqlSource
from ingest.mysql.spec import MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter

BASE = ["mysql_sync_table", "--warehouse", "/tmp/wh", "--database", "ods", "--table", "t"]
CONF = ["--mysql_conf", "hostname=127.0.0.1", "--mysql_conf", "username=u", "--mysql_conf", "database-name=db"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--mysql-conf table-name=... is required for mysql-sync-table"),
        (["--mysql_conf", "table-name=(bad"], "table-name='(bad' is not a valid regular expression"),
        (
            ["--mysql_conf", "table-name=t", "--mysql_conf", "scan.startup.mode=timestamp"],
            "needs scan.startup.timestamp",
        ),
        (
            ["--mysql_conf", "table-name=t", "--mysql_conf", "scan.startup.mode=abc"],
            # Paimon's message, after lakecdc's
            "scan.startup.mode='abc' is not a startup mode: use initial, earliest-offset, latest-offset, "
            "specific-offset, timestamp, snapshot (Unknown scan.startup.mode='abc'. Valid scan.startup.mode for "
            "MySQL CDC are [initial, earliest-offset, latest-offset, specific-offset, timestamp, snapshot])",
        ),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "scan.snapshot.fetch.size=0"], "is not a positive"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "use.legacy.json.format=true"], "must be false"),
        (
            ["--mysql_conf", "table-name=t", "--mysql_conf", "scan.parse.online.schema.changes.enabled=true"],
            "must be false",
        ),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "debezium.skipped.operations=d"], "is refused"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "debezium.tombstones.on.delete=false"], "is refused"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "debezium.decimal.handling.mode=string"], "must be precise"),
        (
            ["--mysql_conf", "table-name=t", "--mysql_conf", "jdbc.properties.trustCertificateKeyStoreUrl=file:/k"],
            "Java keystores",
        ),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "scan.startup.specific-offset.skip-events=1"], "refused"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "port=x"], "port='x' is not a whole number"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "server-id=1-a"], "server-id='1-a'"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "server-time-zone=Nowhere/City"], "Nowhere/City"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "colour=blue"], "--mysql-conf colour is not supported"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "scan.startup.mode=specific-offset"], "needs scan.startup"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "heartbeat.interval=soon"], "is not a duration"),
        (["--mysql_conf", "table-name=t", "--mysql_conf", "connect.timeout=long"], "is not a duration"),
        (
            [
                "--mysql_conf",
                "table-name=t",
                "--mysql_conf",
                "jdbc.properties.tinyInt1isBit=true",
                "--type_mapping",
                "tinyint1-not-bool",
            ],
            "Type mapping option 'tinyint1-not-bool' conflicts with jdbc properties "
            "'jdbc.properties.tinyInt1isBit=true'. Option 'tinyint1-not-bool' is equal to "
            "'jdbc.properties.tinyInt1isBit=false'.",
        ),
    ],
)
def test_refused_before_start(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, *CONF, *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("value", ["false", None])
def test_tinyint1_not_bool_agrees_with_tinyint1isbit_false(value: str | None) -> None:
    from ingest.cli.settings import SyncSettings

    conf = {"hostname": "h", "username": "u", "database-name": "db"}
    if value is not None:
        conf["jdbc.properties.tinyInt1isBit"] = value
    settings = SyncSettings(
        action="mysql-sync-database", warehouse="/tmp/wh", database="ods", mysql_conf=conf,
        type_mapping="tinyint1-not-bool",
    )  # fmt: skip
    assert settings.type_mapping == "tinyint1-not-bool"


def test_heartbeat_interval_is_accepted() -> None:
    from ingest.cli.settings import SyncSettings

    conf = {"hostname": "h", "username": "u", "database-name": "d", "table-name": "t", "heartbeat.interval": "30s"}
    settings = SyncSettings(action="mysql-sync-table", warehouse="/w", database="ods", table="t", mysql_conf=conf)
    assert settings.mysql_conf["heartbeat.interval"] == "30s"


def _spec(**conf: str) -> MySqlSourceSpec:
    from ingest.cli.settings import SyncSettings

    base = {"hostname": "h", "username": "u", "database-name": "d", "table-name": "t"}
    settings = SyncSettings(
        action="mysql-sync-table", warehouse="/w", database="ods", table="t", mysql_conf={**base, **conf}
    )
    return MySqlSource(settings, "/ck").spec(ParseSpec("mysql", TableRouter("ods", "t")))


def test_source_options_reach_the_spec() -> None:
    default = _spec()
    assert default.newly_added_tables and not default.skip_backfill and default.fetch_size is None
    assert default.connection.max_retries is None and default.startup_mode == "initial"
    assert not _spec(**{"scan.newly-added-table.enabled": "FALSE"}).newly_added_tables
    assert _spec(**{"scan.incremental.snapshot.backfill.skip": "true"}).skip_backfill
    assert _spec(**{"scan.snapshot.fetch.size": "10"}).fetch_size == 10
    assert _spec(**{"connect.max-retries": "2"}).connection.max_retries == 2
    assert default.connection.outage_timeout == 300
    assert _spec(**{"lakecdc.server-unavailable-timeout": "10 min"}).connection.outage_timeout == 600
    assert _spec(**{"scan.startup.mode": "Snapshot"}).startup_mode == "snapshot"
    assert _spec(**{"debezium.database.ssl.mode": "verify_identity", "ssl.ca": __file__}).connection.ssl.mode == (
        "verify-identity"
    )


def test_no_effect_keys_are_listed() -> None:
    from ingest.cli.settings import SyncSettings

    conf = {
        "hostname": "h", "username": "u", "database-name": "d", "table-name": "t",
        "jdbc.properties.characterEncoding": "utf8", "debezium.max.batch.size": "10", "connection.pool.size": "5",
        "scan.incremental.snapshot.chunk.key-column": "id", "jdbc.properties.useSSL": "false",
    }  # fmt: skip
    settings = SyncSettings(action="mysql-sync-table", warehouse="/w", database="ods", table="t", mysql_conf=conf)
    assert sorted(settings.no_effect_options) == [
        f"--mysql-conf {k}" for k in ("connection.pool.size", "debezium.max.batch.size",
                                      "jdbc.properties.characterEncoding", "scan.incremental.snapshot.chunk.key-column")
    ]  # fmt: skip
