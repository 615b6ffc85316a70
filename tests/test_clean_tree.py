"""Exploring leaves the repository as it was (issue 38, items 2, 4 and 5).

In a fresh clone: JupyterLab saving every notebook after a run (outputs, execution
counts, widget state, the running kernel's name, as its contents manager receives
them), and the README's papermill command with a valid and with a misspelled
parameter, leave ``git status`` clean; the committed reference (``data/``,
``figures/``, ``reference/``) is unchanged; the valid run is stored under the
git-ignored ``runs/``, and the misspelled one is refused before anything is measured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                          check=True, timeout=60).stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the committed tree, with this checkout's compiled kernels (git-ignored)."""
    where = tmp_path_factory.mktemp("clone") / "threadcost"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(where)],
                   check=True, timeout=120, capture_output=True)
    for built in (REPO / "threadcost").glob("_native*.so"):
        shutil.copy2(built, where / "threadcost" / built.name)
    assert _git(where, "status", "--porcelain") == ""
    return where


def _kernel_metadata() -> dict[str, Any]:
    """What JupyterLab writes into a notebook it saves: the running kernel's spec."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language, "name": "python3"}


def test_jupyterlab_saves_rewrite_nothing(clone: Path) -> None:
    from jupytext import TextFileContentsManager

    manager = TextFileContentsManager(root_dir=str(clone / "notebooks"))
    for path in sorted((clone / "notebooks").glob("0*.py")):
        model = manager.get(path.name, content=True, type="notebook")
        nb = model["content"]
        nb["metadata"]["kernelspec"] = _kernel_metadata()
        nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.2",
                                           "codemirror_mode": {"name": "ipython",
                                                               "version": 3}}
        nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {
            "state": {}, "version_major": 2, "version_minor": 0}}
        for number, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code":
                cell["execution_count"] = number
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran"}]
                cell["metadata"]["execution"] = {"iopub.status.idle": "2026-11-26T00:00:00Z"}
                cell["metadata"]["scrolled"] = True
        manager.save({"type": "notebook", "format": "json", "content": nb}, path.name)
    assert _git(clone, "status", "--porcelain", "--untracked-files=all") == ""


def _readme_run(clone: Path, *params: str) -> subprocess.CompletedProcess[str]:
    """The README's jupytext + papermill commands for notebook 01, in the clone, with its
    own package first on the path (the kernel imports the clone's threadcost)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("THREADCOST_DATA_DIR", "THREADCOST_FIGURES_DIR",
                        "THREADCOST_INTERACTIVE")}
    env["PYTHONPATH"] = str(clone)
    venv = Path(sys.executable).parent
    (clone / "build").mkdir(exist_ok=True)
    subprocess.run([str(venv / "jupytext"), "--to", "ipynb", "-o", "build/01.ipynb",
                    "notebooks/01_malloc_touch.py"], cwd=clone, env=env, check=True,
                   capture_output=True, timeout=120)
    return subprocess.run([str(venv / "papermill"), "--execution-timeout", "600",
                           "--start-timeout", "120", "build/01.ipynb", "build/01.out.ipynb",
                           *params], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=900, stdin=subprocess.DEVNULL, check=False)


@pytest.mark.notebook
@pytest.mark.timeout(1800)
def test_papermill_runs_leave_the_tree_and_the_reference_alone(clone: Path) -> None:
    from threadcost.host import machine

    reference = _git(clone, "ls-files", "-s", "data", "figures", "reference")
    bad = _readme_run(clone, "-p", "malloc_mibb", "16")
    assert bad.returncode != 0
    assert "did you mean 'malloc_mib'" in bad.stderr
    assert not (clone / "runs").exists()  # refused before anything was measured
    good = _readme_run(clone, "-p", "malloc_mib", "16", "-p", "malloc_points", "5",
                       "-p", "malloc_allocators", "[mmap]")
    assert good.returncode == 0, good.stderr[-2000:]
    mine = clone / "runs" / machine.machine_id()
    stored = sorted(p.name for p in mine.iterdir())
    assert any("-malloc_touch-" in name for name in stored), stored
    assert (clone / "build" / "figures" / "malloc_touch_curve.svg").is_file()
    assert _git(clone, "status", "--porcelain", "--untracked-files=all") == ""
    assert _git(clone, "ls-files", "-s", "data", "figures", "reference") == reference
