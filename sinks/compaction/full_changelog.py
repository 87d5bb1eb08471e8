"""The changelog compaction produces: ``changelog-producer=full-compaction`` and ``lookup``.

**full-compaction** — the changelog a full compaction of one bucket produces.

Paimon's ``FullChangelogMergeFunctionWrapper`` compares, key by key, the row the bucket's top
level held before (what a reader of the previous full compaction saw) with the merged result:
a new key is +I, a key merged away is -D of the old row, a changed key is -U old / +U new (also
when unchanged, unless ``changelog-producer.row-deduplicate=true``). A key whose only row is the
top-level one did not change and gives nothing. A streaming reader of the table thus sees each
key's net change between two full compactions, exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sinks.row_kinds import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE

_ROW = "__row"
_COUNT = "__count"


@dataclass(frozen=True, slots=True)
class ChangelogOptions:
    producer: str = "none"  # changelog-producer
    row_deduplicate: bool = False  # changelog-producer.row-deduplicate
    ignore_fields: frozenset[str] = frozenset()  # changelog-producer.row-deduplicate-ignore-fields

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> ChangelogOptions:
        producer = str(options.get("changelog-producer", "none")).strip().lower()
        dedupe = str(options.get("changelog-producer.row-deduplicate", "false")).strip().lower()
        if dedupe not in ("true", "false"):
            raise ValueError(f"table option changelog-producer.row-deduplicate='{dedupe}': expected true or false")
        ignored = str(options.get("changelog-producer.row-deduplicate-ignore-fields", ""))
        return cls(
            producer=producer,
            row_deduplicate=dedupe == "true",
            ignore_fields=frozenset(f.strip() for f in ignored.split(",") if f.strip()),
        )


def full_changelog(
    rows: pa.Table,
    from_top: np.ndarray,
    merged: pa.Table,
    keys: Sequence[str],
    value_columns: Sequence[str],
    kind_column: str,
    opts: ChangelogOptions,
) -> pa.Table:
    """The changelog rows of one full compaction, in key order (-U before its +U).

    ``rows`` are all input rows, ``from_top`` marks those read from the top level, ``merged`` is
    the merge result per key with retractions not yet dropped (one row per key, as
    ``sinks.compaction.merge.rows.merge_sorted`` gives it)."""
    schema = merged.schema
    if merged.num_rows == 0:
        return schema.empty_table()
    key_list = list(keys)
    counts = rows.select(key_list).group_by(key_list).aggregate([([], "count_all")])
    counts = counts.rename_columns([*key_list, _COUNT])
    top = rows.filter(pa.array(from_top)).append_column(_ROW, pa.array(np.arange(int(from_top.sum())), pa.int64()))
    index = merged.select(key_list).append_column(_ROW + "m", pa.array(np.arange(merged.num_rows), pa.int64()))
    joined = index.join(counts, key_list, join_type="left outer").join(
        top.select([*key_list, _ROW]), key_list, join_type="left outer"
    )
    joined = joined.sort_by(_ROW + "m")  # back in merged (key) order
    merged_row = joined.column(_ROW + "m").to_numpy()
    top_row = joined.column(_ROW).to_numpy(zero_copy_only=False)
    count = joined.column(_COUNT).to_numpy()
    has_top = ~np.isnan(top_row.astype("float64"))
    kinds = merged.column(kind_column).to_numpy()
    add = np.isin(kinds, (INSERT, UPDATE_AFTER))

    insert = ~has_top & add
    delete = has_top & (count > 1) & ~add
    update = has_top & (count > 1) & add
    if opts.row_deduplicate:
        _drop_unchanged(update, top, top_row, merged, merged_row, value_columns, opts)
    return _assemble(schema, kind_column, insert, delete, update, top, top_row, merged, merged_row)


def lookup_changelog(
    before: pa.Table,
    after: pa.Table,
    changed: pa.Table,
    keys: Sequence[str],
    value_columns: Sequence[str],
    kind_column: str,
    opts: ChangelogOptions,
    first_row: bool = False,
) -> pa.Table:
    """The changelog of the keys in ``changed`` (key columns of the level-0 rows), from their merged
    rows ``before`` (levels above 0) and ``after`` (all levels), retractions not dropped."""
    schema = after.schema
    key_list = list(keys)
    wanted = changed.select(key_list).group_by(key_list).aggregate([])
    after = after.join(wanted, key_list, join_type="left semi").sort_by([(k, "ascending") for k in key_list])
    if after.num_rows == 0:
        return schema.empty_table()
    index = after.select(key_list).append_column(_ROW + "a", pa.array(np.arange(after.num_rows), pa.int64()))
    prior = before.select(key_list).append_column(_ROW, pa.array(np.arange(before.num_rows), pa.int64()))
    joined = index.join(prior, key_list, join_type="left outer").sort_by(_ROW + "a")
    after_row = joined.column(_ROW + "a").to_numpy()
    before_row = joined.column(_ROW).to_numpy(zero_copy_only=False)
    has_before = ~np.isnan(before_row.astype("float64"))
    before_row = np.where(has_before, before_row, 0).astype("int64")
    after_add = np.isin(after.column(kind_column).to_numpy(), (INSERT, UPDATE_AFTER))
    before_add = has_before.copy()
    if has_before.any():
        kinds = before.column(kind_column).to_numpy()
        before_add[has_before] = np.isin(kinds[before_row[has_before]], (INSERT, UPDATE_AFTER))
    if first_row:
        # FirstRowMergeFunctionWrapper: a key an upper level holds keeps its row; new keys are +I.
        insert = ~has_before & after_add
        nothing = np.zeros(len(insert), dtype=bool)
        return _assemble(schema, kind_column, insert, nothing, nothing, before, before_row, after, after_row)
    insert = ~before_add & after_add
    delete = before_add & ~after_add
    update = before_add & after_add
    if opts.row_deduplicate:
        _drop_unchanged(update, before, before_row, after, after_row, value_columns, opts)
    return _assemble(schema, kind_column, insert, delete, update, before, before_row, after, after_row)


def _drop_unchanged(
    update: np.ndarray,
    old: pa.Table,
    old_row: np.ndarray,
    new: pa.Table,
    new_row: np.ndarray,
    value_columns: Sequence[str],
    opts: ChangelogOptions,
) -> None:
    """``changelog-producer.row-deduplicate``: no -U/+U where the compared values are equal."""
    if not update.any():
        return
    compared = [c for c in value_columns if c not in opts.ignore_fields]
    old_values = old.take(pa.array(old_row[update].astype("int64"))).select(compared)
    new_values = new.take(pa.array(new_row[update])).select(compared)
    same = np.ones(int(update.sum()), dtype=bool)
    for c in compared:
        a, b = old_values.column(c), new_values.column(c)
        eq = pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b)).to_numpy(zero_copy_only=False)
        same &= eq | both_null
    update[np.flatnonzero(update)[same]] = False


def _assemble(
    schema: pa.Schema,
    kind_column: str,
    insert: np.ndarray,
    delete: np.ndarray,
    update: np.ndarray,
    old: pa.Table,
    old_row: np.ndarray,
    new: pa.Table,
    new_row: np.ndarray,
) -> pa.Table:
    # (position in key order, 0 = before / 1 = after, source table, source row, changelog kind)
    parts: list[tuple[np.ndarray, int, pa.Table, np.ndarray, int]] = [
        (np.flatnonzero(insert), 1, new, new_row[insert], INSERT),
        (np.flatnonzero(delete), 0, old, old_row[delete], DELETE),
        (np.flatnonzero(update), 0, old, old_row[update], UPDATE_BEFORE),
        (np.flatnonzero(update), 1, new, new_row[update], UPDATE_AFTER),
    ]
    tables = []
    order = []
    for position, side, source, source_rows, kind in parts:
        if position.size == 0:
            continue
        taken = source.take(pa.array(source_rows.astype("int64"))).select(schema.names)
        taken = taken.set_column(
            schema.get_field_index(kind_column), kind_column, pa.array(np.full(position.size, kind), pa.int8())
        )
        tables.append(taken.cast(schema))
        order.append(position * 2 + side)
    if not tables:
        return schema.empty_table()
    out = pa.concat_tables(tables)
    return out.take(pa.array(np.argsort(np.concatenate(order), kind="stable")))
