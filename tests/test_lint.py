"""ruff must be clean on the package, the tests, the build script and the tools."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed in this environment")
    proc = subprocess.run([ruff, "check", "threadcost", "tests", "native", "notebooks", "tools"],
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _vulture() -> str:
    found = shutil.which("vulture", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("vulture is not installed in this environment")
    return found


def test_no_dead_code() -> None:
    """vulture, as pyproject.toml's [tool.vulture] sets it (the package, the notebooks,
    the tests and the tools; tools/vulture_allowlist.py for what frameworks call by
    name), finds nothing unused: what nothing calls is removed."""
    proc = subprocess.run([_vulture()], cwd=REPO, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, "dead code:\n" + proc.stdout + proc.stderr


def test_the_dead_code_check_sees_an_unused_function(tmp_path: Path) -> None:
    """The same settings flag a function nothing calls, and spare one a finding
    registers by decorator."""
    (tmp_path / "mod.py").write_text(
        "from threadcost.findings import quantity\n\n\n"
        "def never_called() -> int:\n    return 1\n\n\n"
        "@quantity('x', 'ns', 'median', 'x', reads='the newest x run')\n"
        "def registered(runs: object) -> str:\n    return ''\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        (REPO / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run([_vulture(), "mod.py"], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode != 0
    assert "never_called" in proc.stdout and "registered" not in proc.stdout
