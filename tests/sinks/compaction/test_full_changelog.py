"""changelog-producer=full-compaction: the changelog full compactions write, read back through
pypaimon-rust's streaming (changelog) scan, against Paimon's documented per-key rules."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from schema_evolution.types import bigint, int_, string, varchar
from sinks.compaction import compactor
from sinks.compaction.full_changelog import ChangelogOptions, full_changelog
from sinks.store import tables
from sinks.table.catalog import Catalog
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from tests.paimon_read import read_changelog, read_pypaimon, read_rust
from tests.sinks.compaction.test_compaction import Reference, _commit

S, K = "_SEQUENCE_NUMBER", "_VALUE_KIND"


def _rows(rows: list[tuple[int, int, int, str | None]]) -> pa.Table:
    return pa.table(
        {
            S: pa.array([r[0] for r in rows], pa.int64()),
            K: pa.array([r[1] for r in rows], pa.int8()),
            "id": pa.array([r[2] for r in rows], pa.int32()),
            "v": pa.array([r[3] for r in rows], pa.string()),
        }
    )


def test_per_key_rules() -> None:
    # key 1: top only -> nothing; 2: top + update -> -U/+U; 3: new -> +I; 4: top + delete -> -D;
    # 5: new and deleted -> nothing; 6: top + same value again -> -U/+U (row-deduplicate off).
    rows = _rows(
        [
            (1, INSERT, 1, "a"), (2, INSERT, 2, "b"), (3, INSERT, 4, "d"), (4, INSERT, 6, "f"),
            (10, UPDATE_AFTER, 2, "b2"), (11, INSERT, 3, "c"), (12, DELETE, 4, "d"),
            (13, INSERT, 5, "e"), (14, DELETE, 5, "e"), (15, UPDATE_AFTER, 6, "f"),
        ]
    )  # fmt: skip
    from_top = np.array([True] * 4 + [False] * 6)
    merged = _rows([(1, INSERT, 1, "a"), (10, UPDATE_AFTER, 2, "b2"), (11, INSERT, 3, "c"), (12, DELETE, 4, "d"),
                    (14, DELETE, 5, "e"), (15, UPDATE_AFTER, 6, "f")])  # fmt: skip

    def log(opts: ChangelogOptions) -> list[tuple[int, int, str]]:
        out = full_changelog(rows, from_top, merged, ["id"], ["v"], K, opts)
        return list(
            zip(out.column(K).to_pylist(), out.column("id").to_pylist(), out.column("v").to_pylist(), strict=True)
        )

    assert log(ChangelogOptions(producer="full-compaction")) == [
        (UPDATE_BEFORE, 2, "b"), (UPDATE_AFTER, 2, "b2"), (INSERT, 3, "c"), (DELETE, 4, "d"),
        (UPDATE_BEFORE, 6, "f"), (UPDATE_AFTER, 6, "f"),
    ]  # fmt: skip
    assert log(ChangelogOptions(producer="full-compaction", row_deduplicate=True)) == [
        (UPDATE_BEFORE, 2, "b"), (UPDATE_AFTER, 2, "b2"), (INSERT, 3, "c"), (DELETE, 4, "d"),
    ]  # fmt: skip
    everything_ignored = ChangelogOptions(
        producer="full-compaction", row_deduplicate=True, ignore_fields=frozenset({"v"})
    )
    assert log(everything_ignored) == [(INSERT, 3, "c"), (DELETE, 4, "d")]


@pytest.mark.parametrize("dedupe", [False, True])
def test_stream_of_full_compactions_replays_to_the_table(tmp_path: Path, dedupe: bool) -> None:
    wh = str(tmp_path / "wh")
    options = {"bucket": "2", "changelog-producer": "full-compaction", "num-sorted-run.compaction-trigger": "3"}
    if dedupe:
        options["changelog-producer.row-deduplicate"] = "true"
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", varchar(20))], ["id"], [], options)
    ref = Reference()
    rng = random.Random(7)
    replay: dict[int, str | None] = {}
    seen = 0
    for batch in range(1, 25):
        changes = ref.changes(rng, rng.randrange(1, 15), 30)
        if batch % 3 == 0 and ref.rows:
            key = next(iter(ref.rows))  # an update to the same value: no changelog with row-deduplicate
            changes.append((key, ref.rows[key], UPDATE_AFTER))
        _commit(wh, "db.t", batch, changes)
        compactor.compact(wh, {}, "db.t", "compactor", batch, full=batch % 4 == 0)
        log = read_changelog(wh, "db.t")
        for kind, key, value in log[seen:]:
            if kind in ("+I", "+U"):
                assert kind == "+I" or replay.get(key, "missing") != "missing"
                assert kind == "+U" or key not in replay, f"+I of {key} twice"
                replay[key] = value
            elif kind == "-D":
                assert replay.pop(key) == value
            else:
                assert replay[key] == value  # -U carries what the previous full compaction showed
        seen = len(log)
        if batch % 4 == 0:
            # Right after a full compaction the changelog so far replays to the table.
            expected = ref.expected()
            assert [{"id": k, "v": v} for k, v in sorted(replay.items())] == expected
            assert read_rust(wh, "db.t") == expected == read_pypaimon(wh, "db.t")
    snapshots = tables.open_table(wh, {}, "db.t").snapshot_manager().list_snapshots()
    with_log = {s.commit_kind for s in snapshots if s.changelog_manifest_list}
    assert with_log == {"COMPACT"}  # the writer's APPEND commits carry no changelog
    # Unchanged keys give -U/+U of equal rows unless changelog-producer.row-deduplicate=true.
    assert bool(_pairs_unchanged(read_changelog(wh, "db.t"))) is not dedupe


def _pairs_unchanged(log: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """-U rows immediately followed by a +U of the same key and value."""
    return [a for a, b in itertools.pairwise(log) if a[0] == "-U" and b[0] == "+U" and a[1:] == b[1:]]


@pytest.mark.parametrize(
    "engine",
    [
        "deduplicate",
        "partial-update ignore-delete",
        "partial-update remove-record-on-delete",
        "aggregation",
        "first-row",
        "deduplicate deletion-vectors",
        "first-row deletion-vectors",
    ],
)
def test_lookup_changelog_replays_to_the_table_after_every_commit(tmp_path: Path, engine: str) -> None:
    """changelog-producer=lookup: the compaction after each commit writes that commit's net change
    per key, merged as the table's engine merges; replayed, it is the table after every commit
    (MOW tables too, whose older versions are marked in deletion vectors meanwhile)."""
    from tests.sinks.compaction.test_merge_engines import ENGINES, _changes, _write

    wh = str(tmp_path / "wh")
    engine, _, mow = engine.partition(" deletion-vectors")
    options = {"bucket": "2", "num-sorted-run.compaction-trigger": "3", **ENGINES.get(engine, {})}
    if mow:
        options["deletion-vectors.enabled"] = "true"
    options["changelog-producer"] = "lookup"
    if engine == "aggregation":
        options["changelog-producer.row-deduplicate"] = "true"
    fields = [("id", int_()), ("a", bigint()), ("b", string()), ("c", int_())]
    Catalog(wh).create_table("db.t", fields, ["id"], [], options)
    rng = random.Random(engine)
    live: dict[int, dict[str, Any]] = {}
    replay: dict[int, dict[str, Any]] = {}
    seen = 0
    for batch in range(1, 26):
        _write(wh, batch, _changes(rng, live, rng.randrange(1, 12)))
        compactor.compact(wh, {}, "db.t", "compactor", batch, full=batch % 9 == 0)
        log = read_changelog(wh, "db.t", ("id", "a", "b", "c"))
        for kind, key, *values in log[seen:]:
            row = dict(zip(("a", "b", "c"), values, strict=True))
            if kind == "+I":
                assert key not in replay, f"+I of {key} twice"
                replay[key] = row
            elif kind == "+U":
                assert key in replay
                replay[key] = row
            elif kind == "-U":
                assert replay[key] == row  # the value readers saw before this commit
            else:
                assert replay.pop(key) == row
        seen = len(log)
        replayed = [{"id": k, **v} for k, v in sorted(replay.items())]
        assert replayed == read_rust(wh, "db.t"), f"after batch {batch}"
        if mow:  # (pypaimon merges only some engines' options; MOW readers merge nothing)
            assert replayed == read_pypaimon(wh, "db.t"), f"after batch {batch}"
    assert seen > 20
    kinds = {k for k, *_ in read_changelog(wh, "db.t", ("id", "a", "b", "c"))}
    # Only remove-record-on-delete removes a key: ignore-delete drops deletes, aggregation retracts
    # them into the aggregate, first-row keeps the first row.
    expected = (
        {"+I"}
        if engine == "first-row"
        else {"+I", "-U", "+U"} | ({"-D"} if "remove" in engine or engine == "deduplicate" else set())
    )
    assert kinds == expected
