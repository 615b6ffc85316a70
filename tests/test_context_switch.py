"""Context-switch and echo experiments: invariants through the API and the CLI.

No test asserts a timing threshold: only counts, orderings, placements, what
is left behind, and how bad input and a stalled partner are reported.
"""

from __future__ import annotations

import itertools
import os
import resource
import shutil
import subprocess
import sys

import pytest

from tests.conftest import cli_json, run_cli
from threadcost import ParameterError
from threadcost.errors import KernelError
from threadcost.experiments.context_switch import echo
from threadcost.experiments.context_switch import run as cs
from threadcost.runsafety import leakcheck
from threadcost.runsafety.isolate import run_isolated

N = 2000
TWO_CPUS = len(os.sched_getaffinity(0)) >= 2
PERCENTILES = ("min", "p50", "p90", "p99", "p999", "max")


def _ordered(d: dict) -> bool:
    values = [d[k] for k in PERCENTILES]
    return all(a <= b for a, b in itertools.pairwise(values))


def test_same_cpu_pipe_counts_about_two_switches_per_round_trip() -> None:
    r = cs.run("pipe", "same-cpu", "threads", N, 200, baselines=False)
    s = r.summary
    # each side blocks once per round trip; preemptions by other work may add a few
    assert 1.8 <= s["switches_per_round_trip"] <= 2.5
    sw = s["switches"]
    # every hop makes one side leave the CPU, voluntarily (blocking) or, when the
    # woken side preempts it first, involuntarily: each side switches out ~once
    assert sw["a_voluntary"] + sw["a_involuntary"] >= 0.9 * N
    assert sw["b_voluntary"] + sw["b_involuntary"] >= 0.9 * N
    assert s["completed"] == N
    assert s["round_trip_ns"]["n"] == N


@pytest.mark.parametrize("tasks", ["threads", "processes"])
def test_same_cpu_reports_one_cpu_seen(tasks: str) -> None:
    r = cs.run("futex", "same-cpu", tasks, N, 200, baselines=False)
    s = r.summary
    assert len(s["cpus_seen"]) == 1
    assert s["cpus_seen"] == [s["cpus_requested"][0]]
    assert s["pinning_verified"] is True
    assert s["same_cpu_share"] == 1.0


@pytest.mark.skipif(not TWO_CPUS, reason="needs 2 CPUs in the affinity mask")
@pytest.mark.parametrize("tasks", ["threads", "processes"])
def test_cross_cpu_reports_two_cpus_seen(tasks: str) -> None:
    r = cs.run("eventfd", "cross-cpu", tasks, N, 200, baselines=False)
    s = r.summary
    assert len(s["cpus_seen"]) == 2
    assert s["cpus_seen_a"] != s["cpus_seen_b"]
    assert s["pinning_verified"] is True
    assert s["same_cpu_share"] == 0.0


@pytest.mark.parametrize("mechanism", list(cs.MECHANISMS))
@pytest.mark.parametrize("tasks", ["threads", "processes"])
def test_every_mechanism_gives_ordered_percentiles(mechanism: str, tasks: str) -> None:
    r = cs.run(mechanism, "unpinned", tasks, 1000, 100, baselines=False)
    s = r.summary
    assert _ordered(s["round_trip_ns"])
    assert s["round_trip_ns"]["min"] > 0
    if s["switch_ns"]["n"]:
        assert _ordered(s["switch_ns"])
    # the per-sample stamps are contiguous: they add up to no more than the whole run
    assert r.tables["samples"].round_trip_ns.sum() <= s["total_ns"]
    assert len(r.tables["samples"]) == 1000


def test_switch_time_is_round_trip_over_measured_switches() -> None:
    r = cs.run("condvar", "same-cpu", "threads", N, 200, baselines=False)
    s = r.summary
    spr = s["switches_per_round_trip"]
    assert s["switch_ns"]["p50"] == pytest.approx(s["round_trip_ns"]["p50"] / spr)


