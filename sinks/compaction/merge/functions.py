"""Merge functions over one key's rows (oldest first): Java's ``PartialUpdateMergeFunction`` and
``AggregateMergeFunction``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sinks.compaction.merge.aggregators import Aggregator
from sinks.compaction.merge.options import MergeOptions
from sinks.row_kinds import DELETE, INSERT, RETRACT_KINDS

Row = tuple[int, int, list[Any]]  # (sequence number, row kind, value columns)
MergeFn = Callable[[Sequence[Row]], Row]


def _init_row(values: Sequence[Any], nullable: Sequence[bool]) -> list[Any]:
    """A row restarted by a retraction: the NOT NULL fields from it, nullable fields NULL.

    This is Java's ``initRow`` up to Paimon 1.3 and pypaimon-rust 0.4's. Java's main branch (since
    apache/paimon#7645, 2026-04) copies the nullable fields too, so an aggregate re-inserted after a
    delete there continues from the deleted row's values; the readers lakecdc tables are read with
    restart from NULL, and so does compaction here (compacting must not change what they read)."""
    return [v if not n else None for v, n in zip(values, nullable, strict=True)]


def partial_update(
    opts: MergeOptions,
    nullable: Sequence[bool],
    names: Sequence[str],
    aggs: Sequence[Aggregator | None] = (),
) -> MergeFn:
    """Java's ``PartialUpdateMergeFunction``: the newest non-null value of each field, or, for the
    fields of a sequence group, the values of the row whose group sequence is highest — folded by
    the field's aggregate function where it has one (``partial_aggregators``)."""
    groups = _sequence_group_indices(opts, names)
    removing = {names.index(n) for n in opts.remove_on_sequence_group if n in names}
    # Java applies aggregate functions only when there are sequence groups.
    field_aggs: list[Aggregator | None] = list(aggs) if aggs and groups else [None] * len(names)

    def merge(rows: Sequence[Row]) -> Row:
        for a in field_aggs:
            if a is not None:
                a.reset()
        row: list[Any] = [None] * len(nullable)
        seq, meet_insert, delete_row, filled = 0, False, False, False
        for s, kind, values in rows:
            delete_row = False
            if kind in RETRACT_KINDS:
                if not filled:
                    row = _init_row(values, nullable)
                    filled = True
                if opts.ignore_delete:
                    continue
                seq = s
                if groups:
                    if _retract_groups(row, values, kind, groups, removing, field_aggs):
                        # The row restarts as the -D row, all fields (pypaimon-rust 0.4 as Java's
                        # main branch; unlike remove-record-on-delete's restart in pypaimon-rust).
                        delete_row = True
                        row = list(values)
                    continue
                if opts.remove_record_on_delete:
                    if kind == DELETE:
                        delete_row = True
                        row = _init_row(values, nullable)
                    continue
                raise ValueError(
                    "By default, Partial update can not accept delete records, set ignore-delete=true, "
                    "partial-update.remove-record-on-delete=true, or sequence groups"
                )
            seq = s
            if groups:
                _update_groups(row, values, groups, field_aggs)
            else:
                for i, v in enumerate(values):
                    if v is not None:
                        row[i] = v
                    elif not nullable[i]:
                        raise ValueError(f"Field {names[i]} can not be null")
            meet_insert = filled = True
        return seq, DELETE if delete_row or not meet_insert else INSERT, row

    return merge


def _sequence_group_indices(opts: MergeOptions, names: Sequence[str]) -> dict[int, tuple[int, ...]]:
    """Value column index -> the indices of its group's sequence fields, for every field of every
    group (its protected fields and its sequence fields)."""
    opts.check_fields(names, ())
    index = {n: i for i, n in enumerate(names)}
    out: dict[int, tuple[int, ...]] = {}
    for seq, protected in opts.sequence_groups:
        seq_index = tuple(index[n] for n in seq)
        for name in (*protected, *seq):
            out[index[name]] = seq_index
    return out


