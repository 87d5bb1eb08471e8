"""How long lakecdc waits for a MySQL server that does not answer: ``connect.timeout`` and
``connect.max-retries`` for a first connection, ``OUTAGE_TIMEOUT_S`` for a server that was there and went
away (ingest.mysql.client)."""

from __future__ import annotations

import time

# Client errors that mean "not reachable right now": can't connect, gone away, lost, server shutting down.
UNREACHABLE = {2003, 2006, 2013, 1053}

# How long a server this process reached before, or one a read task reads (the job started, so it was
# reachable), is waited for when it goes away: a restart or a failover of a few minutes is survived
# (#23); then the job stops naming the server.
OUTAGE_TIMEOUT_S = 300.0
# --mysql-conf key that sets it (lakecdc's own; Flink CDC has no such wait).
OUTAGE_OPTION = "lakecdc.server-unavailable-timeout"


class Backoff:
    """Waits between attempts to reach MySQL: 0.2 s, doubling up to 5 s, for as long as the next
    wait still ends within ``seconds`` (``connect.timeout``) of the first attempt, and at most
    ``retries`` times (``connect.max-retries``) when given."""

    def __init__(self, seconds: float, retries: int | None = None) -> None:
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds
        self._retries = retries
        self.wait = 0.2

    def expired(self) -> bool:
        if self._retries is not None and self._retries <= 0:
            return True
        return time.monotonic() + self.wait >= self._deadline

    def sleep(self) -> None:
        time.sleep(self.wait)
        self.wait = min(self.wait * 2, 5.0)
        if self._retries is not None:
            self._retries -= 1