def test_baselines_are_measured_and_shown() -> None:
    r = cs.run("pipe", "same-cpu", "threads", N, 200, working_set_kib=64)
    b = r.summary["baselines"]
    assert set(b) == {"timer", "getcpu", "empty_syscall", "lock_unlock", "self_hop", "touch"}
    for d in b.values():
        assert d["n"] >= 20 and _ordered(d)
    assert 0 < r.summary["instrumentation_share"] < 1
    assert "round_trip_minus_touch_ns" in r.summary
    assert set(r.tables["baselines"].baseline) == set(b)


def test_processes_leave_nothing_behind() -> None:
    def once() -> None:
        for mech in cs.MECHANISMS:
            cs.run(mech, "same-cpu", "processes", 300, 30, working_set_kib=16,
                   baselines=False)

    # no thread, fd, child (running or zombie) or mapping may stay behind
    assert leakcheck.check(once, warmup=1, repeat=2) == []


@pytest.mark.parametrize("mechanism", list(cs.MECHANISMS))
@pytest.mark.parametrize("tasks", ["threads", "processes"])
def test_watchdog_ends_a_run_whose_partner_stops(mechanism: str, tasks: str) -> None:
    def stalled() -> KernelError:
        with pytest.raises(KernelError) as info:
            cs.run(mechanism, "same-cpu", tasks, 500, 10, timeout_s=0.2, baselines=False,
                   test_stall_after=60)
        return info.value

    # Once first: glibc keeps a joined thread's stack mapped for its next thread (its
    # stack cache), so the first run in a fresh worker maps 8 MiB that is no leak.
    stalled()
    before = leakcheck.snapshot()
    error = stalled()
    assert error.status == 5  # TC_ETIMEOUT
    assert "watchdog" in str(error) and "0.2 s" in str(error)
    after = leakcheck.snapshot()
    assert leakcheck.compare(before, after) == []


def test_watchdog_in_an_isolated_run() -> None:
    with pytest.raises(KernelError, match="watchdog"):
        cs.run("pipe", "unpinned", "processes", 500, 10, timeout_s=0.2, baselines=False,
               isolated=True, test_stall_after=5)


def test_isolated_run_returns_the_same_shape() -> None:
    r = cs.run("pipe", "same-cpu", "processes", 500, 50, baselines=False, isolated=True)
    assert r.summary["completed"] == 500
    assert len(r.summary["cpus_seen"]) == 1


def test_a_memory_limit_is_reported_not_crashed() -> None:
    """Under a low RLIMIT_AS the working set (or the partner's stack) cannot be
    mapped: a partial result naming the limit comes back, no crash."""
    limit = 600 * 1024 * 1024
    r = run_isolated(cs.run, {"mechanism": "pipe", "placement": "same-cpu",
                              "tasks": "threads", "iterations": 100, "warmup": 10,
                              "working_set_kib": 512 * 1024, "baselines": False},
                     rlimits={resource.RLIMIT_AS: (limit, limit)}, timeout=60)
    assert r.limit_hit is not None
    assert "RLIMIT_AS" in r.limit_hit["limit"]
    assert r.limit_hit["errno"] != 0
    assert r.summary["completed"] == 0


@pytest.mark.parametrize("kwargs, name", [
    ({"iterations": 0}, "iterations"),
    ({"iterations": -5}, "iterations"),
    ({"iterations": "many"}, "iterations"),
    ({"iterations": 1.5}, "iterations"),
    ({"mechanism": "semaphore"}, "mechanism"),
    ({"placement": "everywhere"}, "placement"),
    ({"tasks": "fibers"}, "tasks"),
    ({"warmup": -1}, "warmup"),
    ({"working_set_kib": -1}, "working_set_kib"),
    ({"working_set_kib": 10**12}, "working_set_kib"),
    ({"message_bytes": 0}, "message_bytes"),
    ({"message_bytes": 5000}, "message_bytes"),
    ({"mechanism": "futex", "message_bytes": 8}, "message_bytes"),
    ({"timeout_s": 0}, "timeout_s"),
    ({"timeout_s": float("nan")}, "timeout_s"),
])
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        cs.run(**kwargs)
    assert info.value.name == name


