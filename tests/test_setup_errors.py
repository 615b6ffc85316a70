"""`make setup` fails in one line with the README's codes: 2 for a PYTHON that names no
Python, 4 for what the machine lacks (a Python older than the lock needs, a build step
that fails); make's own last line then names that code ("Error 4")."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def _make_venv_stamp(tmp_path: Path, python: str) -> subprocess.CompletedProcess[str]:
    venv = tmp_path / "venv"
    # as a reader types it: not as a sub-make of `make test` (MAKELEVEL would turn
    # make's own line into "make[2]: ***")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "--no-print-directory", f"VENV={venv}", f"PYTHON={python}",
                           f"{venv}/.created"], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=False, env=env)


def _setup_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]


def test_a_python_that_does_not_exist_is_bad_input(tmp_path: Path) -> None:
    proc = _make_venv_stamp(tmp_path, "python3.no-such-version")
    lines = _setup_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("setup: ")
    assert "python3.no-such-version" in lines[0] and "3.11.5" in lines[0]
    assert "Error 2" in proc.stderr and not (tmp_path / "venv").exists()


def test_a_python_older_than_the_lock_needs_is_refused_with_code_4(tmp_path: Path) -> None:
    """3.11.2 passed the old "3.11+" check and then failed resolving the lock."""
    old = tmp_path / "python3.11.2"
    old.write_text(
        "#!/bin/sh\n"
        f'exec {sys.executable} -c "import sys; sys.version_info = (3, 11, 2, \'final\', 0); '
        'exec(sys.argv[1])" "$2"\n')
    old.chmod(0o755)
    proc = _make_venv_stamp(tmp_path, str(old))
    lines = _setup_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert "3.11.5" in lines[0] and "3.11.2" in lines[0]
    assert "Error 4" in proc.stderr and not (tmp_path / "venv").exists()


def test_a_failed_step_is_one_line_quoting_the_compilers_error(tmp_path: Path) -> None:
    failing = ("echo 'Building threadcost'; echo 'native/common.c:2:14: error: expected "
               "expression' >&2; echo 'error: Failed to build threadcost' >&2; exit 1")
    proc = subprocess.run(["sh", str(REPO / "tools" / "setup_step.sh"), "compiling the kernels",
                           "sh", "-c", failing], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30, check=False)
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "setup: compiling the kernels failed: native/common.c:2:14: error: expected "
        "expression (full output: build/setup.log)"]
    assert "Building threadcost" in (tmp_path / "build" / "setup.log").read_text()
