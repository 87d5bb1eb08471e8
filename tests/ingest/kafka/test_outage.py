"""A Kafka broker that is away is waited for with backoff up to ``lakecdc.broker-unavailable-timeout``, then
the job stops naming the servers, what it was doing and the option (ingest.kafka.outage, #23). The last
tests talk to a loopback port nothing listens on (no broker needed)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from deploy.local_kafka import free_port
from ingest.kafka.fetch import fetch_range
from ingest.kafka.options import KAFKA_OPTIONS, check_kafka_conf
from ingest.kafka.outage import (
    TIMEOUT_OPTION,
    BrokerUnavailableError,
    call,
    is_unavailable,
    timeout_seconds,
)
from ingest.kafka.source import KafkaSourceSpec, KafkaStreamReader
from schema_evolution.errors import TransientError


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _down(timeout: float) -> str:
    raise KafkaException(KafkaError(KafkaError._TRANSPORT))


def test_a_call_is_retried_with_backoff_until_the_broker_answers() -> None:
    clock = FakeClock()
    answers = iter([_down, _down, _down, lambda timeout: "metadata"])
    timeouts: list[float] = []

    def fn(timeout: float) -> str:
        timeouts.append(timeout)
        return next(answers)(timeout)

    assert call(fn, "listing topics", "b:9092", 300, clock.sleep, clock) == "metadata"
    assert clock.sleeps == [1.0, 2.0, 4.0]  # doubling pauses
    assert all(1.0 <= t <= 30.0 for t in timeouts)


def test_the_pauses_are_capped_and_the_limit_ends_it_with_a_clear_error() -> None:
    clock = FakeClock()
    with pytest.raises(BrokerUnavailableError) as info:
        call(_down, "reading the topics' metadata (list_topics)", "k1:9092,k2:9092", 90, clock.sleep, clock)
    assert max(clock.sleeps) == 15.0 and sum(clock.sleeps) == pytest.approx(90.0)
    message = str(info.value)
    assert "k1:9092,k2:9092" in message
    assert "reading the topics' metadata (list_topics) failed for 90 s" in message
    assert f"--kafka-conf {TIMEOUT_OPTION}=90 s" in message
    assert "_TRANSPORT" in message or "transport" in message.lower()
    assert isinstance(info.value, TransientError)  # the job's last line says: start again, it resumes


def test_other_errors_are_not_retried() -> None:
    clock = FakeClock()

    def wrong(timeout: float) -> None:
        raise KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))

    with pytest.raises(KafkaException):
        call(wrong, "listing topics", "b:9092", 300, clock.sleep, clock)
    assert clock.sleeps == []
    assert not is_unavailable(ValueError("x"))
    assert is_unavailable(KafkaException(KafkaError(KafkaError._ALL_BROKERS_DOWN)))
    assert is_unavailable(KafkaException(KafkaError(KafkaError.LEADER_NOT_AVAILABLE)))


def test_the_option_is_a_duration_with_a_default_of_five_minutes() -> None:
    assert timeout_seconds({}) == 300
    assert timeout_seconds({TIMEOUT_OPTION: "90 s"}) == 90
    assert timeout_seconds({TIMEOUT_OPTION: "2 min"}) == 120
    assert timeout_seconds({TIMEOUT_OPTION: "45"}) == 45  # a bare number is seconds
    base = {"properties.bootstrap.servers": "b:9092", "topic": "t", "value.format": "canal-json"}
    assert check_kafka_conf({**base, TIMEOUT_OPTION: "10 min"}) == []
    for bad in ("soon", "0 s"):
        with pytest.raises(ValueError, match=TIMEOUT_OPTION):
            check_kafka_conf({**base, TIMEOUT_OPTION: bad})
    assert KAFKA_OPTIONS.lookup(TIMEOUT_OPTION) is not None


def test_a_read_task_waits_for_the_broker_then_fails_naming_it() -> None:
    servers = f"127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    with pytest.raises(BrokerUnavailableError) as info:
        list(fetch_range({"bootstrap.servers": servers}, "orders", 0, 0, 10, 3.0))
    assert 3.0 <= time.monotonic() - started < 30
    message = str(info.value)
    assert servers in message and "fetching offsets 0..9 of topic 'orders', partition 0" in message
    assert TIMEOUT_OPTION in message


def test_planning_waits_for_the_broker_then_fails_naming_it() -> None:
    servers = f"127.0.0.1:{free_port()}"
    reader = KafkaStreamReader(KafkaSourceSpec(topics=("orders",), broker_unavailable_timeout_s=2.0), {}, 0)
    reader.properties = {"bootstrap.servers": servers}
    started = time.monotonic()
    with pytest.raises(BrokerUnavailableError) as info:
        reader.initialOffset()
    assert 2.0 <= time.monotonic() - started < 30
    assert servers in str(info.value) and "list_topics" in str(info.value)
    reader.stop()
