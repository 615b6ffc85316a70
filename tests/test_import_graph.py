"""No import cycle in ``threadcost/``: the layers stack (limits and reserves under
the experiments, experiments under the views, the claims and the paper).

Every ``import`` counts, also one inside a function: a deferred import hides a
cycle from Python at import time, not from a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

from threadcost import paths

PACKAGE = paths.REPO_ROOT / "threadcost"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the threadcost modules it imports (``from pkg import mod`` names the
    submodule when there is one, else the package)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("threadcost"):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


# A package's __init__ may import its own submodules (to re-export them); a
# submodule importing its package's __init__ for a sibling is then no real cycle.
def _without_package_reexports(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {m: {t for t in targets if not (m.startswith(t + ".") and t in graph)}
            for m, targets in graph.items()}


def test_the_graph_sees_imports() -> None:
    graph = import_graph()
    assert "threadcost.host.sysinfo" in graph["threadcost.runsafety.syslimits"]
    assert "threadcost.runsafety.syslimits" in graph["threadcost.experiments.thread_memory.limits"]


def test_no_import_cycle_in_threadcost() -> None:
    found = cycles(_without_package_reexports(import_graph()))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_limits_and_reserves_use_no_experiment() -> None:
    graph = import_graph()
    for module in ("threadcost.runsafety.syslimits", "threadcost.runsafety.isolate",
                   "threadcost.host.sysinfo"):
        assert not any(t.startswith("threadcost.experiments") for t in graph[module]), module
