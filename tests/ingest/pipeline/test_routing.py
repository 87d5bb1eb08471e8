from __future__ import annotations

import re
from typing import Any

import pytest

from ingest.pipeline.routing import TableRouter
from schema_evolution.errors import MalformedMessage
from schema_evolution.identifiers import UnsafeIdentifierError, UnsafeNameError, shown


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
    from ingest.pipeline.parse_spec import ParseSpec

    router = TableRouter(database="ods", table_mapping={"a": "b"}, suffix_db={"x": "_x"})
    spec = KafkaSourceSpec(topics=("t",), parse=ParseSpec("canal-json", router))
    back = KafkaSourceSpec.from_json(spec.to_json())
    assert back.parse is not None and back.parse.router.route("x", "a") == "ods.b"
    assert back.parse.router.route("x", "c") == "ods.c_x"


def test_unmerged_shards_keep_their_database_in_the_name() -> None:
    router = TableRouter(database="ods", prefix="p_", merge_shards=False)
    assert router.route("shard_1", "orders") == "ods.p_shard_1_orders"
    assert TableRouter(database="ods").route("shard_1", "orders") == "ods.orders"


ESCAPING_TABLES = ["../../escaped_table", "/abs", "a/b", "a\\b", "..", ".", "nul\x00", "t$snapshots", "", "x" * 256]


@pytest.mark.parametrize("table", ESCAPING_TABLES, ids=repr)
def test_unsafe_source_table_names_are_refused_as_malformed_messages(table: str) -> None:
    router = TableRouter(database="ods")
    if table == "":
        assert router.route("shop", table) is None  # no table named: nothing to route
        return
    with pytest.raises(UnsafeNameError) as info:
        router.route("shop", table)
    assert isinstance(info.value, MalformedMessage) and info.value.position is None
    assert info.value.name == table and info.value.source == f"shop.{table}"
    assert str(info.value).startswith(f"the target table name {shown(table)} (source table")
    with pytest.raises(UnsafeNameError):  # refused again (a fresh error each time), never cached as safe
        router.route("shop", table)


def test_the_name_is_checked_after_prefix_suffix_shard_and_case_mapping() -> None:
    assert TableRouter(database="ods", prefix="p_").route("shop", ".x") == "ods.p_.x"  # the prefix hides the dot
    with pytest.raises(UnsafeNameError, match=r"name '\.x_s'"):
        TableRouter(database="ods", suffix="_s").route("shop", ".x")
    with pytest.raises(UnsafeNameError, match="path separator"):  # merge_shards false: '<db>_<table>'
        TableRouter(database="ods", merge_shards=False).route("a/b", "t")
    with pytest.raises(UnsafeNameError, match="256 bytes"):
        TableRouter(database="ods", prefix="p" * 200).route("shop", "t" * 56)
    # excluded source tables are never judged: they are not synced
    assert TableRouter(database="ods", excluding=r"\.\./.*").route("shop", "../../x") is None


def test_safe_routes_are_cached_and_unsafe_ones_stay_out_of_the_cache() -> None:
    router = TableRouter(database="ods")
    assert router.route("shop", "orders") == "ods.orders"
    with pytest.raises(UnsafeNameError):
        router.route("shop", "../x")
    assert router._routes == {("shop", "orders"): "ods.orders"}


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"database": "../x"}, "--database"),
        ({"database": "a.b"}, "--database"),
        ({"database": "ods", "table": "../x"}, "--table"),
        ({"database": "ods", "table": "t$ro"}, "--table"),
        ({"database": "ods", "table_mapping": {"a": "../b"}}, "--table-mapping a=../b"),
        ({"database": "ods", "prefix": "../"}, "--table-prefix / --table-suffix"),
        ({"database": "ods", "suffix": "$snapshots"}, "--table-prefix / --table-suffix"),
        ({"database": "ods", "prefix_db": {"shop": "x/"}}, "--table-prefix-db / --table-suffix-db of database shop"),
        ({"database": "ods", "suffix_db": {"shop": "\x00"}}, "--table-prefix-db / --table-suffix-db of database shop"),
    ],
)
def test_command_line_names_are_refused_when_the_router_is_made(kwargs: dict[str, Any], option: str) -> None:
    with pytest.raises(UnsafeIdentifierError, match=f"^{re.escape(option)}: "):
        TableRouter(**kwargs)
