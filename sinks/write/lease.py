"""Fencing: a lease file that one job holds in a directory (its checkpoint, each table it writes).

Two jobs on one checkpoint would commit the same batch ids; two jobs writing one table would give
a bucket's rows colliding sequence numbers. Each job therefore holds a lease, ``lakecdc-lease.json``,
in its checkpoint and in the directory of every table it writes: who holds it (job, host, pid),
the last heartbeat and when it expires. A lease is taken at start (a table's when the job first
writes it), renewed by a heartbeat thread on the driver and read back before every commit; a
second job is refused naming the holder, and a job whose lease was taken over stops before it
commits. A crashed job's lease expires ``ttl`` seconds after its last heartbeat; on the same host a
holder whose process is gone is recognised at once (same pid namespace, the pid's start time).

Taking, renewing and releasing run under an exclusive ``flock`` of ``lakecdc-lease.lock`` beside
the lease (local filesystems only, as lakecdc's locations are), and write a whole new file that
replaces the old one (``os.replace``): a reader never sees half a lease, two starting jobs never
both win. Lease times are wall-clock times: hosts that share a checkpoint need synchronised clocks.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path

import structlog

from schema_evolution.errors import LakeCdcError

log = structlog.get_logger(__name__)

LEASE_FILE = "lakecdc-lease.json"
LOCK_FILE = "lakecdc-lease.lock"
DEFAULT_TTL = 60.0


class LeaseHeld(LakeCdcError):
    """Another live job holds the lease: this job must not start (or write this table)."""


class LeaseLost(LakeCdcError):
    """This job's lease was taken over or removed: it must stop before it commits again."""


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


@dataclass(frozen=True, slots=True)
class Owner:
    """Who holds a lease: one per job, the same for all its leases."""

    token: str
    job: str  # the job's name, checkpoint and commit user, for messages
    host: str
    pid: int
    pid_namespace: str | None
    process_start: str | None

    @classmethod
    def this_process(cls, job: str) -> Owner:
        pid = os.getpid()
        return cls(str(uuid.uuid4()), job, socket.gethostname(), pid, _pid_namespace(), _process_start(pid))


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """A lease file's contents."""

    owner: Owner
    heartbeat: float  # wall-clock seconds
    expires: float

    def to_json(self) -> str:
        return json.dumps({**asdict(self.owner), "heartbeat": self.heartbeat, "expires": self.expires})

    @classmethod
    def from_json(cls, text: str) -> LeaseRecord:
        d = json.loads(text)
        owner = Owner(
            str(d["token"]), str(d["job"]), str(d["host"]), int(d["pid"]), d.get("pid_namespace"),
            d.get("process_start"),
        )  # fmt: skip
        return cls(owner, float(d["heartbeat"]), float(d["expires"]))

    def describe(self, now: float) -> str:
        o = self.owner
        when = f"expires in {self.expires - now:.0f} s" if self.expires > now else "expired"
        return f"{o.job} (host {o.host}, pid {o.pid}), last heartbeat {now - self.heartbeat:.0f} s ago, lease {when}"


class Verdict(Enum):
    FREE = "free"  # no lease, or ours
    EXPIRED = "expired"
    DEAD = "dead"  # its process is gone (same host and pid namespace)
    HELD = "held"


def judge(current: LeaseRecord | None, me: Owner, now: float) -> Verdict:
    """Whether ``me`` may take a lease whose file holds ``current``."""
    if current is None or current.owner.token == me.token:
        return Verdict.FREE
    if current.expires <= now:
        return Verdict.EXPIRED
    o = current.owner
    same_process_space = o.host == me.host and o.pid_namespace is not None and o.pid_namespace == me.pid_namespace
    if same_process_space and o.pid != me.pid and _process_start(o.pid) != o.process_start:
        return Verdict.DEAD
    return Verdict.HELD


