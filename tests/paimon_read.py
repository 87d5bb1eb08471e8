"""Independent read-back of Paimon tables, through both pypaimon-rust and pypaimon."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in a stable order: by ``id`` where the table has one, else by all values."""
    if rows and "id" in rows[0]:
        return sorted(rows, key=lambda r: r["id"])
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r.values()))


def read_rust(warehouse: str, table: str) -> list[dict[str, Any]]:
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": warehouse}).get_table(table)
    rb = t.new_read_builder()
    batches = rb.new_read().read(rb.new_scan().plan().splits())
    return _sorted(pa.Table.from_batches(batches).to_pylist()) if batches else []


def read_pypaimon(warehouse: str, table: str) -> list[dict[str, Any]]:
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({"warehouse": warehouse}).get_table(table)
    rb = t.new_read_builder()
    return _sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


def read_changelog(
    warehouse: str, table: str, columns: tuple[str, ...] = ("id", "v"), mode: str = "changelog"
) -> list[tuple[Any, ...]]:
    """Every changelog row of every snapshot, in commit order: (row kind, *columns); ``mode="delta"``
    reads each snapshot's new data files instead (append tables have no changelog files)."""
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({"warehouse": warehouse}).get_table(table)
    latest = t.latest_snapshot()
    if latest is None:
        return []
    out: list[tuple[Any, ...]] = []
    for snap in range(1, latest.id() + 1):
        rb = t.new_read_builder().with_include_row_kind(True)
        batches = rb.new_read().read(rb.new_incremental_scan(snap - 1, snap, mode=mode).plan().splits())
        for row in pa.Table.from_batches(batches).to_pylist() if batches else []:
            out.append((row["rowkind"], *(row[c] for c in columns)))
    return out


def paimon_schema(warehouse: str, table: str) -> list[tuple[str, str]]:
    """``[(column, Paimon type)]`` as the table's schema file says (read with pypaimon)."""
    from pypaimon import CatalogFactory

    schema = CatalogFactory.create({"warehouse": warehouse}).get_table(table).table_schema
    return [(f.name, str(f.type)) for f in schema.fields]


def paimon_comments(warehouse: str, table: str) -> tuple[str | None, dict[str, str]]:
    """The table's comment and its columns' descriptions (those that have one), read with pypaimon."""
    from pypaimon import CatalogFactory

    schema = CatalogFactory.create({"warehouse": warehouse}).get_table(table).table_schema
    return schema.comment, {f.name: f.description for f in schema.fields if f.description}


def java_rows(warehouse: str, table: str) -> list[str]:
    """The table's rows in the notation of Paimon's Java ITCases (``+I[1, one, NULL]``), so their
    expected results can be compared verbatim. Row order is not significant: sorted."""
    types = dict(paimon_schema(warehouse, table))
    rows = read_rust(warehouse, table)
    return sorted("+I[" + ", ".join(_java(v, types[c]) for c, v in r.items()) + "]" for r in rows)


def _java(v: Any, typ: str) -> str:
    import datetime as dt
    from decimal import Decimal

    import numpy as np

    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, bytes):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in v) + "]"
    if isinstance(v, float):
        return str(np.float32(v)) if typ.startswith("FLOAT") else repr(v)
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        text = v.strftime("%Y-%m-%dT%H:%M")
        if v.second or v.microsecond:
            text += f":{v.second:02d}"
        if v.microsecond:
            frac = f"{v.microsecond:06d}"
            text += "." + (frac[:3] if frac.endswith("000") else frac)
        return text
    if isinstance(v, dt.date):
        return str((v - dt.date(1970, 1, 1)).days)
    if isinstance(v, dt.time):
        return str(((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000)
    if isinstance(v, list):
        return "[" + ", ".join(_java(x, "STRING") for x in v) + "]"
    return str(v)


def assert_changelog_replays(warehouse: str, table: str, columns: tuple[str, ...], keys: int = 1) -> dict[Any, Any]:
    """Replaying the changelog from empty gives the table, and every retraction retracts exactly the row
    its key holds: no change arrived twice or was lost. ``columns`` start with the ``keys`` primary-key
    columns; returns the replayed state (key -> the other columns)."""
    state: dict[Any, tuple[Any, ...]] = {}
    for kind, *row in read_changelog(warehouse, table, columns):
        key = row[0] if keys == 1 else tuple(row[:keys])
        values = tuple(row[keys:])
        if kind in ("+I", "+U"):
            assert key not in state, f"{kind} of {key} {list(values)}: the key already holds {state[key]}"
            state[key] = values
        else:
            assert state.get(key) == values, f"{kind} of {key} {list(values)} but the key holds {state.get(key)}"
            del state[key]
    final = {
        r[columns[0]] if keys == 1 else tuple(r[c] for c in columns[:keys]): tuple(r[c] for c in columns[keys:])
        for r in read_rust(warehouse, table)
    }
    assert state == final
    return state
