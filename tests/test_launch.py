"""The launch experiment through the API, the C kernel and the CLI: invariants only.

No timing thresholds: only orderings that follow from how each time is taken
(e.g. the child's first instruction comes after the create call started), the
memory the parent was asked to hold, counts, and that nothing is left behind.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import cli_json, run_cli
from threadcost import ParameterError
from threadcost.experiments.launch import run as launch
from threadcost.host import sysinfo
from threadcost.native import ffi, lib
from threadcost.runsafety import leakcheck

ALL_KINDS = list(launch.KINDS)
ITER = 30
SLACK_KIB = 2 * 1024  # the driver's own memory may move by a page or two


@pytest.fixture(scope="module")
def every_kind() -> launch.Result:  # type: ignore[name-defined]
    return launch.run(kinds=ALL_KINDS, iterations=ITER, warmup=3, parent_touch_mib=[0, 4],
                      burst_sizes=[5, 10, 20], burst_repeats=1, memcpy_kib=64)


def test_every_series_has_all_its_samples(every_kind) -> None:
    series = every_kind.summary["series"]
    assert {(e["kind"], e["parent_touch_mib"]) for e in series} == {
        (k, m) for k in ALL_KINDS for m in (0, 4)}
    for e in series:
        assert e["n"] == ITER
        assert e["lifecycle_ns"]["n"] == ITER
    assert every_kind.limit_hit is None


def test_distributions_are_positive_and_ordered(every_kind) -> None:
    for e in every_kind.summary["series"]:
        for metric in launch.METRICS:
            d = e[metric]
            assert d["min"] <= d["p50"] <= d["p90"] <= d["p99"] <= d["max"], (e["kind"], metric)
            assert d["min"] <= d["mean"] <= d["max"]
        assert e["create_ns"]["min"] > 0
        assert e["lifecycle_ns"]["min"] > 0


def test_first_run_happens_after_create_starts_and_before_join_returns(every_kind) -> None:
    s = every_kind.tables["samples"]
    steady = s[s.phase == "steady"]
    assert not steady.first_run_ns.isna().any()  # every child stamped its first instruction
    assert (steady.first_run_ns > 0).all()
    assert (steady.first_run_ns <= steady.lifecycle_ns).all()


def test_lifecycle_is_create_plus_join(every_kind) -> None:
    s = every_kind.tables["samples"]
    assert (s.lifecycle_ns == s.create_ns + s.join_ns).all()
    assert (s.join_ns >= 0).all()


def test_vfork_and_clone_return_only_after_the_child_ran(every_kind) -> None:
    """CLONE_VFORK suspends the parent until the child exits: its first
    instruction is inside the create call."""
    s = every_kind.tables["samples"]
    shared = s[s.kind.isin(["vfork", "clone"])]
    assert (shared.first_run_ns <= shared.create_ns).all()


def test_parent_holds_and_reports_the_memory_it_touched(every_kind) -> None:
    for e in every_kind.summary["series"]:
        assert e["touched_kib"] == e["parent_touch_mib"] * 1024
        assert abs(e["rss_growth_kib"] - e["parent_touch_mib"] * 1024) <= SLACK_KIB


def test_warmup_launches_are_kept_apart(every_kind) -> None:
    s = every_kind.tables["samples"]
    for (kind, mib), group in s.groupby(["kind", "parent_touch_mib"]):
        assert (group.phase == "first").sum() == 3, (kind, mib)
        assert (group.phase == "steady").sum() == ITER


def test_burst_keeps_all_threads_alive_at_once(every_kind) -> None:
    b = every_kind.tables["burst"]
    assert list(b.n) == [5, 10, 20]
    assert (b.created == b.n).all()
    assert (b.threads_alive >= b.n + 1).all()  # the burst plus the main thread
    creates = every_kind.tables["burst_creates"]
    assert (creates.groupby("n").size() == [5, 10, 20]).all()
    assert (creates.create_ns > 0).all()
    fit = every_kind.summary["burst_fit"]["create_total_ns"]
    assert fit["n"] == 3 and 0 <= fit["r2"] <= 1


def test_baseline_timer_and_memcpy_are_reported(every_kind) -> None:
    s = every_kind.summary
    assert s["timer_overhead_ns"] > 0
    assert s["baseline"]["iterations"] == ITER and s["baseline"]["mean_ns"] > 0
    assert s["memcpy"]["bytes"] == 64 * 1024 and s["memcpy"]["ns"]["min"] > 0


def test_runs_write_no_claim_rows_but_keep_what_c09_reads(every_kind) -> None:
    assert "claims" not in every_kind.summary  # threadcost.claims judges C09
    dist = every_kind.tables["distributions"]
    steady = dist[(dist.metric == "create_ns") & (dist.phase == "steady")]
    assert {"thread", "fork"} <= set(steady.kind)
    assert (steady.p50 > 0).all()


def test_single_series_has_top_level_distributions() -> None:
    r = launch.run(kinds="fork", iterations=5, warmup=0, parent_touch_mib=2, memcpy_kib=0)
    for metric in launch.METRICS:
        assert set(r.summary[metric]) >= {"min", "p50", "p90", "p99", "max", "mean", "n"}
        assert r.summary[metric]["n"] == 5


def test_python_parent_runs_the_same_kernel_in_process() -> None:
    r = launch.run(kinds="thread,fork", iterations=5, warmup=1, memcpy_kib=0,
                   parent="python")
    for e in r.summary["series"]:
        assert e["n"] == 5
        assert "Python" in e["parent"]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_kernel_leaves_no_thread_child_or_fd_behind(kind: str) -> None:
    """Called in this very process: afterwards the same threads, children and fds."""
    spawn, _ = launch.spawn_target()
    path = ffi.new("char[]", spawn.encode())

    def once() -> None:
        first = ffi.new("tc_launch_sample[]", 1)
        samples = ffi.new("tc_launch_sample[]", 10)
        out = ffi.new("tc_launch_result *")
        status = lib.tc_launch_series(launch.KINDS[kind], 10, 1, 0, 1024, 0, path,
                                      first, samples, out)
        assert status == lib.TC_OK, (status, out.err)
        assert out.done == 10 and out.warmup_done == 1

    assert leakcheck.check(once, warmup=1, repeat=2) == []


def test_burst_kernel_leaves_nothing_behind() -> None:
    def once() -> None:
        create = ffi.new("int64_t[]", 50)
        out = ffi.new("tc_burst_result *")
        assert lib.tc_launch_burst(50, 64, create, out) == lib.TC_OK
        assert out.created == 50

    assert leakcheck.check(once, warmup=1, repeat=2) == []


def test_address_space_limit_stops_a_burst_with_a_partial_result() -> None:
    """RLIMIT_AS (root ignores RLIMIT_NPROC): 8 MiB stacks run out of address
    space long before 500 threads; the run reports how far it got."""
    with open("/proc/self/status") as fh:
        vsz_kib = next(int(line.split()[1]) for line in fh if line.startswith("VmSize"))
    cap = (vsz_kib + 256 * 1024) * 1024
    r = launch.run(kinds="thread", iterations=5, warmup=0, burst_sizes=[500], burst_repeats=1,
                   memcpy_kib=0, baseline=False,
                   rlimits={resource.RLIMIT_AS: (cap, cap)})
    assert r.limit_hit is not None
    assert r.limit_hit["errno"] in (11, 12)  # EAGAIN or ENOMEM
    b = r.tables["burst"]
    assert 0 <= b.created.iloc[0] < 500
    assert r.limit_hit["created"] == b.created.iloc[0]


@pytest.mark.parametrize("kwargs, name", [
    ({"iterations": 0}, "iterations"),
    ({"iterations": -3}, "iterations"),
    ({"iterations": "many"}, "iterations"),
    ({"iterations": 10**7}, "iterations"),
    ({"stack_kib": 3}, "stack_kib"),
    ({"stack_kib": 17}, "stack_kib"),
    ({"kinds": "teleport"}, "kinds"),
    ({"kinds": ["thread", "spoon"]}, "kinds"),
    ({"kinds": []}, "kinds"),
    ({"parent_touch_mib": -1}, "parent_touch_mib"),
    ({"parent_touch_mib": 10**6}, "parent_touch_mib"),
    ({"pin": "4095"}, "pin"),
    ({"pin": "zero"}, "pin"),
    ({"burst_sizes": [10**5]}, "burst_sizes"),
    ({"burst_sizes": [0]}, "burst_sizes"),
    ({"warmup": -1}, "warmup"),
    ({"pause_us": 10**9}, "pause_us"),
    ({"memcpy_kib": -1}, "memcpy_kib"),
    ({"baseline": "yes"}, "baseline"),
    ({"parent": "kernel"}, "parent"),
])
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        launch.run(**kwargs)
    assert info.value.name == name
    assert name in str(info.value)


def test_parent_memory_beyond_memavailable_names_memavailable() -> None:
    too_much = sysinfo.mem_available_kib() // 1024 + 1024
    with pytest.raises(ParameterError, match="MemAvailable"):
        launch.check_params(parent_touch_mib=too_much)


# ---------------------------------------------------------------- the CLI

def test_cli_json_has_the_four_distributions() -> None:
    code, data, _ = cli_json("launch", "--iterations", "20", "--kind", "vfork",
                             "--parent-touch-mib", "2", "--memcpy-kib", "0", "--pin", "0")
    assert code == 0
    for metric in ("lifecycle_ns", "create_ns", "first_run_ns", "join_ns"):
        assert set(data[metric]) >= {"min", "p50", "p90", "p99", "max", "mean", "n"}
        assert data[metric]["n"] == 20
    assert data["params"]["kinds"] == ["vfork"]
    assert data["limit_hit"] is None


@pytest.mark.parametrize("args, word", [
    (["--iterations", "10", "--kind", "teleport"], "kinds"),
    (["--iterations", "10", "--parent-touch-mib", "1000000"], "MemAvailable"),
])
def test_cli_bad_input_exits_2_in_one_line(args: list[str], word: str) -> None:
    proc = run_cli("launch", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_cli_limit_exits_3_with_the_partial_result() -> None:
    """The whole CLI under a 2.5 GB address-space cap: Python runs, a burst of
    1,000 default (8 MiB) stacks cannot."""
    cap = 2_500_000_000

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    proc = subprocess.run([sys.executable, "-m", "threadcost", "launch", "--iterations", "5",
                           "--burst", "1000", "--burst-repeats", "1", "--json"],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit,
                          env=os.environ.copy(), stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 3, proc.stderr[-1000:]
    data = json.loads(proc.stdout)
    assert data["limit_hit"]["errno"] in (11, 12)
    assert 0 <= data["burst"][0]["created"] < 1000
    assert "limit" in proc.stderr


def test_no_zombie_after_runs() -> None:
    before = set(leakcheck.snapshot().children)  # e.g. playwright's driver, from other tests
    launch.run(kinds="fork,posix_spawn", iterations=5, warmup=1, memcpy_kib=0)
    kids = {pid: v for pid, v in leakcheck.snapshot().children.items() if pid not in before}
    assert all("forkserver" in v or "python" in v for v in kids.values()), kids
    assert np.all([os.path.exists(f"/proc/{pid}") for pid in kids])
