"""A Spark checkpoint behind its commit user's commits is refused, never skipped silently
(ingest.streaming.checkpoint): the pure decisions, with identifiers given as a dict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.streaming.checkpoint import TABLES_FILE, CheckpointGuard, CheckpointMismatch, SparkProgress, mismatch
from sinks.write.lease import LEASE_FILE, Fence, LeaseHeld, Owner


def _spark(tmp_path: Path, offsets: list[int], commits: list[int]) -> SparkProgress:
    spark = tmp_path / "spark"
    for sub, ids in (("offsets", offsets), ("commits", commits)):
        (spark / sub).mkdir(parents=True, exist_ok=True)
        for i in ids:
            (spark / sub / str(i)).write_text("v1")
            (spark / sub / f".{i}.crc").write_text("")
    return SparkProgress.read(spark)


def test_spark_progress_reads_the_offset_and_commit_logs(tmp_path: Path) -> None:
    assert SparkProgress.read(tmp_path / "missing") == SparkProgress(None, None)
    finished = _spark(tmp_path / "a", [3, 4, 5], [3, 4, 5])
    assert finished == SparkProgress(5, 5) and finished.replay is None
    replaying = _spark(tmp_path / "b", [4, 5, 6], [4, 5])
    assert replaying == SparkProgress(6, 5) and replaying.replay == 6


@pytest.mark.parametrize(
    ("progress", "last", "refused"),
    [
        (SparkProgress(None, None), 0, True),  # <checkpoint>/spark deleted after one batch
        (SparkProgress(None, None), 41, True),
        (SparkProgress(3, 3), 9, True),  # restored from an older backup
        (SparkProgress(9, 9), 9, False),  # in step
        (SparkProgress(10, 9), 10, False),  # batch 10 committed, Spark replays it
        (SparkProgress(10, 9), 9, False),  # batch 10 not committed yet
        (SparkProgress(9, 9), 4, False),  # a table written less often
    ],
)
def test_mismatch_at_start_up(progress: SparkProgress, last: int, refused: bool) -> None:
    limit = progress.planned if progress.planned is not None else -1
    refusal = mismatch("/ck", "lakecdc-u", progress, "ods.orders", last, limit)
    assert (refusal is not None) == refused
    if refusal is not None:
        text = str(refusal)
        assert "checkpoint /ck" in text and "/ck/spark" in text
        assert f"commit user lakecdc-u already committed batch {last} to table ods.orders" in text
        assert "Restore the Spark checkpoint" in text and "new --checkpoint" in text


def test_a_deleted_spark_checkpoint_is_described_as_such() -> None:
    refusal = mismatch("/ck", "u", SparkProgress(None, None), "ods.t", 3, -1)
    assert refusal is not None and "has no batches (new or deleted)" in str(refusal)
    refusal = mismatch("/ck", "u", SparkProgress(2, 2), "ods.t", 7, 2)
    assert refusal is not None and "has batches up to 2: Spark continues from 3" in str(refusal)


def _guard(
    tmp_path: Path, progress: SparkProgress, last: dict[str, int], fence: Fence | None = None
) -> CheckpointGuard:
    return CheckpointGuard(str(tmp_path), "u", progress, last.get, lambda t: tmp_path / "wh" / t, fence)


def test_start_up_checks_the_tables_the_checkpoint_wrote(tmp_path: Path) -> None:
    (tmp_path / TABLES_FILE).write_text(json.dumps(["ods.a", "ods.b"]))
    guard = _guard(tmp_path, SparkProgress(None, None), {"ods.b": 12})
    with pytest.raises(CheckpointMismatch, match=r"already committed batch 12 to table ods\.b"):
        guard.check_start([])
    _guard(tmp_path, SparkProgress(12, 12), {"ods.b": 12}).check_start(["ods.c"])


def test_a_table_first_committed_in_this_run_is_checked_against_the_batch(tmp_path: Path) -> None:
    guard = _guard(tmp_path, SparkProgress(None, None), {"ods.new": 0})
    guard.check_start([])  # nothing known at start-up (a database sync's first run)
    with pytest.raises(CheckpointMismatch, match=r"batch 0 to table ods\.new"):
        guard.before_write(0, ["ods.new"])
    assert not (tmp_path / TABLES_FILE).exists()


def test_the_tables_file_is_written_only_for_a_new_table(tmp_path: Path) -> None:
    guard = _guard(tmp_path, SparkProgress(4, 3), {"ods.a": 4})
    guard.before_write(4, ["ods.a"])  # the replayed batch may be committed already
    assert not (tmp_path / TABLES_FILE).exists()
    guard.before_commit(["ods.a"])
    assert json.loads((tmp_path / TABLES_FILE).read_text()) == ["ods.a"]
    mtime = (tmp_path / TABLES_FILE).stat().st_mtime_ns
    guard.before_write(5, ["ods.a"])
    guard.before_commit(["ods.a"])
    assert (tmp_path / TABLES_FILE).stat().st_mtime_ns == mtime
    guard.before_write(6, ["ods.a", "ods.b"])
    guard.before_commit(["ods.a", "ods.b"])
    assert json.loads((tmp_path / TABLES_FILE).read_text()) == ["ods.a", "ods.b"]
    # A table new to the run whose identifier already reached the new batch's: refused.
    with pytest.raises(CheckpointMismatch, match=r"batch 6 to table ods\.c"):
        _guard(tmp_path, SparkProgress(5, 5), {"ods.c": 6}).before_write(6, ["ods.c"])


def test_only_the_replayed_batch_may_be_skipped(tmp_path: Path) -> None:
    guard = _guard(tmp_path, SparkProgress(8, 7), {})
    guard.skipped("ods.a", 8)
    with pytest.raises(CheckpointMismatch, match=r"Paimon skipped batch 9 of table ods\.a"):
        guard.skipped("ods.a", 9)
    with pytest.raises(CheckpointMismatch):
        _guard(tmp_path, SparkProgress(8, 8), {}).skipped("ods.a", 8)


def test_table_leases_are_taken_before_writing(tmp_path: Path) -> None:
    other = Fence(Owner.this_process("job 'other'"))
    other.hold(tmp_path / "wh" / "ods.b", "table ods.b")
    fence = Fence(Owner.this_process("job 'mine'"))
    guard = _guard(tmp_path, SparkProgress(None, None), {}, fence)
    try:
        guard.before_write(0, ["ods.a"])
        assert (tmp_path / "wh" / "ods.a" / LEASE_FILE).exists()
        guard.before_table_commit("ods.a")
        with pytest.raises(LeaseHeld, match=r"table ods\.b is in use by another job: job 'other'"):
            guard.hold(["ods.b"])
    finally:
        fence.close()
        other.close()
