"""Repository hygiene: notebooks committed clean, dependencies listed alike, C codes mirrored."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import nbformat
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


def test_source_notebooks_have_no_outputs_and_a_parameters_cell() -> None:
    books = sorted((REPO / "notebooks").glob("*.ipynb"))
    assert books
    for book in books:
        nb = nbformat.read(str(book), as_version=4)
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
