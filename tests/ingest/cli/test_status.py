"""``lakecdc status`` on checkpoints laid out as Spark and lakecdc leave them (no server, no table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.cli.main import main
from ingest.cli.status import default_warehouse, job_status, render


def _checkpoint(root: Path, offsets: dict[int, dict[str, object]], committed: list[int]) -> Path:
    spark = root / "spark"
    (spark / "offsets").mkdir(parents=True)
    (spark / "commits").mkdir()
    for batch, end in offsets.items():
        meta = {"batchWatermarkMs": 0, "batchTimestampMs": 1_780_000_000_000 + batch, "conf": {}}
        (spark / "offsets" / str(batch)).write_text(f"v1\n{json.dumps(meta)}\n{json.dumps(end)}")
    for batch in committed:
        (spark / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    (root / "lakecdc-commit-user").write_text("lakecdc-user-1")
    return root


def test_kafka_checkpoint_shows_the_last_batch_its_offsets_and_the_one_in_flight(tmp_path: Path) -> None:
    offsets: dict[int, dict[str, object]] = {
        0: {"orders": {"0": 5, "1": 3}},
        1: {"orders": {"0": 9, "1": 10}, "@topic-ids": {"orders": "x"}},
        2: {"orders": {"0": 12, "1": 10}},
    }
    root = _checkpoint(tmp_path / "cp", offsets, [0, 1])
    status = job_status(str(root), None, {})
    assert (status.last_batch, status.planned_batch, status.commit_user) == (1, 2, "lakecdc-user-1")
    text = render(status)
    assert "last batch   1 (planned 2026-05-28T" in text
    assert "in flight    batch 2 planned, not committed: run again on start" in text
    assert "kafka        orders partition 0: next offset 9\n" in text
    assert "kafka        orders partition 1: next offset 10\n" in text
    assert "tables       none committed yet" in text
    status.kafka_lag = {"orders": {"0": 3, "1": 0}}
    assert "kafka        orders partition 0: next offset 9, lag 3" in render(status)


def test_mysql_checkpoint_shows_the_binlog_position_and_the_snapshots_chunks(tmp_path: Path) -> None:
    chunks = [["shop", "a", None, 5], ["shop", "a", 5, None], ["shop", "b", None, None]]
    root = _checkpoint(tmp_path / "cp", {0: {"chunks": chunks, "done": 2, "binlog": ["mysql-bin.000003", 1234]}}, [0])
    (root / "lakecdc-tables.json").write_text(json.dumps(["ods.a"]))
    text = render(job_status(str(root), None, {}))
    assert "binlog       mysql-bin.000003:1234" in text
    assert "snapshot     shop.a: 2 of 2 chunks read" in text
    assert "snapshot     shop.b: 0 of 1 chunks read" in text
    assert "table        ods.a: give --warehouse to read it" in text


def test_the_warehouse_of_a_default_checkpoint(tmp_path: Path) -> None:
    assert default_warehouse(tmp_path / "wh" / "_lakecdc" / "checkpoints" / "job") == str((tmp_path / "wh").resolve())
    assert default_warehouse(tmp_path / "elsewhere") is None


def test_status_refuses_a_directory_that_is_no_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--checkpoint", str(tmp_path)]) == 2
    assert "is not a lakecdc checkpoint" in capsys.readouterr().err
    root = _checkpoint(tmp_path / "cp", {}, [])
    assert main(["status", "--checkpoint", str(root), "--output", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["last_batch"] is None and status["offsets"] == [] and status["tables"] == []
