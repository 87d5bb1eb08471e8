"""Shared test helpers. Every test here runs from the repository alone (``tests/data/`` holds the
captured messages); the replay of Apache Paimon's own samples is ``tests/paimon_compat/``."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

# The real servers (Kafka-protocol broker, MariaDB, Spark) and per-test warehouse/topic fixtures,
# registered once for every directory that starts them (tests/integration, tests/paimon_compat/integration).
pytest_plugins = ["tests.servers"]


def sample_messages(path: Path) -> list[bytes]:
    """The messages of a captured-message file: one JSON document per line; other lines are comments."""
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line.encode() for line in lines if line.startswith("{")]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests under a folder named ``integration`` start real servers: marked ``integration``."""
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if TESTS in path.parents and "integration" in path.relative_to(TESTS).parts[:-1]:
            item.add_marker(pytest.mark.integration)
