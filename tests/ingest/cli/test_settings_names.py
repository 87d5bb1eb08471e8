"""--database and --table are refused at start-up when they could reach outside the warehouse: they
name directories there and in the default checkpoint's path (schema_evolution.identifiers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ingest.cli.settings import SyncSettings

KAFKA = {"properties.bootstrap.servers": "localhost:9092", "topic": "t", "value.format": "canal-json"}


@pytest.mark.parametrize(
    ("option", "value"),
    [("database", "../x"), ("database", "a.b"), ("database", ""), ("table", "../../x"), ("table", "t$ro")],
)
def test_unsafe_target_names_are_refused_naming_the_option(tmp_path: Path, option: str, value: str) -> None:
    values: dict[str, Any] = {"action": "kafka-sync-table", "warehouse": str(tmp_path), "database": "ods", "table": "t"}
    with pytest.raises(ValidationError, match=f"--{option}: {option} name"):
        SyncSettings(**{**values, option: value, "kafka_conf": KAFKA})
    assert list(tmp_path.iterdir()) == []


def test_safe_names_pass(tmp_path: Path) -> None:
    settings = SyncSettings(
        action="kafka-sync-table", warehouse=str(tmp_path), database="ods", table="a.b", kafka_conf=KAFKA
    )
    assert (settings.database, settings.table) == ("ods", "a.b")
