"""The suite stands alone: no test outside the Paimon compatibility suite (tests/paimon_compat/) reads
Apache Paimon's samples beside the repository (../shared/cdc-samples) or depends on that suite, so a
fresh clone passes without them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TESTS

COMPAT = TESTS / "paimon_compat"

# What reading the samples, or leaning on the suite that reads them, looks like in a test's source.
FORBIDDEN = [
    re.compile(r"cdc-samples"),
    re.compile(r"""["']shared["']"""),
    re.compile(r"\.\./shared|shared/"),
    re.compile(r"LAKECDC_PAIMON_SAMPLES"),
    re.compile(r"tests\.paimon_compat\b"),  # an import of the suite or its helpers (samples, mysql_setup)
    re.compile(r"\bmysql_setup\b"),
]


def _outside_the_compat_suite() -> list[str]:
    me = TESTS / "test_standalone.py"
    files = [p for p in TESTS.rglob("*.py") if COMPAT not in p.parents and p != me]
    assert len(files) > 50, "the scan sees the test modules"
    return sorted(str(p.relative_to(TESTS)) for p in files)


@pytest.mark.parametrize("module", _outside_the_compat_suite())
def test_module_does_not_read_paimons_samples(module: str) -> None:
    text = (TESTS / module).read_text()
    found = [m.group(0) for pattern in FORBIDDEN for m in pattern.finditer(text)]
    assert not found, f"tests/{module} mentions {found}: only tests/paimon_compat/ may read Paimon's samples"


def test_the_compat_suite_is_where_the_samples_are_read() -> None:
    text = (COMPAT / "samples.py").read_text()
    assert "LAKECDC_PAIMON_SAMPLES" in text and '"cdc-samples"' in text


def test_an_empty_parameter_list_fails_collection(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.getini("empty_parameter_set_mark") == "fail_at_collect"


def _run_compat_file(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """One file of the compat suite in a fresh pytest, with the samples folder pointed at an empty one."""
    empty = tmp_path / "no-samples"
    empty.mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if k != "CI"} | {"LAKECDC_PAIMON_SAMPLES": str(empty)} | env
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/paimon_compat/test_json_samples.py"]
    return subprocess.run(argv, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120, check=False)


def test_without_samples_the_compat_suite_is_skipped_with_one_reason(tmp_path: Path) -> None:
    done = _run_compat_file(tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    lines = done.stdout.splitlines()
    summary = [ln for ln in lines if "Paimon compatibility tests skipped" in ln]
    assert len(summary) == 1 and "set LAKECDC_PAIMON_SAMPLES" in summary[0], done.stdout[-2000:]
    skipped = [ln for ln in lines if ln.startswith("SKIPPED [")]
    assert len(skipped) == 1 and "tests/paimon_compat/conftest.py" in skipped[0], done.stdout[-2000:]
    assert re.fullmatch(r"\d+ skipped in .*", lines[-1]), lines[-1]  # nothing passed, failed or errored


def test_without_samples_ci_is_an_error(tmp_path: Path) -> None:
    done = _run_compat_file(tmp_path, CI="true")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "CI=true" in done.stderr + done.stdout and "must run in CI" in done.stderr + done.stdout
