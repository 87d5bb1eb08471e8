"""Racing lease starts, shared by the local-disk and S3 lease tests: ``racers`` threads each build a
lease and call ``acquire`` at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sinks.write.lease import FileLease, LeaseHeld


def race(racers: int, lease_for: Callable[[int], FileLease]) -> tuple[list[str], list[str]]:
    """The jobs that won the lease and those refused it (``LeaseHeld``)."""
    won: list[str] = []
    refused: list[str] = []
    barrier = threading.Barrier(racers)

    def start(i: int) -> None:
        lease = lease_for(i)
        barrier.wait()
        try:
            lease.acquire()
            won.append(lease.owner.job)
        except LeaseHeld:
            refused.append(lease.owner.job)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won, refused
