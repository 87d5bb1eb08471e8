"""The modules Python workers import for a job's tasks (warmed at job start, ``ingest.job``) stay
light: neither pypaimon nor the driver's micro-batch code (AGENTS.md, Python workers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingest.job import SOURCES, WORKER_MODULES, source_class

ROOT = Path(__file__).resolve().parents[3]
SOURCE_MODULES = sorted({m for kind in SOURCES for m in source_class(kind).worker_modules})  # type: ignore[attr-defined]


def test_every_source_names_its_worker_modules() -> None:
    assert SOURCE_MODULES == ["ingest.kafka.source", "ingest.mysql.source"]


@pytest.mark.parametrize("module", [*SOURCE_MODULES, *(m for m in WORKER_MODULES if m.startswith("ingest."))])
def test_worker_modules_import_neither_pypaimon_nor_the_driver(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] == 'pypaimon' or n == 'ingest.streaming.micro_batch'))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
