"""Whether a checkpoint's binlog position can be read on from (#23 item 4): another server, a
purged file and a binlog that went backwards each stop the job with lakecdc's error."""

from __future__ import annotations

from ingest.mysql.binlog_position import position_problem, recreated_problem
from ingest.mysql.client import lost_position

FILES = ["mysql-bin.000003", "mysql-bin.000004", "mysql-bin.000005"]
LATEST = ("mysql-bin.000005", 900)


def test_a_readable_position_has_no_problem() -> None:
    assert position_problem(("mysql-bin.000004", 120), LATEST, FILES, "server_id 1", "server_id 1") is None
    assert position_problem(LATEST, LATEST, FILES, None, "server_id 1") is None  # first check: nothing kept


def test_another_server() -> None:
    problem = position_problem(("mysql-bin.000004", 120), LATEST, FILES, "server_uuid a", "server_uuid b")
    assert problem is not None and "server_uuid a" in problem and "server_uuid b" in problem
    assert "mysql-bin.000004:120" in problem


def test_a_purged_file_names_the_earliest_left() -> None:
    problem = position_problem(("mysql-bin.000002", 777), LATEST, FILES, None, "server_id 1")
    assert problem is not None and "purged" in problem
    assert "mysql-bin.000002:777" in problem and "mysql-bin.000003" in problem


def test_a_file_beyond_the_newest_is_a_reset() -> None:
    problem = position_problem(("mysql-bin.000009", 4), LATEST, FILES, None, "server_id 1")
    assert problem is not None and "RESET MASTER" in problem and "mysql-bin.000005" in problem


def test_a_binlog_that_ends_before_the_position_went_backwards() -> None:
    problem = position_problem(("mysql-bin.000001", 5000), ("mysql-bin.000001", 400), ["mysql-bin.000001"], None, "x")
    assert problem is not None and "RESET MASTER" in problem and "mysql-bin.000001:400" in problem


def test_the_stop_says_what_to_do() -> None:
    message = str(lost_position("the binlog file was purged"))
    assert "the binlog file was purged" in message and "new checkpoint" in message


def test_a_file_created_anew_names_both_times_and_the_position() -> None:
    problem = recreated_problem(("binlog.000001", 900), 1_795_743_165, 1_795_743_167)
    assert problem is not None
    assert "binlog.000001:900" in problem and "RESET MASTER" in problem and "1795743167" in problem
    # the same file, or a time not known on one side: nothing to say
    assert recreated_problem(("binlog.000001", 900), 1_795_743_165, 1_795_743_165) is None
    assert recreated_problem(("binlog.000001", 900), None, 1_795_743_167) is None
    assert recreated_problem(("binlog.000001", 900), 1_795_743_165, None) is None