def test_placements_needing_more_cpus_are_refused() -> None:
    with pytest.raises(ParameterError, match="two usable CPUs"):
        cs.choose_cpus("cross-cpu", mask=[3], siblings=[[3]])
    with pytest.raises(ParameterError, match="SMT"):
        cs.choose_cpus("smt-siblings", mask=[0, 1], siblings=[[0], [1]])
    assert cs.choose_cpus("smt-siblings", mask=[0, 1, 2, 3],
                          siblings=[[0, 2], [1, 3]]) == (0, 2)
    assert cs.choose_cpus("cross-cpu", mask=[0, 1, 2, 3],
                          siblings=[[0, 1], [2, 3]]) == (0, 2)


def test_runs_measure_only_and_write_no_claim_rows() -> None:
    pinned = cs.run("pipe", "same-cpu", "threads", 1000, 100, baselines=False)
    assert "claims" not in pinned.summary  # the claims layer judges (threadcost.claims)
    assert pinned.summary["switch_ns"]["p50"] > 0


def test_sweep_combines_configurations() -> None:
    combined, each = cs.sweep(["pipe", "futex"], ["same-cpu", "unpinned"], ["threads"],
                              300, 30, baseline_scale=0.02, progress=False)
    assert len(each) == 4
    configs = combined.tables["configs"]
    assert len(configs) == 4
    assert set(combined.tables["quantiles"].mechanism) == {"pipe", "futex"}
    assert {"self_hop_pipe", "self_hop_futex", "empty_syscall"} <= set(
        combined.tables["baselines"].baseline)


def test_working_set_sweep_reports_c13_and_c14() -> None:
    r = cs.working_set_sweep([0, 64], ["threads", "processes"], iterations=300,
                             seconds_per_point=0.05, progress=False)
    points = r.tables["points"]
    assert len(points) == 4
    assert set(points.tasks) == {"threads", "processes"}
    # what C13 and C14 read (threadcost.findings.cpu_bound): round trips and system time
    assert (points.round_trip_p50_ns > 0).all()
    assert (points.sys_ns_per_round_trip >= 0).all()


def test_the_sizing_probe_is_cut_where_touching_the_working_set_is_slow() -> None:
    from threadcost.experiments.context_switch import run as module

    full, least = module.PROBE_ROUND_TRIPS, module.MIN_PROBE_ROUND_TRIPS
    assert module.probe_round_trips(0.0) == full  # no working set: the full probe
    assert module.probe_round_trips(1_000.0) == full
    # two touches per round trip: about PROBE_S of touching, never under the floor
    per_probe_s = module.PROBE_S
    cut = module.probe_round_trips(per_probe_s * 1e9 / 2 / 20)
    assert least < cut < full
    assert module.probe_round_trips(1e9) == least


def test_echo_rates() -> None:
    r = echo.run(["same-cpu", "unpinned"], 2000, 16, 2)
    places = r.summary["placements"]
    assert set(places) == {"same-cpu", "unpinned"}
    for d in places.values():
        assert d["rate_per_s"]["n"] == 2 and d["rate_per_s"]["min"] > 0
        assert 1.5 <= d["switches_per_iteration"] <= 4
    assert len(r.tables["repeats"]) == 4


