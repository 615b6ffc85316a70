"""Shared fixtures: isolated data/figures folders, the CLI, papermill runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
QUICK_PARAMS = REPO / "params" / "quick.yaml"


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    """No test writes into the repository's data/ or figures/."""
    base = tmp_path_factory.mktemp("outputs")
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("THREADCOST_FIGURES_DIR", str(base / "figures"))


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m threadcost ARGS`` in a fresh process (stdin closed)."""
    return subprocess.run([sys.executable, "-m", "threadcost", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=os.environ.copy(), check=False)


def cli_json(*args: str, timeout: float = 120) -> tuple[int, dict[str, Any], str]:
    proc = run_cli(*args, "--json", timeout=timeout)
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def quick_params() -> dict[str, Any]:
    with open(QUICK_PARAMS) as fh:
        return yaml.safe_load(fh) or {}


# With params/quick.yaml every cell takes seconds: one that takes minutes is stuck.
# The notebook then fails naming the cell (threadcost.notebook_run), well before
# the test's own pytest-timeout (NOTEBOOK_TEST_TIMEOUT_S) would stop it.
NOTEBOOK_CELL_TIMEOUT_S = 180
NOTEBOOK_START_TIMEOUT_S = 120
NOTEBOOK_TEST_TIMEOUT_S = 900


def run_notebook(name: str, tmp_path: Path, **overrides: Any) -> tuple[Path, Path]:
    """Execute notebooks/<name> with params/quick.yaml into tmp_path.

    Returns (executed notebook, data dir). Data and figures go to tmp_path too.
    Each cell may take NOTEBOOK_CELL_TIMEOUT_S and the kernel's start
    NOTEBOOK_START_TIMEOUT_S; a timeout fails naming the notebook and the cell.
    """
    from threadcost.notebook_run import execute

    data_dir = tmp_path / "data"
    figures_dir = tmp_path / "figures"
    params = {**quick_params(), "data_dir": str(data_dir), "figures_dir": str(figures_dir),
              **overrides}
    from threadcost import notebook_sources

    source = notebook_sources.write_ipynb(notebook_sources.source_for(name),
                                          tmp_path / "source")
    out = tmp_path / source.name
    execute(source, out, params, cwd=NOTEBOOKS, cell_timeout=NOTEBOOK_CELL_TIMEOUT_S,
            start_timeout=NOTEBOOK_START_TIMEOUT_S, progress_bar=False)
    return out, data_dir


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Notebook tests get a longer pytest-timeout than the suite's default
    (a test's own @pytest.mark.timeout wins)."""
    for item in items:
        if item.get_closest_marker("notebook") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(NOTEBOOK_TEST_TIMEOUT_S))


@pytest.fixture(scope="session")
def quick_paper_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m threadcost.paper --params params/quick.yaml``, every notebook, once per
    test session (the hygiene scan and the browser suite read the same rendering)."""
    base = tmp_path_factory.mktemp("quick-paper")
    env = {**os.environ, "THREADCOST_DATA_DIR": str(base / "data"),
           "THREADCOST_FIGURES_DIR": str(base / "figures")}
    proc = subprocess.run(
        [sys.executable, "-m", "threadcost.paper", "--params", str(QUICK_PARAMS),
         "--out", str(base / "paper")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
        stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return base / "paper" / "html"
