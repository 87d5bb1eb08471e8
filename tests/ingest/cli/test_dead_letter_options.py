"""--errors-tolerance, --dead-letter-table, --max-dead-letters and --skip-offsets: what reaches the job,
and what is refused at start-up with a message saying what to change."""

from __future__ import annotations

from typing import Any

import pytest

from ingest.cli.main import main, parse_args, settings_from_args
from ingest.job import parse_spec

KAFKA = ["--kafka_conf", "properties.bootstrap.servers=127.0.0.1:9092", "--kafka_conf", "topic=orders",
         "--kafka_conf", "value.format=canal-json"]  # fmt: skip
MYSQL = ["--mysql_conf", "hostname=h", "--mysql_conf", "username=u", "--mysql_conf", "database-name=d",
         "--mysql_conf", "table-name=t", "--table", "t"]  # fmt: skip


def _settings(action: str, *extra: str) -> Any:
    base = KAFKA if action.startswith("kafka") else MYSQL
    args, _ = parse_args([action, "--warehouse", "/tmp/wh", "--database", "ods", *base, *extra])
    return settings_from_args(args)


def test_the_options_reach_the_read_tasks() -> None:
    s = _settings("kafka-sync-database", "--errors-tolerance", "ALL", "--dead_letter_table", "ods.dlq",
                  "--max-dead-letters", "5", "--skip-offsets", "orders:0:7,orders:1:9",
                  "--skip_offsets", "x.y:2:3")  # fmt: skip
    assert (s.errors_tolerance, s.dead_letter_identifier, s.max_dead_letters) == ("all", "ods.dlq", 5)
    spec = parse_spec(s, "canal-json")
    assert spec.dead_letter_table == "ods.dlq"
    assert spec.skip_offsets == (("orders", 0, 7), ("orders", 1, 9), ("x.y", 2, 3))
    default = parse_spec(_settings("kafka-sync-database"), "canal-json")
    assert default.dead_letter_table is None and default.skip_offsets == ()


def test_mysql_skips_name_binlog_positions() -> None:
    s = _settings("mysql-sync-table", "--skip-offsets", "mysql-bin.000003:4711")
    assert parse_spec(s, "mysql-binlog").skip_offsets == (("mysql-bin.000003", -1, 4711),)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--errors-tolerance", "all"], "--errors-tolerance all needs --dead-letter-table"),
        (["--dead-letter-table", "ods.dlq"], "--dead-letter-table is used with --errors-tolerance all only"),
        (["--max-dead-letters", "3"], "--max-dead-letters is used with --errors-tolerance all only"),
        (["--errors-tolerance", "all", "--dead-letter-table", "dlq"], "give database.table"),
        (["--errors-tolerance", "all", "--dead-letter-table", "ods.orders"], "the table the job syncs into"),
        (["--skip-offsets", "orders:0"], "is not topic:partition:offset"),
    ],
)
def test_refused_at_start_up(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kafka-sync-table", "--warehouse", "/tmp/wh", "--database", "ods", "--table", "orders", *KAFKA, *extra]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_errors_tolerance_takes_none_or_all(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["kafka-sync-table", "--warehouse", "/tmp/wh", "--database", "ods", "--table", "t", *KAFKA,
                    "--errors-tolerance", "some"])  # fmt: skip
    assert "invalid choice: 'some'" in capsys.readouterr().err
