"""Where the paimon_compat suite reads Apache Paimon's CDC samples and MySQL set-up scripts from (in place,
never copied).

``$LAKECDC_PAIMON_SAMPLES`` names the folder when set (and is then the only place looked at: an empty
or missing folder means "not found"); otherwise ``../shared/cdc-samples`` beside the repository. The
folder holds ``paimon-kafka/`` (messages) and ``paimon-mysql/`` (set-up scripts).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = "LAKECDC_PAIMON_SAMPLES"
DEFAULT = ROOT.parent / "shared" / "cdc-samples"

LOCATION = Path(os.environ[ENV]).expanduser() if os.environ.get(ENV) else DEFAULT
SAMPLES = LOCATION / "paimon-kafka"
SCRIPTS = LOCATION / "paimon-mysql"
FOUND = SAMPLES.is_dir() and SCRIPTS.is_dir() and any(SAMPLES.iterdir())

REASON = (
    f"Paimon's CDC samples not found at {LOCATION}; set {ENV} to the cdc-samples folder "
    "or place shared/cdc-samples beside the repository"
)


def sample_messages(path: Path) -> list[bytes]:
    """The messages of one Paimon sample file: one JSON document per line after the licence header."""
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line.encode() for line in lines if line.startswith("{")]


def sample_paths(folder: str) -> list[Path]:
    """The ``*.txt`` files under ``paimon-kafka/<folder>``, sorted (call it in a test, not at import)."""
    return sorted((SAMPLES / folder).rglob("*.txt"))


def sample_files(folder: str) -> list[Any]:
    """``pytest.param`` per ``*.txt`` under ``paimon-kafka/<folder>``, with the file's relative path as id.

    Without the samples the list is one skipped placeholder, never empty (an empty parameter list
    fails collection: ``empty_parameter_set_mark``)."""
    if not FOUND:
        return [pytest.param(None, id="samples-not-found", marks=pytest.mark.skip(reason=REASON))]
    base = SAMPLES / folder
    files = sample_paths(folder)
    assert files, f"no sample files under {base}"
    return [pytest.param(p, id=str(p.relative_to(base))) for p in files]
