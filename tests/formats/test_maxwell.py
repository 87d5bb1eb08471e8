"""maxwell-json against the real messages of Paimon's Kafka maxwell tests, plus captured edge cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from formats.events import DataChangeEvent, MessageContext, Op, SchemaChangeEvent, TypeSystem
from formats.maxwell import FORMAT, parse
from schema_evolution.conversion import convert_column
from schema_evolution.errors import MalformedMessage, SourcePosition
from schema_evolution.types import string
from tests.conftest import SAMPLES, sample_messages
from tests.formats.malformed import assert_malformed

DATA = Path(__file__).resolve().parents[1] / "data" / "maxwell"
CTX = MessageContext(SourcePosition("cdc", 3, 42))

MAXWELL = SAMPLES / "maxwell"
MAXWELL_FILES = sorted(MAXWELL.rglob("*.txt"))
PRODUCT_COLUMNS = ("id", "name", "description", "weight")


def _events(path: Path) -> list[DataChangeEvent]:
    out: list[DataChangeEvent] = []
    for value in sample_messages(path):
        for e in parse(value, None, CTX):
            assert isinstance(e, DataChangeEvent)
            out.append(e)
    return out


def _sample(path: str) -> list[DataChangeEvent]:
    return _events(MAXWELL / path)


def _text(column: str, value: Any) -> str | None:
    """A value as the STRING column will hold it (the conversion the sink applies)."""
    result: str | None = convert_column(column, [value], string()).to_pylist()[0]
    return result


@pytest.mark.parametrize("path", MAXWELL_FILES, ids=lambda p: str(p.relative_to(MAXWELL)))
def test_every_paimon_maxwell_sample_parses(path: Path) -> None:
    events = _events(path)
    assert events, "every maxwell sample file holds row messages"
    for e in events:
        assert e.database and e.table
        assert (e.before is None) == (e.op is Op.INSERT)
        assert (e.after is None) == (e.op is Op.DELETE)
        assert e.schema.type_system is TypeSystem.STRING
        assert all(t is None for _, t in e.schema.fields)
        row = e.after if e.after is not None else e.before
        assert row is not None and [n for n, _ in e.schema.fields] == list(row)
        assert e.op_ts_ms is not None and e.op_ts_ms % 1000 == 0


def test_the_samples_are_there() -> None:
    assert len(MAXWELL_FILES) == 18
    assert sum(len(sample_messages(p)) for p in MAXWELL_FILES) == 38


def test_insert_has_after_image_keys_and_seconds_timestamp() -> None:
    event = _sample("table/schemaevolution/maxwell-data-1.txt")[0]
    assert event.op is Op.INSERT
    assert (event.database, event.table) == ("test", "product")
    assert event.before is None
    assert event.after == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}
    assert event.schema.fields == tuple((c, None) for c in PRODUCT_COLUMNS)
    assert event.schema.primary_keys == ("id",)
    assert event.op_ts_ms == 1596684883000


def test_update_before_image_is_data_overlaid_with_old() -> None:
    update = _sample("table/schemaevolution/maxwell-data-3.txt")[2]
    assert update.op is Op.UPDATE
    assert update.after == {
        "id": 105,
        "name": "hammer",
        "description": "14oz carpenter's hammer",
        "weight": 0.875,
        "address": "Beijing",
    }
    assert update.before == {**update.after, "address": "Shanghai"}
    assert update.op_ts_ms == 1596684906000


def test_delete_has_the_row_as_before_image() -> None:
    delete = _sample("table/schemaevolution/maxwell-data-3.txt")[1]
    assert delete.op is Op.DELETE
    assert delete.after is None
    assert delete.before == {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14}


def test_null_value_stays_null() -> None:
    first = _sample("table/schemaevolution/maxwell-data-4.txt")[0]
    assert first.after is not None and first.after["weight"] is None
    assert ("weight", None) in first.schema.fields


def test_schema_evolution_replay_matches_paimon_expected_rows() -> None:
    """Replays Paimon's runSingleTableSchemaEvolution files into a primary-key table model and
    compares with KafkaSyncTableActionITCase's expected rows (all columns STRING)."""
    rows: dict[str | None, dict[str, str | None]] = {}
    columns: list[str] = []
    for n in (1, 2, 3):
        for e in _sample(f"table/schemaevolution/maxwell-data-{n}.txt"):
            columns += [c for c, _ in e.schema.fields if c not in columns]
            if e.before is not None:
                del rows[_text("id", e.before["id"])]
            if e.after is not None:
                rows[_text("id", e.after["id"])] = {c: _text(c, v) for c, v in e.after.items()}
    assert columns == [*PRODUCT_COLUMNS, "age", "address"]
    shown = sorted("+I[" + ", ".join(r.get(c) or "NULL" for c in columns) + "]" for r in rows.values())
    assert shown == [
        "+I[102, car battery, 12V car battery, 8.1, NULL, NULL]",
        "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18, NULL]",
        "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24, NULL]",
        "+I[105, hammer, 14oz carpenter's hammer, 0.875, NULL, Beijing]",
        "+I[107, rocks, box of assorted rocks, 5.3, NULL, NULL]",
    ]


