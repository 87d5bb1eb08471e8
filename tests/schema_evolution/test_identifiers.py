"""Which database and table names may become Paimon directories (schema_evolution.identifiers)."""

from __future__ import annotations

import pickle

import pytest

from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.identifiers import (
    NAME_MAX_BYTES,
    UnsafeIdentifierError,
    UnsafeNameError,
    check_name,
    shown,
    split_identifier,
    unsafe_reason,
)

# (name, a word of the reason): refused as a table name and as a database name
REFUSED_EVERYWHERE = [
    ("", "empty"),
    ("   ", "white space"),
    (".", "directory itself"),
    ("..", "directory itself"),
    ("../../escaped_table", "path separator"),
    ("../x", "path separator"),
    ("/abs", "path separator"),
    ("a/b", "path separator"),
    ("a\\b", "path separator"),
    ("..\\x", "path separator"),
    ("nul\x00byte", "U+0000"),
    ("tab\tname", "U+0009"),
    ("new\nline", "U+000A"),
    ("esc\x1b[31m", "U+001B"),
    ("del\x7f", "U+007F"),
    ("c1\x85", "U+0085"),
    ("line\u2028sep", "U+2028"),
    ("rtl\u202eevil", "U+202E"),
    ("lone\ud800surrogate", "U+D800"),
    (".hidden", "starts with '.'"),
    ("..x", "starts with '.'"),
    ("a`b", "'`'"),
    ("a`b`c", "'`'"),
    ("x" * (NAME_MAX_BYTES + 1), "256 bytes"),
    ("é" * 128, "256 bytes"),  # 128 characters, 256 bytes of UTF-8
]

GOOD_NAMES = [
    "orders",
    "Orders_2024",
    "a.b",  # a table name may hold a dot: Paimon splits 'db.a.b' at the first one
    "a..b",
    "x.",
    "订单",
    "zählerstände",
    "emoji_🦆",
    "with space",
    "a-b",
    "a:b",
    "a#b",
    "a?b",
    "%2e%2e",  # no URI decoding anywhere: a plain name
    "a;b'c\"d",
    "x" * NAME_MAX_BYTES,
    "é" * 127 + "x",  # 255 bytes
]


@pytest.mark.parametrize(("name", "why"), REFUSED_EVERYWHERE, ids=repr)
@pytest.mark.parametrize("kind", ["table", "database"])
def test_unsafe_names_are_refused_with_their_reason(name: str, why: str, kind: str) -> None:
    reason = unsafe_reason(name, kind)
    assert reason is not None
    if kind == "table" or "bytes" not in why:  # a database's limit counts its '.db' suffix
        assert why in reason


@pytest.mark.parametrize("name", GOOD_NAMES, ids=repr)
def test_good_table_names_pass(name: str) -> None:
    assert unsafe_reason(name, "table") is None
    assert check_name(name) == name


def test_dollar_is_refused_in_table_names_only() -> None:
    for name in ("t$snapshots", "t$branch_b", "$", "a$"):
        reason = unsafe_reason(name, "table")
        assert reason is not None and "'$'" in reason
    assert unsafe_reason("shop$eu", "database") is None  # no meaning in a database name


def test_dot_is_refused_in_database_names_only() -> None:
    reason = unsafe_reason("a.b", "database")
    assert reason is not None and "'.'" in reason
    assert unsafe_reason("a.b", "table") is None


def test_a_database_name_counts_paimons_db_suffix() -> None:
    assert unsafe_reason("d" * (NAME_MAX_BYTES - 3), "database") is None
    reason = unsafe_reason("d" * (NAME_MAX_BYTES - 2), "database")
    assert reason is not None and "256 bytes in UTF-8 with Paimon's '.db' suffix" in reason


def test_split_identifier_splits_at_the_first_dot_and_checks_both() -> None:
    assert split_identifier("ods.a.b") == ("ods", "a.b")
    with pytest.raises(UnsafeIdentifierError, match=r"has no '\.'"):
        split_identifier("orders")
    with pytest.raises(UnsafeIdentifierError, match=r"database name '' is refused: the name is empty"):
        split_identifier("../x")  # database '', table './x'
    with pytest.raises(UnsafeIdentifierError, match=r"table name '\.\./x' is refused"):
        split_identifier("ods.../x")
    with pytest.raises(UnsafeIdentifierError, match=r"table name 't\$snapshots'"):
        split_identifier("ods.t$snapshots")


def test_cli_error_names_the_option_and_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^--table: table name '\.\./\.\./x' is refused: the name contains a path"):
        check_name("../../x", "table", "--table")


def test_names_are_shown_escaped_and_cut() -> None:
    assert shown("a\x00b") == "'a\\x00b'"
    assert shown("rtl\u202e") == "'rtl\\u202e'"
    long = shown("x" * 1000)
    assert long.startswith("'" + "x" * 60 + "'...") and long.endswith("(1000 characters)")


def test_unsafe_name_error_is_a_malformed_message_with_its_own_text() -> None:
    error = UnsafeNameError("table", "../../escaped_table", "the name contains a path separator", "db.../x")
    assert isinstance(error, MalformedMessage)
    assert error.position is None
    text = str(error)
    assert text.startswith("the target table name '../../escaped_table' (source table 'db.../x') is refused")
    assert "--excluding-tables" in text and "--errors-tolerance all" in text
    assert "fix or remove" not in text  # independent of MalformedMessage's generic advice

    placed = error.at(SourcePosition("cdc", 2, 41), "canal-json")
    assert placed.position == SourcePosition("cdc", 2, 41) and placed.format == "canal-json"
    assert str(placed).startswith("canal-json message at topic 'cdc', partition 2, offset 41: the target table name")
    assert placed.reason == error.reason and placed.why == error.why and placed.name == error.name
    assert error.reason == (  # a dead letter's error_message: which name, and why
        "the target table name '../../escaped_table' (source table 'db.../x') is refused: the name contains a path "
        "separator"
    )


def test_unsafe_name_error_survives_pickling() -> None:
    error = UnsafeNameError("table", "a\x00", "bad", "db.a\x00", SourcePosition("t", 0, 1), "debezium-json")
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is UnsafeNameError and str(back) == str(error) and back.position == error.position
