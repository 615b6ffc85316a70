"""The limits explorer, the bounded spawn, and the memory/limits CLIs from outside."""

from __future__ import annotations

import resource

import pytest

from tests.conftest import cli_json, run_cli
from threadcost import ParameterError
from threadcost.experiments.thread_memory import limits
from threadcost.host import sysinfo
from threadcost.runsafety.isolate import run_isolated

NAMED = {"kernel.threads-max", "kernel.pid_max", "vm.max_map_count", "RLIMIT_AS",
         "RLIMIT_NPROC", "RLIMIT_STACK", "cgroup pids.max", "memory cgroup", "MemAvailable"}


def test_every_limit_is_listed_and_the_binding_one_allows_the_fewest() -> None:
    r = limits.run()
    rows = r.summary["limits"]
    assert {row["limit"] for row in rows} >= NAMED
    for row in rows:
        assert set(row) >= {"limit", "value", "unit", "threads_allowed", "applies", "note"}
    binding = r.summary["binding"]
    assert binding is not None
    capped = [row["threads_allowed"] for row in rows
              if row["applies"] and row["threads_allowed"] is not None]
    assert binding["threads_allowed"] == min(capped)
    assert r.summary["max_threads"] == binding["threads_allowed"]  # what C08 reads


def test_rlimit_nproc_says_when_it_does_not_apply() -> None:
    row = next(r for r in limits.run().summary["limits"] if r["limit"] == "RLIMIT_NPROC")
    if sysinfo.is_root():
        assert row["applies"] is False
        assert "not enforced" in row["note"]


def _rows_under_small_address_space(headroom_mib: int) -> list[dict]:
    vsz = int(sysinfo.read_text("/proc/self/status").split("VmSize:")[1].split()[0])
    cap = (vsz + headroom_mib * 1024) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    return limits.limit_rows(stack_kib=1024)


def test_a_lowered_rlimit_as_binds_first() -> None:
    rows = run_isolated(_rows_under_small_address_space, {"headroom_mib": 64})
    row = next(r for r in rows if r["limit"] == "RLIMIT_AS")
    assert row["applies"] is True
    assert 0 < row["threads_allowed"] <= 64
    assert limits.binding_limit(rows)["limit"] == "RLIMIT_AS"


def test_explain_failure_names_the_limit_from_the_probe() -> None:
    mmax = sysinfo.sysctl("vm.max_map_count")
    pmax = sysinfo.sysctl("kernel.pid_max")
    if mmax is None or pmax is None:
        pytest.skip("sysctls not readable here")
    full_maps = {"maps": mmax, "system_threads": 10, "vsz_kib": 1, "threads": 5}
    assert limits.explain_failure(11, full_maps, 8 << 20, 4096)["limit"] == "vm.max_map_count"
    full_pids = {"maps": 10, "system_threads": pmax - 1, "vsz_kib": 1, "threads": 5}
    hit = limits.explain_failure(11, full_pids, 8 << 20, 4096)
    assert hit["limit"] in ("kernel.pid_max", "kernel.threads-max")
    assert hit["errno_name"] == "EAGAIN"


def test_sysctl_advice_for_a_million_threads() -> None:
    advice = limits.sysctl_advice(1_000_000).set_index("setting")
    assert advice.loc["vm.max_map_count", "needed"] > 2_000_000
    for key in ("kernel.threads-max", "kernel.pid_max", "vm.max_map_count"):
        row = advice.loc[key]
        assert bool(row["enough"]) == (row["command"] == "")


def test_bounded_spawn_names_the_limit_that_bit() -> None:
    r = limits.spawn_until_failure(max_threads=500, stack_kib=1024, address_space_mib=64)
    assert r.limit_hit is not None and r.limit_hit["limit"] == "RLIMIT_AS"
    assert 0 < r.summary["started"] < 500


def test_bounded_spawn_without_a_limit_does_not_claim_a_maximum() -> None:
    r = limits.spawn_until_failure(max_threads=50, stack_kib=64)
    assert r.limit_hit is None and r.summary["started"] == 50
    assert r.summary["limit_hit"] is None


@pytest.mark.parametrize("kwargs, name", [
    ({"stack_kib": 3}, "stack_kib"),
    ({"target_threads": 0}, "target_threads"),
    ({"per_thread_kib": -1}, "per_thread_kib"),
])
def test_bad_limits_parameters(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        limits.run(**kwargs)
    assert info.value.name == name


def test_spawn_bound_is_enforced() -> None:
    with pytest.raises(ParameterError) as info:
        limits.spawn_until_failure(max_threads=10**7)
    assert info.value.name == "max_threads"


# ----------------------------------------------------------------- the CLI

def test_cli_limits_json() -> None:
    code, data, _ = cli_json("limits")
    assert code == 0
    assert {row["limit"] for row in data["limits"]} >= NAMED
    assert data["binding"]["limit"]


def test_cli_memory_json_shape() -> None:
    code, data, _ = cli_json("memory", "--threads", "50,100,150", "--repeats", "1")
    assert code == 0
    pt = data["per_thread"]
    for key in ("rss_kib", "vsz_kib", "kernel_stack_kib", "page_tables_kib", "slab_kib",
                "kernel_kib"):
        assert key in pt
        assert "r2" in pt["fit"][key]
    assert data["threads_started"] == 150
    assert data["limit_hit"] is None


def test_cli_memory_limit_exits_3_with_the_partial_result() -> None:
    code, data, err = cli_json("memory", "--threads", "2000", "--repeats", "1",
                               "--address-space-mib", "256")
    assert code == 3
    assert data["limit_hit"]["limit"] == "RLIMIT_AS"
    assert 0 < data["threads_started"] < 2000
    assert "RLIMIT_AS" in err


@pytest.mark.parametrize("args, word", [
    (["memory", "--threads", "0"], "thread_counts"),
    (["memory", "--threads", "ten"], "thread_counts"),
    (["memory", "--threads", "10", "--stack-kib", "8"], "stack_kib"),
    (["memory", "--threads", "10", "--stack-kib", "64", "--touch-kib", "60"], "touch_kib"),
    (["memory", "--threads", "90000", "--touch-kib", "4000"], "MemAvailable"),
    (["memory", "--threads", "10", "--pin", "4095"], "pin"),
    (["limits", "--stack-kib", "7"], "stack_kib"),
])
def test_cli_bad_input_exits_2_with_one_line(args: list[str], word: str) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert word in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
