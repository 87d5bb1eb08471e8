"""kafka-sync-table's schema discovery against a real broker, as Paimon's ``testKafkaNoNonDdlData`` and
``testSyncWithInitialEmptyTopic`` (#29): with no target table, an empty or DDL-only topic stops the command
with Paimon's message before Spark starts; an existing table, or a row change in the topic, lets it run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from ingest.cli.main import main
from ingest.kafka.discovery import TIMEOUT_ENV
from schema_evolution.types import int_, string
from sinks.table.catalog import Catalog
from tests.conftest import TESTS, sample_messages
from tests.paimon_read import java_rows, paimon_schema

PAIMON_TEXT = (
    "Could not get metadata from server, topic: {}. If this topic is not empty, please check the configuration of "
    "synchronization job. Otherwise, you should create the Paimon table first."
)
DDL, INSERT = sample_messages(TESTS / "data" / "canal" / "evolution" / "steps" / "step-2.txt")[:2]


def _sync_table(warehouse: str, kafka: LocalKafka, topic: str) -> int:
    """``lakecdc kafka-sync-table`` over what the topic holds now: its exit code."""
    conf = [f"properties.bootstrap.servers={kafka.bootstrap}", f"topic={topic}", "value.format=canal-json"]
    argv = ["kafka-sync-table", "--warehouse", warehouse, "--database", "ods", "--table", "parts"]
    return main([*argv, *(a for c in conf for a in ("--kafka-conf", c)), "--available-now", "true"])


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def spark_session(*args: Any) -> Any:
        raise AssertionError("Spark started")

    monkeypatch.setattr("ingest.job.spark_session", spark_session)


@pytest.mark.parametrize("messages", [[], [DDL]], ids=["empty", "ddl-only"])
def test_no_table_and_no_row_change_stops_before_spark_with_paimons_message(
    kafka: LocalKafka,
    warehouse: str,
    topic_name: str,
    messages: list[bytes],
    no_spark: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kafka.create_topic(topic_name, 2)
    if messages:
        kafka.produce(topic_name, [(None, m) for m in messages])
    monkeypatch.setenv(TIMEOUT_ENV, "1")  # Paimon's schedule cut to its first sleep: poll, 1 s, poll
    capsys.readouterr()
    started = time.monotonic()
    assert _sync_table(warehouse, kafka, topic_name) == 1
    assert time.monotonic() - started >= 3.0  # two polls of 1 s and the sleep between them
    err = capsys.readouterr().err
    assert f"SchemaRetrievalError: {PAIMON_TEXT.format(topic_name)} (lakecdc: table ods.parts does not exist" in err
    assert f"partition 0 of topic '{topic_name}'" in err
    assert not (Path(warehouse) / "ods.db").exists()  # no database, no table


def test_an_existing_table_runs_on_an_empty_topic(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Paimon's testSyncWithInitialEmptyTopic: the table is created first, then the job starts.
    kafka.create_topic(topic_name, 1)
    catalog = Catalog(warehouse)
    catalog.ensure_database("ods")
    fields = [("shard", int_()), ("id", int_()), ("name", string()), ("qty", int_())]  # the source's columns
    catalog.create_table("ods.parts", fields, [], [], {})
    monkeypatch.setenv(TIMEOUT_ENV, "0")
    assert _sync_table(warehouse, kafka, topic_name) == 0
    kafka.produce(topic_name, [(None, DDL), (None, INSERT)])
    assert _sync_table(warehouse, kafka, topic_name) == 0
    assert java_rows(warehouse, "ods.parts") == ["+I[2, 4, cog, 40]"]


def test_a_row_change_after_ddl_creates_the_table(
    spark: Any, kafka: LocalKafka, warehouse: str, topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kafka.create_topic(topic_name, 1)
    kafka.produce(topic_name, [(None, DDL), (None, INSERT)])
    monkeypatch.setenv(TIMEOUT_ENV, "0")
    assert _sync_table(warehouse, kafka, topic_name) == 0
    assert [name for name, _ in paimon_schema(warehouse, "ods.parts")] == ["shard", "id", "name", "qty"]
    assert java_rows(warehouse, "ods.parts") == ["+I[2, 4, cog, 40]"]


@pytest.mark.parametrize("first_start", ["empty", "row-change"])
def test_an_existing_table_is_checked_only_against_what_the_topic_holds_at_first_start(
    spark: Any,
    kafka: LocalKafka,
    warehouse: str,
    topic_name: str,
    first_start: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The table lacks the source's qty. Paimon retrieves a schema at start-up and checks the table against
    # it (a missing column is incompatible); when the topic gives none it skips the check and the column is
    # added as the data brings it, also after a restart (the decision is kept beside the checkpoint).
    kafka.create_topic(topic_name, 1)
    catalog = Catalog(warehouse)
    catalog.ensure_database("ods")
    catalog.create_table("ods.parts", [("shard", int_()), ("id", int_()), ("name", string())], [], [], {})
    monkeypatch.setenv(TIMEOUT_ENV, "0")
    if first_start == "row-change":
        kafka.produce(topic_name, [(None, DDL), (None, INSERT)])
        capsys.readouterr()
        assert _sync_table(warehouse, kafka, topic_name) == 1
        assert "Paimon schema and source table schema are not compatible" in capsys.readouterr().err
        assert java_rows(warehouse, "ods.parts") == []
        return
    assert _sync_table(warehouse, kafka, topic_name) == 0
    kafka.produce(topic_name, [(None, DDL), (None, INSERT)])
    assert _sync_table(warehouse, kafka, topic_name) == 0
    assert [name for name, _ in paimon_schema(warehouse, "ods.parts")] == ["shard", "id", "name", "qty"]
    assert java_rows(warehouse, "ods.parts") == ["+I[2, 4, cog, 40]"]
