"""Machine ids tell hosts apart; the claims never pool two hosts' runs.

Built from small synthetic runs: two hosts of one cloud machine type (same
readable prefix) that differ in kernel release and mitigations, written the old
way (a folder without the identity hash, fingerprints without CPU family, model
number, stepping or microcode), as the committed reference and a second host's
run copied beside it are.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost.host import machine
from threadcost.measured.runs import Runs
from threadcost.results import Result
from threadcost.store import datastore, migrate

OLD_ID = "x86_64-amd-epyc-2cpu-24g-kvm"


def _old_fingerprint(kernel: str, spectre_v2: str) -> dict[str, Any]:
    """A fingerprint as threadcost wrote it before it recorded the CPU's identity."""
    return {"hostname": "h", "kernel": f"Linux {kernel}", "arch": "x86_64",
            "cpu_model": "AMD EPYC", "logical_cpus": 2, "mem_total_kib": 24684096,
            "virtualization": "kvm", "container": "none",
            "cpu_vulnerabilities": {"meltdown": "Not affected", "spectre_v2": spectre_v2}}


HOST_A = _old_fingerprint("6.18.44-fc-v595", "Mitigation: Enhanced / Automatic IBRS")
HOST_B = _old_fingerprint("6.18.44-fc-v782", "Mitigation: Retpolines")


def _store(data_dir: Path, folder: str, fp: dict[str, Any], n: int) -> None:
    """``n`` runs of a tiny experiment, measured on ``fp``, in ``data_dir/folder``."""
    for i in range(n):
        result = Result("demo", {"size": 1}, {"i": i}, {"t": pd.DataFrame({"x": [i]})})
        path = datastore.save_run(result, data_dir=data_dir / "staging", fingerprint=fp)
        (data_dir / folder).mkdir(parents=True, exist_ok=True)
        meta = json.loads((path / "meta.json").read_text())
        meta["machine_id"] = folder
        (path / "meta.json").write_text(json.dumps(meta, indent=2))
        shutil.move(str(path), data_dir / folder / path.name)
    shutil.rmtree(data_dir / "staging", ignore_errors=True)


def test_the_fingerprint_records_the_cpu_identity() -> None:
    fp = machine.fingerprint(include_git=False)
    for key in ("cpu_vendor", "cpu_family", "cpu_model_number", "cpu_stepping",
                "cpu_microcode"):
        assert key in fp
    assert machine.machine_id(fp).startswith(machine.id_prefix(fp) + "-")


def test_hosts_of_one_machine_type_get_two_ids() -> None:
    a = dict(HOST_A, cpu_family="25", cpu_model_number="1", cpu_stepping="1",
             cpu_microcode="0x1000065")
    for key, value in (("cpu_microcode", "0x1000066"), ("cpu_stepping", "2"),
                       ("cpu_family", "23"), ("cpu_model_number", "49"),
                       ("kernel", "Linux 6.19.0"), ("cpu_vulnerabilities", {})):
        b = dict(a, **{key: value})
        assert machine.id_prefix(a) == machine.id_prefix(b)
        assert machine.machine_id(a) != machine.machine_id(b), key
        assert machine.identity_differences(a, b)
    # What does not set performance does not split a machine.
    assert machine.machine_id(a) == machine.machine_id(dict(a, hostname="other",
                                                            mem_available_kib=1))
    # A fingerprint without the CPU's identity is a machine of its own.
    assert machine.machine_id(HOST_A) != machine.machine_id(a)
    assert machine.machine_id(HOST_A) != machine.machine_id(HOST_B)


def test_a_host_copied_beside_the_reference_stays_apart(tmp_path: Path) -> None:
    # The reference, migrated to its new id, and a second host's folder copied in.
    _store(tmp_path, machine.machine_id(HOST_A), HOST_A, 3)
    _store(tmp_path, OLD_ID, HOST_B, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [machine.machine_id(HOST_A), OLD_ID])
    for folder in (machine.machine_id(HOST_A), OLD_ID):
        assert Runs.load(folder, tmp_path).refused == ()
    # Migrating the copied folder gives it its own hashed id, not the reference's.
    migrate.migrate(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [machine.machine_id(HOST_A), machine.machine_id(HOST_B)])


def test_a_folder_holding_two_hosts_is_never_pooled(tmp_path: Path) -> None:
    _store(tmp_path, OLD_ID, HOST_A, 3)
    _store(tmp_path, OLD_ID, HOST_B, 2)
    runs = Runs.load(OLD_ID, tmp_path)
    pooled = runs.matching("demo")
    assert len({machine.identity_hash(r.meta["machine"]) for r in pooled}) == 1
    assert len(pooled) in (2, 3)
    (sentence,) = runs.refused
    assert "not pooled" in sentence and "kernel release" in sentence
    assert "spectre_v2" in sentence

    proc = subprocess.run([sys.executable, "-m", "threadcost", "claims", "--machine", OLD_ID,
                           "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Not pooled" in proc.stdout and "kernel release" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "threadcost", "claims", "--machine", OLD_ID,
                           "--data-dir", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and "not pooled" in proc.stderr
    json.loads(proc.stdout)

    # The migration splits the folder by each run's own fingerprint.
    moves = migrate.migrate(tmp_path)
    assert len(moves) == 5
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == sorted([machine.machine_id(HOST_A), machine.machine_id(HOST_B)])
    for folder in folders:
        runs = Runs.load(folder, tmp_path)
        assert runs.refused == ()
        assert all(r.meta["machine_id"] == folder for r in runs.runs)
        assert all(r.meta["machine_id_before"] == OLD_ID for r in runs.runs)
    assert migrate.migrate(tmp_path) == []  # a second pass moves nothing


def test_fresh_results_are_not_pooled_with_another_hosts_runs(tmp_path: Path) -> None:
    _store(tmp_path, OLD_ID, HOST_A, 2)
    fresh = Result("other", {}, {}, {})
    runs = Runs.load(OLD_ID, tmp_path).with_results([fresh], HOST_B)
    assert [r.experiment for r in runs.runs] == ["other"]
    assert runs.refused and "kernel release" in runs.refused[0]


def test_committed_machine_folders_are_named_by_their_fingerprints() -> None:
    from threadcost import paths

    data = paths.REPO_ROOT / "data"
    assert migrate.plan(data) == []
