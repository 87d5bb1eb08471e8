"""--errors-tolerance all: each kind of bad message becomes one dead-letter row with its raw bytes
and position, the other rows go through in order, and the bulk path gives what the per-event path
gives; --skip-offsets moves past a message."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import orjson
import pytest

from deploy.canal_stream import MYSQL_TYPES, generate
from ingest.pipeline.dead_letters import (
    DEAD_LETTER_SCHEMA,
    SKIPPED_BY_OPERATOR,
    parse_skip_offsets,
)
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.partition_stream import assemble
from ingest.pipeline.routing import TableRouter
from schema_evolution.errors import MalformedMessage
from sinks.layout import RecordSchema
from sinks.write.chunk_format import deserialize_batch

DLQ = "ods.dlq"


def _canal(table: str | None, row: dict[str, str], op: str = "INSERT") -> bytes:
    body: dict[str, Any] = {"type": op, "data": [row], "old": None, "database": "shop", "isDdl": False}
    if table is not None:
        body["table"] = table
    return orjson.dumps({**body, "pkNames": ["id"], "mysqlType": MYSQL_TYPES})


GOOD_ROW = {"id": "9001", "name": "x", "amount": "1.00", "updated": "2024-01-01 00:00:00.000", "qty": "1"}
# (kind, value, error class): every kind of message a tolerant job must dead-letter
POISON: list[tuple[str, bytes, str]] = [
    ("unparseable", b"\xff\xfe{not json", "MalformedMessage"),
    ("not-an-object", b"[1, 2, 3]", "MalformedMessage"),
    ("wrong-shape", orjson.dumps({"type": "INSERT", "data": "no", "database": "d", "table": "t"}), "MalformedMessage"),
    ("unconvertible", _canal("orders", {**GOOD_ROW, "qty": "not-a-number"}), "MalformedMessage"),
    ("unroutable", _canal(None, GOOD_ROW), "MalformedMessage"),
    ("into-the-dead-letter-table", _canal("dlq", GOOD_ROW), "MalformedMessage"),
]  # fmt: skip


def _run(values: list[bytes | None], bulk: bool, skip: tuple[tuple[str, int, int], ...] = (), dlq: str | None = DLQ,
         chunk_rows: int = 50) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:  # fmt: skip
    """The rows per table (in order) and the dead-letter rows of a canal stream on partition 0 of 't'."""
    spec = ParseSpec(
        "canal-json", TableRouter(database="ods"), chunk_rows=chunk_rows, bulk_path=bulk, dead_letter_table=dlq,
        skip_offsets=skip,
    )  # fmt: skip
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    letters: list[dict[str, Any]] = []
    messages = ((v, f"k{i}".encode(), i, None, 0) for i, v in enumerate(values))
    for batch in assemble(spec, "t", 0, messages):
        for chunk in batch.to_pylist():
            if chunk["data"] is None:
                continue
            data = deserialize_batch(chunk["data"]).to_pylist()
            if chunk["table"] == DLQ:
                assert RecordSchema.from_json(chunk["schema"]) == DEAD_LETTER_SCHEMA
                assert chunk["rows"] == len(data) and chunk["events"] == 0
                letters.extend(data)
            else:
                # the chunk's counts and offsets still describe its rows after a message left it
                assert chunk["rows"] == len(data)
                rows[chunk["table"]].extend(data)
    return dict(rows), sorted(letters, key=lambda d: d["offset"])


def _stream_with_poison(poison: list[bytes]) -> tuple[list[bytes | None], list[bytes | None], list[int]]:
    """A two-table stream with the poison spread through it: (with poison, without, poison offsets)."""
    good: list[bytes | None] = [v for _, v in generate(keys=40, updates=3).messages]
    mixed: list[bytes | None] = list(good)
    at = []
    for i, value in enumerate(poison):
        where = 7 + i * (len(good) // len(poison))
        mixed.insert(where, value)
        at.append(where)
    return mixed, good, at


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-path", "event-path"])
def test_each_kind_of_bad_message_is_one_dead_letter_and_the_rest_goes_through(bulk: bool) -> None:
    mixed, good, at = _stream_with_poison([v for _, v, _ in POISON])
    rows, letters = _run(mixed, bulk)
    expected_rows, none = _run(good, bulk)
    assert none == []
    assert rows == expected_rows  # every good row, in order
    assert [(d["topic"], d["partition"], d["offset"]) for d in letters] == [("t", 0, o) for o in at]
    for letter, (kind, value, error_class) in zip(letters, POISON, strict=True):
        assert letter["value"] == value, kind
        assert letter["key"] == f"k{letter['offset']}".encode(), kind
        assert letter["error_class"] == error_class, kind
        assert letter["format"] == "canal-json" and letter["error_message"], kind
        assert letter["dead_lettered_at"] is not None
    by_kind = {kind: d for (kind, _, _), d in zip(POISON, letters, strict=True)}
    assert by_kind["unconvertible"]["source_table"] == "shop.orders"
    assert "qty" in by_kind["unconvertible"]["error_message"]
    assert "names no source table" in by_kind["unroutable"]["error_message"]
    assert "dead-letter table" in by_kind["into-the-dead-letter-table"]["error_message"]


def test_bulk_path_equals_event_path_with_dead_letters() -> None:
    mixed, _, _ = _stream_with_poison([v for _, v, _ in POISON] * 2)
    bulk_rows, bulk_letters = _run(mixed, True)
    event_rows, event_letters = _run(mixed, False)
    assert bulk_rows == event_rows

    def strip(letters: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in d.items() if k != "dead_lettered_at"} for d in letters]

    assert strip(bulk_letters) == strip(event_letters)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-path", "event-path"])
def test_unconvertible_rows_in_one_chunk_leave_the_rest_of_it(bulk: bool) -> None:
    """Several bad values in one chunk, one as the chunk's first row and one as its last."""
    values: list[bytes | None] = [
        _canal("orders", {**GOOD_ROW, "id": str(i), "qty": "bad" if i in (0, 5, 9) else str(i)}) for i in range(10)
    ]
    rows, letters = _run(values, bulk, chunk_rows=10)
    assert [r["id"] for r in rows["ods.orders"]] == [1, 2, 3, 4, 6, 7, 8]
    assert [d["offset"] for d in letters] == [0, 5, 9]


