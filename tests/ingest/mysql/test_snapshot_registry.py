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
