"""The suite stands alone: no test outside the Paimon compatibility suite (tests/paimon_compat/) reads
Apache Paimon's samples beside the repository (../shared/cdc-samples) or depends on that suite, so a
fresh clone passes without them."""

from __future__ import annotations

import re

import pytest

from tests.conftest import TESTS

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
