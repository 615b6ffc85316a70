"""Repository hygiene: notebooks committed clean, dependencies listed alike, C codes mirrored."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from threadcost import errors
from threadcost.native import lib

REPO = Path(__file__).resolve().parent.parent


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


def _lock(name: str) -> dict[str, str]:
    """requirements/<name>.txt as {canonical name: pinned version}."""
    pins = {}
    for line in (REPO / "requirements" / name).read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", line
            pins[canonicalize_name(req.name)] = spec.version
    return pins


# The CLI and the library import only these (views, the paper and the notebook
# tooling are the [notebooks] extra's): a module -> distribution map of them.
# (_cffi_backend is cffi's compiled core, imported by the generated threadcost/_native.py.)
RUNTIME = {"cffi": "cffi", "_cffi_backend": "cffi", "numpy": "numpy", "pandas": "pandas",
           "scipy": "scipy", "yaml": "pyyaml", "tqdm": "tqdm", "threadpoolctl": "threadpoolctl"}
NOTEBOOK_ONLY = ("views", "notebook", "paper/build.py", "paper/render.py",
                 "paper/notebook_sources.py", "paper/notebook_run.py", "paper/__main__.py")


def test_runtime_dependencies_are_what_the_library_imports() -> None:
    deps = {_name(d) for d in _project()["dependencies"]}
    assert deps == set(RUNTIME.values())
    stdlib = sys.stdlib_module_names
    for path in sorted((REPO / "threadcost").rglob("*.py")):
        rel = path.relative_to(REPO / "threadcost")
        if rel.parts[0] in NOTEBOOK_ONLY or rel.as_posix() in NOTEBOOK_ONLY:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                     and node.module else [])
            for name in names:
                top = name.split(".")[0]
                if top in stdlib or top == "threadcost":
                    continue
                assert top in RUNTIME, (f"threadcost/{rel} imports {top}, which is not a runtime "
                                        "dependency in pyproject.toml")


def test_every_dependency_is_a_compatible_range() -> None:
    meta = _project()
    lists = {"dependencies": meta["dependencies"], **meta["optional-dependencies"]}
    assert set(meta["optional-dependencies"]) >= {"notebooks", "test", "browser"}
    for where, deps in lists.items():
        for dep in deps:
            ops = {s.operator for s in Requirement(dep).specifier}
            assert ops == {">=", "<"}, f"{where}: {dep} (want a range: >=tested,<next major)"


def test_the_lock_holds_every_dependency_within_its_range() -> None:
    meta = _project()
    extras = meta["optional-dependencies"]
    paper, test = _lock("paper.txt"), _lock("test.txt")
    for dep in meta["dependencies"] + extras["notebooks"] + extras["test"] + extras["browser"]:
        req = Requirement(dep)
        assert req.specifier.contains(test[_name(dep)]), (dep, test[_name(dep)])
    for dep in meta["dependencies"] + extras["notebooks"]:
        assert paper[_name(dep)] == test[_name(dep)], dep
    # `make paper` / `make lab` / Binder install no test or browser tools
    for tool in ("pytest", "pytest-timeout", "hypothesis", "ruff", "playwright"):
        assert tool in test and tool not in paper, f"{tool}: test lock only"
    # the two locks never disagree on a version
    assert {k: v for k, v in test.items() if k in paper} == paper


def test_conda_and_binder_environments_are_generated_from_the_lock() -> None:
    spec = importlib.util.spec_from_file_location("environments", REPO / "tools/environments.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for path, intro in tool.TARGETS.items():
        assert path.read_text() == tool.render(intro), f"{path.name}: run `make environments`"
    env = yaml.safe_load((REPO / "binder" / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert {canonicalize_name(Requirement(p).name): Requirement(p).specifier
            for p in pip}.keys() == _lock("paper.txt").keys()


@pytest.mark.parametrize("target", ["paper", "lab"])
def test_make_paper_and_lab_install_no_test_or_browser_tools(target: str) -> None:
    """`make -n -B <target>` lists every command the target would run from scratch."""
    proc = subprocess.run(["make", "-n", "-B", target], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)
    assert "requirements/paper.txt" in proc.stdout
    assert "requirements/test.txt" not in proc.stdout and "[test]" not in proc.stdout


def test_notebooks_have_one_source_each_with_a_parameters_cell() -> None:
    from threadcost.paper import notebook_sources

    assert not list((REPO / "notebooks").glob("*.ipynb")), "notebooks are py:percent sources"
    assert not list((REPO / "tools").glob("make_nb_*.py")), "no generated notebook sources"
    books = notebook_sources.sources()
    assert books
    for book in books:
        nb = notebook_sources.read(book)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs, f"{book.name}: committed with outputs"
                assert cell.execution_count is None, f"{book.name}: execution count"
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, f"{book.name}: needs exactly one 'parameters' cell"


def test_status_codes_mirror_the_header() -> None:
    assert (lib.TC_OK, lib.TC_EINVAL, lib.TC_ENOMEM, lib.TC_ELIMIT, lib.TC_ESYS,
            lib.TC_ETIMEOUT) == (errors.TC_OK, errors.TC_EINVAL, errors.TC_ENOMEM,
                                 errors.TC_ELIMIT, errors.TC_ESYS, errors.TC_ETIMEOUT)


def test_binder_post_build_is_strict() -> None:
    text = (REPO / "binder" / "postBuild").read_text()
    assert "set -e" in text
    assert "build-essential" in (REPO / "binder" / "apt.txt").read_text()


def test_editing_the_py_source_changes_the_notebook(tmp_path: Path) -> None:
    from threadcost.paper import notebook_sources

    source = notebook_sources.source_for("01_malloc_touch")
    edited = tmp_path / source.name
    text = source.read_text()
    edited.write_text(text.replace("malloc_points: int = 41", "malloc_points: int = 7"))
    nb = notebook_sources.read(edited)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "malloc_points: int = 7" in params.source
    target = notebook_sources.write_ipynb(edited, tmp_path / "out")
    assert target.suffix == ".ipynb" and "malloc_points: int = 7" in target.read_text()


def test_no_data_file_exceeds_2_mib() -> None:
    """Raw-sample tables are stored as .csv.gz (threadcost.store.datastore); every file
    under data/ stays small enough for git."""
    big = [(str(p.relative_to(REPO)), p.stat().st_size) for p in (REPO / "data").rglob("*")
           if p.is_file() and p.stat().st_size > 2 * 1024 * 1024]
    assert not big, big


def test_every_committed_run_loads() -> None:
    from threadcost.store import datastore

    runs = datastore.list_runs(data_dir=REPO / "data")
    dirs = [p for m in (REPO / "data").iterdir() if m.is_dir() and m.name != "published"
            for p in m.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(runs) == len(dirs)
    peers = [r for r in runs if r.experiment == "peers" and "round_trips" in r.meta["tables"]]
    assert peers  # a run that skipped its peers (no toolchain on that host) stores none
    for run in peers:
        assert len(run.table("round_trips")) == run.meta["table_schema"]["round_trips"]["rows"]


def test_license_and_citation() -> None:
    import threadcost

    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert _project()["license"] == "MIT"
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "MIT"
    assert str(cff["version"]) == threadcost.__version__
    assert cff["title"] and cff["authors"] and cff["message"]
