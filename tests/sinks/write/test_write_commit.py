"""Executor writer and driver committer against real Paimon files, read back by pypaimon and
pypaimon-rust: row kinds, schema alignment, exactly-once on replay."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from schema_evolution.errors import UnsupportedChange
from schema_evolution.evolution import diff
from schema_evolution.types import bigint, int_, string, varchar
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import (
    CHUNK_SCHEMA,
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
    serialize_batch,
)
from sinks.write.committer import Committer
from sinks.write.writer import WriteContext, write_chunks
from tests.paimon_read import read_changelog, read_pypaimon, read_rust


def _chunk(table: str, rows: list[tuple[int, str | None]], kinds: list[int], first: int) -> dict:
    batch = pa.RecordBatch.from_arrays(
        [pa.array([r[0] for r in rows], pa.int32()), pa.array([r[1] for r in rows]), pa.array(kinds, pa.int8())],
        names=["id", "v", VALUE_KIND],
    )
    return {
        "table": table,
        "topic": "t",
        "kafka_partition": 0,
        "first_offset": first,
        "last_offset": first + len(rows),
        "seq": first,
        "schema": None,
        "rows": len(rows),
        "events": len(rows),
        "data": serialize_batch(batch),
        "ddl": None,
    }


def _write_and_commit(wh: str, catalog: Catalog, batch_id: int, chunks: list[dict], user: str = "u") -> bool:
    layout = catalog.load_layout("db.t")
    assert layout is not None
    ctx = WriteContext(wh, {}, user, batch_id, {"db.t": layout})
    out = list(write_chunks([pa.RecordBatch.from_pylist(chunks, schema=CHUNK_SCHEMA)], ctx))
    messages = [m for b in out for m in b.column("message").to_pylist()]
    return Committer(wh, {}, user).commit("db.t", batch_id, messages)


@pytest.fixture
def table(tmp_path: Path) -> tuple[str, Catalog]:
    wh = str(tmp_path / "wh")
    catalog = Catalog(wh)
    catalog.create_table("db.t", [("id", int_()), ("v", varchar(10))], ["id"], [], {"changelog-producer": "input"})
    return wh, catalog


def test_rows_kinds_and_replay_are_exactly_once(table: tuple[str, Catalog]) -> None:
    wh, catalog = table
    first = _chunk("db.t", [(1, "a"), (2, "b"), (3, "c")], [INSERT] * 3, 0)
    second = _chunk("db.t", [(1, "a"), (1, "a2"), (2, "b")], [UPDATE_BEFORE, UPDATE_AFTER, DELETE], 3)
    assert _write_and_commit(wh, catalog, 0, [first])
    assert _write_and_commit(wh, catalog, 1, [second])
    # Spark replays batch 1 after a crash: the same identifier is skipped, nothing doubles.
    assert not _write_and_commit(wh, catalog, 1, [second])
    expected = [{"id": 1, "v": "a2"}, {"id": 3, "v": "c"}]
    assert read_rust(wh, "db.t") == expected
    assert read_pypaimon(wh, "db.t") == expected
    assert read_changelog(wh, "db.t") == [
        ("+I", 1, "a"),
        ("+I", 2, "b"),
        ("+I", 3, "c"),
        ("-U", 1, "a"),
        ("+U", 1, "a2"),
        ("-D", 2, "b"),
    ]


def test_later_change_of_a_key_wins_within_one_batch(table: tuple[str, Catalog]) -> None:
    wh, catalog = table
    chunks = [
        _chunk("db.t", [(1, "a"), (1, "a"), (1, "b")], [INSERT, UPDATE_BEFORE, UPDATE_AFTER], 0),
        _chunk("db.t", [(1, "b"), (1, "c")], [UPDATE_BEFORE, UPDATE_AFTER], 3),
    ]
    assert _write_and_commit(wh, catalog, 0, chunks)
    assert read_rust(wh, "db.t") == [{"id": 1, "v": "c"}]


def test_chunks_of_an_older_schema_are_padded_after_add_column(table: tuple[str, Catalog]) -> None:
    wh, catalog = table
    layout = catalog.load_layout("db.t")
    assert layout is not None
    catalog.apply(layout, diff("db.t", layout.fields, [("id", int_()), ("v", string()), ("w", bigint())]))
    assert _write_and_commit(wh, catalog, 0, [_chunk("db.t", [(1, "a")], [INSERT], 0)])
    assert read_rust(wh, "db.t") == [{"id": 1, "v": "a", "w": None}]
    assert read_pypaimon(wh, "db.t") == [{"id": 1, "v": "a", "w": None}]


def test_updates_into_an_append_table_are_refused_with_their_position(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    catalog = Catalog(wh)
    catalog.create_table("db.t", [("id", int_()), ("v", varchar(10))], [], [], {})
    with pytest.raises(
        UnsupportedChange, match=r"offsets 0\.\.2 has updates or deletes, but the table has no primary key"
    ):
        _write_and_commit(wh, catalog, 0, [_chunk("db.t", [(1, "a"), (1, "b")], [UPDATE_BEFORE, UPDATE_AFTER], 0)])


def test_deletes_into_a_table_whose_merge_engine_cannot_take_them_are_refused(tmp_path: Path) -> None:
    # A table made elsewhere (or altered) with merge-engine=partial-update and no ignore-delete:
    # Paimon's readers would fail on its first -D row, so the writer refuses it, naming the offsets.
    wh = str(tmp_path / "wh")
    catalog = Catalog(wh)
    catalog.create_table("db.t", [("id", int_()), ("v", varchar(10))], ["id"], [], {"merge-engine": "partial-update"})
    assert _write_and_commit(wh, catalog, 0, [_chunk("db.t", [(1, "a"), (2, "b")], [INSERT, INSERT], 0)])
    with pytest.raises(UnsupportedChange, match=r"offsets 2\.\.3 has updates or deletes, but merge-engine=partial"):
        _write_and_commit(wh, catalog, 1, [_chunk("db.t", [(1, "a")], [DELETE], 2)])
    assert read_rust(wh, "db.t") == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
