"""Notebooks for the browser tests: found in notebooks/, prepared with quick parameters.

``prepare`` lets papermill inject ``params/quick.yaml`` (plus the data and
figures folders) as an ``injected-parameters`` cell without executing anything;
the copy is what the browser opens and runs, like a reader who set the
parameters cell by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
QUICK_PARAMS = REPO / "params" / "quick.yaml"
# The notebook a reader double-clicks in JupyterLab's file browser (a jupytext .py file).
LAB_NOTEBOOK = "01_malloc_touch"


def discover() -> list[Path]:
    """Every notebook in notebooks/, experiments by name first, then the summaries.

    Summaries (00, 06) read the runs the experiment notebooks stored, so they go last,
    as in ``make paper``.
    """
    from threadcost.paper.build import notebook_order

    return notebook_order(NOTEBOOKS)


def quick_params() -> dict[str, Any]:
    with open(QUICK_PARAMS) as fh:
        return yaml.safe_load(fh) or {}


def prepare(source: Path, target_dir: Path, data_dir: Path, figures_dir: Path) -> Path:
    """Copy ``source`` into ``target_dir`` with the quick parameters injected (not run)."""
    import papermill as pm

    target_dir.mkdir(parents=True, exist_ok=True)
    from threadcost.paper import notebook_sources

    target = target_dir / f"{source.stem}.ipynb"
    source = notebook_sources.write_ipynb(source, target_dir.parent / "sources")
    # a reader in JupyterLab gets the live widgets (the params sets turn them off)
    params = {**quick_params(), "interactive": True, "data_dir": str(data_dir),
              "figures_dir": str(figures_dir)}
    declared = set(pm.inspect_notebook(str(source)))
    params = {k: v for k, v in params.items() if k in declared}
    pm.execute_notebook(str(source), str(target), parameters=params, prepare_only=True,
                        kernel_name="python3", progress_bar=False, log_output=False)
    return target


def prepare_py(source: Path, target_dir: Path, data_dir: Path, figures_dir: Path) -> Path:
    """As :func:`prepare`, saved as a jupytext py:percent file (``<stem>.py``), the form
    notebooks/ keeps them in: what a reader double-clicks after ``make lab``."""
    import jupytext
    from jupytext.config import load_jupytext_config

    staging = prepare(source, target_dir.parent / "prepared", data_dir, figures_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    # with notebooks/jupytext.toml beside it, as in the repository: a save from
    # JupyterLab must give back this very text (tests/browser/test_lab_notebooks.py)
    config = NOTEBOOKS / "jupytext.toml"
    (target_dir / config.name).write_bytes(config.read_bytes())
    target = target_dir / f"{source.stem}.py"
    nb = jupytext.read(staging)
    nb.metadata.pop("jupytext", None)
    jupytext.write(nb, target, fmt="py:percent",
                   config=load_jupytext_config(str(NOTEBOOKS / source.name)))
    return target
