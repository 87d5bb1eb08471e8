"""The snapshot registry keeps the high watermark that matches what Paimon holds."""

from __future__ import annotations

import json
from pathlib import Path

from ingest.mysql.snapshot import KnownTables, SnapshotRegistry


def test_registry_never_replaces_the_watermark_of_committed_rows(tmp_path: Path) -> None:
    registry = SnapshotRegistry(str(tmp_path))

    def mark(hw: int) -> str:
        return json.dumps(
            {"chunk": 0, "database": "d", "table": "t", "target": "ods.t", "lo": None, "hi": 10, "hw": ["b.1", hw]}
        )

    registry.record(0, [mark(100)], committed=lambda table: False)
    # A replay whose first attempt never committed: its rows are the new attempt's, so is the HW.
    registry.record(0, [mark(150)], committed=lambda table: False)
    assert registry.by_table() == {"d.t": [(None, 10, "b.1", 150)]}
    # A replay of a committed batch: Paimon holds the first attempt's rows, as of the recorded HW.
    registry.record(0, [mark(200)], committed=lambda table: table == "ods.t")
    assert registry.by_table() == {"d.t": [(None, 10, "b.1", 150)]}


def test_known_tables_grow_and_tell_an_old_checkpoint(tmp_path: Path) -> None:
    known = KnownTables(str(tmp_path))
    assert known.load() is None  # a checkpoint from before the list: nothing is taken for newly matched
    known.save([("d", "a")])
    known.add([("d", "a"), ("d", "b")])
    known.add([("d", "a")])
    assert known.load() == {"d.a", "d.b"}


def test_high_watermarks_retired_after_a_failover_filter_nothing(tmp_path: Path) -> None:
    """After a failover the HWs are the old server's positions: they no longer filter the binlog
    (``ingest.mysql.failover``), and the chunks stay known; retiring twice changes nothing."""
    registry = SnapshotRegistry(str(tmp_path))
    mark = {"chunk": 0, "database": "d", "table": "t", "target": "ods.t", "lo": None, "hi": None, "hw": ["b.1", 9]}
    registry.record(0, [json.dumps(mark)], committed=lambda table: False)
    assert registry.high_watermarks() == [("b.1", 9)]
    registry.retire_high_watermarks()
    registry.retire_high_watermarks()
    assert registry.by_table() == {} and registry.high_watermarks() == []
    assert registry.load()["0"]["old_hw"] == ["b.1", 9] and registry.load()["0"]["table"] == "t"
