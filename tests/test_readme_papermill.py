"""The README's papermill command never hangs (#26 item 4).

The notebooks' ``interactive`` default is False (no live widgets in a batch run), and
the README's command carries execution and start timeouts. On demand
(``pytest -m repeat``) the README's exact commands run 20 times in a row."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from threadcost.experiments import parameters

REPO = Path(__file__).resolve().parent.parent
REPEATS = 20


def readme_commands() -> list[list[str]]:
    """The README's jupytext and papermill lines for one notebook, as argument lists."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [ln.strip() for ln in text.splitlines()
             if re.match(r"\.venv/bin/(jupytext|papermill) ", ln.strip())]
    return [shlex.split(ln) for ln in lines]


def test_readme_papermill_command_has_timeouts() -> None:
    commands = readme_commands()
    assert [c[0] for c in commands] == [".venv/bin/jupytext", ".venv/bin/papermill"]
    papermill = commands[1]
    assert "--execution-timeout" in papermill and "--start-timeout" in papermill


def test_notebooks_default_to_static_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in sorted((REPO / "notebooks").glob("0*.py")):
        text = path.read_text(encoding="utf-8")
        assert "interactive: bool = True" not in text, path.name
    monkeypatch.delenv(parameters.INTERACTIVE_ENV, raising=False)
    assert parameters.interactive(False) is False
    assert parameters.interactive(True) is True
    monkeypatch.setenv(parameters.INTERACTIVE_ENV, "1")
    assert parameters.interactive(False) is True  # the JupyterLab of `make lab`


def _in(workdir: Path, argv: list[str]) -> list[str]:
    """A README command run from ``workdir``: its build/ paths point there."""
    out = [str(REPO / argv[0])]
    for arg in argv[1:]:
        if arg.startswith("build/"):
            out.append(str(workdir / arg))
        elif arg.startswith("notebooks/"):
            out.append(str(REPO / arg))
        else:
            out.append(arg)
    return out


@pytest.mark.repeat
@pytest.mark.notebook
@pytest.mark.timeout(REPEATS * 900)
def test_readme_papermill_command_runs_twenty_times(tmp_path: Path) -> None:
    jupytext, papermill = readme_commands()
    env = {**os.environ}
    env.pop(parameters.INTERACTIVE_ENV, None)
    for i in range(REPEATS):
        work = tmp_path / f"run{i:02d}"
        (work / "build").mkdir(parents=True)
        for argv in (jupytext, papermill):
            proc = subprocess.run(_in(work, argv), cwd=REPO / "notebooks", env=env,
                                  capture_output=True, text=True, timeout=900,
                                  stdin=subprocess.DEVNULL, check=False)
            assert proc.returncode == 0, f"run {i + 1}: {proc.stderr[-2000:]}"
