"""The sync actions are one enum whose values are the command line's names; the job picks its
source once from the action."""

from __future__ import annotations

import pytest

from ingest.cli.main import SYNC_ACTIONS, build_parser
from ingest.cli.settings import SyncSettings
from ingest.job import source_for
from ingest.kafka.job_source import KafkaSource
from ingest.mysql.job_source import MySqlSource
from ingest.source import Action, SourceKind

KAFKA_CONF = {"properties.bootstrap.servers": "127.0.0.1:9092", "topic": "t", "value.format": "canal-json"}
MYSQL_CONF = {"hostname": "h", "username": "u", "database-name": "d", "table-name": "t"}


def test_action_values_are_the_command_line_names() -> None:
    assert SYNC_ACTIONS == ("kafka-sync-table", "kafka-sync-database", "mysql-sync-table", "mysql-sync-database")
    choices = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert choices is not None
    assert set(SYNC_ACTIONS) <= set(choices)
    assert [a.source for a in Action] == [SourceKind.KAFKA, SourceKind.KAFKA, SourceKind.MYSQL, SourceKind.MYSQL]
    assert [a.database_sync for a in Action] == [False, True, False, True]


@pytest.mark.parametrize("action", list(Action))
def test_the_job_picks_its_source_from_the_action(action: Action) -> None:
    kafka = action.source is SourceKind.KAFKA
    settings = SyncSettings(
        action=action.value,
        warehouse="/tmp/wh",
        database="ods",
        table=None if action.database_sync else "t",
        kafka_conf=KAFKA_CONF if kafka else {},
        mysql_conf={} if kafka else (MYSQL_CONF if not action.database_sync else {**MYSQL_CONF, "table-name": ""}),
    )
    assert settings.action is action
    source = source_for(settings, "/tmp/ck")
    assert isinstance(source, KafkaSource if kafka else MySqlSource)
    assert source.data_source.name() == ("lakecdc-kafka" if kafka else "lakecdc-mysql")
    assert source.worker_modules == (("ingest.kafka.source",) if kafka else ("ingest.mysql.source",))
    assert source.require_primary_keys is not kafka
    assert (source.marks_hook is None) is kafka
