"""The pure core imports no engine, table library or network client (see AGENTS.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

FORBIDDEN = ("pyspark", "pypaimon", "pypaimon_rust", "confluent_kafka", "pymysql", "pymysqlreplication", "py4j")


@pytest.mark.parametrize("package", ["formats", "schema_evolution"])
def test_pure_core_imports_no_engine_or_client(package: str) -> None:
    code = f"""
import importlib, pkgutil, sys
blocked = {FORBIDDEN!r}
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