@pytest.mark.parametrize("kwargs, name", [
    ({"placements": []}, "placements"),
    ({"placements": "nowhere"}, "placements"),
    ({"iterations": 0}, "iterations"),
    ({"repeats": 0}, "repeats"),
    ({"message_bytes": 4097}, "message_bytes"),
])
def test_echo_refuses_bad_parameters(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        echo.run(**kwargs)
    assert info.value.name == name


def test_perf_missing_is_said_not_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cs.shutil, "which", lambda name: None)
    r = cs.perf_cross_check(rounds=1, iterations=500)
    assert r.summary["perf_available"] is False
    assert "not installed" in r.summary["reason"]


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed")
def test_perf_cross_check_alternates() -> None:
    r = cs.perf_cross_check(rounds=2, iterations=2000)
    if not r.summary["perf_available"]:
        pytest.skip(r.summary["reason"])
    assert len(r.tables["rounds"]) == 4
    assert r.summary["ratio_ours_over_perf"] > 0


def test_timing_check_compares_stamped_and_bare_runs() -> None:
    r = cs.timing_check(rounds=1, iterations=1000)
    assert set(r.tables["rounds"].per_sample) == {True, False}
    assert r.summary["ratio"] > 0


# ------------------------------------------------------------------- CLI

def test_cli_switch_json_shape() -> None:
    code, data, _ = cli_json("switch", "--mechanism", "futex", "--iterations", "1000",
                             "--warmup", "100", "--processes")
    assert code == 0
    for key in ("round_trip_ns", "switch_ns"):
        assert set(data[key]) == {"min", "p50", "p90", "p99", "p999", "max", "mean", "n"}
    assert data["switches_per_round_trip"] > 0
    assert set(data["baselines"]) >= {"timer", "empty_syscall", "lock_unlock", "self_hop"}
    assert len(data["cpus_seen"]) == 1
    assert data["params"]["tasks"] == "processes"
    assert data["limit_hit"] is None


def test_cli_echo_json() -> None:
    code, data, _ = cli_json("echo", "--iterations", "1000", "--repeats", "1")
    assert code == 0
    assert set(data["placements"]) == {"same-cpu", "unpinned"}


@pytest.mark.parametrize("args, word", [
    (["switch", "--iterations", "0"], "iterations"),
    (["switch", "--mechanism", "semaphore"], "mechanism"),
    (["switch", "--working-set-kib", "999999999999"], "MemAvailable"),
    (["echo", "--placement", "moon"], "placements"),
])
def test_cli_bad_input_exits_2_with_one_line(args: list[str], word: str) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_cli_cross_cpu_with_one_cpu_allowed_exits_2() -> None:
    one = min(os.sched_getaffinity(0))
    code = (f"import os, sys, runpy; os.sched_setaffinity(0, {{{one}}}); "
            "sys.argv = ['threadcost', 'switch', '--placement', 'cross-cpu']; "
            "runpy.run_module('threadcost', run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "two usable CPUs" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_median_interval_brackets_the_median() -> None:
    import numpy as np

    x = np.random.default_rng(1).lognormal(size=1001)
    lo, hi = cs.median_ci95(x)
    assert lo <= float(np.median(x)) <= hi
    assert lo > x.min() and hi < x.max()


def test_targets_table_names_each_target() -> None:
    head = cs.run("pipe", "same-cpu", "threads", 1000, 100, baseline_scale=0.05)
    table = cs.targets(head)
    assert len(table) == 2
    assert set(table.columns) == {"target", "measured", "met"}
    lo, hi = head.summary["switch_ns_p50_ci95"]
    assert lo <= head.summary["switch_ns"]["p50"] <= hi


def test_cli_limit_exits_3_and_names_it() -> None:
    code = ("import resource, sys\n"
            "import threadcost.cli as cli\n"
            "from threadcost.experiments import context_switch\n"
            "vsz = next(int(l.split()[1]) for l in open('/proc/self/status') "
            "if l.startswith('VmSize'))\n"
            "cap = (vsz + 200 * 1024) * 1024\n"
            "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
            "sys.exit(cli.main(['switch', '--working-set-kib', '524288', '--iterations', '100',"
            " '--no-baselines', '--json']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 3, proc.stderr
    assert "system limit reached: memory" in proc.stderr
    assert '"limit_hit": {' in proc.stdout
