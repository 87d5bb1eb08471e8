"""Leases in a table directory on S3-compatible storage (moto): the same rules as on a local disk
(tests/sinks/write/test_lease.py), kept by conditional writes instead of a lock file: one holder at a
time, an expired lease taken over, a taken-over holder stopped, racing starts giving one holder."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from sinks.filesystem import StoreLocation
from sinks.write.lease import LEASE_FILE, LOCK_FILE, Fence, FileLease, LeaseHeld, LeaseLost, LeaseRecord, Owner
from tests.support.leases import race
from tests.support.s3_server import S3Server

BUCKET = "leases"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        server.create_bucket(BUCKET)
        yield server


@pytest.fixture
def table(s3: S3Server, request: pytest.FixtureRequest) -> StoreLocation:
    return StoreLocation.of(f"s3://{BUCKET}/wh/db.db/{request.node.name[:40]}", s3.catalog_conf)


def _lease(s3: S3Server, table: StoreLocation) -> dict[str, object]:
    body = s3.client.get_object(Bucket=BUCKET, Key=f"{table.key}/{LEASE_FILE}")["Body"].read()
    return dict(json.loads(body))


def test_a_second_job_is_refused_and_the_first_keeps_its_lease(s3: S3Server, table: StoreLocation) -> None:
    first = FileLease(table, "table db.t", Owner.this_process("job 'first'"), ttl=60)
    first.acquire()
    assert _lease(s3, table)["job"] == "job 'first'"
    with pytest.raises(LeaseHeld, match=r"table db.t is in use by another job: job 'first' .*expires in 60 s"):
        FileLease(table, "table db.t", Owner.this_process("job 'second'"), ttl=60).acquire()
    first.verify()
    first.renew()
    assert s3.keys(BUCKET, table.key + "/") == [f"{table.key}/{LEASE_FILE}"]  # no lock file on S3
    assert LOCK_FILE not in str(s3.keys(BUCKET))
    first.release()
    assert s3.keys(BUCKET, table.key + "/") == []


def test_an_expired_lease_is_taken_over_and_its_holder_stops(s3: S3Server, table: StoreLocation) -> None:
    old = FileLease(table, "table db.t", Owner.this_process("job 'old'"), ttl=60)
    old.acquire()
    now = time.time()
    gone = Owner("t-crashed", "job 'crashed'", "other-host", 1, None, None)
    s3.put(BUCKET, f"{table.key}/{LEASE_FILE}", LeaseRecord(gone, now - 120, now - 60).to_json().encode())
    new = FileLease(table, "table db.t", Owner.this_process("job 'new'"), ttl=60)
    new.acquire()
    assert _lease(s3, table)["job"] == "job 'new'"
    with pytest.raises(LeaseLost, match="taken over by another job: job 'new'"):
        old.verify()
    with pytest.raises(LeaseLost):
        old.renew()
    old.release()  # not ours: left alone
    assert _lease(s3, table)["job"] == "job 'new'"


def test_racing_starts_give_one_holder(s3: S3Server, table: StoreLocation) -> None:
    won, refused = race(6, lambda i: FileLease(table, "table db.t", Owner.this_process(f"job {i}")))
    assert len(won) == 1 and len(refused) == 5
    assert _lease(s3, table)["job"] == won[0]


def test_the_fence_heartbeat_renews_on_s3_and_notices_a_take_over(s3: S3Server, table: StoreLocation) -> None:
    fence = Fence(Owner.this_process("job 'a'"), ttl=1.0)
    fence.hold(table, "table db.t")
    fence.hold(StoreLocation.of(table.uri, s3.catalog_conf), "table db.t")  # the same directory: held already
    assert len(fence.leases) == 1
    first = _lease(s3, table)["heartbeat"]
    time.sleep(0.6)
    assert float(_lease(s3, table)["heartbeat"]) > float(first)  # type: ignore[arg-type]
    fence.check(table)
    FileLease(table, "table db.t", Owner.this_process("job 'b'")).acquire(force=True)
    deadline = time.monotonic() + 5
    while fence.lost is None and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(LeaseLost, match="job 'b'"):
        fence.check()
    fence.close()
    assert _lease(s3, table)["job"] == "job 'b'"  # job b's: kept
