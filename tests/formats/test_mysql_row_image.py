"""``formats.mysql_row_image`` against mysql-replication's own decoding of the same binlog bytes.

``tests/data/mysql-binlog/rows-events.json`` holds rows events captured from MariaDB (``capture.py``
beside it): every supported column type at its limits, NULLs, zero and invalid dates, negative times,
multi-byte text, a latin1 and binary columns, inserts, updates (before and after images) and deletes,
with the values mysql-replication 1.0 decoded from them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from formats.mysql_row_image import (
    SUPPORTED_TYPES,
    TIME2,
    BinlogColumn,
    RowImageDecoder,
    library_time,
    reader,
    supported,
)
from ingest.mysql.key_bounds import decode_bound

EVENTS = json.loads((Path(__file__).parents[1] / "data" / "mysql-binlog" / "rows-events.json").read_text())["events"]


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "float" in value:
        return float.fromhex(value["float"])
    if isinstance(value, dict) and "set" in value:
        return set(value["set"])
    return decode_bound(value)  # (bytes, dates, decimals, times: as chunk bounds travel)


def _columns(event: dict[str, Any]) -> list[BinlogColumn]:
    return [BinlogColumn(**c) for c in event["columns"]]


def _expected(event: dict[str, Any]) -> list[tuple[dict[str, Any], ...]]:
    """mysql-replication's values, its negative fractional TIMEs repaired (``library_time``)."""
    times = {c.name for c in _columns(event) if c.type == TIME2}
    return [
        tuple({k: library_time(_decode(v)) if k in times else _decode(v) for k, v in image.items()} for image in row)
        for row in event["rows"]
    ]


@pytest.mark.parametrize("event", EVENTS, ids=[f"{i}-{e['kind']}" for i, e in enumerate(EVENTS)])
def test_rows_equal_mysql_replications(event: dict[str, Any]) -> None:
    decoder = RowImageDecoder(_columns(event))
    rows = decoder.rows(bytes.fromhex(event["body"]), event["images"])
    expected = _expected(event)
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected, strict=True):
        for got_image, want_image in zip(got, want, strict=True):
            assert list(got_image) == list(want_image)  # column order
            for name, value in want_image.items():
                # the same type and form too: a Decimal is not a float, 1.50 not 1.5, a date not a datetime
                shown = (lambda v: v) if isinstance(value, set) else repr  # a set's repr has no fixed order
                assert (type(got_image[name]), shown(got_image[name])) == (type(value), shown(value)), name


def test_the_capture_covers_every_supported_type_nulls_and_updates() -> None:
    types = {c["type"] for e in EVENTS for c in e["columns"]}
    assert types == SUPPORTED_TYPES
    assert {e["kind"] for e in EVENTS} == {"WriteRowsEvent", "UpdateRowsEvent", "DeleteRowsEvent"}
    values = [v for e in EVENTS for row in e["rows"] for image in row for v in image.values()]
    assert None in values and any(isinstance(v, dict) and "time" in v and v["time"][0] < 0 for v in values)


def test_a_truncated_event_is_an_error_not_a_short_row() -> None:
    event = next(e for e in EVENTS if e["kind"] == "UpdateRowsEvent")
    body = bytes.fromhex(event["body"])
    with pytest.raises((ValueError, IndexError)):
        RowImageDecoder(_columns(event)).rows(body[:-3], 2)


def test_types_it_does_not_decode_are_left_to_the_library() -> None:
    json_column = BinlogColumn(name="doc", type=245)
    assert not supported([BinlogColumn(name="id", type=3), json_column])
    assert not supported([])
    with pytest.raises(ValueError, match="'doc'"):
        reader(json_column)


def _inserted(row_id: int) -> dict[str, Any]:
    event = next(e for e in EVENTS if e["kind"] == "WriteRowsEvent" and e["rows"][0][0]["id"] == row_id)
    (image,) = RowImageDecoder(_columns(event)).rows(bytes.fromhex(event["body"]), 1)[0]
    return image


def _time(text: str) -> dt.timedelta:
    sign = -1 if text.startswith("-") else 1
    hours, minutes, seconds = text.lstrip("-").split(":")
    return sign * dt.timedelta(hours=int(hours), minutes=int(minutes), seconds=float(seconds))


@pytest.mark.parametrize(
    ("row_id", "column", "text"),
    [
        (1, "tm", "-838:59:59"),
        (1, "tm1", "-00:00:00.1"),
        (1, "tm4", "-12:34:56.7891"),
        (1, "tm6", "838:59:59"),
        (2, "tm6", "-838:59:59"),
        (4, "tm1", "-00:00:01.5"),
        (4, "tm4", "01:02:03.0004"),
        (4, "tm6", "-00:00:00.000001"),
        (5, "tm", "-01:00:00"),
    ],
)
def test_times_are_the_inserted_ones_negative_fractions_too(row_id: int, column: str, text: str) -> None:
    # mysql-replication read -00:00:00.1 as -0.9 s and -00:00:00.000001 as -0.999999 s
    assert _inserted(row_id)[column] == _time(text)


def test_the_library_repair_leaves_other_times_alone() -> None:
    for value in (dt.timedelta(0), dt.timedelta(hours=-3), dt.timedelta(seconds=5, microseconds=7), None, "x"):
        assert library_time(value) == value
    assert library_time(dt.timedelta(seconds=-0.9)) == dt.timedelta(seconds=-0.1)
