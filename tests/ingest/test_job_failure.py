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


def test_a_py4j_error_without_a_lakecdc_cause_names_the_innermost_java_cause() -> None:
    """Py4J's own first line only names the call; the Java trace's last cause says what failed."""
    text = (
        "An error occurred while calling o76.load.\n: org.apache.spark.SparkException: Python worker failed\n"
        "\tat org.apache.spark.api.python.PythonWorkerFactory.create(PythonWorkerFactory.scala:1)\n"
        'Caused by: java.io.IOException: Cannot run program "./environment/bin/python": error=2, No such file\n'
        "\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)\n"
        "Caused by: java.io.IOException: error=2, No such file or directory\n"
    )
    failed = job_failure(None, RuntimeError(text))
    assert str(failed).startswith("An error occurred while calling o76.load. java.io.IOException: error=2")
    plain = job_failure(None, RuntimeError("Query terminated.\nCaused by: x"))
    assert str(plain) == "Query terminated."
