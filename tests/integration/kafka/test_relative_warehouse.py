"""A sync job as a user types it after ``make demo``: ``--warehouse warehouse``, relative to the
directory the command runs in, and a ``file:`` URI checkpoint. pypaimon-rust (the executors' writer)
takes no relative path, so this only works because the CLI resolves both at start-up."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from deploy.canal_stream import generate
from deploy.local_kafka import LocalKafka
from tests.conftest import ROOT
from tests.paimon_read import read_pypaimon, read_rust


def test_kafka_sync_with_a_relative_warehouse_and_a_file_uri_checkpoint(
    kafka: LocalKafka, tmp_path: Path, topic_name: str
) -> None:
    kafka.create_topic(topic_name, 1)
    stream = generate(tables=("orders",), keys=20, updates=1, seed=5)
    kafka.produce(topic_name, stream.messages)
    work = tmp_path / "work"
    work.mkdir()
    argv = [sys.executable, "-m", "ingest", "kafka_sync_database", "--warehouse", "warehouse"]
    argv += ["--checkpoint", "file:state/ck", "--database", "ods", "--available-now"]
    argv += ["--kafka_conf", f"properties.bootstrap.servers={kafka.bootstrap}", "--kafka_conf", f"topic={topic_name}"]
    argv += ["--kafka_conf", "value.format=canal-json", "--spark-conf", "spark.master=local[2]"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"lakecdc: \d+ change events", done.stdout), done.stdout
    warehouse = str(work / "warehouse")
    rows = read_rust(warehouse, "ods.orders")
    assert len(rows) == len(stream.expected["orders"]) == len(read_pypaimon(warehouse, "ods.orders"))
    # The checkpoint is where the URI points, and nothing else was created beside them.
    assert (work / "state" / "ck" / "lakecdc-commit-user").is_file()
    assert sorted(p.name for p in work.iterdir()) == ["state", "warehouse"]
    assert not (work / "warehouse" / "_lakecdc").exists()
