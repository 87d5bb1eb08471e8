"""remove-orphan-files against real files: the files of a write that never committed (as a
micro-batch replayed after a crash leaves them) go once old enough; nothing a snapshot or tag
reads is touched."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa

from schema_evolution.types import int_, varchar
from sinks.compaction import compactor
from sinks.lifecycle import expire, orphans
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import INSERT, UPDATE_AFTER
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import _commit

DAY_S = 24 * 3600


def _uncommitted_write(wh: str) -> None:
    """Write files for a batch and never commit them (a crash before the commit)."""
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": wh}).get_table("db.t")
    write = t.new_stream_write_builder().with_commit_user("crashed").new_write()
    write.write_arrow(
        pa.RecordBatch.from_arrays(
            [pa.array([99], pa.int32()), pa.array(["ghost"]), pa.array([INSERT], pa.int8())],
            names=["id", "v", "_VALUE_KIND"],
        )
    )
    write.prepare_commit(True, 7)


def _age(paths: list[Path], seconds: float) -> None:
    past = time.time() - seconds
    for p in paths:
        os.utime(p, (past, past))


def test_orphans_of_an_uncommitted_write_are_removed_and_nothing_else(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", varchar(10))], ["id"], [], {"changelog-producer": "input"})
    for batch in range(4):
        _commit(wh, "db.t", batch, [(batch % 2, f"v{batch}", INSERT if batch < 2 else UPDATE_AFTER)])
    compactor.compact(wh, {}, "db.t", "c", 2**63 - 1, full=True)
    table_dir = Path(wh) / "db.db" / "t"
    store_files = [p for p in table_dir.rglob("*") if p.is_file()]
    _uncommitted_write(wh)
    ghosts = [p for p in table_dir.rglob("*") if p.is_file() and p not in store_files]
    assert ghosts  # a data file and its changelog file
    expected = read_rust(wh, "db.t")
    # Everything is two days old: only the unreferenced files are orphans.
    _age([p for p in table_dir.rglob("*") if p.is_file()], 2 * DAY_S)
    report = orphans.remove_orphan_files(wh, {}, "db.t", dry_run=True)
    assert sorted(report.orphans) == sorted(str(p) for p in ghosts) and all(p.exists() for p in ghosts)
    report = orphans.remove_orphan_files(wh, {}, "db.t")
    assert not any(p.exists() for p in ghosts) and all(p.exists() for p in store_files)
    assert read_rust(wh, "db.t") == expected == read_pypaimon(wh, "db.t")
    # A fresh uncommitted write (a writer mid-batch) is younger than the cut-off: left alone.
    _uncommitted_write(wh)
    assert orphans.remove_orphan_files(wh, {}, "db.t").orphans == ()
    # Files compaction replaced are still read by older snapshots: kept until expiry removes them.
    expire.expire_snapshots(wh, {}, "db.t", {"snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms"})
    assert read_rust(wh, "db.t") == expected
