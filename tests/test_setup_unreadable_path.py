"""#37 item 5: ``make setup`` as a user other than root, with a folder on PATH that user
may not read, ended in a PermissionError traceback from the peers' toolchain search (the
step ``python -m threadcost.peers``). Run as a user without the right to read others'
folders (root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: this checkout's Python
lives in root's home) with such a folder first on PATH, in JAVA_HOME and among the JDK
folders, the step notes each missing toolchain and exits 0 in seconds, no traceback."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOBODY = 65534
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand the folder "
                                "to another user")


def _without_dac_override() -> None:
    """In the child before exec: the rights to read any folder dropped for good."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_an_unreadable_folder_on_path_is_passed_over(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    (locked / "bin").mkdir(parents=True)
    for tool in ("go", "cargo", "javac", "java"):
        (locked / "bin" / tool).write_text("#!/bin/sh\nexit 0\n")
        (locked / "bin" / tool).chmod(0o755)
    for folder in (locked / "bin", locked):  # another user's, closed to everyone else
        os.chown(folder, NOBODY, NOBODY)
        folder.chmod(0o700)
    env = {"PATH": f"{locked / 'bin'}:{locked}:/usr/bin:/bin", "HOME": str(tmp_path),
           "JAVA_HOME": str(locked), "THREADCOST_JVM_DIRS": str(locked), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "threadcost.peers"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False,
                          preexec_fn=_without_dac_override)
    assert time.monotonic() - start < 60
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "PermissionError" not in proc.stderr
    notes = proc.stdout.strip().splitlines()
    assert [line.split()[1] for line in notes] == ["go", "rust", "java"], proc.stdout
    assert all(line.startswith("note: ") and "not run here" in line for line in notes), \
        proc.stdout
