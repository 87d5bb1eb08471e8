from __future__ import annotations

from ingest.routing import TableRouter


def test_table_sync_sends_everything_to_one_table() -> None:
    r = TableRouter(database="ods", table="all_orders")
    assert r.route("shop", "orders") == "ods.all_orders"
    assert r.route(None, None) == "ods.all_orders"


def test_database_sync_applies_prefix_suffix_and_full_match_filters() -> None:
    r = TableRouter(database="ods", prefix="p_", suffix="_s", including="t.*", excluding="tmp")
    assert r.route("shop", "t1") == "ods.p_t1_s"
    assert r.route("shop", "tmp") is None  # excluded
    assert r.route("shop", "xt1") is None  # including is a full match, not a search
    assert r.route("shop", "tmpx") == "ods.p_tmpx_s"  # excluding is a full match too
