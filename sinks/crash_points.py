"""Fault injection for tests (#23): kill the job at a named point, as a power cut would.

``LAKECDC_CRASH_AT=<name>[:<n>]`` makes the ``n``-th time (default the first) this process reaches
point ``<name>`` SIGKILL the job: no ``finally``, no ``atexit``, no flush, no lease release. When the
process's group leads its session (a job started in a session of its own, ``setsid``, as the tests
start it), the whole process group goes at once — the driver, its JVM and Python workers, as the
chaos suite kills them; otherwise only this process. The variable is read once, at import; unset, a point costs one
comparison.

A point may be reached in a process Spark started beside the driver (the MySQL source's planning
runs in a Python process of the JVM): killing the group is then what brings the job down, and
``n`` counts in that process.

The points, in the order a micro-batch reaches them:

``table-created``
    ``sinks/table/prepare.py``: a table was created in the catalog, before the job notes it as its
    own (``lakecdc-created-tables``) and before anything is written to it (a table at start, or one
    a database sync meets later).
``table-altered``
    ``sinks/table/prepare.py``: a schema change (ALTER) of a table was committed, before the
    batch's writers are created.
``before-commit``
    ``ingest/streaming/micro_batch.py``: the executors wrote every table's data files and returned
    their commit messages; nothing of the batch is committed.
``between-table-commits``
    ``ingest/streaming/micro_batch.py``: at least one table of the batch is committed, the next is
    not (reached before each table's commit but the first).
``compaction-written``
    ``ingest/streaming/maintenance.py``: the in-job compaction tasks wrote their files, before the
    COMPACT commit.
``expiry-data-deleted``
    ``sinks/lifecycle/expire.py``: snapshot expiry deleted the expired snapshots' data, changelog
    and index files, before their manifests (the same sweep serves ``rollback``: reached there too).
``expiry-manifests-deleted``
    ``sinks/lifecycle/expire.py``: the manifests are deleted too, the expired snapshot files (and
    the EARLIEST hint) are not.
``snapshot-to-binlog``
    ``ingest/mysql/source.py``: every snapshot chunk is committed and the binlog phase is being
    planned for the first time (the hand-off), before Spark records its offset.
"""

from __future__ import annotations

import os
import signal

VARIABLE = "LAKECDC_CRASH_AT"

POINTS = (
    "table-created",
    "table-altered",
    "before-commit",
    "between-table-commits",
    "compaction-written",
    "expiry-data-deleted",
    "expiry-manifests-deleted",
    "snapshot-to-binlog",
)


def _parse(value: str | None) -> tuple[str, int] | None:
    if not value:
        return None
    name, _, nth = value.partition(":")
    if name not in POINTS:
        raise ValueError(f"{VARIABLE}={value}: no crash point {name!r} (points: {', '.join(POINTS)})")
    return name, int(nth) if nth else 1


_TARGET = _parse(os.environ.get(VARIABLE))
_reached = 0


def crash_point(name: str) -> None:
    """Die here if ``LAKECDC_CRASH_AT`` names this point and this is its n-th visit."""
    global _reached
    if _TARGET is None or _TARGET[0] != name:
        return
    _reached += 1
    if _reached < _TARGET[1]:
        return
    line = f"lakecdc: crash point {name} reached ({_reached}): SIGKILL\n".encode()
    group = os.getpgrp()
    os.write(2, line)
    _tell_group_leader(group, line)
    if group == os.getsid(0):
        os.killpg(group, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _tell_group_leader(group: int, line: bytes) -> None:
    """The line on the job's own stderr too, where the point is reached in a Spark Python worker (the
    MySQL planner): a worker's stderr is a pipe the JVM copies from on a thread of its own, and the
    SIGKILL of the group could take the JVM before it copied the line (1 run of the fault tests)."""
    if group == os.getpid():
        return
    try:
        fd = os.open(f"/proc/{group}/fd/2", os.O_WRONLY | os.O_APPEND)
    except OSError:
        return  # not Linux, or the leader's stderr is gone: fd 2 had it
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
