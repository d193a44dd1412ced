"""The package's import graph: errors ← _http ← client ← cluster, no cycle.

Read from the sources (every ``import`` at any depth, ``if TYPE_CHECKING``
blocks and function bodies included) and checked by importing the modules
in fresh interpreters, in either order. The one import allowed inside a
block is of an optional dependency's module (``_kronos_wire``: grpcio and
protobuf, the ``kronos`` extra) in a module-level ``try`` that catches
ImportError.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "weft"

# Who may import whom inside the package (the generated _proto aside).
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_http": {"errors"},
    "client": {"_http", "errors"},
    "cluster": {"_http", "client"},
    "_kronos_wire": {"_proto"},
    "kronos": {"_kronos_wire", "errors"},
    "kv": {"errors"},
    "aio": {"_http", "client", "errors"},
}

# Modules that need an optional dependency: imported in a try (see the doc).
OPTIONAL: set[str] = {"_kronos_wire"}


def _weft_imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported weft module, line, at module level) for each import in module."""
    tree = ast.parse((SRC / f"{module}.py").read_text())
    top = {id(n) for n in tree.body}
    for n in tree.body:  # an optional dependency: try: from . import X / except ImportError
        if isinstance(n, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                          for h in n.handlers):
            top |= {id(b) for b in n.body if isinstance(b, ast.ImportFrom) and b.module is None
                    and all(a.name in OPTIONAL for a in b.names)}
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
            elif node.level == 0 and node.module and (node.module == "weft" or node.module.startswith("weft.")):
                names = [node.module.removeprefix("weft").lstrip(".") or "__init__"]
        elif isinstance(node, ast.Import):
            names = [a.name.removeprefix("weft.") for a in node.names if a.name.startswith("weft.")]
        for n in names:
            out.append((n.split(".")[0], node.lineno, id(node) in top))
    return out


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_imports_follow_the_layering(module: str) -> None:
    for imported, line, at_top in _weft_imports(module):
        assert at_top, f"{module}.py:{line} imports weft.{imported} inside a block (lazily or for typing only)"
        assert imported in ALLOWED[module], f"{module}.py:{line} imports weft.{imported}"


def test_the_layering_has_no_cycle() -> None:
    seen: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(m: str, path: list[str]) -> None:
        assert seen.get(m) != 1, "import cycle: " + " -> ".join(path + [m])
        if m in seen:
            return
        seen[m] = 1
        for dep in ALLOWED.get(m, set()):
            visit(dep, path + [m])
        seen[m] = 2

    for m in ALLOWED:
        visit(m, [])


def test_no_module_imports_client_or_cluster_inside_a_function() -> None:
    for path in SRC.glob("*.py"):
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if line[:1].isspace() and stripped.startswith(("from .cluster import", "from .client import",
                                                           "import weft.cluster", "import weft.client")):
                pytest.fail(f"{path.name}:{line_no}: indented import {stripped!r}")


def _fresh(code: str) -> None:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("order", [
    ["weft.client", "weft.cluster"],
    ["weft.cluster", "weft.client"],
    ["weft.errors", "weft.cluster"],
    ["weft._http", "weft.client"],
    ["weft.kronos", "weft.kv"],
    ["weft.aio", "weft.client"],
    pytest.param(["weft._kronos_wire", "weft.kronos"],
                 marks=pytest.mark.skipif(importlib.util.find_spec("grpc") is None, reason="the kronos extra")),
])
def test_modules_import_in_either_order(order: list[str]) -> None:
    _fresh("; ".join(f"import {m}" for m in order) + "; import weft; "
           "assert weft.Client.from_coordinator.__func__.__annotations__['return'] == 'ClusterClient'; "
           "assert weft.cluster.ClusterClient is weft.client.ClusterClient is weft.ClusterClient")


def test_errors_module_stands_alone() -> None:
    # Loaded from its file under another name, outside the package: it
    # needs no other weft module (and imports none).
    _fresh(f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("standalone_errors", {str(SRC / "errors.py")!r})
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
assert not [m for m in sys.modules if m == "weft" or m.startswith("weft.")], sorted(sys.modules)
assert issubclass(mod.OverloadedError, mod.Overloaded)
""")
