"""The pure core imports no engine, table library or network client, and nothing of ours above it
(see AGENTS.md). The import-linter contracts (``make lint``) check the same statically; this test
imports every module with those packages blocked, so an import made at run time is caught too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

FORBIDDEN = ("pyspark", "pypaimon", "pypaimon_rust", "confluent_kafka", "pymysql", "pymysqlreplication", "py4j")
# Our packages above the pure core: formats may import schema_evolution, which imports neither.
ABOVE = {
    "formats": ("sinks", "ingest", "deploy", "bench"),
    "schema_evolution": ("formats", "sinks", "ingest", "deploy", "bench"),
}


@pytest.mark.parametrize("package", ["formats", "schema_evolution"])
def test_pure_core_imports_no_engine_or_client(package: str) -> None:
    code = f"""
import importlib, pkgutil, sys
blocked = {FORBIDDEN + ABOVE[package]!r}
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"pure core imported {{name}}")
        return None
sys.meta_path.insert(0, Block())
pkg = importlib.import_module({package!r})
for m in pkgutil.walk_packages(pkg.__path__, {package!r} + "."):
    importlib.import_module(m.name)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
