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


# The packages from the top down (#45 item 3): a package imports only those below
# it; the names on one line are one layer and import none of each other (a module at
# the package's root is a layer of its own name).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("commands",),
    ("paper",),
    ("notebook",),
    ("views",),
    ("claims",),
    ("findings",),
    ("measured",),
    ("store",),
    ("experiments",),
    ("runsafety", "settings"),
    ("native",),
    ("cbuild", "_native"),
    ("vocabulary",),
    ("peers", "host"),
    ("",),  # the package's own __init__: its public names
    ("stats", "results", "progress", "textout", "paths", "__version__"),
    # the package's exceptions, under the basics: a run folder read back raises DataError
    # (threadcost.results.reading, with its run_files and table_checks)
    ("errors",),
)
RANK = {name: depth for depth, layer in enumerate(LAYERS) for name in layer}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _upward_imports() -> list[str]:
    found = []
    for module, targets in sorted(import_graph().items()):
        here = _package(module)
        for target in sorted(targets):
            there = _package(target)
            if here != there and RANK.get(there, -1) <= RANK.get(here, -1):
                found.append(f"{module} -> {target}")
    return found


def test_every_package_has_its_layer() -> None:
    packages = {_package(m) for m in import_graph()}
    assert sorted(packages - set(RANK)) == []


def test_packages_import_only_the_layers_below() -> None:
    found = _upward_imports()
    assert found == [], "imports that point up or sideways:\n" + "\n".join(found)
