"""Any affinity mask: one CPU, CPUs 5 and 11 of 16, hundreds of CPUs.

The CPU choices (``threadcost.host.cpus``, the placements, "auto", the CPU parameters)
are checked against faked masks, which this machine cannot provide, by replacing
the one function that reads the mask (``sysinfo.affinity``); the one-CPU case also
runs for real, in a child process restricted with ``os.sched_setaffinity``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from threadcost.errors import ParameterError
from threadcost.experiments.context_switch import cpu_bound
from threadcost.experiments.context_switch import run as cs
from threadcost.experiments.user_space_tasks import fibers
from threadcost.host import cpus, sysinfo
from threadcost.settings import validate

TWO_OF_SIXTEEN = [5, 11]
ONE_CPU_REASON = "needs two usable CPUs; this process may use one (CPU 3)"


@pytest.fixture
def mask(monkeypatch: pytest.MonkeyPatch) -> object:
    """Fake this process's affinity mask: ``mask(set_of_cpus)``."""
    def fake(cpu_list: list[int]) -> None:
        monkeypatch.setattr(sysinfo, "affinity", lambda: sorted(cpu_list))
        # no SMT, one package: the topology of CPUs this machine may not have
        monkeypatch.setattr(cpus, "core_of", lambda cpu: (cpu,))
        monkeypatch.setattr(cpus, "package_of", lambda cpu: 0)
    return fake


# ------------------------------------------------------------- pure choices

def test_pair_prefers_two_cores_of_one_package() -> None:
    siblings = [[0, 64], [1, 65], [32, 96]]
    packages = {0: 0, 64: 0, 1: 1, 65: 1, 32: 0, 96: 0}
    two = cpus.pair([0, 1, 32, 64, 65, 96], siblings, packages)
    assert two == cpus.Pair(0, 32, "two cores")
    assert two.words() == "CPUs 0 and 32 (two cores)"


def test_pair_falls_back_to_another_package_then_to_siblings() -> None:
    assert cpus.pair([0, 1], [[0], [1]], {0: 0, 1: 1}) == cpus.Pair(0, 1, "two packages")
    sib = cpus.pair([4, 12], [[4, 12]], {4: 0, 12: 0})
    assert sib == cpus.Pair(4, 12, "SMT siblings")


def test_one_cpu_has_no_pair_and_says_why() -> None:
    assert cpus.pair([3], [[3]]) is None
    assert cpus.two_cpus_reason([3]) == ONE_CPU_REASON
    assert cpus.two_cpus_reason(TWO_OF_SIXTEEN) is None


def test_masks_in_words() -> None:
    assert cpus.in_words([3]) == "CPU 3"
    assert cpus.in_words([11, 5]) == "CPUs 5 and 11"
    assert cpus.in_words([*range(64), 100]) == "CPUs 0-63 and 100"
    assert cpus.in_words([0, 1, 2, 8, 9]) == "CPUs 0-2, 8, 9"


@pytest.mark.parametrize(("placement", "expected"), [
    ("same-cpu", (11, 11)), ("cross-cpu", (5, 11)), ("unpinned", (-1, -1))])
def test_placements_on_cpus_5_and_11(placement: str, expected: tuple[int, int]) -> None:
    assert cs.choose_cpus(placement, TWO_OF_SIXTEEN, [[5], [11]]) == expected


def test_placements_on_hundreds_of_cpus() -> None:
    many = list(range(8, 392))
    siblings = [[c, c + 192] for c in range(8, 200)]
    assert cs.choose_cpus("same-cpu", many, siblings) == (391, 391)
    assert cs.choose_cpus("cross-cpu", many, siblings) == (8, 9)
    assert cs.choose_cpus("smt-siblings", many, siblings) == (8, 200)


def test_cross_cpu_on_one_cpu_is_refused_with_the_reason() -> None:
    with pytest.raises(ParameterError) as info:
        cs.choose_cpus("cross-cpu", [3], [[3]])
    assert info.value.name == "placement" and ONE_CPU_REASON in str(info.value)


# ------------------------------------------------------------- a faked mask

def test_auto_and_cpu_parameters_follow_the_mask(mask: object) -> None:
    mask(TWO_OF_SIXTEEN)  # type: ignore[operator]
    assert fibers.one_cpu("cpu", "auto", allow_none=False) == 5
    assert fibers.one_cpu("cpu", 11, allow_none=False) == 11
    assert validate.cpus("pin", "auto") == [5]
    assert validate.cpus("pin", "5, 11") == [5, 11]
    assert cpu_bound._cpu("auto") == 11
    assert cs.choose_cpus("same-cpu") == (11, 11)
    assert cs.choose_cpus("cross-cpu") == (5, 11)
    assert cpus.partner(11) == cpus.Pair(11, 5, "two cores")


@pytest.mark.parametrize(("call", "name"), [
    (lambda: fibers.one_cpu("tasks_cpu", 0, allow_none=False), "tasks_cpu"),
    (lambda: validate.cpus("pin", "0,1"), "pin"),
    (lambda: cpu_bound._cpu(1), "cpu")])
