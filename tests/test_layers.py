"""The layers of judging: stored runs are read into measurements (threadcost/measured/)
below the findings (threadcost/findings/), which sit below the claims
(threadcost/claims/). Imports run only downwards, at module level, and no module
imports another module's private names. Read from the source with ast: nothing is
imported or run."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from threadcost import findings, paths

PACKAGE = paths.REPO_ROOT / "threadcost"
MEASURED, FINDINGS, CLAIMS = "threadcost.measured", "threadcost.findings", "threadcost.claims"
LAYERED = (MEASURED, FINDINGS, CLAIMS)
# what each layer may not import
BELOW_ONLY = {MEASURED: (FINDINGS, CLAIMS), FINDINGS: (CLAIMS,), CLAIMS: ()}


def _modules(package: str) -> list[Path]:
    return sorted((paths.REPO_ROOT / package.replace(".", "/")).rglob("*.py"))


def _imported(node: ast.AST) -> list[str]:
    """The dotted modules an import statement names (``from threadcost import claims``
    names threadcost.claims)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return []


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _imports(path: Path) -> list[tuple[ast.AST, bool]]:
    """(import statement, whether it sits inside a function) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside |= {id(n) for n in ast.walk(fn) if n is not fn}
    return [(n, id(n) in inside) for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom))]


@pytest.mark.parametrize("package", LAYERED)
def test_imports_run_only_downwards(package: str) -> None:
    wrong = []
    for path in _modules(package):
        for node, _ in _imports(path):
            for name in _imported(node):
                if any(_within(name, above) for above in BELOW_ONLY[package]):
                    wrong.append(f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno} "
                                 f"imports {name}")
    assert not wrong, "a lower layer imports a higher one:\n" + "\n".join(wrong)


@pytest.mark.parametrize("package", LAYERED)
def test_no_import_of_the_layers_hides_in_a_function(package: str) -> None:
    hidden = []
    for path in _modules(package):
        for node, in_function in _imports(path):
            if in_function and any(_within(n, layer) for n in _imported(node)
                                   for layer in LAYERED):
                hidden.append(f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno}")
    assert not hidden, "imports of the layers inside functions:\n" + "\n".join(hidden)


@pytest.mark.parametrize("package", LAYERED)
def test_no_private_name_is_imported_across_modules(package: str) -> None:
    private = []
    for path in _modules(package):
        for node, _ in _imports(path):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("threadcost"):
                private += [f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno} {a.name}"
                            for a in node.names if a.name.startswith("_")
                            and not a.name.startswith("__")]
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def test_the_findings_engine_lists_no_modules_by_hand() -> None:
    """Every module of threadcost/findings/ registers its findings when the engine loads
    them, found without a list: a new module is computed like the others."""
    findings.all(paths.REPO_ROOT / "no-such-folder")  # loads every module
    names = {p.stem for p in (PACKAGE / "findings").glob("*.py") if p.stem != "__init__"}
    assert {f"{FINDINGS}.{n}" for n in names} <= set(sys.modules)
    source = (PACKAGE / "findings" / "__init__.py").read_text(encoding="utf-8")
    assert not any(f"    {n},\n" in source for n in names)


# Function-level imports of the package's own modules (#45): each hides a dependency from
# the module's top, where a reader looks for them. A few stay where the import itself is
# the point (the C kernels' library opened on first use, a live widget that measures
# while the stored rendering needs no kernels); heavy third-party libraries imported late
# (pandas, altair, nbformat) are not counted.
MAX_IMPORTS_IN_FUNCTIONS = 15


def _imports_own_module(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom) and node.level:
        return True  # a relative import is one of the package's own
    return any(_within(name, "threadcost") for name in _imported(node))


def test_few_imports_of_the_package_hide_in_functions() -> None:
    hidden = [f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno} {ast.unparse(node)}"
              for path in _modules("threadcost")
              for node, in_function in _imports(path)
              if in_function and _imports_own_module(node)]
    assert len(hidden) <= MAX_IMPORTS_IN_FUNCTIONS, (
        f"{len(hidden)} imports of threadcost modules inside functions (at most "
        f"{MAX_IMPORTS_IN_FUNCTIONS}; import at the module's top):\n" + "\n".join(hidden))
