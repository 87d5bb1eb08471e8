"""kafka-sync-table's schema discovery (Paimon's ``MessageQueueSchemaUtils.getSchema``), without a broker:
Paimon's retry schedule, what counts as a data schema, and when discovery runs at all (#29). The same
against a real broker: tests/integration/kafka/test_schema_discovery.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from formats import get_parser
from ingest.cli.settings import SyncSettings
from ingest.kafka import discovery
from ingest.kafka.discovery import (
    DEFAULT_TIMEOUT,
    PAIMON_SLEEPS,
    TIMEOUT_ENV,
    Message,
    SchemaRetrievalError,
    check_schema_discoverable,
    discover,
    discovery_timeout,
    gives_schema,
    retry_sleeps,
    target_table,
)
from schema_evolution.errors import LakeCdcError, MalformedMessage
from schema_evolution.types import string
from sinks.table.catalog import Catalog
from tests.conftest import TESTS, sample_messages

PAIMON_TEXT = (
    "Could not get metadata from server, topic: {}. If this topic is not empty, please check the configuration of "
    "synchronization job. Otherwise, you should create the Paimon table first."
)
DDL, INSERT = sample_messages(TESTS / "data" / "canal" / "evolution" / "steps" / "step-2.txt")[:2]
CANAL = get_parser("canal-json")


def _settings(warehouse: Path, action: str = "kafka-sync-table", **conf: str) -> SyncSettings:
    kafka = {"properties.bootstrap.servers": "127.0.0.1:9", "value.format": "Canal-JSON"}
    if "topic-pattern" not in conf:
        kafka["topic"] = "orders,other"
    return SyncSettings(
        action=action,
        warehouse=str(warehouse),
        database="ods",
        table="T" if action == "kafka-sync-table" else None,
        kafka_conf={**kafka, **conf},
        catalog_conf={"case-sensitive": "false"},
    )


def test_paimons_schedule_adds_up_to_the_default_and_a_smaller_total_cuts_it_short() -> None:
    assert PAIMON_SLEEPS == (1, 2, 4, 8, 16) and DEFAULT_TIMEOUT == 31
    assert retry_sleeps(DEFAULT_TIMEOUT) == PAIMON_SLEEPS == retry_sleeps(1000)
    assert retry_sleeps(5) == (1, 2, 2)
    assert retry_sleeps(0) == ()


def test_the_timeout_comes_from_the_environment() -> None:
    assert discovery_timeout({}) == DEFAULT_TIMEOUT
    assert discovery_timeout({TIMEOUT_ENV: " 2.5 "}) == 2.5
    assert discovery_timeout({TIMEOUT_ENV: "0"}) == 0
    for bad in ("-1", "soon", "nan"):
        with pytest.raises(LakeCdcError, match=f"{TIMEOUT_ENV}={bad}: expected a number of seconds"):
            discovery_timeout({TIMEOUT_ENV: bad})


def test_a_ddl_message_gives_no_schema_a_row_change_does() -> None:
    assert not gives_schema(CANAL, "t", 0, [(DDL, None, 0, None)])
    assert gives_schema(CANAL, "t", 0, [(DDL, None, 0, None), (INSERT, None, 1, 5)])
    with pytest.raises(MalformedMessage, match="topic 't', partition 0, offset 7"):
        gives_schema(CANAL, "t", 0, [(b"{not json", None, 7, None)])


class Polls:
    """A fake poll: the batches it returns, one per call; records the poll times."""

    def __init__(self, *batches: list[Message]) -> None:
        self.batches = list(batches)
        self.seconds: list[float] = []

    def __call__(self, seconds: float) -> Iterator[Message]:
        self.seconds.append(seconds)
        return iter(self.batches.pop(0) if self.batches else [])


def test_discovery_polls_one_second_then_retries_after_paimons_sleeps() -> None:
    polls, slept = Polls([(DDL, None, 0, None)]), list[float]()
    assert not discover(polls, CANAL, "t", 0, PAIMON_SLEEPS, slept.append)
    assert polls.seconds == [1.0] * 6 and slept == list(PAIMON_SLEEPS)


def test_discovery_stops_at_the_first_row_change() -> None:
    polls = Polls([], [(DDL, None, 0, None)], [(INSERT, None, 1, None)], [(b"never read", None, 2, None)])
    slept: list[float] = []
    assert discover(polls, CANAL, "t", 0, PAIMON_SLEEPS, slept.append)
    assert slept == [1, 2] and len(polls.seconds) == 3


class FakeConsumer:
    def __init__(self, messages: list[bytes], partitions: tuple[int, ...] = (2, 0, 1)) -> None:
        self.messages = messages
        self.partitions = partitions
        self.assigned: list[tuple[str, int, int]] = []
        self.closed = False

    def list_topics(self, topic: str | None = None, timeout: float = 0) -> Any:
        meta = type("Meta", (), {"error": None, "partitions": dict.fromkeys(self.partitions)})
        return type("Md", (), {"topics": {"orders": meta, "orders_2": meta, "__consumer_offsets": meta}})

    def assign(self, tps: list[Any]) -> None:
        self.assigned = [(tp.topic, tp.partition, tp.offset) for tp in tps]

    def poll(self, timeout: float) -> Any:
        if not self.messages:
            return None
        value = self.messages.pop(0)
        offset = len(self.assigned)
        return type("M", (), {"error": lambda _: None, "value": lambda _: value, "key": lambda _: None,
                              "offset": lambda _: offset, "timestamp": lambda _: (0, 0)})()  # fmt: skip

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def consumer(monkeypatch: pytest.MonkeyPatch) -> FakeConsumer:
    fake = FakeConsumer([DDL])
    monkeypatch.setattr(discovery, "_consumer", lambda conf: fake)
    monkeypatch.setenv(TIMEOUT_ENV, "0")
    return fake


def test_no_table_and_no_row_change_fails_with_paimons_text_first(tmp_path: Path, consumer: FakeConsumer) -> None:
    from confluent_kafka import OFFSET_BEGINNING

    with pytest.raises(SchemaRetrievalError) as err:
        check_schema_discoverable(_settings(tmp_path))
    text = str(err.value)
    assert text.startswith(PAIMON_TEXT.format("orders") + " (lakecdc: table ods.t does not exist")
    assert "partition 0 of topic 'orders'" in text
    # the first topic of "orders,other", its first partition, from the beginning; the consumer closed
    assert consumer.assigned == [("orders", 0, OFFSET_BEGINNING)] and consumer.closed
    assert not (tmp_path / "ods.db").exists()  # nothing created


def test_no_table_and_a_row_change_after_ddl_passes(tmp_path: Path, consumer: FakeConsumer) -> None:
    consumer.messages = [DDL, INSERT]
    check_schema_discoverable(_settings(tmp_path))
    assert consumer.closed


def test_topic_pattern_reads_its_first_matching_topic(tmp_path: Path, consumer: FakeConsumer) -> None:
    settings = _settings(tmp_path, **{"topic-pattern": "orders.*|__.*"})
    with pytest.raises(SchemaRetrievalError, match="topic: orders\\."):
        check_schema_discoverable(settings)


def test_an_existing_table_or_database_sync_needs_no_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_kafka(conf: Any) -> Any:
        raise AssertionError("Kafka was read")

    monkeypatch.setattr(discovery, "_consumer", no_kafka)
    check_schema_discoverable(_settings(tmp_path, action="kafka-sync-database"))
    settings = _settings(tmp_path)
    assert target_table(settings) == "ods.t"  # case-sensitive=false: the catalog's name
    catalog = Catalog(str(tmp_path), settings.catalog_conf)
    catalog.ensure_database("ods")
    catalog.create_table("ods.t", [("k", string())], [], [], {})
    check_schema_discoverable(settings)
