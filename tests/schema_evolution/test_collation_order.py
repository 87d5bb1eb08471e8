"""Where Python may order a string key as its MySQL collation does (the server's own order is checked in
``tests/integration/mysql/test_string_key_chunks.py``)."""

from __future__ import annotations

from schema_evolution.collation_order import local_order


def test_binary_collations_order_by_code_point_and_ignore_trailing_spaces_under_pad_space() -> None:
    assert local_order("utf8mb4_bin", "B") < local_order("utf8mb4_bin", "a")  # type: ignore[operator]
    assert local_order("utf8mb4_bin", "a  ") == local_order("utf8mb4_bin", "a")
    assert local_order("utf8mb4_nopad_bin", "a ") != local_order("utf8mb4_nopad_bin", "a")
    assert local_order("utf8mb4_bin", "é") == "é"
    assert local_order("utf8mb4_bin", "a\tb") is None  # below the space: padding would order it
    assert local_order("ascii_bin", "é") is None


def test_case_insensitive_collations_fold_case_for_the_characters_proven() -> None:
    assert local_order("utf8mb4_general_ci", "abC-1_") == "ABC-1_"
    assert local_order("utf8mb4_general_ci", "ab ") == "AB"
    assert local_order("utf8mb4_general_ci", "é") is None
    assert local_order("utf8mb4_unicode_ci", "0a1b-ff") == "0A1B-FF"
    assert local_order("utf8mb4_unicode_ci", "a_b") is None  # "_" sorts before "-" there
    assert local_order("latin1_swedish_ci", "x[") is None


def test_collations_not_proven_are_left_to_the_server() -> None:
    assert local_order("utf8mb4_danish_ci", "aa") is None
    assert local_order("utf8mb4_unicode_520_as_cs", "a") is None
    assert local_order("utf8mb4_czech_ci", "ch") is None
