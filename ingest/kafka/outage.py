"""A Kafka broker that is away for a while (restarted, network cut) is waited for, not fatal (#23).

Every broker call of the driver's planning (topic metadata, watermarks, committed offsets, offsets for a
timestamp, topic ids) goes through ``call``: a call that fails because no broker answers is tried again
after a pause that doubles from 1 s to 15 s, until ``lakecdc.broker-unavailable-timeout`` (``--kafka-conf``,
default 5 min) has passed since the first failure; then the job stops with ``BrokerUnavailableError``
naming the bootstrap servers, what was attempted and the option. A read task's fetch waits the same
time for the next message (``ingest.kafka.fetch``). Any other error (a topic that does not exist, bad
credentials) is raised at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import structlog

from ingest.durations import interval_ms
from schema_evolution.errors import TransientError

log = structlog.get_logger(__name__)

T = TypeVar("T")

TIMEOUT_OPTION = "lakecdc.broker-unavailable-timeout"
DEFAULT_TIMEOUT = "5 min"
CALL_TIMEOUT_S = 30.0  # one broker call's own timeout (librdkafka's), at most what is left
FIRST_PAUSE_S, MAX_PAUSE_S = 1.0, 15.0


class BrokerUnavailableError(TransientError):
    """No Kafka broker answered within ``lakecdc.broker-unavailable-timeout``."""


def timeout_seconds(conf: Mapping[str, str]) -> float:
    """``lakecdc.broker-unavailable-timeout`` of ``--kafka-conf`` in seconds (a bare number is seconds)."""
    return interval_ms(conf.get(TIMEOUT_OPTION, DEFAULT_TIMEOUT)) / 1000


def check_timeout(value: str) -> str | None:
    """The option table's check of the option's value."""
    try:
        ms = interval_ms(value)
    except ValueError as exc:
        return f"is not a duration ({exc})"
    return None if ms > 0 else "must be more than 0"


def unavailable_message(servers: str, what: str, waited_s: float, timeout_s: float, cause: str) -> str:
    return (
        f"Kafka broker(s) {servers or '(no bootstrap servers)'} unavailable: {what} failed for {waited_s:.0f} s "
        f"(retried with backoff; last error: {cause}). The job stops after --kafka-conf {TIMEOUT_OPTION}="
        f"{_seconds(timeout_s)}: check that the brokers run and are reachable from the driver and the executors, "
        f"then start the job again (it resumes from its checkpoint), or allow longer outages with a larger "
        f"{TIMEOUT_OPTION}"
    )


def _seconds(value: float) -> str:
    return f"{value:g} s"


_UNAVAILABLE_CODES = (
    "_TRANSPORT",
    "_ALL_BROKERS_DOWN",
    "_TIMED_OUT",
    "_TIMED_OUT_QUEUE",
    "_RESOLVE",
    "_WAIT_COORD",
    "_MSG_TIMED_OUT",
    "_NODE_UPDATE",
    "LEADER_NOT_AVAILABLE",
    "NOT_LEADER_FOR_PARTITION",
    "BROKER_NOT_AVAILABLE",
    "REPLICA_NOT_AVAILABLE",
    "NETWORK_EXCEPTION",
    "REQUEST_TIMED_OUT",
    "COORDINATOR_NOT_AVAILABLE",
    "NOT_COORDINATOR",
    "COORDINATOR_LOAD_IN_PROGRESS",
)


def is_unavailable_error(err: Any) -> bool:
    """Whether a librdkafka ``KafkaError`` means that no broker answered (or not yet the right one)."""
    from confluent_kafka import KafkaError

    if err is None or not isinstance(err, KafkaError) or err.fatal():
        return False
    codes = {getattr(KafkaError, name) for name in _UNAVAILABLE_CODES if hasattr(KafkaError, name)}
    return err.code() in codes or bool(err.retriable())


def is_unavailable(exc: BaseException) -> bool:
    """Whether an exception of a broker call means that no broker answered."""
    from confluent_kafka import KafkaException

    if isinstance(exc, KafkaException):
        return is_unavailable_error(exc.args[0] if exc.args else None)
    return isinstance(exc, TimeoutError)  # a future's result() that timed out


def call(
    fn: Callable[[float], T],
    what: str,
    servers: str,
    timeout_s: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """``fn(call_timeout_s)``, tried again while no broker answers, for up to ``timeout_s`` seconds."""
    started = clock()
    pause = FIRST_PAUSE_S
    attempts = 0
    while True:
        left = started + timeout_s - clock()
        try:
            return fn(max(1.0, min(CALL_TIMEOUT_S, left)))
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            attempts += 1
            waited = clock() - started
            left = timeout_s - waited
            if left <= 0:
                raise BrokerUnavailableError(unavailable_message(servers, what, waited, timeout_s, str(exc))) from None
            log.warning(
                "Kafka broker unavailable: retrying",
                what=what,
                servers=servers,
                attempt=attempts,
                waited_s=round(waited, 1),
                gives_up_in_s=round(left, 1),
                error=str(exc),
            )
            sleep(min(pause, left))
            pause = min(pause * 2, MAX_PAUSE_S)
