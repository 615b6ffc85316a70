"""Where things live: the repository, its data/ and figures/ folders.

``THREADCOST_DATA_DIR`` and ``THREADCOST_FIGURES_DIR`` override the defaults,
so tests and batch runs never have to touch the repository's own data. Without
them, a checkout uses its own data/ and figures/; threadcost installed from a
wheel (no checkout around the package) uses ./data and ./figures of the
current directory.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def in_checkout() -> bool:
    """True when the package runs from the repository (editable install or
    source tree), False when it was installed from a wheel."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "native").is_dir()


def _base() -> Path:
    return REPO_ROOT if in_checkout() else Path.cwd()


def data_dir() -> Path:
    return Path(os.environ.get("THREADCOST_DATA_DIR", _base() / "data"))


def figures_dir() -> Path:
    return Path(os.environ.get("THREADCOST_FIGURES_DIR", _base() / "figures"))


def published_dir() -> Path:
    """The published claims and figures this project compares against (in git)."""
    return REPO_ROOT / "data" / "published"
