"""``threadcost claims --json``: the contract other tools read."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from threadcost import paths
from threadcost.claims.model import CLASSES

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm"
KEYS = {"text", "measured", "low", "high", "unit", "repeats", "verdict", "setup", "run_id"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "threadcost", "claims", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_json_lists_every_claim() -> None:
    data = paths.REPO_ROOT / "data"
    if not (data / REFERENCE).is_dir():
        pytest.skip("the committed reference run is not in this checkout")
    proc = _cli("--machine", REFERENCE, "--data-dir", str(data), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert isinstance(out, list) and len(out) == 25
    assert [c["id"] for c in out] == [f"C{i:02d}" for i in range(1, 26)]
    for claim in out:
        assert {"id", "source", "claim", "verdict", "assertions"} <= set(claim)
        assert claim["verdict"].split(" (")[0] in CLASSES
        if claim["verdict"].startswith("not run here"):
            assert claim["reason"]
        for a in claim["assertions"]:
            assert set(a) >= KEYS
            assert a["verdict"] in CLASSES


def test_unknown_machine_is_refused_with_the_choices(tmp_path: object) -> None:
    proc = _cli("--machine", "no-such-machine", "--data-dir", str(paths.REPO_ROOT / "data"))
    assert proc.returncode == 2
    assert "--machine" in proc.stderr and "no-such-machine" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_data_dir_is_refused(tmp_path: object) -> None:
    proc = _cli("--data-dir", "/nonexistent/threadcost-data", "--json")
    assert proc.returncode == 2
    assert "--data-dir" in proc.stderr
