"""`make sanitize`, run by `make test`: every C kernel family called directly by
its harness in native/tests/, built with ASan+UBSan (LeakSanitizer on) and with
TSan (`make sanitize` also runs the plain -O2 build, and valgrind when
SANITIZE_VALGRIND=1 is set). Any failed check, sanitizer report or leak fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "native" / "tests" / "run_sanitizers.sh"
pytestmark = pytest.mark.sanitize


def test_every_kernel_family_has_a_harness() -> None:
    families = {p.stem for p in (REPO / "native").glob("*.c")}
    harnesses = {p.stem.removeprefix("test_") for p in (REPO / "native" / "tests").glob("test_*.c")}
    missing = sorted(families - harnesses)
    assert not missing, f"native/tests/test_<family>.c missing for: {missing}"


def test_kernels_are_clean_under_the_sanitizers(tmp_path: Path) -> None:
    if shutil.which("cc") is None or shutil.which("bash") is None:
        pytest.skip("no C compiler (cc) or bash on this machine")
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=REPO, capture_output=True, text=True,
                          timeout=480, check=False, env={
                              "PATH": "/usr/local/bin:/usr/bin:/bin",
                              "SANITIZE_OUT": str(tmp_path),
                              "SANITIZE_VALGRIND": os.environ.get("SANITIZE_VALGRIND", "0"),
                              # the plain -O2 -Werror build is the extension's own (and
                              # `make sanitize` runs it too): here only the sanitizers
                              "SANITIZE_PLAIN": os.environ.get("SANITIZE_PLAIN", "0")})
    report = proc.stdout + proc.stderr
    print(report)  # shown by pytest -rA, and on failure
    assert proc.returncode == 0, report
    assert "sanitize:" in report and "runs clean" in report
    if "ok   asan" not in report:
        pytest.skip("ASan/UBSan could not run here: " + report.splitlines()[0])
