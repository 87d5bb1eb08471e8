"""Where data files live (sinks.store.files): compaction writes in the bucket directories Java and
pypaimon-rust name, legacy partition names and escaping included."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from schema_evolution.types import int_, string, varchar
from sinks.compaction import compactor
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import INSERT
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import USER


@pytest.mark.parametrize("mow", [False, True], ids=["mor", "mow"])
def test_compaction_writes_where_java_and_rust_look_for_date_and_escaped_partitions(tmp_path: Path, mow: bool) -> None:
    # Java's legacy partition names (the default) give a DATE as its day number and escape ':' in a
    # string; pypaimon-rust writes there, and so must compaction, or readers miss its files.
    import datetime as dt

    from pypaimon_rust.datafusion import PaimonCatalog

    from schema_evolution.types import parse_type

    wh = str(tmp_path / "wh")
    fields = [("id", int_()), ("v", varchar(20)), ("d", parse_type("DATE")), ("s", string())]
    options = {"bucket": "1", "changelog-producer": "input", "num-sorted-run.compaction-trigger": "2"}
    if mow:
        options["deletion-vectors.enabled"] = "true"
    Catalog(wh).create_table("db.t", fields, ["id", "d", "s"], ["d", "s"], options)
    days, labels = [dt.date(2024, 1, 1), dt.date(2024, 1, 2)], ["10:00", "a b"]
    expected: dict[tuple[int, dt.date, str], str] = {}
    for batch in range(4):
        rows = [(i, f"v{batch}-{i}", days[i % 2], labels[(i // 2) % 2]) for i in range(batch, batch + 6)]
        builder = PaimonCatalog({"warehouse": wh}).get_table("db.t").new_stream_write_builder()
        write = builder.with_commit_user(USER).new_write()
        columns = list(zip(*rows, strict=True))
        arrays = [pa.array(columns[0], pa.int32()), pa.array(columns[1]), pa.array(columns[2], pa.date32())]
        arrays += [pa.array(columns[3]), pa.array([INSERT] * len(rows), pa.int8())]
        write.write_arrow(pa.RecordBatch.from_arrays(arrays, names=["id", "v", "d", "s", "_VALUE_KIND"]))
        assert builder.new_commit().filter_and_commit({batch: write.prepare_commit(True, batch)}) == 1
        full = not mow and batch % 2 == 1  # (MOR: a full compaction every other commit)
        report = compactor.compact(wh, {}, "db.t", USER, batch, full=full)
        assert report.committed or not (mow or full)
        expected.update({(i, d, s): v for i, v, d, s in rows})
        want = sorted((i, str(d), s, v) for (i, d, s), v in expected.items())
        for reader in (read_rust, read_pypaimon):
            assert sorted((r["id"], str(r["d"]), r["s"], r["v"]) for r in reader(wh, "db.t")) == want
    directories = {
        p.relative_to(Path(wh) / "db.db" / "t").parts[:2] for p in (Path(wh) / "db.db" / "t").rglob("*.parquet")
    }
    assert directories == {(f"d={(d - dt.date(1970, 1, 1)).days}", s) for d in days for s in ("s=10%3A00", "s=a b")}
