"""Small enough to read (issue #28, STYLE.md 15): no module over 500 lines, no function over 80 lines
(from its ``def`` to its last line, nested functions included), except the hot loops declared below."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# The packages held to it.
PACKAGES = ("formats", "schema_evolution", "ingest", "sinks", "deploy", "bench")
# "package/module.py:function" -> why it is one long function (a hot loop split into calls would
# cost per row or per message). Empty today.
HOT_LOOPS: dict[str, str] = {}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _too_long(path: Path) -> list[str]:
    text = path.read_text()
    name = path.relative_to(ROOT).as_posix()
    found = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, filename=name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES and f"{name}:{node.name}" not in HOT_LOOPS:
                found.append(f"{name}:{node.lineno} {node.name}(): {length} lines (at most {MAX_FUNCTION_LINES})")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_and_functions_are_short(package: str) -> None:
    found = [problem for path in _modules(package) for problem in _too_long(path)]
    assert not found, "split by what they hold:\n" + "\n".join(found)


def test_declared_hot_loops_exist() -> None:
    for key in HOT_LOOPS:
        module, _, function = key.partition(":")
        tree = ast.parse((ROOT / module).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        assert function in names, f"{key}: no such function (remove it from HOT_LOOPS)"
