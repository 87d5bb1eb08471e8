"""--type-mapping options: Paimon's names, with '-' or '_', unknown names refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schema_evolution.type_mapping import TypeMappingMode, parse_type_mapping

ALL_MODES = list(TypeMappingMode)


@pytest.mark.parametrize("mode", ALL_MODES, ids=[m.value for m in ALL_MODES])
@pytest.mark.parametrize(
    "spell",
    [
        pytest.param(lambda v: v, id="dashes"),
        pytest.param(lambda v: v.replace("-", "_"), id="underscores"),
        pytest.param(lambda v: v.upper(), id="upper-case"),
        pytest.param(lambda v: f"  {v}  ", id="padded"),
    ],
)
def test_each_option_in_each_spelling(mode: TypeMappingMode, spell: Callable[[str], str]) -> None:
    assert parse_type_mapping(spell(mode.value)) == frozenset({mode})


def test_the_cli_names_are_paimons() -> None:
    assert {m.value for m in TypeMappingMode} == {
        "tinyint1-not-bool",
        "to-nullable",
        "to-string",
        "char-to-string",
        "longtext-to-bytes",
        "decimal-no-change",
        "bigint-unsigned-to-bigint",
        "allow-non-string-to-string",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tinyint1-not-bool,to_nullable", {TypeMappingMode.TINYINT1_NOT_BOOL, TypeMappingMode.TO_NULLABLE}),
        (
            "char-to-string, longtext_to_bytes ,decimal-no-change",
            {TypeMappingMode.CHAR_TO_STRING, TypeMappingMode.LONGTEXT_TO_BYTES, TypeMappingMode.DECIMAL_NO_CHANGE},
        ),
        ("to-string,to_string", {TypeMappingMode.TO_STRING}),
        ("to-string,,", {TypeMappingMode.TO_STRING}),
    ],
    ids=["two-mixed-spellings", "three-with-spaces", "duplicate", "empty-items"],
)
def test_several_options(text: str, expected: set[TypeMappingMode]) -> None:
    assert parse_type_mapping(text) == frozenset(expected)


@pytest.mark.parametrize("text", [None, "", ",", " , "], ids=["none", "empty", "comma", "blank-items"])
def test_no_options(text: str | None) -> None:
    assert parse_type_mapping(text) == frozenset()


@pytest.mark.parametrize(
    ("text", "bad"),
    [("tinyint-not-bool", "tinyint-not-bool"), ("to-string,nope", "nope"), ("to string", "to string")],
)
def test_unknown_option_names_itself_and_lists_the_known_ones(text: str, bad: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_type_mapping(text)
    message = str(info.value)
    assert f"unknown --type-mapping option '{bad}'" in message
    for mode in TypeMappingMode:
        assert mode.value in message
