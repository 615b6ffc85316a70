"""Compile the suite's Python once, before `make test` starts its processes.

A fresh clone's .venv holds no bytecode (uv installs without compiling it), and the
suite starts several Python processes at once: two pytest-xdist workers, each
importing every test module at collection, the quick rendering's build and its first
kernel, the bare-machine lanes' builds, JupyterLab. Each would compile the same
modules side by side (about 12 s of CPU for a process that imports pandas, matplotlib,
Altair, nbconvert and IPython cold, 3-4 s warm). Here two processes compile them
first, side by side: a collection of the suite (which also writes pytest's rewritten
test modules) and an import of what a notebook kernel and a build import; later
processes read the bytecode. `make test` runs this once per .venv (a stamp); it never
fails the suite (a module that cannot be imported fails where it is used).

    python -m tests.prewarm
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What the notebooks' kernels and `python -m threadcost.paper` import beyond the test
# modules (the kernel, the papermill and nbconvert steps, the notebooks' own imports).
KERNEL_SIDE = (
    "ipykernel.kernelapp", "matplotlib_inline.backend_inline", "ipywidgets", "papermill",
    "nbclient", "nbconvert.exporters", "jupytext", "altair", "seaborn", "scipy.stats",
    "threadcost.paper.build", "threadcost.paper.render",
)


def notebook_imports() -> list[str]:
    """The import lines of notebooks/*.py (jupytext percent files)."""
    lines: set[str] = set()
    for source in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")):
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.startswith(("import ", "from ")) and "__future__" not in line:
                lines.add(line.split("#")[0].rstrip())
    return sorted(lines)


def kernel_script() -> str:
    imports = [f"import {name}" for name in KERNEL_SIDE] + notebook_imports()
    return "\n".join(f"try:\n    {line}\nexcept Exception:\n    pass" for line in imports)


def main() -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    quiet = {"cwd": REPO, "env": env, "stdin": subprocess.DEVNULL,
             "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    collect = subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q",
                                "-p", "no:cacheprovider"], **quiet)  # type: ignore[call-overload]
    kernel = subprocess.Popen([sys.executable, "-c", kernel_script()],
                              **quiet)  # type: ignore[call-overload]
    for proc in (collect, kernel):
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
