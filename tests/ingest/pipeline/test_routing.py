from __future__ import annotations

from ingest.pipeline.routing import TableRouter


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


def test_database_filters_mapping_and_per_database_affixes_follow_paimons_precedence() -> None:
    r = TableRouter(
        database="ods",
        prefix="p_",
        suffix="_s",
        including_dbs="shop|crm",
        excluding_dbs="crm",
        table_mapping={"orders": "fact_orders"},
        prefix_db={"shop": "shop_"},
    )
    assert r.route("shop", "orders") == "ods.fact_orders"  # mapping wins over every affix
    assert r.route("shop", "items") == "ods.shop_items_s"  # the db prefix replaces the global one
    assert r.route("crm", "items") is None  # excluded database
    assert r.route("hr", "items") is None  # not an included database
    assert r.route("shop", "items") == "ods.shop_items_s"  # (cached answer is the same)


def test_router_survives_the_json_round_trip_of_the_source_spec() -> None:
    from ingest.kafka.source import KafkaSourceSpec
    from ingest.pipeline.assembler import ParseSpec

    router = TableRouter(database="ods", table_mapping={"a": "b"}, suffix_db={"x": "_x"})
    spec = KafkaSourceSpec(topics=("t",), parse=ParseSpec("canal-json", router))
    back = KafkaSourceSpec.from_json(spec.to_json())
    assert back.parse is not None and back.parse.router.route("x", "a") == "ods.b"
    assert back.parse.router.route("x", "c") == "ods.c_x"


def test_unmerged_shards_keep_their_database_in_the_name() -> None:
    router = TableRouter(database="ods", prefix="p_", merge_shards=False)
    assert router.route("shard_1", "orders") == "ods.p_shard_1_orders"
    assert TableRouter(database="ods").route("shard_1", "orders") == "ods.orders"
