"""The bulk decoder gives canal.parse's row images, and gives way wherever it cannot be exact."""

from __future__ import annotations

from typing import Any

from formats.bulk import KindCodes, PlainRows
from formats.canal import parse
from formats.canal_bulk import CanalBulkDecoder
from formats.events import DataChangeEvent, MessageContext, Op
from schema_evolution.errors import SourcePosition
from tests.conftest import ROOT, sample_messages

CTX = MessageContext(SourcePosition("t", 0, 0))
EDGES = sample_messages(ROOT / "tests" / "data" / "canal" / "bulk-path-edges.txt")


def _learned() -> CanalBulkDecoder:
    decoder = CanalBulkDecoder()
    event = parse(EDGES[0], None, CTX)[0]
    assert isinstance(event, DataChangeEvent)
    decoder.learn(event.schema)
    return decoder


def test_update_before_image_tells_null_from_unchanged() -> None:
    rows = _learned().decode(EDGES[1])
    assert rows is not None and rows.op is Op.UPDATE
    # old = {"class": null, "my col": "y"}: class WAS null, "a.b" and n were unchanged
    assert rows.after == [("2", "b", "y2", "q", "2")]
    assert rows.before == [("2", None, "y", "q", "2")]
    (event,) = parse(EDGES[1], None, CTX)
    assert isinstance(event, DataChangeEvent) and event.before is not None
    assert tuple(event.before.values()) == rows.before[0]


def test_a_null_old_entry_means_nothing_changed() -> None:
    rows = _learned().decode(EDGES[2])
    assert rows is not None and rows.before == rows.after


def test_gives_way_where_the_event_path_must_decide() -> None:
    decoder = _learned()
    assert decoder.decode(EDGES[4]) is None  # numbers, not text
    assert decoder.decode(EDGES[5]) is None  # a column mysqlType does not name
    assert decoder.decode(EDGES[6]) is None  # lower-case type
    assert decoder.decode(EDGES[9]) is None  # columns it has not learned
    assert decoder.decode(EDGES[12]) is None  # DDL
    assert decoder.decode(b"not json") is None
    assert CanalBulkDecoder().decode(EDGES[1]) is None  # nothing learned yet


def test_rows_of_a_shard_share_the_decoder_and_schema() -> None:
    decoder = _learned()
    a, b = decoder.decode(EDGES[0]), decoder.decode(EDGES[8])
    assert a is not None and b is not None
    assert (a.table, b.table) == ("t", "t_shard")
    assert a.source is b.source


CODES = KindCodes(insert=0, update_before=1, update_after=2, delete=3)


def _expected(rows: PlainRows, offset: int) -> tuple[list[Any], list[int], list[int]]:
    """What appending ``decode``'s images gives: updates as before/after pairs."""
    if rows.op is Op.UPDATE:
        assert rows.before is not None
        images = [image for pair in zip(rows.before, rows.after, strict=True) for image in pair]
        kinds = [CODES.update_before, CODES.update_after] * len(rows.after)
    else:
        images = list(rows.after)
        kinds = [CODES.insert if rows.op is Op.INSERT else CODES.delete] * len(rows.after)
    return images, kinds, [offset] * len(images)


def test_a_lane_appends_what_decode_gives_and_nothing_where_it_declines() -> None:
    decoder = _learned()
    first = decoder.decode(EDGES[0])  # table t, its usual columns and types
    assert first is not None
    rows: list[Any] = []
    kinds: list[int] = []
    offsets: list[int] = []
    lane = decoder.lane(first, rows, kinds, offsets, CODES)
    taken = []
    for offset, value in enumerate(EDGES):
        before = (len(rows), len(kinds), len(offsets))
        n = lane.take(value, offset)
        if not n:
            assert (len(rows), len(kinds), len(offsets)) == before, f"message {offset} declined but appended"
            continue
        taken.append(offset)
        # a message the lane takes is one decode takes, with the same images
        expected = decoder.decode(value)
        assert expected is not None and expected.table == "t" and expected.source is first.source
        assert n == len(expected.after)
        assert (rows[before[0] :], kinds[before[1] :], offsets[before[2] :]) == _expected(expected, offset)
    # two rows at once, updates (null and unchanged old columns), absent columns, text escapes, a
    # two-row update, a delete; not numbers, unknown columns, other types, keys or column order,
    # other tables or shards, DDL, empty data
    assert taken == [0, 1, 2, 3, 7, 17, 18]
    assert lane.take(b"not json", 99) == 0