def _compare(values: Sequence[Any], row: Sequence[Any], seq: tuple[int, ...]) -> int:
    """Java's ``UserDefinedSeqComparator`` (ascending, NULL lowest) of a row's group sequence
    against the merged row's."""
    for i in seq:
        a, b = values[i], row[i]
        if a is None or b is None:
            if a is None and b is None:
                continue
            return -1 if a is None else 1
        if a != b:
            return -1 if a < b else 1
    return 0


def _group_wins(values: Sequence[Any], row: Sequence[Any], seq: tuple[int, ...], done: list[bool]) -> bool | None:
    """Whether the row's values go into the group: it carries the group's sequence, not older than
    the merged row's (True), or older (False). None for a row without any of the sequence fields:
    it leaves the group alone (Java's ``isEmptySequenceGroup``, which marks the sequence fields
    processed)."""
    if all(values[j] is None for j in seq):
        for j in seq:
            done[j] = True
        return None
    return _compare(values, row, seq) >= 0


def _update_groups(
    row: list[Any], values: Sequence[Any], groups: Mapping[int, tuple[int, ...]], aggs: Sequence[Aggregator | None]
) -> None:
    """``updateWithSequenceGroup``: fields outside groups take non-null values (or fold them in
    with their function); a group takes the row's values (NULLs included; a field with a function
    folds the value in) when its sequence is not older, its functions fold an older row's value in
    reversed (``aggReversed``), and a row whose sequence fields are all NULL leaves it alone."""
    done = [False] * len(row)
    for i, v in enumerate(values):
        seq = groups.get(i)
        agg = aggs[i]
        if seq is None:
            if agg is not None:
                row[i] = agg.agg(row[i], v)
            elif v is not None:
                row[i] = v
            continue
        if done[i]:
            continue
        wins = _group_wins(values, row, seq, done)
        if wins:
            if i in seq:  # a sequence field: all of the group's sequence fields at once
                for j in seq:
                    row[j] = values[j]
                    done[j] = True
                continue
            row[i] = v if agg is None else agg.agg(row[i], v)
        elif wins is not None and agg is not None:
            row[i] = agg.agg(v, row[i])


def _retract_groups(
    row: list[Any],
    values: Sequence[Any],
    kind: int,
    groups: Mapping[int, tuple[int, ...]],
    removing: set[int],
    aggs: Sequence[Aggregator | None],
) -> bool:
    """``retractWithSequenceGroup``: a group whose sequence is not older takes the retraction's
    sequence values and NULLs its other fields; a field with a function retracts the value
    instead, whatever the group's order. True when a -D of a group named in
    ``partial-update.remove-record-on-sequence-group`` removes the whole row."""
    done = [False] * len(row)
    updated: set[int] = set()
    for i in range(len(row)):
        seq = groups.get(i)
        if seq is None or done[i]:
            continue
        wins = _group_wins(values, row, seq, done)
        agg = aggs[i]
        if wins and i in seq:
            for j in seq:
                if j not in updated:
                    if kind == DELETE and j in removing:
                        return True
                    row[j] = values[j]
                    updated.add(j)
                done[j] = True
        elif wins is not None and agg is not None:
            row[i] = agg.retract(row[i], values[i])
        elif wins:
            row[i] = None
    return False


def aggregation(opts: MergeOptions, aggregators: Sequence[Aggregator], nullable: Sequence[bool] = ()) -> MergeFn:
    """Java's ``AggregateMergeFunction``."""
    nullable = list(nullable) or [True] * len(aggregators)

    def merge(rows: Sequence[Row]) -> Row:
        for a in aggregators:
            a.reset()
        row: list[Any] = [None] * len(aggregators)
        delete_row = False
        for _, kind, values in rows:
            delete_row = opts.remove_record_on_delete and kind == DELETE
            if delete_row:
                row = _init_row(values, nullable)
                continue
            if kind in RETRACT_KINDS:
                row = [a.retract(acc, v) for a, acc, v in zip(aggregators, row, values, strict=True)]
            else:
                row = [a.agg(acc, v) for a, acc, v in zip(aggregators, row, values, strict=True)]
        return rows[-1][0], DELETE if delete_row else INSERT, row

    return merge
