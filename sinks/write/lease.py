"""Fencing: a lease file that one job holds in a directory (its checkpoint, each table it writes).

Two jobs on one checkpoint would commit the same batch ids; two jobs writing one table would give
a bucket's rows colliding sequence numbers. Each job therefore holds a lease, ``lakecdc-lease.json``,
in its checkpoint and in the directory of every table it writes: who holds it (job, host, pid),
the last heartbeat and when it expires. A lease is taken at start (a table's when the job first
writes it), renewed by a heartbeat thread on the driver and read back before every commit; a
second job is refused naming the holder, and a job whose lease was taken over stops before it
commits. A crashed job's lease expires ``ttl`` seconds after its last heartbeat; on the same host a
holder whose process is gone is recognised at once (same pid namespace, the pid's start time).

On a local (or mounted) filesystem, taking, renewing and releasing run under an exclusive ``flock``
of ``lakecdc-lease.lock`` beside the lease, and write a whole new file that replaces the old one
(``os.replace``): a reader never sees half a lease, two starting jobs never both win.

In a table directory on S3-compatible object storage (``sinks.filesystem.StoreLocation``) there is no
lock file: every write of the lease object is conditional on what was read (``PutObject`` with
``If-None-Match: *`` to create it, ``If-Match: <ETag>`` to replace it), so of two jobs taking or
renewing the lease from the same state exactly one wins and the other is refused (``LeaseHeld``) or
stops (``LeaseLost``). Objects are written whole, so a reader never sees half a lease. A store that
ignores those conditions (an S3-compatible server without conditional writes) gives no such
guarantee. Releasing deletes the object after checking it is still ours (read, then delete: a lease
taken over in between is deleted too, and its new holder stops at its next check).

Lease times are wall-clock times: hosts that share a checkpoint or table need synchronised clocks.
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
from typing import Any

import structlog

from schema_evolution.errors import LakeCdcError
from sinks.filesystem import Directory as _StoreOrPath
from sinks.filesystem import StoreLocation
from sinks.hadoop_files import HadoopFile, HadoopLeaseFiles

Directory = _StoreOrPath | HadoopFile  # a HadoopFile: a checkpoint only Spark's Hadoop serves

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


def _directory(directory: Directory | str) -> Directory:
    return Path(directory) if isinstance(directory, str) else directory


class _LocalFiles:
    """The lease file on a local filesystem: ``flock`` of the lock file beside it, whole-file replaces."""

    def __init__(self, directory: Path, path: Path, token: str) -> None:
        self.directory, self.path, self.token = directory, path, token

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / LOCK_FILE, "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def get(self) -> tuple[str | None, Any]:
        try:
            return self.path.read_text(), None
        except FileNotFoundError:
            return None, None

    def put(self, text: str, version: Any) -> bool:
        tmp = self.directory / f".{LEASE_FILE}.{self.token}.tmp"
        tmp.write_text(text)
        os.replace(tmp, self.path)
        return True  # under the flock: nobody wrote since get()

    def delete(self, version: Any) -> None:
        self.path.unlink(missing_ok=True)


class _ObjectFiles:
    """The lease object on S3-compatible storage: conditional writes on the ETag read before."""

    def __init__(self, path: StoreLocation) -> None:
        self.path = path
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self.path.client()
        return self._client

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        yield  # the conditions on each write stand in for the lock

    @staticmethod
    def _code(exc: Exception) -> str:
        return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))

    def get(self) -> tuple[str | None, Any]:
        try:
            answer = self.client.get_object(Bucket=self.path.bucket, Key=self.path.key)
        except Exception as exc:
            if self._code(exc) in ("NoSuchKey", "404", "NotFound"):
                return None, None
            raise OSError(f"cannot read the lease {self.path}: {exc}") from exc
        return answer["Body"].read().decode(), answer["ETag"]

    def put(self, text: str, version: Any) -> bool:
        condition = {"IfNoneMatch": "*"} if version is None else {"IfMatch": version}
        try:
            self.client.put_object(Bucket=self.path.bucket, Key=self.path.key, Body=text.encode(), **condition)
        except Exception as exc:
            if self._code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                return False  # another job wrote the lease since get()
            raise OSError(f"cannot write the lease {self.path}: {exc}") from exc
        return True

    def delete(self, version: Any) -> None:
        try:
            self.client.delete_object(Bucket=self.path.bucket, Key=self.path.key)
        except Exception as exc:
            raise OSError(f"cannot delete the lease {self.path}: {exc}") from exc


class FileLease:
    """One lease file in ``directory`` (a local path or a ``StoreLocation``); ``what`` names the
    directory in messages."""

    def __init__(self, directory: Directory | str, what: str, owner: Owner, ttl: float = DEFAULT_TTL) -> None:
        self.directory = _directory(directory)
        self.path: Directory = self.directory / LEASE_FILE
        self.what = what
        self.owner = owner
        self.ttl = ttl
        self.renewed = 0.0  # monotonic time of the last write
        self._mutex = threading.Lock()  # the heartbeat thread and the committing thread
        self._files: _LocalFiles | _ObjectFiles | HadoopLeaseFiles
        if isinstance(self.path, StoreLocation):
            self._files = _ObjectFiles(self.path)
        elif isinstance(self.directory, HadoopFile):
            self._files = self.directory.lease_files(LEASE_FILE, owner.token)
        else:
            assert isinstance(self.directory, Path) and isinstance(self.path, Path)
            self._files = _LocalFiles(self.directory, self.path, owner.token)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex, self._files.locked():
            yield

    @staticmethod
    def _parse(text: str | None) -> LeaseRecord | None:
        if text is None:
            return None
        try:
            return LeaseRecord.from_json(text)
        except (ValueError, KeyError, TypeError):
            return None  # a torn or foreign file: nobody's lease (we replace it whole)

    def _get(self) -> tuple[LeaseRecord | None, Any]:
        text, version = self._files.get()
        return self._parse(text), version

    def read(self) -> LeaseRecord | None:
        return self._get()[0]

    def _write(self, version: Any) -> bool:
        now = time.time()
        record = LeaseRecord(self.owner, now, now + self.ttl)
        if not self._files.put(record.to_json(), version):
            return False
        self.renewed = time.monotonic()
        return True

    def acquire(self, force: bool = False) -> None:
        """Take the lease, or raise ``LeaseHeld`` naming its live holder (``force`` takes it anyway)."""
        with self._locked():
            for _ in range(3):  # on object storage: another job wrote it between our read and write
                current, version = self._get()
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
                if self._write(version):
                    return
            raise LeaseHeld(f"{self.what}: another job is taking the lease at the same time ({self.path})")

    def renew(self) -> None:
        """A new heartbeat; ``LeaseLost`` when another job holds the lease now."""
        with self._locked():
            current, version = self._get()
            self._check(current)
            if not self._write(version):
                self._check(self.read())
                raise LeaseLost(f"the lease of {self.what} ({self.path}) changed while this job renewed it")

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
            current, version = self._get()
            if current is not None and current.owner.token == self.owner.token:
                self._files.delete(version)


class Fence:
    """A job's leases (its checkpoint's, then one per table it writes) and their heartbeat thread."""

    def __init__(self, owner: Owner, ttl: float = DEFAULT_TTL, force: bool = False) -> None:
        self.owner = owner
        self.ttl = ttl
        self.force = force
        self.leases: dict[Directory, FileLease] = {}
        self.lost: LakeCdcError | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, directory: Directory | str, what: str) -> None:
        """Take the lease of ``directory`` unless this job holds it already."""
        directory = _directory(directory)
        if directory in self.leases:
            return
        lease = FileLease(directory, what, self.owner, self.ttl)
        lease.acquire(self.force)
        self.leases[directory] = lease
        if self._thread is None:
            self._thread = threading.Thread(target=self._heartbeat, name="lakecdc-lease", daemon=True)
            self._thread.start()

    def holds(self, directory: Directory | str) -> bool:
        return _directory(directory) in self.leases

    def check(self, *directories: Directory | str) -> None:
        """Before a commit: the job still holds its first lease (the checkpoint's) and those of
        ``directories``; raises ``LeaseLost`` otherwise."""
        if self.lost is not None:
            raise self.lost
        first = next(iter(self.leases.values()), None)
        for lease in dict.fromkeys([first, *(self.leases.get(_directory(d)) for d in directories)]):
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
