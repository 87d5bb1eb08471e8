"""The worker's cache of upper-level files for lookup compactions: bounded, least recently used
first out, and never holding a file larger than its budget."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from schema_evolution.types import int_, string
from sinks.compaction import compactor, lookup_cache
from sinks.compaction.lookup_cache import FileCache
from sinks.table.catalog import Catalog
from sinks.table.options import validate_table_options
from sinks.write.chunk_format import INSERT, UPDATE_AFTER
from tests.paimon_read import read_changelog, read_rust
from tests.sinks.compaction.test_compaction import _commit


def _rows(n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(n), pa.int64())})


def test_keeps_rows_and_counts_hits() -> None:
    cache = FileCache()
    loads: list[str] = []

    def load(name: str, n: int) -> pa.Table:
        loads.append(name)
        return _rows(n)

    first = cache.get("a", lambda: load("a", 10), 1 << 20)
    again = cache.get("a", lambda: load("a", 10), 1 << 20)
    assert again is first and loads == ["a"]
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    assert cache.size_bytes == first.get_total_buffer_size()


def test_drops_least_recently_used_first() -> None:
    cache = FileCache()
    one = _rows(100).get_total_buffer_size()  # 800 bytes
    limit = 2 * one
    cache.get("a", lambda: _rows(100), limit)
    cache.get("b", lambda: _rows(100), limit)
    cache.get("a", lambda: _rows(100), limit)  # a is now the most recent
    cache.get("c", lambda: _rows(100), limit)  # over budget: b goes
    misses = cache.misses
    cache.get("a", lambda: _rows(100), limit)
    cache.get("c", lambda: _rows(100), limit)
    assert cache.misses == misses
    cache.get("b", lambda: _rows(100), limit)
    assert cache.misses == misses + 1
    assert cache.size_bytes <= limit and len(cache) == 2


def test_a_file_over_the_budget_is_read_each_time() -> None:
    cache = FileCache()
    cache.get("small", lambda: _rows(10), 1000)
    big = cache.get("big", lambda: _rows(1000), 1000)
    assert big.num_rows == 1000 and len(cache) == 1
    cache.get("big", lambda: _rows(1000), 1000)
    assert cache.misses == 3
    assert len(cache) == 1  # and the small file stayed
    cache.get("x", lambda: _rows(1), 0)  # lookup.cache-max-memory-size=0 turns it off
    assert len(cache) == 0 and cache.size_bytes == 0


def test_budget_is_paimons_option() -> None:
    assert lookup_cache.budget({}) == 256 << 20
    assert lookup_cache.budget({"lookup.cache-max-memory-size": "64 mb"}) == 64 << 20
    with pytest.raises(ValueError, match=r"lookup\.cache-max-memory-size"):
        validate_table_options({"lookup.cache-max-memory-size": "lots"}, has_primary_key=True)


@pytest.mark.parametrize("engine", ["deduplicate", "first-row"])
def test_lookup_compactions_read_the_top_level_once(tmp_path: Path, engine: str) -> None:
    """A bucket compacted into its top level, then small commits: each commit's lookup compaction
    takes the top-level file from the cache, and the changelog and the table stay right."""
    wh = str(tmp_path / "wh")
    options = {"bucket": "1", "merge-engine": engine}
    options["changelog-producer"] = "none" if engine == "first-row" else "lookup"
    Catalog(wh).create_table("db.t", [("id", int_()), ("v", string())], ["id"], [], options)
    _commit(wh, "db.t", 1, [(i, f"v{i}", INSERT) for i in range(2000)])
    compactor.compact(wh, {}, "db.t", "compactor", 1, full=True)
    hits = lookup_cache.FILES.hits
    for batch in (2, 3, 4):
        _commit(wh, "db.t", batch, [(batch, f"new{batch}", UPDATE_AFTER), (5000 + batch, "x", INSERT)])
        compactor.compact(wh, {}, "db.t", "compactor", batch, full=False)
    assert lookup_cache.FILES.hits >= hits + 2
    rows = {r["id"]: r["v"] for r in read_rust(wh, "db.t")}
    assert len(rows) == 2003
    for batch in (2, 3, 4):
        # first-row keeps a key's first row; deduplicate takes the update
        assert rows[batch] == (f"v{batch}" if engine == "first-row" else f"new{batch}")
        assert rows[5000 + batch] == "x"
    if engine == "deduplicate":
        log = read_changelog(wh, "db.t")
        assert log[-3:] == [("-U", 4, "v4"), ("+U", 4, "new4"), ("+I", 5004, "x")]
