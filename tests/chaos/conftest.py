"""The chaos suite (issue #23): jobs SIGKILLed at random moments while their source keeps changing,
then checked row for row, change for change, commit for commit and file for file.

Every test here is marked ``chaos`` and, as it starts servers, ``integration``. Sizes come from
``LAKECDC_CHAOS_*`` environment variables (see ``harness.py``); the defaults are the short form
``make test`` runs, ``make chaos`` the full one."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.chaos)
            item.add_marker(pytest.mark.integration)
