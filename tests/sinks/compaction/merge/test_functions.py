"""Merge functions on single keys: Paimon's documented examples and Java's edge cases
(partial-update, sequence groups, aggregation and its functions)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from sinks.compaction.merge.aggregators import aggregators, partial_aggregators
from sinks.compaction.merge.functions import Row, aggregation, partial_update
from sinks.compaction.merge.options import MergeOptions
from sinks.write.chunk_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE


def _agg(options: dict[str, str], schema: pa.Schema, rows: list[Row]) -> tuple[Any, ...]:
    opts = MergeOptions.from_table_options({"merge-engine": "aggregation", **options})
    return aggregation(opts, aggregators(opts, schema, schema.names))(rows)


def test_partial_update_fills_in_fields_as_paimon_documents() -> None:
    # Paimon docs, "Partial Update": <1, 23.0, 10, NULL>, <1, NULL, NULL, 'This is a book'>,
    # <1, 25.2, NULL, NULL>  ->  <1, 25.2, 10, 'This is a book'>.
    merge = partial_update(MergeOptions.from_table_options({"merge-engine": "partial-update"}), [True] * 3, "abc")
    rows: list[Row] = [
        (1, INSERT, [23.0, 10, None]),
        (2, INSERT, [None, None, "This is a book"]),
        (3, INSERT, [25.2, None, None]),
    ]
    assert merge(rows) == (3, INSERT, [25.2, 10, "This is a book"])


def test_partial_update_deletes() -> None:
    opts = {"merge-engine": "partial-update"}
    with pytest.raises(ValueError, match="can not accept delete records"):
        partial_update(MergeOptions.from_table_options(opts), [True], "a")([(1, INSERT, [1]), (2, DELETE, [1])])
    ignore = partial_update(MergeOptions.from_table_options({**opts, "ignore-delete": "true"}), [True], "a")
    assert ignore([(1, INSERT, [1]), (2, DELETE, [1])]) == (1, INSERT, [1])
    remove = partial_update(
        MergeOptions.from_table_options({**opts, "partial-update.remove-record-on-delete": "true"}), [True] * 2, "ab"
    )
    # -U is skipped; -D removes the row (kind DELETE); a later insert starts from NULLs.
    assert remove([(1, INSERT, [1, "x"]), (2, UPDATE_BEFORE, [1, "x"]), (3, DELETE, [1, "x"])]) == (
        3,
        DELETE,
        [None, None],
    )
    assert remove([(1, INSERT, [1, "x"]), (2, DELETE, [1, "x"]), (3, INSERT, [2, None])]) == (3, INSERT, [2, None])
    assert remove([(1, INSERT, [1, "x"]), (2, UPDATE_BEFORE, [1, "x"]), (3, UPDATE_AFTER, [2, None])]) == (
        3,
        INSERT,
        [2, "x"],
    )


def test_aggregation_as_paimon_documents() -> None:
    # Paimon docs, "Aggregation": price max, sales sum: <1, 23.0, 15>, <1, 30.2, 20> -> <1, 30.2, 35>.
    schema = pa.schema([("price", pa.float64()), ("sales", pa.int64())])
    options = {"fields.price.aggregate-function": "max", "fields.sales.aggregate-function": "sum"}
    assert _agg(options, schema, [(1, INSERT, [23.0, 15]), (2, INSERT, [30.2, 20])]) == (2, INSERT, [30.2, 35])


def test_aggregation_retracts_and_functions() -> None:
    schema = pa.schema([("s", pa.int32()), ("l", pa.string()), ("p", pa.decimal128(5, 2)), ("f", pa.string())])
    options = {
        "fields.s.aggregate-function": "sum",
        "fields.p.aggregate-function": "product",
        "fields.f.aggregate-function": "listagg",
        "fields.f.distinct": "true",
        "fields.f.list-agg-delimiter": ";",
        "fields.f.ignore-retract": "true",
    }
    rows: list[Row] = [
        (1, INSERT, [5, "a", Decimal("2.00"), "x;y"]),
        (2, UPDATE_BEFORE, [5, "a", Decimal("2.00"), None]),
        (3, UPDATE_AFTER, [7, None, Decimal("3.50"), "y;z; "]),
    ]
    # sum: 5 - 5 + 7; last_non_null_value: 'a' retracted then nothing new; product: 2 / 2 * 3.5.
    assert _agg(options, schema, rows) == (3, INSERT, [7, None, Decimal("3.50"), "x;y;z"])
    # A retraction with nothing before it negates (sum); a DECIMAL outgrowing its precision is NULL.
    assert _agg(options, schema, [(1, DELETE, [4, None, None, None]), (2, DELETE, [1, None, None, None])])[2][0] == -5
    big = [(1, INSERT, [0, None, Decimal("999.00"), None]), (2, INSERT, [0, None, Decimal("999.00"), None])]
    assert _agg(options, schema, big)[2][2] is None
    with pytest.raises(ArithmeticError, match="overflow"):
        _agg(options, schema, [(1, INSERT, [2**31 - 1, None, None, None]), (2, INSERT, [1, None, None, None])])
    with pytest.raises(ValueError, match="does not support retraction"):
        _agg(
            {"fields.s.aggregate-function": "max"},
            schema,
            [(1, INSERT, [1, None, None, None]), (2, DELETE, [1] + [None] * 3)],
        )
    ignored = {"fields.s.aggregate-function": "max", "fields.s.ignore-retract": "true"}
    assert _agg(ignored, schema, [(1, INSERT, [3, None, None, None]), (2, DELETE, [3] + [None] * 3)])[2][0] == 3
    # remove-record-on-delete: -D removes the row; -U still retracts.
    removing = {"fields.s.aggregate-function": "sum", "aggregation.remove-record-on-delete": "true"}
    assert _agg(removing, schema, [(1, INSERT, [3, "a", None, None]), (2, DELETE, [3, "a", None, None])])[1] == DELETE


def test_first_values_and_bools() -> None:
    schema = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("x", pa.bool_()), ("y", pa.bool_())])
    options = {
        "fields.a.aggregate-function": "first_value",
        "fields.b.aggregate-function": "first_non_null_value",
        "fields.x.aggregate-function": "bool_and",
        "fields.y.aggregate-function": "bool_or",
    }
    rows: list[Row] = [
        (1, INSERT, [None, None, True, False]),
        (2, INSERT, [1, 2, False, None]),
        (3, INSERT, [3, 4, True, True]),
    ]
    assert _agg(options, schema, rows)[2] == [None, 2, False, True]


_GROUPS = {"merge-engine": "partial-update", "fields.g1.sequence-group": "a,b", "fields.g2.sequence-group": "c"}


def test_partial_update_sequence_groups_as_pypaimon_rust_reads_them() -> None:
    """The expected rows are what pypaimon-rust 0.4 read from a real table given each row in a commit
    of its own (and Java's PartialUpdateMergeFunction gives): a group follows its own sequence field,
    takes NULLs with its values, ignores older rows and rows without its sequence, and a retraction
    NULLs the group's fields while keeping its sequence."""
    merge = partial_update(MergeOptions.from_table_options(_GROUPS), [True] * 5, ["a", "b", "g1", "c", "g2"])
    one: list[Row] = [(1, INSERT, ["a1", "b1", 1, None, None]), (2, INSERT, [None, None, None, "c1", 1])]
    assert merge(one) == (2, INSERT, ["a1", "b1", 1, "c1", 1])
    one.append((3, INSERT, ["a0", "b0", 0, None, None]))  # group 1 older: ignored
    assert merge(one)[2] == ["a1", "b1", 1, "c1", 1]
    one.append((4, UPDATE_BEFORE, [None, None, 2, None, None]))  # retracts group 1 only
    assert merge(one) == (4, INSERT, [None, None, 2, "c1", 1])
    one += [(5, INSERT, ["a5", "b5", 3, "c5", 3]), (6, INSERT, ["a4", "b4", 2, "c4", 2])]
    assert merge(one)[2] == ["a5", "b5", 3, "c5", 3]
    two: list[Row] = [(1, INSERT, ["a1", "b1", 5, "c1", 5]), (2, INSERT, ["a2", None, 6, "c0", 4])]
    assert merge(two)[2] == ["a2", None, 6, "c1", 5]  # group 1 newer, NULL included; group 2 older
    two.append((3, DELETE, [None, None, None, "cx", 9]))
    assert merge(two) == (3, INSERT, ["a2", None, 6, None, 9])
    assert merge([(1, DELETE, [None, None, 1, None, None])])[1] == DELETE  # nothing inserted
    # Several sequence fields order a group together, NULL lowest, and are set together.
    multi = MergeOptions.from_table_options({"merge-engine": "partial-update", "fields.s1,s2.sequence-group": "v"})
    merge = partial_update(multi, [True] * 3, ["v", "s1", "s2"])
    assert merge([(1, INSERT, ["x", 1, 5]), (2, INSERT, ["y", 1, 4])])[2] == ["x", 1, 5]
    assert merge([(1, INSERT, ["x", 1, None]), (2, INSERT, ["y", 1, 0])])[2] == ["y", 1, 0]
    # A -D of a group named in remove-record-on-sequence-group removes the row.
    removing = MergeOptions.from_table_options({**_GROUPS, "partial-update.remove-record-on-sequence-group": "g2"})
    merge = partial_update(removing, [True] * 5, ["a", "b", "g1", "c", "g2"])
    rows: list[Row] = [(1, INSERT, ["a1", "b1", 1, "c1", 1]), (2, DELETE, [None, None, None, "c1", 2])]
    assert merge(rows) == (2, DELETE, [None, None, None, "c1", 2])  # restarted as the -D row
    assert merge([*rows[:1], (2, DELETE, ["a1", None, 2, None, None])]) == (2, INSERT, [None, None, 2, "c1", 1])


def test_aggregate_functions_in_sequence_groups_as_pypaimon_rust_reads_them() -> None:
    """Expected rows read by pypaimon-rust 0.4 from a real table (one commit per row): a newer row
    folds its value in, an older one folds it in reversed (Java's aggReversed), a retraction
    retracts it (sum) or is ignored (ignore-retract), and the group's sequence still moves."""
    options = {"merge-engine": "partial-update", "fields.g.sequence-group": "a,b", "fields.a.aggregate-function": "sum",
               "fields.b.aggregate-function": "max", "fields.b.ignore-retract": "true"}  # fmt: skip
    opts = MergeOptions.from_table_options(options)
    schema = pa.schema([("a", pa.int64()), ("b", pa.int64()), ("g", pa.int32())])
    merge = partial_update(opts, [True] * 3, schema.names, partial_aggregators(opts, schema, schema.names))
    rows = [(1, INSERT, [5, 7, 1])]
    assert merge(rows)[2] == [5, 7, 1]
    rows.append((2, INSERT, [3, 2, 2]))
    assert merge(rows)[2] == [8, 7, 2]
    rows.append((3, INSERT, [10, 20, 0]))  # older group sequence: still folded in
    assert merge(rows)[2] == [18, 20, 2]
    rows.append((4, UPDATE_BEFORE, [3, 1, 3]))
    assert merge(rows) == (4, INSERT, [15, 20, 3])
    # first_value reversed: an older row's value wins over the first one seen (agg(value, acc))
    firsts = MergeOptions.from_table_options({**options, "fields.b.aggregate-function": "first_value"})
    merge = partial_update(firsts, [True] * 3, schema.names, partial_aggregators(firsts, schema, schema.names))
    assert merge([(1, INSERT, [1, 7, 5]), (2, INSERT, [1, 9, 6]), (3, INSERT, [1, 4, 2])])[2] == [3, 4, 6]
