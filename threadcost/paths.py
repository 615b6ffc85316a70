"""Where things live: the repository, its data/ and figures/ folders.

``THREADCOST_DATA_DIR`` and ``THREADCOST_FIGURES_DIR`` override the defaults,
so tests and batch runs never have to touch the repository's own data.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    return Path(os.environ.get("THREADCOST_DATA_DIR", REPO_ROOT / "data"))


def figures_dir() -> Path:
    return Path(os.environ.get("THREADCOST_FIGURES_DIR", REPO_ROOT / "figures"))


def published_dir() -> Path:
    """The published claims and figures this project compares against (in git)."""
    return REPO_ROOT / "data" / "published"
