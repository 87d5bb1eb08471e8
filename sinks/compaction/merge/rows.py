"""A bucket's rows merged per key as the table's merge engine makes it: choosing a row (deduplicate,
first-row) in Arrow, combining values (partial-update, aggregation) row by row over the keys that
have more than one row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sinks.compaction.merge.aggregators import aggregators, partial_aggregators
from sinks.compaction.merge.functions import MergeFn, aggregation, partial_update
from sinks.compaction.merge.options import MergeOptions
from sinks.row_kinds import RETRACT_KINDS


def _group_ends(data: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """For rows sorted by key: True at the last row of each key."""
    n = data.num_rows
    if n <= 1:
        return np.ones(n, dtype=bool)
    change = np.zeros(n - 1, dtype=bool)
    for k in keys:
        col = data.column(k).combine_chunks()
        change |= pc.not_equal(col.slice(0, n - 1), col.slice(1)).to_numpy(zero_copy_only=False)
    return np.append(change, True)


def merge_sorted(
    data: pa.Table,
    keys: Sequence[str],
    opts: MergeOptions,
    sequence_column: str,
    kind_column: str,
    primary_keys: Sequence[str] = (),
    sequence_fields: Sequence[str] = (),
    nullable: Mapping[str, bool] | None = None,
) -> pa.Table:
    """One row per key of ``data`` (sorted by key, then oldest first), as the table's merge
    engine makes it. Rows keep their columns' order; retractions are not dropped here.
    ``keys`` are the columns rows are grouped by (the bucket's trimmed primary key);
    ``primary_keys`` all primary-key columns, partition keys included."""
    if data.num_rows == 0:
        return data
    ends = _group_ends(data, keys)
    if opts.engine == "deduplicate":
        return data.filter(pa.array(ends))
    starts = np.concatenate(([True], ends[:-1]))
    singles = starts & ends
    if opts.engine == "first-row":
        return _first_rows(data, opts, kind_column, starts, singles)
    if singles.all():
        return data
    multi = np.flatnonzero(~singles)
    rows = data.take(pa.array(multi))
    value_names = [c for c in data.column_names if c not in keys and c not in (sequence_column, kind_column)]
    nulls = [(nullable or {}).get(n, n not in primary_keys) for n in value_names]
    if opts.engine == "partial-update":
        merge = partial_update(
            opts, nulls, value_names, partial_aggregators(opts, rows.schema, value_names, primary_keys)
        )
    else:
        merge = aggregation(opts, aggregators(opts, rows.schema, value_names, primary_keys, sequence_fields), nulls)
    merged = _combine(rows, ends[multi], keys, value_names, merge, sequence_column, kind_column)
    out = pa.concat_tables([data.filter(pa.array(singles)), merged])
    return out.take(pc.sort_indices(out, sort_keys=[(k, "ascending") for k in keys]))


def _first_rows(
    data: pa.Table, opts: MergeOptions, kind_column: str, starts: np.ndarray, singles: np.ndarray
) -> pa.Table:
    """first-row: the first row per key that is not a retraction (ignore-delete; without it Java
    fails); a key's single row passes through."""
    kinds = data.column(kind_column).to_numpy()
    retract = np.isin(kinds, RETRACT_KINDS)
    if retract.any() and not opts.ignore_delete:
        raise ValueError(
            "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE records. "
            "You can config 'ignore-delete' to ignore the DELETE/UPDATE_BEFORE records."
        )
    group = np.cumsum(starts) - 1
    keep = np.zeros(data.num_rows, dtype=bool)
    candidates = np.flatnonzero(~retract & ~singles)
    if candidates.size:
        _, first = np.unique(group[candidates], return_index=True)
        keep[candidates[first]] = True
    return data.filter(pa.array(keep | singles))


def _combine(
    rows: pa.Table,
    group_ends: np.ndarray,
    keys: Sequence[str],
    value_names: Sequence[str],
    merge: MergeFn,
    sequence_column: str,
    kind_column: str,
) -> pa.Table:
    """``rows`` (the keys with several rows, sorted) merged into one row per key by ``merge``, in
    ``rows``' columns; ``group_ends`` marks each key's last row."""
    seqs = rows.column(sequence_column).to_pylist()
    kinds = rows.column(kind_column).to_pylist()
    columns = [rows.column(c).to_pylist() for c in value_names]
    out_index: list[int] = []
    out_seq: list[int] = []
    out_kind: list[int] = []
    out_values: list[list[Any]] = [[] for _ in value_names]
    start = 0
    for i in range(len(group_ends)):
        if not group_ends[i]:
            continue
        group_rows = [(seqs[j], kinds[j], [col[j] for col in columns]) for j in range(start, i + 1)]
        seq, kind, values = merge(group_rows)
        out_index.append(i)
        out_seq.append(seq)
        out_kind.append(kind)
        for col, v in zip(out_values, values, strict=True):
            col.append(v)
        start = i + 1
    merged_keys = rows.select(list(keys)).take(pa.array(out_index))
    arrays = []
    for name in rows.column_names:
        typ = rows.schema.field(name).type
        if name == sequence_column:
            arrays.append(pa.array(out_seq, typ))
        elif name == kind_column:
            arrays.append(pa.array(out_kind, typ))
        elif name in keys:
            arrays.append(merged_keys.column(name))
        else:
            arrays.append(pa.array(out_values[value_names.index(name)], typ))
    return pa.Table.from_arrays(arrays, schema=rows.schema)
