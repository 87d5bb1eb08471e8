"""Leases (sinks.write.lease): one holder at a time, named when another is refused; an expired or
dead holder's lease is taken over; a job whose lease was taken over notices before it commits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sinks.write.lease import (
    LEASE_FILE,
    Fence,
    FileLease,
    LeaseHeld,
    LeaseLost,
    LeaseRecord,
    Owner,
    Verdict,
    judge,
)
from tests.support.leases import race


def _owner(job: str = "job 'a'") -> Owner:
    return Owner.this_process(job)


def _foreign(pid: int, host: str = "other-host", start: str | None = "1") -> Owner:
    return Owner("t-foreign", "job 'other' (checkpoint /ck)", host, pid, "pid:[1]", start)


def _write(directory: Path, owner: Owner, heartbeat: float, expires: float) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / LEASE_FILE).write_text(LeaseRecord(owner, heartbeat, expires).to_json())


def test_a_second_job_is_refused_naming_the_holder_and_its_expiry(tmp_path: Path) -> None:
    first = FileLease(tmp_path, "checkpoint /ck", _owner("job 'first' (checkpoint /ck)"), ttl=60)
    first.acquire()
    record = json.loads((tmp_path / LEASE_FILE).read_text())
    assert record["job"] == "job 'first' (checkpoint /ck)" and record["pid"] == os.getpid()
    assert record["expires"] - record["heartbeat"] == 60
    with pytest.raises(LeaseHeld) as info:
        FileLease(tmp_path, "checkpoint /ck", _owner("job 'second'"), ttl=60).acquire()
    message = str(info.value)
    assert "checkpoint /ck is in use by another job: job 'first' (checkpoint /ck)" in message
    assert f"pid {os.getpid()}" in message and "expires in 60 s" in message
    assert "LAKECDC_LEASE_SECONDS" in message and "LAKECDC_FORCE_LEASE" in message
    first.verify()  # still the first job's


def test_an_expired_lease_is_taken_over(tmp_path: Path) -> None:
    now = time.time()
    _write(tmp_path, _foreign(1), now - 120, now - 60)  # a crashed job, heartbeat two minutes old
    lease = FileLease(tmp_path, "table db.t", _owner(), ttl=60)
    lease.acquire()
    assert json.loads((tmp_path / LEASE_FILE).read_text())["token"] == lease.owner.token


def test_a_live_lease_of_another_host_is_kept_until_it_expires(tmp_path: Path) -> None:
    now = time.time()
    _write(tmp_path, _foreign(1), now - 5, now + 55)
    with pytest.raises(LeaseHeld, match=r"host other-host, pid 1\), last heartbeat 5 s ago, lease expires in 55 s"):
        FileLease(tmp_path, "table db.t", _owner()).acquire()


def test_a_dead_holder_on_this_host_is_recognised_at_once(tmp_path: Path) -> None:
    me = _owner()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        child_start = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[-1].split()[19]
        alive = Owner("t-child", "job 'child'", me.host, child.pid, me.pid_namespace, child_start)
        now = time.time()
        _write(tmp_path, alive, now, now + 60)
        assert judge(LeaseRecord(alive, now, now + 60), me, now) is Verdict.HELD
        with pytest.raises(LeaseHeld):
            FileLease(tmp_path, "checkpoint /ck", me).acquire()
    finally:
        child.kill()
        child.wait()
    dead = LeaseRecord(alive, now, now + 60)
    assert judge(dead, me, time.time()) is Verdict.DEAD
    FileLease(tmp_path, "checkpoint /ck", me).acquire()
    # The same pid with another start time is another process: the holder is gone too.
    reused = Owner("t-x", "job 'x'", me.host, os.getpid(), me.pid_namespace, "0")
    assert judge(LeaseRecord(reused, now, now + 60), _owner(), now) is Verdict.HELD  # our own pid: never judged


def test_judge() -> None:
    me = _owner()
    now = time.time()
    assert judge(None, me, now) is Verdict.FREE
    assert judge(LeaseRecord(me, now, now + 60), me, now) is Verdict.FREE
    assert judge(LeaseRecord(_foreign(1), now - 61, now - 1), me, now) is Verdict.EXPIRED
    assert judge(LeaseRecord(_foreign(1), now, now + 60), me, now) is Verdict.HELD
    # Same host name but another pid namespace (another container): never judged dead.
    other_ns = Owner("t", "j", me.host, 999_999, "pid:[42]", "1")
    assert judge(LeaseRecord(other_ns, now, now + 60), me, now) is Verdict.HELD


def test_a_taken_over_lease_stops_its_former_holder_before_it_commits(tmp_path: Path) -> None:
    old = FileLease(tmp_path, "checkpoint /ck", _owner("job 'old'"), ttl=60)
    old.acquire()
    FileLease(tmp_path, "checkpoint /ck", _owner("job 'new'"), ttl=60).acquire(force=True)
    with pytest.raises(LeaseLost, match="taken over by another job: job 'new'"):
        old.verify()
    with pytest.raises(LeaseLost):
        old.renew()
    old.release()  # not ours any more: left alone
    assert json.loads((tmp_path / LEASE_FILE).read_text())["job"] == "job 'new'"
    (tmp_path / LEASE_FILE).unlink()
    with pytest.raises(LeaseLost, match="was removed"):
        old.verify()


def test_racing_starts_give_one_holder(tmp_path: Path) -> None:
    won, refused = race(8, lambda i: FileLease(tmp_path, "checkpoint /ck", _owner(f"job {i}")))
    assert len(won) == 1 and len(refused) == 7
    assert json.loads((tmp_path / LEASE_FILE).read_text())["job"] == won[0]


def test_the_fence_heartbeat_renews_and_notices_a_take_over(tmp_path: Path) -> None:
    fence = Fence(_owner("job 'a'"), ttl=1.0)
    fence.hold(tmp_path / "ck", "checkpoint ck")
    fence.hold(tmp_path / "table", "table db.t")
    fence.hold(tmp_path / "table", "table db.t")  # held already: nothing new
    first = json.loads((tmp_path / "table" / LEASE_FILE).read_text())["heartbeat"]
    time.sleep(0.6)
    assert json.loads((tmp_path / "table" / LEASE_FILE).read_text())["heartbeat"] > first
    fence.check(tmp_path / "table")
    FileLease(tmp_path / "table", "table db.t", _owner("job 'b'")).acquire(force=True)
    deadline = time.monotonic() + 5
    while fence.lost is None and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(LeaseLost, match="job 'b'"):
        fence.check()
    fence.close()
    assert not (tmp_path / "ck" / LEASE_FILE).exists()  # released
    assert (tmp_path / "table" / LEASE_FILE).exists()  # job b's: kept


def test_verify_renews_when_the_heartbeat_is_late(tmp_path: Path) -> None:
    lease = FileLease(tmp_path, "checkpoint /ck", _owner(), ttl=1.0)
    lease.acquire()
    before = json.loads((tmp_path / LEASE_FILE).read_text())["heartbeat"]
    time.sleep(0.6)
    lease.verify()
    assert json.loads((tmp_path / LEASE_FILE).read_text())["heartbeat"] > before
