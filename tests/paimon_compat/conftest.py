"""The Paimon compatibility suite (marker ``paimon_compat``): replays of Apache Paimon's own CDC samples
and MySQL ITCase set-up scripts, read in place (``tests/paimon_compat/samples.py`` says from where).

Without the samples every test here is skipped with one reason that says how to enable them; under
``CI=true`` missing samples are an error, so CI always runs this suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.paimon_compat import samples

HERE = Path(__file__).resolve().parent


def _in_suite(item: pytest.Item) -> bool:
    return HERE in Path(str(item.fspath)).resolve().parents


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if _in_suite(item)]
    for item in ours:
        item.add_marker(pytest.mark.paimon_compat)
    if ours and not samples.FOUND and os.environ.get("CI", "").lower() in ("true", "1"):
        raise pytest.UsageError(f"CI=true: {samples.REASON} (the Paimon compatibility suite must run in CI)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not samples.FOUND and _in_suite(item):
        item.config.stash[_SKIPPED] = item.config.stash.get(_SKIPPED, 0) + 1
        pytest.skip(samples.REASON)  # raised here: -ra folds every one of them into one line


_SKIPPED = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    skipped = config.stash.get(_SKIPPED, 0)
    if skipped:
        terminalreporter.write_line(f"{skipped} Paimon compatibility tests skipped: {samples.REASON}", yellow=True)
