"""The maintenance actions from the command line, in Paimon's spelling, on a real table."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from ingest.cli.main import main
from schema_evolution.types import int_, varchar
from sinks.store.manifests import live_files
from sinks.store.tables import open_table
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import INSERT, UPDATE_AFTER
from tests.paimon_read import read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import _commit


@pytest.fixture
def wh(tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", varchar(20))], ["id"], [], {"changelog-producer": "input"})
    for batch in range(12):
        _commit(wh, "db.t", batch, [(batch % 4, f"v{batch}", INSERT if batch < 4 else UPDATE_AFTER)])
    return wh


def _levels(wh: str) -> list[int]:
    return sorted(m.level for metas in live_files(open_table(wh, {}, "db.t")).values() for m in metas)


def test_compact_expire_tag_rollback(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--warehouse", wh, "--database", "db", "--table", "t"]
    expected = [{"id": i, "v": f"v{8 + i}"} for i in range(4)]
    assert main(["create_tag", *base, "--tag_name", "before", "--snapshot", "4"]) == 0
    assert main(["compact", *base]) == 0
    assert "compacted 1 buckets, 12 files into 1" in capsys.readouterr().out
    assert _levels(wh) == [5]
    assert read_rust(wh, "db.t") == expected == read_pypaimon(wh, "db.t")
    # Compact the whole database (every table) with the minor strategy: nothing left to do.
    assert main(["compact", "--warehouse", wh, "--database", "db", "--compact_strategy", "minor"]) == 0
    assert "db.t: nothing to compact" in capsys.readouterr().out

    assert main(["expire_snapshots", *base, "--retain_min", "2", "--older_than", "2999-01-01 00:00:00"]) == 0
    assert "11 snapshots expired (earliest kept 12)" in capsys.readouterr().out
    assert read_rust(wh, "db.t") == expected

    assert main(["rollback_to", *base, "--version", "before"]) == 0
    assert "rolled back to snapshot 4" in capsys.readouterr().out
    assert read_rust(wh, "db.t") == [{"id": i, "v": f"v{i}"} for i in range(4)] == read_pypaimon(wh, "db.t")
    assert main(["remove_orphan_files", *base, "--dry_run", "true"]) == 0
    assert "0 orphan files found (dry run)" in capsys.readouterr().out
    assert main(["delete_tag", *base, "--tag_name", "before"]) == 0
    assert main(["delete_tag", *base, "--tag_name", "before"]) == 2
    assert "no such tag: before" in capsys.readouterr().err


def test_bad_arguments_are_named(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--warehouse", wh, "--database", "db", "--table", "t"]
    assert main(["expire-snapshots", *base, "--older-than", "yesterday"]) == 2
    assert "--older-than 'yesterday'" in capsys.readouterr().err
    assert main(["compact", *base, "--partition", "p"]) == 2
    assert "--partition expects k=v" in capsys.readouterr().err
    assert main(["rollback-to", *base, "--version", "77"]) == 2
    assert "has no snapshot 77" in capsys.readouterr().err


def test_drop_partition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa
    from pypaimon_rust.datafusion import PaimonCatalog

    from schema_evolution.types import decimal

    wh = str(tmp_path / "wh")
    Catalog(wh).create_table(
        "db.p", [("id", int_()), ("pt", decimal(2, 1))], ["id", "pt"], ["pt"], {"changelog-producer": "input"}
    )
    builder = PaimonCatalog({"warehouse": wh}).get_table("db.p").new_stream_write_builder().with_commit_user("u")
    write = builder.new_write()
    write.write_arrow(
        pa.RecordBatch.from_arrays(
            [
                pa.array([1, 2, 3], pa.int32()),
                pa.array([Decimal("1.1"), Decimal("2.2"), Decimal("1.1")], pa.decimal128(2, 1)),
                pa.array([0, 0, 0], pa.int8()),
            ],
            names=["id", "pt", "_VALUE_KIND"],
        )
    )
    builder.new_commit().filter_and_commit({0: write.prepare_commit(True, 0)})
    base = ["--warehouse", wh, "--database", "db", "--table", "p"]
    assert main(["drop_partition", *base, "--partition", "pt=1.1"]) == 0
    assert "dropped 1 partition(s)" in capsys.readouterr().out
    assert [r["id"] for r in read_rust(wh, "db.p")] == [2] == [r["id"] for r in read_pypaimon(wh, "db.p")]
    assert main(["drop_partition", *base, "--partition", "pt=x"]) == 2
    assert "pt=x is not a value of type DECIMAL(2, 1)" in capsys.readouterr().err


def test_compact_merges_append_tables_and_skips_those_it_cannot(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.sinks.compaction import test_append_compaction as append

    append._create(wh, {})
    for batch in range(3):
        append._commit(wh, batch, [(batch, "x")])
    Catalog(wh).create_table("db.tracked", [("id", int_())], [], [], {"row-tracking.enabled": "true"})
    # A full compaction merges a partition's small files, however few.
    assert main(["compact", "--warehouse", wh, "--database", "db", "--table", "a"]) == 0
    assert "db.a: compacted 1 buckets, 3 files into 1" in capsys.readouterr().out
    assert read_rust(wh, "db.a") == [{"id": b, "v": "x"} for b in range(3)] == read_pypaimon(wh, "db.a")
    # The whole database: the table it cannot compact is skipped with the reason, the others done.
    assert main(["compact", "--warehouse", wh, "--database", "db"]) == 0
    out = capsys.readouterr()
    assert "db.t: compacted 1 buckets" in out.out
    assert "db.tracked: skipped" in out.err and "row-tracking.enabled=true" in out.err
    assert main(["compact", "--warehouse", wh, "--database", "db", "--table", "tracked"]) == 2
    assert "lakecdc does not compact this append table" in capsys.readouterr().err


def test_rollback_and_rescale_wait_for_the_writing_job(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    """rollback-to and rescale rewrite what a running writer builds on: while a sync job holds the
    table's lease they are refused naming it and change nothing; compaction still runs beside it."""
    from sinks.write.committer import Committer
    from sinks.write.lease import Fence, Owner

    base = ["--warehouse", wh, "--database", "db", "--table", "t"]
    assert main(["create_tag", *base, "--tag_name", "before", "--snapshot", "4"]) == 0
    directory = Committer(wh, {}, "").table_directory("db.t")
    assert directory is not None
    job = Fence(Owner.this_process("job 'orders' (checkpoint /ck)"))
    job.hold(directory, "table db.t")
    try:
        capsys.readouterr()
        assert main(["rollback_to", *base, "--version", "before"]) == 1
        err = capsys.readouterr().err
        assert "table db.t is in use by another job: job 'orders' (checkpoint /ck)" in err
        assert main(["rescale", *base, "--bucket_num", "2"]) == 1
        assert "in use by another job" in capsys.readouterr().err
        assert read_rust(wh, "db.t") == [{"id": i, "v": f"v{8 + i}"} for i in range(4)]
        assert main(["compact", *base]) == 0
    finally:
        job.close()
    assert main(["rollback_to", *base, "--version", "before"]) == 0
    assert read_rust(wh, "db.t") == [{"id": i, "v": f"v{i}"} for i in range(4)] == read_pypaimon(wh, "db.t")
    # the action released the lease it took: a job can take it again
    again = Fence(Owner.this_process("job 'orders'"))
    again.hold(directory, "table db.t")
    again.close()
