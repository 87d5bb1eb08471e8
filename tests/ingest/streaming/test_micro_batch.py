"""The micro-batch processor's pure helpers."""

from __future__ import annotations

from ingest.streaming.micro_batch import write_groups


def test_few_tables_get_a_write_task_each() -> None:
    assert write_groups(["a", "b"], {"a": 10, "b": 5}, 2) == [["a"], ["b"]]
    assert write_groups(["a"], {"a": 10}, 4) == [["a"]]


def test_many_tables_share_as_many_tasks_as_cores_balanced_by_rows_in_batch_order() -> None:
    tables = [f"t{i}" for i in range(1000)]
    rows = {t: 10 for t in tables} | {"t500": 40_000}
    groups = write_groups(tables, rows, 2)
    assert len(groups) == 2 and sorted(t for g in groups for t in g) == sorted(tables)
    assert all(g == sorted(g, key=tables.index) for g in groups)  # each group in the batch's order
    big = next(g for g in groups if "t500" in g)
    other = next(g for g in groups if "t500" not in g)
    assert len(big) < len(other)  # the large table's group takes fewer of the small ones