def test_a_cpu_outside_the_mask_is_refused_naming_the_allowed(mask: object, call: object,
                                                              name: str) -> None:
    mask(TWO_OF_SIXTEEN)  # type: ignore[operator]
    with pytest.raises(ParameterError) as info:
        call()  # type: ignore[operator]
    assert info.value.name == name
    assert "CPUs 5 and 11" in str(info.value)


def test_cpu_ranges_as_taskset_writes_them(mask: object) -> None:
    mask([*range(8, 24), 40])  # type: ignore[operator]
    assert validate.cpus("memory_pin", "8-11,40") == [8, 9, 10, 11, 40]
    with pytest.raises(ParameterError, match="low to high"):
        validate.cpus("memory_pin", "11-8")
    with pytest.raises(ParameterError) as info:
        validate.cpus("memory_pin", "0-9")
    assert info.value.value == "0-9" and "CPUs 8-23 and 40" in str(info.value)


def test_a_cpu_the_kernels_cannot_pin_is_refused(mask: object) -> None:
    mask([3, 2000])  # type: ignore[operator]
    with pytest.raises(ParameterError, match="CPU_SETSIZE") as info:
        validate.cpus("pin", [2000])
    assert info.value.name == "pin"
    with pytest.raises(ParameterError, match="CPU_SETSIZE"):
        cpu_bound._cpu(2000)


def test_one_cpu_mask_skips_the_cross_cpu_configurations(mask: object) -> None:
    mask([3])  # type: ignore[operator]
    todo, skipped = cs.plan(["pipe"], ["same-cpu", "cross-cpu", "unpinned"], ["threads"])
    assert [t[1] for t in todo] == ["same-cpu", "unpinned"]
    assert skipped == [{"mechanism": "pipe", "placement": "cross-cpu", "tasks": "threads",
                        "reason": ONE_CPU_REASON}]


# ------------------------------------------------------------- one CPU, for real

ONE_CPU_CHILD = textwrap.dedent("""
    import json, os, sys
    os.sched_setaffinity(0, {CPU})
    from threadcost.store import datastore
    from threadcost.experiments.context_switch import run as cs
    from threadcost.experiments.user_space_tasks import goroutines as peers
    from threadcost.experiments.context_switch import yardsticks
    placed = cs.placement_repeats(repeats=2, iterations=200, warmup=10)
    path = datastore.save_run(placed)
    back = datastore.load_run(path)
    yard = yardsticks.run(repeats=1, batches=2, scale=0.01)
    pinning = peers.pinning_run(repeats=2, iterations=1000, warmup=0)
    sweep, _ = cs.sweep(["pipe"], ["same-cpu", "cross-cpu"], ["threads"], 200, 10,
                        baseline_scale=0.02, progress=False)
    print(json.dumps({
        "placement": placed.summary, "stored": back.meta["summary"],
        "stored_tables": sorted(back.meta.get("tables") or []), "yard": yard.summary.get("not_run"),
        "yard_rows": sorted(set(yard.tables["repeats"].yardstick)),
        "pinning": pinning.summary["skipped"], "sweep_skipped": sweep.summary["skipped"],
        "cross_pair": sweep.summary["cross_cpu_pair"]}))
""")


def test_one_usable_cpu_for_real() -> None:
    """A child restricted to one CPU: the pinned/unpinned pairs and C04's pairs are
    stored as skipped runs that read back, the cross-CPU parts say why."""
    one = cpus.last()
    proc = subprocess.run([sys.executable, "-c", ONE_CPU_CHILD.replace("{CPU}", f"{{{one}}}")],
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    reason = f"needs two usable CPUs; this process may use one (CPU {one})"
    assert got["placement"] == {"skipped": reason}
    assert got["stored"]["skipped"] == reason and got["stored_tables"] == []
    assert reason in got["yard"]
    assert "wakeup_cross_cpu" not in got["yard_rows"]
    assert got["pinning"] == reason
    assert got["sweep_skipped"] == [{"mechanism": "pipe", "placement": "cross-cpu",
                                     "tasks": "threads", "reason": reason}]
    assert got["cross_pair"] is None


def test_a_restricted_mask_gets_a_machine_folder_of_its_own() -> None:
    """Runs measured with fewer usable CPUs than the machine has are another machine's
    runs (never pooled with the full mask's); a full mask keeps the id it had."""
    from threadcost.host import machine

    full = machine.fingerprint(include_git=False)
    full["logical_cpus"], full["affinity"] = 16, list(range(16))
    one = {**full, "affinity": [5]}
    two = {**full, "affinity": TWO_OF_SIXTEEN}
    assert "-16cpu-" in machine.machine_id(full)
    assert "usable_cpus" not in machine.identity(full)
    assert "-1of16cpu-" in machine.machine_id(one)
    assert "-2of16cpu-" in machine.machine_id(two)
    assert len({machine.machine_id(fp) for fp in (full, one, two)}) == 3
    assert machine.identity_differences(full, one) == ["usable CPUs (affinity mask) all vs 1"]