def test_default_tolerance_stops_at_the_first_bad_message_naming_it() -> None:
    mixed, _, at = _stream_with_poison([v for _, v, _ in POISON])
    where = rf"topic 't', partition 0, offset {at[0]}\b.*--skip-offsets t:0:{at[0]}"
    with pytest.raises(MalformedMessage, match=where):
        _run(mixed, True, dlq=None)


@pytest.mark.parametrize("dlq", [DLQ, None], ids=["dead-letter-table", "none"])
def test_skip_offsets_moves_past_a_message(dlq: str | None) -> None:
    mixed, good, at = _stream_with_poison([POISON[0][1]])
    skip = (("t", 0, at[0]), ("other", 0, at[0]), ("t", 1, 3))  # only this partition's offsets count
    rows, letters = _run(mixed, True, skip=skip, dlq=dlq)
    assert rows == _run(good, True)[0]
    if dlq is None:
        assert letters == []
    else:
        found = [(d["offset"], d["error_class"], d["value"]) for d in letters]
        assert found == [(at[0], SKIPPED_BY_OPERATOR, POISON[0][1])]


def test_skip_offsets_syntax() -> None:
    assert parse_skip_offsets("a.b:0:12, c-d:3:4") == (("a.b", 0, 12), ("c-d", 3, 4))
    assert parse_skip_offsets(["a:0:1", "b:1:2"]) == (("a", 0, 1), ("b", 1, 2))
    for bad in ("a:0", "a:x:1", ":0:1", "a:0:-1"):
        with pytest.raises(ValueError, match="--skip-offsets"):
            parse_skip_offsets(bad)


def test_rows_of_a_source_that_parses_itself_are_dead_lettered_by_its_positions() -> None:
    """The MySQL binlog's way (``add_events_tolerant``): row changes of one row event share an offset
    and are one dead letter, named by the position the source gives, its rows as JSON."""
    from formats.events import DataChangeEvent, Op, SourceSchema, TypeSystem
    from ingest.pipeline.assembler import ChunkAssembler
    from schema_evolution.errors import SourcePosition

    schema = SourceSchema((("id", "INT"), ("n", "INT")), ("id",), TypeSystem.MYSQL)
    spec = ParseSpec("mysql-binlog", TableRouter(database="ods", table="t"), dead_letter_table=DLQ)
    assembler = ChunkAssembler(spec, "mysql", 1 << 20)
    assembler.position_of = lambda offset: ("binlog.000001", 0, offset)
    for offset, rows in ((10, [1, 2]), (20, [3, "x"]), (30, [5])):  # the event at 20 holds a bad value
        for value in rows:
            row = {"id": len(str(value)) * 100 + offset, "n": value}
            event = DataChangeEvent(Op.INSERT, "src", "t", schema, None, row, 0)
            assembler.add_events_tolerant([event], SourcePosition("mysql", 1 << 20, offset), None, {"after": row})
    batch = assembler.finish()
    assert batch is not None
    data: list[dict[str, Any]] = []
    letters: list[dict[str, Any]] = []
    for chunk in batch.to_pylist():
        target = letters if chunk["table"] == DLQ else data
        target.extend(deserialize_batch(chunk["data"]).to_pylist() if chunk["data"] else [])
    assert [r["n"] for r in data] == [1, 2, 5]  # both rows of the event at 20 left
    (letter,) = letters
    assert (letter["topic"], letter["partition"], letter["offset"]) == ("binlog.000001", 0, 20)
    assert orjson.loads(letter["value"]) == [{"after": {"id": 120, "n": 3}}, {"after": {"id": 120, "n": "x"}}]
    assert letter["source_table"] == "src.t" and letter["format"] == "mysql-binlog"
