"""The driver reads an error's ``terminal`` flag: the job stops with the cause's message either way,
and a transient cause says that starting again may help."""

from __future__ import annotations

from ingest.job import job_failure
from schema_evolution.errors import MalformedMessage, SourcePosition, TransientError


def test_a_terminal_driver_side_error_stops_with_its_message() -> None:
    cause = MalformedMessage("canal-json", SourcePosition("t", 0, 7), "not JSON")
    failed = job_failure(cause, RuntimeError("spark text"))
    assert failed.terminal
    assert str(failed) == f"MalformedMessage: {cause}"


def test_a_transient_error_says_a_restart_may_help() -> None:
    failed = job_failure(TransientError("broker away"), RuntimeError("spark text"))
    assert not failed.terminal
    assert str(failed).startswith("TransientError: broker away (transient: start the job again")


def test_executor_side_errors_are_read_from_spark_text() -> None:
    text = "Job aborted.\nschema_evolution.errors.TransientError: Kafka topic 't', partition 0: timed out\n\n"
    failed = job_failure(None, RuntimeError(text))
    assert not failed.terminal and str(failed).startswith("TransientError: Kafka topic 't', partition 0: timed out")
    text = "Job aborted.\nformats.errors.MalformedMessage: malformed canal-json message\n\n"
    failed = job_failure(None, RuntimeError(text))
    assert failed.terminal and str(failed) == "MalformedMessage: malformed canal-json message"


def test_sparks_sqlstates_after_the_python_text_are_dropped() -> None:
    text = (
        "[STREAM_FAILED] Query terminated.\ningest.mysql.client.MySqlSourceError: cannot connect to MySQL at "
        "127.0.0.1:3306 as 'root': Access denied. Check --mysql-conf password.\n SQLSTATE: 38000 SQLSTATE: XXKST"
    )
    failed = job_failure(None, RuntimeError(text))
    assert str(failed).endswith("Check --mysql-conf password.") and "SQLSTATE" not in str(failed)
