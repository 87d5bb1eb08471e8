"""What ``ingest.job.run`` decides before it starts Spark: the commit user beside the checkpoint
(created once, also when two first starts race), the default checkpoint of a ``file:`` warehouse,
and the refusals: a checkpoint another job holds, a Spark checkpoint behind its commit user."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pytest

from ingest.cli.settings import SyncSettings
from ingest.job import COMMIT_USER_FILE, JobFailed, commit_user, default_checkpoint, lease_settings, run
from schema_evolution.types import int_, varchar
from sinks.table.catalog import Catalog
from sinks.write.lease import LEASE_FILE, Fence, Owner


def _settings(tmp_path: Path, **extra: object) -> SyncSettings:
    values: dict[str, object] = {
        "action": "kafka-sync-table",
        "warehouse": str(tmp_path / "wh"),
        "checkpoint": str(tmp_path / "ck"),
        "database": "ods",
        "table": "orders",
        "kafka_conf": {"properties.bootstrap.servers": "127.0.0.1:1", "topic": "t", "value.format": "canal-json"},
        "available_now": True,
    }
    values.update(extra)
    return SyncSettings(**values)  # type: ignore[arg-type]


def test_racing_first_starts_share_one_commit_user(tmp_path: Path) -> None:
    users: list[str] = []
    barrier = threading.Barrier(8)

    def start() -> None:
        barrier.wait()
        users.append(commit_user(str(tmp_path / "ck")))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(users)) == 1 and users[0].startswith("lakecdc-")
    assert (tmp_path / "ck" / COMMIT_USER_FILE).read_text() == users[0]
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == [COMMIT_USER_FILE]  # no temporary files left


def test_the_default_checkpoint_of_a_file_uri_warehouse_is_an_absolute_local_path(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/wh"
    # Even where the CLI's resolution was bypassed, the URI never becomes a relative folder.
    raw = _settings(tmp_path).model_copy(update={"warehouse": uri, "checkpoint": None})
    assert default_checkpoint(raw) == f"{tmp_path}/wh/_lakecdc/checkpoints/{raw.job_name}"
    assert default_checkpoint(_settings(tmp_path, warehouse=uri, checkpoint=None)).startswith(f"{tmp_path}/wh/")


def test_a_second_job_on_a_checkpoint_is_refused_naming_the_holder(tmp_path: Path) -> None:
    holder = Fence(Owner.this_process("job 'first' (checkpoint ck)"))
    holder.hold(tmp_path / "ck", "checkpoint ck")
    try:
        with pytest.raises(JobFailed) as info:
            run(_settings(tmp_path))
        message = str(info.value)
        assert message.startswith("LeaseHeld: checkpoint ")
        assert "is in use by another job: job 'first' (checkpoint ck)" in message and "expires in" in message
        assert not (tmp_path / "ck" / COMMIT_USER_FILE).exists()  # refused before anything else
    finally:
        holder.close()


def _commit_as(warehouse: Path, user: str, identifiers: list[int]) -> None:
    from pypaimon_rust.datafusion import PaimonCatalog

    wh = str(warehouse)
    Catalog(wh).ensure_database("ods")
    fields = [("id", int_().with_nullable(False)), ("v", varchar(10))]
    Catalog(wh).create_table("ods.orders", fields, ["id"], [], {"bucket": "1"})
    builder = PaimonCatalog({"warehouse": wh}).get_table("ods.orders").new_stream_write_builder()
    builder = builder.with_commit_user(user)
    for i in identifiers:
        write = builder.new_write()
        names = ["id", "v", "_VALUE_KIND"]
        write.write_arrow(
            pa.RecordBatch.from_arrays(
                [pa.array([i], pa.int32()), pa.array(["x"]), pa.array([0], pa.int8())], names=names
            )
        )
        commit = builder.new_commit()
        assert commit.filter_and_commit({i: write.prepare_commit(True, i)}) == 1
        commit.close()


def test_a_deleted_spark_checkpoint_beside_a_used_commit_user_is_refused(tmp_path: Path) -> None:
    user = commit_user(str(tmp_path / "ck"))
    _commit_as(tmp_path / "wh", user, [0, 1, 2])  # batches 0..2 committed, then <checkpoint>/spark deleted
    with pytest.raises(JobFailed) as info:
        run(_settings(tmp_path))
    message = str(info.value)
    assert message.startswith(f"CheckpointMismatch: checkpoint {tmp_path / 'ck'}: its Spark checkpoint")
    assert f"commit user {user} already committed batch 2 to table ods.orders" in message
    assert not (tmp_path / "ck" / LEASE_FILE).exists()  # released
    assert not (tmp_path / "wh" / "ods.db" / "orders" / LEASE_FILE).exists()


@pytest.mark.parametrize("value", ["0", "abc", "nan", "-5"])
def test_lease_seconds_must_be_a_number_of_seconds(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_LEASE_SECONDS", value)
    with pytest.raises(JobFailed, match=f"LAKECDC_LEASE_SECONDS={value}: give a number of seconds, at least 1"):
        lease_settings()


def test_lease_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lease_settings() == (60.0, False)
    monkeypatch.setenv("LAKECDC_LEASE_SECONDS", "15")
    monkeypatch.setenv("LAKECDC_FORCE_LEASE", "true")
    assert lease_settings() == (15.0, True)
