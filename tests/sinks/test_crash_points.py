"""The test-only crash hook (``sinks/crash_points.py``): unset it does nothing; set, it SIGKILLs the
process at the n-th visit of its point, and refuses a name that is no point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from sinks import crash_points
from tests.conftest import ROOT

SCRIPT = """
from sinks.crash_points import crash_point
for i in range(3):
    crash_point("before-commit")
    crash_point("table-created")
    print(i, flush=True)
"""


def _run(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != crash_points.VARIABLE}
    if value is not None:
        env[crash_points.VARIABLE] = value
    env["PYTHONPATH"] = str(ROOT)
    # In its own session, as the integration tests start jobs: the hook then kills its process group.
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=False, start_new_session=True
    )


def test_unset_the_points_do_nothing() -> None:
    done = _run(None)
    assert (done.returncode, done.stdout.split()) == (0, ["0", "1", "2"])


@pytest.mark.parametrize(
    ("value", "printed"), [("table-created", []), ("before-commit:2", ["0"]), ("table-created:3", ["0", "1"])]
)
def test_the_nth_visit_kills_the_process(value: str, printed: list[str]) -> None:
    done = _run(value)
    assert done.returncode == -signal.SIGKILL
    assert done.stdout.split() == printed
    assert f"crash point {value.split(':')[0]} reached" in done.stderr


def test_an_unknown_point_is_refused() -> None:
    done = _run("no-such-point")
    assert done.returncode == 1 and "no crash point 'no-such-point'" in done.stderr


def test_every_point_is_documented() -> None:
    assert crash_points.__doc__ is not None
    for name in crash_points.POINTS:
        assert f"``{name}``" in crash_points.__doc__
