"""connect.max-retries bounds the retries of an unreachable server, within connect.timeout; a server
reached before and gone is waited for longer (an outage)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from deploy.local_kafka import free_port
from ingest.mysql import client
from ingest.mysql.client import Backoff, MySqlConnection, MySqlUnreachableError


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


def test_a_server_reached_before_is_waited_for_longer_than_a_wrong_address(monkeypatch: Any) -> None:
    """A server this process never reached fails within connect.timeout (a wrong host or port); one it
    reached before is away (a restart, a failover) and is waited for up to the outage timeout (#23)."""
    # --mysql-conf lakecdc.server-unavailable-timeout=5s: waits of 0.2, 0.4, 0.8 and 1.6 s (3 s; the next,
    # 3.2 s, would end past 5 s)
    conn = MySqlConnection("127.0.0.1", free_port(), "root", connect_timeout=1, max_retries=1, outage_timeout=5.0)
    assert conn.outage_backoff().seconds == 5.0
    started = time.monotonic()
    with pytest.raises(MySqlUnreachableError, match="Check --mysql-conf hostname"), client.connect(conn):
        pass
    assert time.monotonic() - started < 2.5
    monkeypatch.setattr(client, "_reached", {(conn.hostname, conn.port)})
    started = time.monotonic()
    with pytest.raises(MySqlUnreachableError, match="reachable before"), client.connect(conn):
        pass
    assert time.monotonic() - started >= 2.0