def test_multi_table_topic_names_each_table() -> None:
    events = _sample("database/include/topic0/maxwell-data-1.txt")
    assert [(e.database, e.table) for e in events] == [
        ("paimon_sync_database_affix", "paimon_1"),
        ("paimon_sync_database_affix", "paimon_2"),
        ("paimon_sync_database_affix", "ignore"),
        ("paimon_sync_database_affix", "flink"),
    ]
    assert [e.after["id"] for e in events if e.after] == [101, 102, 103, 104]


def test_added_column_changes_the_schema_and_same_columns_share_one() -> None:
    a, b = _sample("database/schemaevolution/topic1/maxwell-data-1.txt")
    c, _ = _sample("database/schemaevolution/topic1/maxwell-data-2.txt")
    assert a.schema is b.schema
    assert c.schema is not a.schema
    assert [n for n, _ in c.schema.fields] == [*PRODUCT_COLUMNS, "address"]


def test_update_without_old_has_before_equal_to_data() -> None:
    # Maxwell omits an empty "old" (e.g. exclude_columns hid the only changed column).
    (event,) = parse((DATA / "update-without-old.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.op is Op.UPDATE
    assert event.before == event.after == {"id": 105, "name": "hammer", "secret": "x"}


def test_update_to_null_without_output_nulls_keeps_the_column() -> None:
    # Without output_nulls Maxwell drops null columns from "data"; "old" still names the column.
    (event,) = parse((DATA / "update-to-null-without-output-nulls.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.before == {"id": 106, "name": "saw", "note": "sharp"}
    assert event.after == {"id": 106, "name": "saw"}
    assert [n for n, _ in event.schema.fields] == ["id", "name", "note"]


def test_nested_values_are_kept_and_stored_as_json_text() -> None:
    (event,) = parse((DATA / "nested-values.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.after is not None
    after = event.after
    assert after["attrs"] == {"color": "red", "sizes": [1, 2]}
    assert after["tags"] == ["a_val", "c_val"]
    assert after["note"] is None
    assert _text("attrs", after["attrs"]) == '{"color":"red","sizes":[1,2]}'
    assert _text("tags", after["tags"]) == '["a_val","c_val"]'
    assert _text("flag", after["flag"]) == "true"
    assert _text("price", after["price"]) == "12.3"
    assert _text("blob", after["blob"]) == "AAEC"  # Maxwell's base64 text of a BLOB stays as sent


def test_message_without_primary_key_columns_has_no_keys() -> None:
    (event,) = parse((DATA / "no-primary-keys.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent)
    assert event.schema.primary_keys == ()


def test_table_ddl_becomes_schema_change_event_with_millisecond_ts() -> None:
    (event,) = parse((DATA / "table-create.json").read_bytes(), None, CTX)
    assert isinstance(event, SchemaChangeEvent)
    assert (event.database, event.table) == ("test", "e")
    assert event.ddl.startswith("create table test.e")
    assert event.op_ts_ms == 1477053126000


def test_database_ddl_yields_no_event() -> None:
    assert parse((DATA / "database-create.json").read_bytes(), None, CTX) == []


@pytest.mark.parametrize(
    ("file", "reason"),
    [
        ("not-json.txt", "not valid JSON"),
        ("array-root.json", "expected a JSON object"),
        ("missing-type.json", "field 'type' is missing"),
        ("unknown-type.json", "unknown 'type' 'replace'"),
        ("insert-without-data.json", "field 'data' is missing or null in a 'insert' message"),
        ("encrypted-data.json", "'encrypt' option is on"),
        ("old-not-object.json", "field 'old' must be a dict, got list"),
        ("ts-not-number.json", "field 'ts' must be a int, got str"),
        ("pk-not-names.json", "'primary_key_columns' must be a column name"),
    ],
)
def test_malformed_messages_name_their_position_and_reason(file: str, reason: str) -> None:
    assert_malformed(parse, FORMAT, (DATA / "malformed" / file).read_bytes(), CTX, reason)


def test_null_value_is_malformed() -> None:
    with pytest.raises(MalformedMessage, match="no value"):
        parse(None, None, CTX)


def test_bootstrap_rows_are_inserts_and_markers_carry_nothing() -> None:
    (event,) = parse((DATA / "bootstrap-insert.json").read_bytes(), None, CTX)
    assert isinstance(event, DataChangeEvent) and event.op is Op.INSERT and event.after
    assert parse((DATA / "bootstrap-start.json").read_bytes(), None, CTX) == []
