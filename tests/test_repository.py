"""Repository hygiene: notebooks committed clean, dependencies listed alike, C codes mirrored."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from threadcost import errors
from threadcost.native import lib

REPO = Path(__file__).resolve().parent.parent


def _pyproject_deps() -> dict[str, str]:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = meta["dependencies"] + meta["optional-dependencies"]["test"]
    return dict(d.split("==") for d in deps)


def _conda_pip_deps(path: Path) -> dict[str, str]:
    env = yaml.safe_load(path.read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return dict(p.split("==") for p in pip if "==" in p)


def test_dependencies_agree_across_pyproject_environment_and_binder() -> None:
    expected = _pyproject_deps()
    assert _conda_pip_deps(REPO / "environment.yml") == expected
    assert _conda_pip_deps(REPO / "binder" / "environment.yml") == expected


def test_every_dependency_is_pinned() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for dep in meta["dependencies"] + meta["optional-dependencies"]["test"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.]*", dep), dep


def test_notebooks_have_one_source_each_with_a_parameters_cell() -> None:
    from threadcost import notebook_sources

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
    from threadcost import notebook_sources

    source = notebook_sources.source_for("01_malloc_touch")
    edited = tmp_path / source.name
    edited.write_text(source.read_text().replace("malloc_points: int = 41",
                                                 "malloc_points: int = 7"))
    nb = notebook_sources.read(edited)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "malloc_points: int = 7" in params.source
    target = notebook_sources.write_ipynb(edited, tmp_path / "out")
    assert target.suffix == ".ipynb" and "malloc_points: int = 7" in target.read_text()
