"""Schema evolution rules: can_convert (Apache Paimon's canConvert) and diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from schema_evolution import types as t
from schema_evolution.errors import IncompatibleTypeChange
from schema_evolution.evolution import AddColumn, UpdateColumnType, Verdict, can_convert, diff
from schema_evolution.type_mapping import TypeMappingMode as M
from schema_evolution.types import PaimonType

if TYPE_CHECKING:
    from _pytest.mark import ParameterSet  # what pytest.param returns; pytest does not export its name

CONVERT, IGNORE, EXCEPTION = Verdict.CONVERT, Verdict.IGNORE, Verdict.EXCEPTION
NO_MODES: frozenset[M] = frozenset()


def case(old: PaimonType, new: PaimonType, verdict: Verdict, *modes: M) -> ParameterSet:
    suffix = "-with-" + "+".join(m.value for m in modes) if modes else ""
    return pytest.param(old, new, frozenset(modes), verdict, id=f"{old}->{new}{suffix}")


CASES = [
    # the same type
    case(t.int_(), t.int_(), IGNORE),
    case(t.varchar(10), t.varchar(10), IGNORE),
    case(t.decimal(8, 3), t.decimal(8, 3), IGNORE),
    case(t.int_().with_nullable(False), t.int_(), IGNORE),
    case(t.int_(), t.int_().with_nullable(False), IGNORE),
    case(t.decimal(8, 3), t.decimal(8, 3), IGNORE, M.DECIMAL_NO_CHANGE),
    # CHAR / VARCHAR: longer converts, shorter is ignored
    case(t.char(5), t.char(10), CONVERT),
    case(t.char(10), t.char(5), IGNORE),
    case(t.varchar(10), t.varchar(20), CONVERT),
    case(t.varchar(20), t.varchar(10), IGNORE),
    case(t.char(10), t.varchar(20), CONVERT),
    case(t.varchar(20), t.char(10), IGNORE),
    case(t.varchar(20), t.string(), CONVERT),
    case(t.string(), t.varchar(20), IGNORE),
    # BINARY / VARBINARY likewise
    case(t.binary(2), t.binary(4), CONVERT),
    case(t.binary(4), t.binary(2), IGNORE),
    case(t.varbinary(10), t.varbinary(20), CONVERT),
    case(t.varbinary(20), t.varbinary(10), IGNORE),
    case(t.binary(2), t.varbinary(10), CONVERT),
    case(t.varbinary(10), t.bytes_(), CONVERT),
    case(t.bytes_(), t.varbinary(10), IGNORE),
    # integers: TINYINT < SMALLINT < INT < BIGINT
    case(t.tinyint(), t.smallint(), CONVERT),
    case(t.tinyint(), t.bigint(), CONVERT),
    case(t.smallint(), t.int_(), CONVERT),
    case(t.int_(), t.bigint(), CONVERT),
    case(t.bigint(), t.int_(), IGNORE),
    case(t.int_(), t.smallint(), IGNORE),
    case(t.smallint(), t.tinyint(), IGNORE),
    case(t.bigint(), t.tinyint(), IGNORE),
    # FLOAT < DOUBLE
    case(t.float_(), t.double(), CONVERT),
    case(t.double(), t.float_(), IGNORE),
    # DECIMAL: larger precision and scale convert, smaller are ignored
    case(t.decimal(8, 3), t.decimal(10, 3), CONVERT),
    case(t.decimal(8, 3), t.decimal(10, 5), CONVERT),
    case(t.decimal(10, 2), t.decimal(10, 4), CONVERT),
    case(t.decimal(10, 3), t.decimal(8, 3), IGNORE),
    case(t.decimal(10, 5), t.decimal(8, 3), IGNORE),
    # Fewer fraction digits but more integer digits (99999999.99 does not fit DECIMAL(10, 4)):
    # Paimon ignores this and later fails on such values; lakecdc widens to a type holding both.
    case(t.decimal(10, 4), t.decimal(10, 2), CONVERT),
    case(t.decimal(8, 3), t.decimal(10, 5), IGNORE, M.DECIMAL_NO_CHANGE),
    case(t.decimal(10, 5), t.decimal(8, 3), IGNORE, M.DECIMAL_NO_CHANGE),
    # TIMESTAMP / TIME: higher precision converts, lower is ignored
    case(t.timestamp(0), t.timestamp(3), CONVERT),
    case(t.timestamp(3), t.timestamp(6), CONVERT),
    case(t.timestamp(6), t.timestamp(3), IGNORE),
    case(t.timestamp_ltz(3), t.timestamp_ltz(6), CONVERT),
    case(t.timestamp_ltz(6), t.timestamp_ltz(3), IGNORE),
    case(t.time(0), t.time(3), CONVERT),
    case(t.time(3), t.time(0), IGNORE),
    # anything to STRING only with allow-non-string-to-string
    case(t.int_(), t.string(), EXCEPTION),
    case(t.int_(), t.string(), CONVERT, M.ALLOW_NON_STRING_TO_STRING),
    case(t.decimal(8, 3), t.string(), EXCEPTION),
    case(t.decimal(8, 3), t.string(), CONVERT, M.ALLOW_NON_STRING_TO_STRING),
    case(t.timestamp(3), t.string(), CONVERT, M.ALLOW_NON_STRING_TO_STRING),
    case(t.bytes_(), t.string(), CONVERT, M.ALLOW_NON_STRING_TO_STRING),
    # across families: no safe conversion
    case(t.int_(), t.date(), EXCEPTION),
    case(t.date(), t.int_(), EXCEPTION),
    case(t.string(), t.int_(), EXCEPTION),
    case(t.string(), t.int_(), EXCEPTION, M.ALLOW_NON_STRING_TO_STRING),
    case(t.int_(), t.double(), EXCEPTION),
    case(t.bigint(), t.decimal(20, 0), EXCEPTION),
    case(t.boolean(), t.tinyint(), EXCEPTION),
    case(t.string(), t.bytes_(), EXCEPTION),
    case(t.date(), t.timestamp(0), EXCEPTION),
    case(t.timestamp(3), t.timestamp_ltz(3), EXCEPTION),
    case(t.array(t.string()), t.string(), EXCEPTION),
]


@pytest.mark.parametrize(("old", "new", "modes", "verdict"), CASES)
def test_can_convert(old: PaimonType, new: PaimonType, modes: frozenset[M], verdict: Verdict) -> None:
    assert can_convert(old, new, modes) is verdict


@pytest.mark.parametrize("new", [t.varchar(20), t.char(10)], ids=str)
def test_allow_non_string_to_string_takes_any_char_or_varchar(new: PaimonType) -> None:
    assert can_convert(t.int_(), new, frozenset({M.ALLOW_NON_STRING_TO_STRING})) is CONVERT


@pytest.mark.parametrize(
    ("old", "new"), [(t.decimal(10, 2), t.decimal(12, 1)), (t.decimal(10, 2), t.decimal(8, 4))], ids=str
)
def test_decimal_that_does_not_fit_the_old_one_converts(old: PaimonType, new: PaimonType) -> None:
    assert can_convert(old, new, NO_MODES) is CONVERT


# --- diff ---------------------------------------------------------------------------------------

TABLE = [("id", t.int_().with_nullable(False)), ("name", t.varchar(10)), ("price", t.decimal(8, 2))]


def test_unchanged_record_needs_no_change() -> None:
    assert diff("db.orders", TABLE, TABLE) == []


def test_record_with_nullable_key_needs_no_change() -> None:
    record = [("id", t.int_()), ("name", t.varchar(10)), ("price", t.decimal(8, 2))]
    assert diff("db.orders", TABLE, record) == []


def test_new_column_is_added_nullable() -> None:
    record = [*TABLE, ("note", t.string().with_nullable(False))]
    assert diff("db.orders", TABLE, record) == [AddColumn("note", t.string())]


def test_new_columns_are_added_in_record_order() -> None:
    record = [("b", t.int_()), *TABLE, ("a", t.date())]
    assert diff("db.orders", TABLE, record) == [AddColumn("b", t.int_()), AddColumn("a", t.date())]


def test_removed_column_is_left_alone() -> None:
    assert diff("db.orders", TABLE, TABLE[:1]) == []
    assert diff("db.orders", TABLE, []) == []


def test_widened_column_is_updated() -> None:
    record = [("id", t.int_()), ("name", t.varchar(20)), ("price", t.decimal(8, 2))]
    assert diff("db.orders", TABLE, record) == [UpdateColumnType("name", t.varchar(10), t.varchar(20))]


def test_widened_column_keeps_the_old_nullability() -> None:
    record = [("id", t.bigint()), ("name", t.varchar(10).with_nullable(False))]
    assert diff("db.orders", TABLE, record) == [
        UpdateColumnType("id", t.int_().with_nullable(False), t.bigint().with_nullable(False))
    ]
    nullable_table = [("n", t.int_())]
    assert diff("t", nullable_table, [("n", t.bigint().with_nullable(False))]) == [
        UpdateColumnType("n", t.int_(), t.bigint())
    ]


def test_narrowed_column_needs_no_change() -> None:
    record = [("id", t.smallint()), ("name", t.varchar(5)), ("price", t.decimal(6, 1))]
    assert diff("db.orders", TABLE, record) == []


def test_several_changes_at_once() -> None:
    record = [("price", t.decimal(10, 3)), ("id", t.bigint()), ("added", t.boolean())]
    assert diff("db.orders", TABLE, record) == [
        UpdateColumnType("price", t.decimal(8, 2), t.decimal(10, 3)),
        UpdateColumnType("id", t.int_().with_nullable(False), t.bigint().with_nullable(False)),
        AddColumn("added", t.boolean()),
    ]


def test_decimal_no_change_keeps_the_decimal() -> None:
    record = [("price", t.decimal(10, 3))]
    assert diff("db.orders", TABLE, record, frozenset({M.DECIMAL_NO_CHANGE})) == []


def test_allow_non_string_to_string_updates_to_string() -> None:
    record = [("price", t.string())]
    assert diff("db.orders", TABLE, record, frozenset({M.ALLOW_NON_STRING_TO_STRING})) == [
        UpdateColumnType("price", t.decimal(8, 2), t.string())
    ]


def test_incompatible_change_names_table_column_and_types() -> None:
    record = [("id", t.int_()), ("price", t.date())]
    with pytest.raises(IncompatibleTypeChange) as info:
        diff("db.orders", TABLE, record)
    error = info.value
    assert (error.table, error.column, error.old, error.new) == ("db.orders", "price", t.decimal(8, 2), t.date())
    message = str(error)
    assert "'db.orders'" in message
    assert "'price'" in message
    assert "DECIMAL(8, 2)" in message
    assert "DATE" in message
    assert "to-string" in message  # the way forward
    assert error.terminal


def test_incompatible_change_without_the_option() -> None:
    with pytest.raises(IncompatibleTypeChange, match=r"'id'.*INT NOT NULL to STRING"):
        diff("db.orders", TABLE, [("id", t.string())])


def test_decimal_widening_takes_the_type_that_holds_both() -> None:
    changes = diff("db.t", [("d", t.decimal(10, 4))], [("d", t.decimal(10, 2))])
    assert changes == [UpdateColumnType("d", t.decimal(10, 4), t.decimal(12, 4))]
    changes = diff("db.t", [("d", t.decimal(10, 2))], [("d", t.decimal(12, 1))])
    assert changes == [UpdateColumnType("d", t.decimal(10, 2), t.decimal(13, 2))]
