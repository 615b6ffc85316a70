"""Where things live: the committed reference, your runs, your figures.

A checkout keeps two kinds of measured runs apart:

- ``data/<machine-id>/`` (in git): the committed reference runs, and folders someone
  sent you. Read-only to every run: only ``make reference`` (it promotes this machine's
  runs) and ``threadcost import`` (another machine's runs, checked) add to them, so the
  reference a page compares against never moves when you measure.
- ``runs/<machine-id>/`` (git-ignored): every run you make, whatever the machine id;
  on the reference's own machine kind your runs and the reference stay two folders.

Figures go to ``build/figures/`` (git-ignored); the committed ``figures/`` are the
reference's, written by ``make reference``. So exploring (JupyterLab, papermill,
``make paper``) leaves ``git status`` clean.

``THREADCOST_DATA_DIR`` and ``THREADCOST_FIGURES_DIR`` override where runs and figures
are written (tests and batch runs never touch the repository's own folders).
threadcost installed from a wheel (no checkout around the package) uses ./data and
./build/figures of the current directory and has no committed reference.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_ENV = "THREADCOST_DATA_DIR"
FIGURES_ENV = "THREADCOST_FIGURES_DIR"


def in_checkout() -> bool:
    """True when the package runs from the repository (editable install or
    source tree), False when it was installed from a wheel."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "native").is_dir()


def _base() -> Path:
    return REPO_ROOT if in_checkout() else Path.cwd()


def data_dir() -> Path:
    """Where runs are written (and this machine's are read): ``runs/`` of a checkout."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    return REPO_ROOT / "runs" if in_checkout() else Path.cwd() / "data"


def reference_dir() -> Path | None:
    """The committed machine folders (``data/`` of a checkout), None outside one."""
    return REPO_ROOT / "data" if in_checkout() else None


def build_dir() -> Path:
    """The build folder outputs stay in unless the user names another."""
    return _base() / "build"


def figures_dir() -> Path:
    """Where figures are written: ``build/figures/`` (the committed ``figures/`` are the
    reference's, written only by ``make reference``)."""
    if os.environ.get(FIGURES_ENV):
        return Path(os.environ[FIGURES_ENV])
    return build_dir() / "figures"


def output_folder(folder: str | Path) -> Path:
    """A folder a user named for outputs (``figures_dir``, ``data_dir``): absolute as
    given, relative inside the build folder."""
    path = Path(folder)
    return path if path.is_absolute() else build_dir() / path


def _holds_runs(folder: Path) -> bool:
    try:
        return folder.is_dir() and any(not p.name.startswith(".") for p in folder.iterdir())
    except OSError:
        return False


def data_dir_for(machine_id: str | None) -> Path:
    """The folder to read machine ``machine_id``'s runs from: yours (:func:`data_dir`)
    when you have measured it, else the committed reference's (``data/``) when it is
    one of those, else yours (where "no runs" is then reported)."""
    mine = data_dir()
    if machine_id is None or _holds_runs(mine / machine_id):
        return mine
    ref = reference_dir()
    if ref is not None and ref != mine and _holds_runs(ref / machine_id):
        return ref
    return mine


def data_dirs() -> list[Path]:
    """Every folder runs are read from: yours first, then the committed reference."""
    mine = data_dir()
    ref = reference_dir()
    return [mine] if ref is None or ref.resolve() == mine.resolve() else [mine, ref]


def published_dir() -> Path:
    """The published claims and figures this project compares against (in git)."""
    return REPO_ROOT / "data" / "published"