class FileLease:
    """One lease file in ``directory``; ``what`` names the directory in messages."""

    def __init__(self, directory: Path, what: str, owner: Owner, ttl: float = DEFAULT_TTL) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LEASE_FILE
        self.what = what
        self.owner = owner
        self.ttl = ttl
        self.renewed = 0.0  # monotonic time of the last write
        self._mutex = threading.Lock()  # the heartbeat thread and the committing thread

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._mutex, open(self.directory / LOCK_FILE, "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def read(self) -> LeaseRecord | None:
        try:
            return LeaseRecord.from_json(self.path.read_text())
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):
            return None  # a torn or foreign file: nobody's lease (we replace it whole)

    def _write(self) -> None:
        now = time.time()
        record = LeaseRecord(self.owner, now, now + self.ttl)
        tmp = self.directory / f".{LEASE_FILE}.{self.owner.token}.tmp"
        tmp.write_text(record.to_json())
        os.replace(tmp, self.path)
        self.renewed = time.monotonic()

    def acquire(self, force: bool = False) -> None:
        """Take the lease, or raise ``LeaseHeld`` naming its live holder (``force`` takes it anyway)."""
        with self._locked():
            current = self.read()
            now = time.time()
            verdict = judge(current, self.owner, now)
            if verdict is Verdict.HELD and not force:
                assert current is not None
                raise LeaseHeld(
                    f"{self.what} is in use by another job: {current.describe(now)} ({self.path}). Stop that "
                    f"job first; a crashed job's lease expires {self.ttl:.0f} s after its last heartbeat "
                    f"(LAKECDC_LEASE_SECONDS), or LAKECDC_FORCE_LEASE=true takes it over if you are sure "
                    f"that job is gone"
                )
            if verdict is not Verdict.FREE and current is not None:
                log.warning(
                    "taking over a lease",
                    what=self.what,
                    reason="forced" if verdict is Verdict.HELD else verdict.value,
                    holder=current.describe(now),
                )
            self._write()

    def renew(self) -> None:
        """A new heartbeat; ``LeaseLost`` when another job holds the lease now."""
        with self._locked():
            self._check(self.read())
            self._write()

    def verify(self) -> None:
        """Before a commit: the lease is still ours (renewed here when the heartbeat is late)."""
        if time.monotonic() - self.renewed > self.ttl / 2:
            self.renew()
        else:
            self._check(self.read())

    def _check(self, current: LeaseRecord | None) -> None:
        if current is None:
            raise LeaseLost(f"the lease of {self.what} ({self.path}) was removed while this job held it")
        if current.owner.token != self.owner.token:
            raise LeaseLost(
                f"the lease of {self.what} was taken over by another job: {current.describe(time.time())} "
                f"({self.path}); this job stops before committing again"
            )

    def release(self) -> None:
        with self._locked():
            current = self.read()
            if current is not None and current.owner.token == self.owner.token:
                self.path.unlink(missing_ok=True)


class Fence:
    """A job's leases (its checkpoint's, then one per table it writes) and their heartbeat thread."""

    def __init__(self, owner: Owner, ttl: float = DEFAULT_TTL, force: bool = False) -> None:
        self.owner = owner
        self.ttl = ttl
        self.force = force
        self.leases: dict[Path, FileLease] = {}
        self.lost: LakeCdcError | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, directory: Path, what: str) -> None:
        """Take the lease of ``directory`` unless this job holds it already."""
        directory = Path(directory)
        if directory in self.leases:
            return
        lease = FileLease(directory, what, self.owner, self.ttl)
        lease.acquire(self.force)
        self.leases[directory] = lease
        if self._thread is None:
            self._thread = threading.Thread(target=self._heartbeat, name="lakecdc-lease", daemon=True)
            self._thread.start()

    def holds(self, directory: Path) -> bool:
        return Path(directory) in self.leases

    def check(self, *directories: Path) -> None:
        """Before a commit: the job still holds its first lease (the checkpoint's) and those of
        ``directories``; raises ``LeaseLost`` otherwise."""
        if self.lost is not None:
            raise self.lost
        first = next(iter(self.leases.values()), None)
        for lease in dict.fromkeys([first, *(self.leases.get(Path(d)) for d in directories)]):
            if lease is not None:
                lease.verify()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            for lease in list(self.leases.values()):
                try:
                    lease.renew()
                except LakeCdcError as exc:
                    self.lost = exc
                    log.error("lease lost", what=lease.what, reason=str(exc))
                    return
                except OSError as exc:  # a full or briefly unavailable disk: retried next beat
                    log.warning("lease heartbeat failed", what=lease.what, error=str(exc))

    def close(self) -> None:
        """Stop the heartbeat and release every lease still ours."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for lease in self.leases.values():
            try:
                lease.release()
            except OSError as exc:
                log.warning("lease not released", what=lease.what, error=str(exc))
        self.leases.clear()
