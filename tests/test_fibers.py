"""C fibers through the API and the CLI: order, switch samples, memory per fiber."""

from __future__ import annotations

import platform

import pytest

from tests.conftest import cli_json, run_cli
from threadcost import ParameterError
from threadcost.experiments.user_space_tasks import fibers
from threadcost.host import sysinfo

IMPLS = ["asm", "ucontext"]
PAGE_KIB = sysinfo.PAGE_SIZE // 1024
CPU = sysinfo.affinity()[0]


@pytest.mark.parametrize("impl", IMPLS)
def test_fibers_run_to_completion_in_round_robin_order(impl: str) -> None:
    out = fibers.run_order(nfibers=4, rounds=5, impl=impl)
    assert out["finished"] == 4
    # step s of every fiber before step s+1 of any; each step number was kept on
    # the fiber's own stack across its switches, so this also shows the stacks survive
    assert out["trace"] == [(f, s) for s in range(5) for f in range(4)]


@pytest.mark.parametrize("impl", IMPLS)
def test_switch_samples_and_pinning(impl: str) -> None:
    r = fibers.run(switch_iterations=3000, warmup=100, count=20, touch_kib=0, impl=impl,
                   cpu=CPU, points=3)
    s = r.summary
    assert s["round_trip_ns"]["n"] == 3000
    assert len(r.tables["round_trips"]) == 3000
    assert 0 < s["round_trip_ns"]["min"] <= s["round_trip_ns"]["p50"] <= s["round_trip_ns"]["max"]
    assert s["batch_round_trip_ns"] > 0
    assert s["cpu_before_after"] == [CPU, CPU]  # pinned with sched_setaffinity, checked
    assert "claims" not in s  # experiments measure; threadcost.claims judges
    assert r.limit_hit is None


def test_asm_is_the_hand_written_switch_on_x86_64() -> None:
    assert fibers.asm_is_native() == (platform.machine() == "x86_64")


@pytest.mark.parametrize("impl", IMPLS)
def test_memory_per_fiber_follows_the_touch_depth(impl: str) -> None:
    stack = 64
    touches = [0, 16, 32]
    r = fibers.run(switch_iterations=10, warmup=0, count=300, stack_kib=stack,
                   touch_kib=touches, impl=impl, points=6)
    rows = r.summary["per_fiber_by_touch"]
    assert [row["touch_kib"] for row in rows] == touches
    for row in rows:
        assert row["fibers"] == 300
        # at least the pages written; at most those plus a page of frames, the
        # fiber record (~1 KiB) and a share of page tables, with slack for noise
        assert row["touch_kib"] <= row["rss_kib"] <= row["touch_kib"] + 3 * PAGE_KIB
        # virtual: the whole stack and its guard page, touched or not
        assert abs(row["vsz_kib"] - (stack + PAGE_KIB)) <= 1
    rss = [row["rss_kib"] for row in rows]
    assert rss == sorted(rss)
    creation = r.tables["creation"]
    assert len(creation) == 300 * len(touches)
    assert (creation.create_ns > 0).all() and (creation.start_ns > 0).all()


@pytest.mark.parametrize("kwargs, name", [
    ({"switch_iterations": 0}, "switch_iterations"),
    ({"switch_iterations": "many"}, "switch_iterations"),
    ({"count": 0}, "count"),
    ({"count": 10**9}, "count"),
    ({"stack_kib": 8}, "stack_kib"),
    ({"stack_kib": 0}, "stack_kib"),
    ({"stack_kib": 66}, "stack_kib"),
    ({"stack_kib": 64, "touch_kib": 64}, "touch_kib"),
    ({"stack_kib": 64, "touch_kib": [0, 60]}, "touch_kib"),
    ({"touch_kib": -4}, "touch_kib"),
    ({"impl": "setjmp"}, "impl"),
    ({"cpu": 4096}, "cpu"),
    ({"cpu": [0, 1]}, "cpu"),
    ({"warmup": -1}, "warmup"),
])
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        fibers.run(**kwargs)
    assert info.value.name == name


def test_cli_json_shape() -> None:
    code, data, _ = cli_json("fibers", "--switch-iterations", "2000", "--count", "50",
                             "--touch-kib", "8", "--impl", "asm")
    assert code == 0
    assert set(data["round_trip_ns"]) >= {"min", "p50", "p90", "p99", "max"}
    assert data["per_fiber"]["touch_kib"] == 8
    assert set(data["per_fiber"]) >= {"rss_kib", "vsz_kib", "rss_ci95", "rss_r2"}
    assert data["params"]["impl"] == "asm"


@pytest.mark.parametrize("args, word", [
    (["--touch-kib", "64", "--stack-kib", "64"], "touch_kib"),
    (["--stack-kib", "4"], "stack_kib"),
])
def test_cli_bad_input_exits_2_with_one_line(args: list[str], word: str) -> None:
    proc = run_cli("fibers", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0]
    assert "Traceback" not in proc.stderr
