"""Views draw from stored runs without the compiled kernels (#36 item 4).

In a fresh interpreter where loading the kernels fails (``threadcost.native``,
``threadcost._native``, ``threadcost._kernels`` and cffi's backend refuse to import,
as on a machine without the C build), every view and the paper's rendering modules
import, no module that measures is loaded, and a committed machine folder's figures are
drawn from its stored runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MACHINE = "x86_64-amd-epyc-2cpu-24g-kvm-7003449b"  # a committed folder (data/)

# Each figure drawn, as "view.function", and the experiment of the stored run it draws.
FIGURES = {
    "malloc_touch.curve_figure": "malloc_touch",
    "thread_memory.vs_threads_figure": "thread_memory",
    "thread_memory.breakdown_figure": "thread_memory",
    "context_switch.distributions_figure": "context_switch",
    "context_switch.echo_figure": "echo",
    "launch.distributions_figure": "launch",
    "brigade.per_hop_figure": "brigade",
}

SCRIPT = r"""
import importlib, json, pkgutil, sys

BLOCKED = ("threadcost.native", "threadcost._native", "threadcost._kernels", "_cffi_backend")

class NoKernels:
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED:
            raise ImportError(f"{name}: no C build on this machine (blocked by the test)")
        return None

sys.meta_path.insert(0, NoKernels())
import matplotlib
matplotlib.use("Agg")
import threadcost.views
from threadcost.store import datastore

views = [m.name for m in pkgutil.iter_modules(threadcost.views.__path__)]
for name in views:
    importlib.import_module(f"threadcost.views.{name}")
for name in ("threadcost.paper.build", "threadcost.paper.pages", "threadcost.notebook.stored",
             "threadcost.findings", "threadcost.claims"):
    importlib.import_module(name)
drawn = []
for drawing, experiment in json.loads(sys.argv[2]).items():
    view, figure = drawing.split(".")
    run = datastore.latest_run(experiment, data_dir=sys.argv[1] + "/data", machine_id=sys.argv[3])
    fig = getattr(importlib.import_module(f"threadcost.views.{view}"), figure)(run.result())
    drawn.append(f"{view}.{figure}: {len(fig.axes)} axes")
print(json.dumps({"views": views, "drawn": drawn,
                  "modules": sorted(m for m in sys.modules if m.startswith("threadcost"))}))
"""


def _measuring(module: str) -> bool:
    """A module that measures: an experiment's (a family's package, its spec and its
    parameters' checks, and the specs' catalogue, which load no kernel, excepted) or the
    kernels' own."""
    if module in ("threadcost.native", "threadcost._native", "threadcost._kernels"):
        return True
    if not module.startswith("threadcost.experiments."):
        return False
    parts = module.split(".")
    return len(parts) > 3 and parts[3] not in ("spec", "checks")


def test_views_draw_stored_runs_without_the_kernels() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(REPO), json.dumps(FIGURES),
                           MACHINE], capture_output=True, text=True, timeout=120, cwd=REPO,
                          check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(out["views"]) >= 20 and "context_switch" in out["views"]
    assert len(out["drawn"]) == len(FIGURES), out["drawn"]
    assert all(not line.endswith(" 0 axes") for line in out["drawn"]), out["drawn"]
    loaded = [m for m in out["modules"] if _measuring(m)]
    assert loaded == [], f"drawing loaded modules that measure: {loaded}"


def test_the_blocker_does_block() -> None:
    """The same guard refuses an experiment that loads the kernels (the test above
    would see a measuring import fail, not pass unnoticed)."""
    script = SCRIPT.split("import matplotlib")[0] + (
        "from threadcost.experiments.malloc_touch import run\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=REPO, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0 and "no C build" in proc.stderr
