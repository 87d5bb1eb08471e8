"""``lakecdc --version`` prints the installed package's version; ``--help`` shows it too."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from ingest.cli.main import main, package_version
from tests.conftest import ROOT


def test_version_comes_from_the_package_metadata() -> None:
    assert package_version() == version("lakecdc")
    declared = next(
        line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("version = ")
    )
    assert declared == f'version = "{package_version()}"'


def test_version_option_prints_it_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"lakecdc {version('lakecdc')}\n"


def test_help_shows_the_version_and_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert f"lakecdc {version('lakecdc')}:" in out
    assert "--version" in out


def test_the_command_line_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ingest", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == f"lakecdc {version('lakecdc')}\n"
