"""``threadcost claims --json``: the contract other tools read."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from threadcost import claims, paths
from threadcost.claims.model import CLASSES

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-7003449b"
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
    assert isinstance(out, list) and len(out) == len(claims.claims())
    assert [c["id"] for c in out][:23] == [f"C{i:02d}" for i in range(1, 24)]
    assert {"C30", "C31", "C32", "C33", "C34", "C35"} <= {c["id"] for c in out}
    for claim in out:
        assert {"id", "source", "claim", "verdict", "class", "as_published", "shape", "why",
                "assertions", "finding"} <= set(claim)
        assert claim["class"] in CLASSES
        assert claim["verdict"].split(" (")[0].split(", ")[0] == claim["class"]
        for kind in ("as_published", "shape"):
            for a in claim[kind]:
                assert {"text", "quote", "measured", "ci_low", "ci_high", "low", "high",
                        "unit", "repeats", "verdict", "setup", "run_id"} <= set(a)
        for a in claim["as_published"]:
            assert "why" in a
            if a["verdict"] in ("contradicted", "not reproduced"):
                assert a["why"], (claim["id"], a["text"])  # a cause, or "unexplained"
        for w in claim["why"]:
            assert {"reading", "text", "yardsticks"} <= set(w)
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


def test_all_machines_lists_each_claim_on_each_folder(tmp_path: object) -> None:
    """``--all-machines --json``: one row per claim, a verdict (or why not) per folder."""
    import shutil
    from pathlib import Path

    data = paths.REPO_ROOT / "data"
    if not (data / REFERENCE).is_dir():
        pytest.skip("the committed reference run is not in this checkout")
    folder = Path(str(tmp_path)) / "data"
    shutil.copytree(data / REFERENCE, folder / REFERENCE)
    proc = _cli("--all-machines", "--data-dir", str(folder), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["claim"] for r in rows] == [c["claim_id"] for _, c in
                                          claims.claims().iterrows()][:len(rows)]
    for r in rows:
        assert set(r["verdicts"]) == {REFERENCE}
        cell = r["verdicts"][REFERENCE]
        assert cell.split(", ")[0] in CLASSES or cell.startswith(
            ("not measured on this machine: ", "no verdict")), cell
        assert r["flips"] is False  # one folder: nothing to flip against
