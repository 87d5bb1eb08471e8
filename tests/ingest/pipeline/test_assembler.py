"""The assembler turns messages into chunks; canal-json's bulk path must give exactly what the
per-event path gives (same tables, schemas, row kinds, values, offsets and counts)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from bench.workload import messages as bench_messages
from deploy.canal_stream import generate
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.partition_stream import assemble
from ingest.pipeline.routing import TableRouter
from schema_evolution.errors import MalformedMessage
from sinks.layout import RecordSchema
from sinks.write.chunk_format import deserialize_batch
from tests.conftest import ROOT, sample_messages


def _assembled(values: list[bytes], bulk: bool, router: TableRouter) -> dict[str, Any]:
    spec = ParseSpec("canal-json", router, chunk_rows=50, bulk_path=bulk)
    per_table: dict[str, list[pa.RecordBatch]] = defaultdict(list)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    schemas: dict[str, list[str]] = defaultdict(list)
    offsets: dict[str, list[tuple[int, int]]] = defaultdict(list)
    messages = ((v, None, i, None, 0) for i, v in enumerate(values))
    for batch in assemble(spec, "t", 0, messages):
        for row in batch.to_pylist():
            if row["data"] is None:
                continue
            per_table[row["table"]].append(deserialize_batch(row["data"]))
            counts[row["table"]][0] += row["rows"]
            counts[row["table"]][1] += row["events"]
            if not schemas[row["table"]] or schemas[row["table"]][-1] != row["schema"]:
                schemas[row["table"]].append(row["schema"])
            offsets[row["table"]].append((row["first_offset"], row["last_offset"]))
    tables = {
        t: pa.Table.from_batches(b, schema=b[0].schema) for t, b in per_table.items() if len({x.schema for x in b}) == 1
    }
    rows = {t: [r for x in b for r in x.to_pylist()] for t, b in per_table.items()}
    return {"rows": rows, "counts": dict(counts), "schemas": dict(schemas), "single_schema": set(tables)}


CANAL_DATA = ROOT / "tests" / "data" / "canal"
EDGES = CANAL_DATA / "bulk-path-edges.txt"
# every file of canal messages kept in tests/data/canal (the malformed ones are the format contract's)
CANAL_MESSAGE_FILES = sorted(p for p in CANAL_DATA.rglob("*") if p.is_file() and "malformed" not in p.parts)


@pytest.mark.parametrize("path", CANAL_MESSAGE_FILES, ids=lambda p: str(p.relative_to(CANAL_DATA)))
def test_bulk_path_equals_event_path_on_our_canal_messages(path: Path) -> None:
    values = sample_messages(path)
    assert values, path
    router = TableRouter(database="ods", table="t")
    try:
        expected = _assembled(values, False, router)
    except Exception as exc:  # a message the job refuses must be refused the same way by both paths
        with pytest.raises(type(exc)):
            _assembled(values, True, router)
        return
    assert _assembled(values, True, router) == expected


@pytest.mark.parametrize("router", [TableRouter(database="ods", table="t"), TableRouter(database="ods")], ids=str)
def test_bulk_path_equals_event_path_on_its_edge_cases(router: TableRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages built to probe where the bulk decoder must give way or get the before image right:
    nulls in ``old``, absent columns, numbers, unknown columns, odd column names, shards, schema
    changes, reordered types, other keys, empty messages."""
    values = sample_messages(EDGES)
    calls = _parse_calls(monkeypatch)
    result = _assembled(values, True, router)
    # the per-event parser took: the first message (which teaches the columns), numbers, an unknown
    # column, a lower-case type, table u's first, the DDL, the first with column z, reordered types
    assert calls == [0, 4, 5, 6, 9, 12, 13, 15]
    assert result == _assembled(values, False, router)
    assert sum(c[1] for c in result["counts"].values()) == 20


def _parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    import formats
    from formats import canal

    calls: list[int] = []

    def counting(value: bytes | None, key: bytes | None, ctx: Any) -> Any:
        calls.append(ctx.position.offset)
        return canal.parse(value, key, ctx)

    entry = formats.FORMATS[canal.FORMAT]
    monkeypatch.setitem(formats.FORMATS, canal.FORMAT, formats.Format(entry.name, counting, entry.bulk_decoder))
    return calls


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([v for _, v in bench_messages(3000)], id="bench-workload"),
        pytest.param([v for _, v in generate(keys=60, updates=4).messages], id="two-tables-interleaved"),
    ],
)
def test_bulk_path_equals_event_path_on_generated_streams(values: list[bytes]) -> None:
    router = TableRouter(database="ods")
    assert _assembled(values, True, router) == _assembled(values, False, router)


def test_bulk_path_is_taken_for_plain_dml(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _parse_calls(monkeypatch)
    values = [v for _, v in bench_messages(500)]
    result = _assembled(values, True, TableRouter(database="ods"))
    (counts,) = result["counts"].values()
    assert counts[1] == 500  # one event per message in this workload
    assert counts[0] > 500  # updates are -U/+U pairs
    # the per-event parser only sees the first message, which teaches the bulk decoder the columns
    assert calls == [0]


def _canal_upper(kind: str, row: dict[str, str], extra: dict[str, str] | None = None) -> bytes:
    import orjson

    types = {"ID": "int", "Name": "varchar(10)", **(extra or {})}
    body = {"type": kind, "data": [row], "old": None, "database": "Shop", "table": "Orders", "isDdl": False}
    return orjson.dumps({**body, "pkNames": ["ID"], "mysqlType": types})


@pytest.mark.parametrize("bulk", [True, False])
def test_case_insensitive_catalog_gets_lower_case_names(bulk: bool) -> None:
    """--catalog-conf case-sensitive=false: tables, columns and keys in lower case on both parse
    paths, computed columns finding their column whatever the case; a clash is Paimon's error."""
    router = TableRouter(database="ods", case_sensitive=False)
    spec = ParseSpec("canal-json", router, bulk_path=bulk, case_sensitive=False, computed_columns=("Up=upper(NAME)",))
    values = [_canal_upper("INSERT", {"ID": str(i), "Name": f"n{i}"}) for i in range(3)]
    rows = [
        r for b in assemble(spec, "t", 0, ((v, None, i, None, 0) for i, v in enumerate(values))) for r in b.to_pylist()
    ]
    assert {r["table"] for r in rows} == {"ods.orders"}
    schema = RecordSchema.from_json(rows[0]["schema"])
    assert [n for n, _ in schema.fields] == ["id", "name", "up"] and schema.primary_keys == ("id",)
    data = [x for r in rows for x in deserialize_batch(r["data"]).to_pylist()]
    assert data == [{"id": i, "name": f"n{i}", "up": f"N{i}", "_VALUE_KIND": 0} for i in range(3)]
    clash = [_canal_upper("INSERT", {"ID": "1", "Name": "a", "NAME": "b"}, {"NAME": "varchar(10)"})]
    with pytest.raises(MalformedMessage, match=r"Table ods.orders contains duplicate columns: \['name'\]"):
        list(assemble(spec, "t", 0, ((v, None, i, None, 0) for i, v in enumerate(clash))))
