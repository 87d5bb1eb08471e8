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


# What the pure core may import besides the standard library and itself (AGENTS.md, "Layering"):
# fastavro decodes debezium-avro's message bodies (formats/debezium_avro.py) and opens no socket; the
# Schema Registry client that fetches the schemas lives in ingest/kafka/schema_registry.py.
PURE_CORE_THIRD_PARTY = {"orjson", "msgspec", "pyarrow", "sqlglot", "fastavro"}


@pytest.mark.parametrize("package", ["formats", "schema_evolution"])
def test_pure_core_third_party_imports_are_the_allowed_ones(package: str) -> None:
    import ast

    ours = {"formats", "schema_evolution", "__future__"}
    found: dict[str, str] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ours:
                    found.setdefault(top, path.name)
    assert set(found) <= PURE_CORE_THIRD_PARTY, found
