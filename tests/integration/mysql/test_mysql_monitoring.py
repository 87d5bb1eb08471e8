"""Monitoring a MySQL job (#25): the snapshot's chunks done of planned in the progress events, the
binlog's seconds behind once the binlog is read, and ``lakecdc status`` on the checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.main import main
from ingest.cli.settings import SyncSettings
from ingest.job import run


def test_snapshot_chunks_binlog_lag_and_status(
    spark: Any, mariadb: LocalMariaDB, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    mariadb.execute("CREATE DATABASE monitored")
    mariadb.execute("CREATE TABLE monitored.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.execute(
        "INSERT INTO monitored.t VALUES " + ",".join(f"({i}, 'v{i}')" for i in range(1, 1201)), database="monitored"
    )
    mariadb.execute("ANALYZE TABLE monitored.t")  # the server's row estimate, as statistics would have it
    settings = SyncSettings(
        action="mysql-sync-table",
        warehouse=warehouse,
        database="ods",
        table="t",
        mysql_conf=mariadb.mysql_conf(
            **{"database-name": "monitored", "table-name": "t", "scan.incremental.snapshot.chunk.size": "500"}
        ),
        available_now=True,
        max_offsets_per_trigger=500,  # one chunk per micro-batch
    )
    with capture_logs() as logs:
        run(settings)
    events = [e for e in logs if e["event"] == "micro-batch progress"]
    chunks = [e["snapshot"]["monitored.t"] for e in events]
    assert [(c["chunks_done"], c["chunks_total"]) for c in chunks] == [(1, 3), (2, 3), (3, 3)]
    assert chunks[-1]["rows_done"] == 1200
    # "of about how many": InnoDB's estimate (information_schema.TABLES.TABLE_ROWS)
    assert all(900 <= c["rows_estimated"] <= 1500 for c in chunks)
    assert [e["rows"] for e in events] == [{"ods.t": 500}, {"ods.t": 500}, {"ods.t": 200}]
    # while chunks remain, the binlog is not read yet (the last batch may hold the binlog's catch-up)
    assert all("binlog_seconds_behind" not in e for e in events[:-1])

    # Changes after the snapshot: the next run reads them from the binlog, and knows how far behind it is.
    mariadb.execute("INSERT INTO monitored.t VALUES (5000, 'new')", "UPDATE monitored.t SET v = 'x' WHERE id = 1")
    with capture_logs() as logs:
        run(settings)
    events = [e for e in logs if e["event"] == "micro-batch progress"]
    assert [e["events"] for e in events] == [{"ods.t": 2}]
    assert 0 <= events[0]["binlog_seconds_behind"] < 600
    assert "snapshot" not in events[0]  # the snapshot was a former run's

    checkpoint = Path(warehouse) / "_lakecdc" / "checkpoints" / settings.job_name
    capsys.readouterr()
    assert main(["status", "--checkpoint", str(checkpoint)]) == 0
    out = capsys.readouterr().out
    assert f"last batch   {events[0]['batch']}" in out
    assert "binlog       " in out
    assert "table        ods.t: snapshot 4 (APPEND) at " in out
    assert f"last batch of this job {events[0]['batch']}" in out
