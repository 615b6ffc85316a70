"""A machine without the C build draws a stored folder's pages (#36 item 4).

Importing threadcost, its experiments included, opens no compiled library: the kernels'
shared library is opened at the first kernel call. So with the library hidden, the
notebooks draw a committed machine folder (as ``make paper-from-data`` does), and what
would measure stops with one line naming what to run, never a traceback. (The drawing
is checked by tests/test_every_folder_renders.py, which draws every page of every
folder under data/ with the library hidden by :func:`_hidden_env`.)

The library is hidden from every process of a build (the paper's, its notebooks'
Jupyter kernels) by a ``sitecustomize`` on PYTHONPATH: an import hook that refuses
``threadcost._kernels`` (as if it was never built), or finds it in an empty file (a
build that cannot be loaded).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CLEAR = "threadcost's C kernels"  # how both messages begin (threadcost.native)

HIDE = r"""
import importlib.machinery
import sys

HIDDEN = {hidden!r}  # the modules refused (as if never built)
EMPTY = {empty!r}  # else None: an empty file stands in for the kernels' library


class HiddenKernels:
    def find_spec(self, name, path=None, target=None):
        if name in HIDDEN:
            raise ModuleNotFoundError(f"{{name}} is hidden by the test")
        if name == "threadcost._kernels" and EMPTY is not None:
            return importlib.machinery.ModuleSpec(name, None, origin=EMPTY)
        return None


sys.meta_path.insert(0, HiddenKernels())
"""

# Every module of the measuring side imported (the experiments, their limits and
# isolation, the commands: all that imports threadcost.native; the drawing side is
# tests/test_views_without_kernels.py's and the pages'), or those named, then one
# kernel called.
IMPORT_ALL_THEN_CALL = r"""
import importlib, json, pkgutil, sys
import threadcost

MEASURING = ("experiments", "runsafety", "commands", "cli", "native", "host", "peers")
names = [m.name for m in pkgutil.walk_packages(threadcost.__path__, "threadcost.")
         if m.name.split(".")[1] in MEASURING and not m.name.endswith("__main__")
         and (sys.argv[1] == "all" or m.name in sys.argv[1].split(","))]
for name in names:
    importlib.import_module(name)
with open("/proc/self/maps") as maps:
    mapped = any("_kernels" in line for line in maps)
from threadcost.native import KernelsNotBuilt, lib
constant = lib.TC_ELIMIT
try:
    lib.tc_default_stack_bytes()
    said = None
except KernelsNotBuilt as exc:
    said = str(exc)
print(json.dumps({"imported": len(names), "mapped_at_import": mapped, "said": said,
                  "constant_is_int": isinstance(constant, int)}))
"""


def _hidden_env(tmp_path: Path, how: str) -> dict[str, str]:
    """The environment of a process (and its children) where the kernels are ``how``:
    "missing", "unloadable", or "undeclared" (missing, and so are the declarations
    threadcost/_native.py that their build writes: a checkout never built)."""
    folder = tmp_path / f"hide-{how}"
    folder.mkdir()
    hidden = {"missing": ("threadcost._kernels",), "unloadable": (),
              "undeclared": ("threadcost._kernels", "threadcost._native")}[how]
    empty = None
    if how == "unloadable":
        empty = str(folder / "_kernels.so")
        Path(empty).write_bytes(b"")
    (folder / "sitecustomize.py").write_text(HIDE.format(hidden=hidden, empty=empty))
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _run(args: list[str], env: dict[str, str] | None = None,
         timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env=env, check=False, stdin=subprocess.DEVNULL)


# Modules that read the headers' constants when imported.
READ_CONSTANTS = ",".join(f"threadcost.experiments.{name}" for name in (
    "brigade.one_run", "context_switch.kernels", "context_switch.cpu_bound",
    "user_space_tasks.fibers", "more_sources.indirect", "launch.run", "malloc_touch.run"))


def test_importing_every_module_opens_no_library() -> None:
    """With the kernels built: nothing is mapped until a kernel is called."""
    proc = _run([sys.executable, "-c", IMPORT_ALL_THEN_CALL, "all"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["imported"] > 50 and out["constant_is_int"]
    assert out["mapped_at_import"] is False
    assert out["said"] is None  # the kernel ran: the library opened at that call


@pytest.mark.parametrize("how", ["missing", "unloadable", "undeclared"])
def test_every_module_imports_and_a_kernel_call_says_what_to_run(tmp_path: Path,
                                                                   how: str) -> None:
    modules = "all" if how == "missing" else READ_CONSTANTS
    proc = _run([sys.executable, "-c", IMPORT_ALL_THEN_CALL, modules],
                env=_hidden_env(tmp_path, how))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["imported"] > (50 if modules == "all" else 6) and out["constant_is_int"]
    assert not out["mapped_at_import"]
    said = out["said"] or ""
    assert said.startswith(CLEAR) and "make native" in said, said
    assert ("cannot be loaded" if how == "unloadable" else "are not built") in said, said


def test_a_measuring_command_stops_with_one_line(tmp_path: Path) -> None:
    """A command that calls a kernel in its own process (``limits`` reads the C default
    thread stack size): the message, one line, the README's code for a failed kernel."""
    proc = _run([sys.executable, "-m", "threadcost", "limits"],
                env=_hidden_env(tmp_path, "missing"), timeout=120)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert CLEAR in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_measuring_paper_stops_before_its_first_notebook(tmp_path: Path) -> None:
    """``make paper`` (measuring) with no kernels: one line naming what to run,
    before any notebook starts (no run log, no notebook executed), no traceback."""
    out = tmp_path / "paper"
    env = {**_hidden_env(tmp_path, "missing"), "THREADCOST_DATA_DIR": str(tmp_path / "runs")}
    env.pop("MAKELEVEL", None)
    proc = _run([sys.executable, "-m", "threadcost.paper", "--params",
                 str(REPO / "params" / "quick.yaml"), "--out", str(out)], env=env, timeout=120)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert CLEAR in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "notebook" not in proc.stderr.lower(), proc.stderr  # stopped before the first
    assert not list(out.parent.glob("paper*/runlogs/*")), "a notebook started"
    assert not (tmp_path / "runs").exists()
