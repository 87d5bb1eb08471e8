"""Merge options: what Paimon refuses or checks, with its messages, and which tables a change
stream would make unreadable."""

from __future__ import annotations

import pytest

from sinks.compaction.merge.options import MergeOptions
from sinks.table.options import validate_table_options
from tests.sinks.compaction.merge.test_functions import _GROUPS


def test_sequence_group_options_checked_as_paimon_does() -> None:
    with pytest.raises(ValueError, match="Field b is defined repeatedly by multiple groups"):
        MergeOptions.from_table_options({**_GROUPS, "fields.g2.sequence-group": "b,c"})
    with pytest.raises(ValueError, match="conflicting behavior"):
        MergeOptions.from_table_options({**_GROUPS, "partial-update.remove-record-on-delete": "true"})
    with pytest.raises(ValueError, match="conflicting behavior"):
        MergeOptions.from_table_options(
            {**_GROUPS, "partial-update.remove-record-on-sequence-group": "g1", "ignore-delete": "true"}
        )
    with pytest.raises(ValueError, match="must be part of sequence groups"):
        MergeOptions.from_table_options({**_GROUPS, "partial-update.remove-record-on-sequence-group": "a"})
    summed = MergeOptions.from_table_options({**_GROUPS, "fields.a.aggregate-function": "sum"})
    assert summed.partial_function("a") == "sum" and summed.retraction_problem() is None
    highest = MergeOptions.from_table_options({**_GROUPS, "fields.c.aggregate-function": "max"})
    assert "'max' of field 'c' (sequence group of g2)" in (highest.retraction_problem() or "")
    assert highest.partial_function("g2") is None  # sequence fields take no function
    defaults = {"fields.default-aggregate-function": "max", "fields.a.ignore-retract": "true"}
    ignoring = MergeOptions.from_table_options({**_GROUPS, **defaults})
    assert "of field 'b'" in (ignoring.retraction_problem() or "")
    with pytest.raises(ValueError, match="not found for field x"):  # the default reaches every field
        ignoring.check_fields(["id", "a", "b", "g1", "c", "g2", "x"], ["id"])
    MergeOptions.from_table_options(
        {**_GROUPS, "fields.default-aggregate-function": "last_non_null_value"}
    ).check_fields(["id", "a", "b", "g1", "c", "g2", "x"], ["id"])
    with pytest.raises(ValueError, match="for merge-engine=partial-update"):
        MergeOptions.from_table_options({"fields.g1.sequence-group": "a"})
    groups = MergeOptions.from_table_options(_GROUPS)
    assert groups.retraction_problem() is None  # groups take retractions
    with pytest.raises(ValueError, match="Field x can not be found in table schema"):
        MergeOptions.from_table_options({**_GROUPS, "fields.g2.sequence-group": "x"}).check_fields(
            ["id", "a", "b", "g1", "c", "g2"], ["id"]
        )
    with pytest.raises(ValueError, match="contains primary key field 'id'"):
        MergeOptions.from_table_options({**_GROUPS, "fields.g2.sequence-group": "id"}).check_fields(
            ["id", "a", "b", "g1", "c", "g2"], ["id"]
        )


def test_options_refused_or_checked_as_paimon_does() -> None:
    with pytest.raises(ValueError, match="merge_map"):
        MergeOptions.from_table_options({"merge-engine": "aggregation", "fields.a.aggregate-function": "merge_map"})
    with pytest.raises(ValueError, match="Only support 'none' and 'lookup' changelog-producer"):
        MergeOptions.from_table_options({"merge-engine": "first-row", "changelog-producer": "input"})
    with pytest.raises(ValueError, match="Must use sequence group"):
        MergeOptions.from_table_options({"merge-engine": "partial-update", "fields.a.aggregate-function": "sum"})
    with pytest.raises(ValueError, match="conflicting behavior"):
        MergeOptions.from_table_options(
            {
                "merge-engine": "aggregation",
                "aggregation.remove-record-on-delete": "true",
                "fields.a.ignore-retract": "true",
            }
        )
    # pypaimon-rust neither writes nor reads partial-update or aggregation tables with deletion vectors.
    for engine in ("partial-update", "aggregation"):
        with pytest.raises(
            ValueError, match=f"deletion-vectors.enabled=true is not supported with merge-engine={engine}"
        ):
            validate_table_options({"merge-engine": engine, "deletion-vectors.enabled": "true"}, has_primary_key=True)
    with pytest.raises(ValueError, match=r"deletion-vectors\.bitmap64=true is not supported"):
        validate_table_options({"deletion-vectors.bitmap64": "true"}, has_primary_key=True)
    validate_table_options({"merge-engine": "first-row", "deletion-vectors.enabled": "true"}, has_primary_key=True)
    # What a change stream (with -U/-D) needs, checked at start-up.
    assert "ignore-delete" in (
        MergeOptions.from_table_options({"merge-engine": "first-row"}).retraction_problem() or ""
    )
    pu = MergeOptions.from_table_options({"merge-engine": "partial-update"})
    assert "remove-record-on-delete" in (pu.retraction_problem() or "")
    agg = MergeOptions.from_table_options({"merge-engine": "aggregation", "fields.m.aggregate-function": "max"})
    assert "field 'm'" in (agg.retraction_problem() or "")
    assert (
        MergeOptions.from_table_options(
            {"merge-engine": "aggregation", "fields.m.aggregate-function": "max", "fields.m.ignore-retract": "true"}
        ).retraction_problem()
        is None
    )
    default_max = MergeOptions.from_table_options(
        {"merge-engine": "aggregation", "fields.default-aggregate-function": "max"}
    )
    assert "default-aggregate-function" in (default_max.retraction_problem() or "")
    assert (
        MergeOptions.from_table_options({"merge-engine": "first-row", "ignore-delete": "true"}).retraction_problem()
        is None
    )
