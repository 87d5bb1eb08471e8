"""mysql-sync-* arguments are checked before Spark starts."""

from __future__ import annotations

import pytest

from ingest.cli.main import main

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
        (["--mysql_conf", "table-name=t", "--mysql_conf", "scan.startup.mode=never"], "'never' is not supported"),
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
