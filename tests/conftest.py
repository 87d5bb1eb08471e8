"""Shared test helpers: where Paimon's captured CDC messages live (read in place, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "cdc-samples" / "paimon-kafka"


def sample_messages(path: Path) -> list[bytes]:
    """The messages of one Paimon sample file: one JSON document per line after the licence header."""
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line.encode() for line in lines if line.startswith("{")]


@pytest.fixture(scope="session")
def samples() -> Path:
    if not SAMPLES.exists():
        pytest.fail(f"Paimon's CDC samples are expected at {SAMPLES} (shared/ beside the repository)")
    return SAMPLES
