"""connect.max-retries bounds the retries of an unreachable server, within connect.timeout."""

from __future__ import annotations

from ingest.mysql.client import Backoff


def test_retries_end_after_max_retries() -> None:
    backoff = Backoff(3600, retries=2)
    backoff.wait = 0.0
    assert not backoff.expired()
    backoff.sleep()
    backoff.wait = 0.0
    assert not backoff.expired()
    backoff.sleep()
    assert backoff.expired()


def test_without_max_retries_the_timeout_bounds_them() -> None:
    assert not Backoff(3600).expired()
    assert Backoff(0.1).expired()
