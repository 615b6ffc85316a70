"""Go peers (built and run when Go is present, skipped cleanly when PATH hides it)
and the sleepers workload (C threads unpinned and pinned, goroutines)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_json, run_cli
from threadcost import ParameterError
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.experiments.user_space_tasks import sleepers
from threadcost.host import sysinfo

CPU = sysinfo.affinity()[0]
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed")


def path_without_go() -> str:
    """This PATH minus every directory that holds a `go` command."""
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "go").exists()]
    return os.pathsep.join(keep)


# ------------------------------------------------------------------ Go absent

def test_without_go_peers_are_skipped_with_the_reason(monkeypatch) -> None:
    monkeypatch.setenv("PATH", path_without_go())
    r = peers.run(iterations=10, memory_count=10, sleepers_count=0)
    assert "not installed" in r.summary["skipped"]


def test_without_go_the_cli_exits_0_with_skipped(monkeypatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + path_without_go())
    code, data, err = cli_json("peers")
    assert code == 0, err
    assert "not installed" in data["skipped"]


def test_without_go_sleepers_report_goroutines_not_run(monkeypatch) -> None:
    monkeypatch.setenv("PATH", path_without_go())
    r = sleepers.run(count=20, period_ms=10, duration_ms=30, stagger_ms=5,
                     variants=["threads", "goroutines"], repeats=2)
    assert "not installed" in r.summary["variants"]["goroutines"]["not_run"]
    assert r.summary["variants"]["threads"]["rss_growth_kib"] > 0
    rows = r.tables["repeats"]
    gone = rows[rows.variant == "goroutines"]
    assert len(gone) == 2 and gone.not_run.str.contains("not installed").all()


# ----------------------------------------------------------------- Go present

@needs_go
def test_the_peer_program_builds_and_prints_json() -> None:
    binary = peers.ensure_built()
    assert os.access(binary, os.X_OK)
    proc = subprocess.run([str(binary), "memory", "-count", "100", "-points", "3"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [p["goroutines"] for p in data["points"]] == [0, 50, 100]


@needs_go
def test_peers_rows_when_go_is_present() -> None:
    r = peers.run(iterations=2000, warmup=100, cpu=CPU, memory_count=2000, memory_points=5,
                  sleepers_count=100, period_ms=10, duration_ms=50, stagger_ms=5)
    s = r.summary
    assert s["skipped"] is None
    pinned = s["channel_pingpong"]
    assert pinned["gomaxprocs"] == 1
    assert pinned["affinity"] == [CPU]  # the whole Go process was pinned
    for key in ("channel_pingpong", "channel_pingpong_default"):
        d = s[key]["round_trip_ns"]
        assert d["n"] == 2000 and 0 < d["min"] <= d["p50"] <= d["max"]
    mem = s["goroutine_memory"]
    # an idle goroutine starts with a 2 KiB stack: between 1 and 16 KiB resident
    assert 1 <= mem["per_goroutine_rss_kib"] <= 16
    assert s["sleepers"]["wakeups"] == 100 * 5
    # the program's page tables (VmPTE): before the goroutines, and the largest reading
    assert 0 < s["sleepers"]["page_tables_before_kib"] <= s["sleepers"]["peak_page_tables_kib"]


@needs_go
def test_peers_cli_json() -> None:
    code, data, err = cli_json("peers", "--iterations", "1000", "--memory-count", "500",
                               "--sleepers-count", "50", "--duration-ms", "30")
    assert code == 0, err
    assert set(data["channel_pingpong"]["round_trip_ns"]) >= {"min", "p50", "p99", "max"}
    assert "goroutine_memory" in data and "sleepers" in data


@pytest.mark.parametrize("args, word", [
    (["--iterations", "0"], "iterations"),
    (["--period-ms", "10", "--duration-ms", "5"], "duration_ms"),
])
def test_peers_bad_input_exits_2(args: list[str], word: str) -> None:
    proc = run_cli("peers", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0]


@pytest.mark.parametrize("kwargs, name", [
    ({"cpu": None}, "cpu"),
    ({"cpu": 4096}, "cpu"),
    ({"memory_count": "lots"}, "memory_count"),
    ({"memory_count": 2}, "memory_count"),
    ({"warmup": -1}, "warmup"),
    ({"sleepers_count": -1}, "sleepers_count"),
])
def test_peers_bad_parameters(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        peers.run(**kwargs)
    assert info.value.name == name


# ------------------------------------------------------------------- sleepers

def test_sleepers_repeats_interleave_the_variants() -> None:
    """One row per (repeat, variant), the order reversed from one repeat to the next;
    the summary and the variants table hold each variant's mean over its repeats."""
    r = sleepers.run(count=20, period_ms=5, duration_ms=10, stagger_ms=2, repeats=3,
                     variants=["threads", "threads_pinned"])
    t = r.tables["repeats"]
    assert list(t.repeat) == [0, 0, 1, 1, 2, 2]
    assert list(t.variant) == ["threads", "threads_pinned", "threads_pinned", "threads",
                               "threads", "threads_pinned"]
    assert (t.wakeups == 20 * 2).all() and t.not_run.isna().all()
    assert {"cpu_busy", "saturated", "user_us_per_wakeup", "sys_us_per_wakeup"} <= set(t)
    assert r.params["repeats"] == 3 and r.summary["repeats"] == 3
    for variant, row in r.summary["variants"].items():
        runs = t[t.variant == variant]
        assert row["repeats"] == 3
        assert row["cpu_s"] == pytest.approx(runs.cpu_s.mean())
        assert row["peak_rss_kib"] == pytest.approx(runs.peak_rss_kib.mean())
        assert row["saturated"] == bool(runs.saturated.any())
    assert list(r.tables["variants"].variant) == ["threads", "threads_pinned"]
    # the C kernel reports no page tables (the peers do: C16 reads the Rust threads')
    assert t.page_tables_per_task_kib.isna().all()
    assert all(row["page_tables_per_task_kib"] is None for row in r.summary["variants"].values())


@pytest.mark.parametrize("value, says", [
    (0, "from 1 to 100"), (101, "from 1 to 100"), (1.5, "without a decimal point"),
    ("two", "ASCII digits"), (True, "not a boolean"), (None, "must be an integer"),
])
def test_sleepers_refuse_a_bad_repeats_naming_it(value: object, says: str) -> None:
    with pytest.raises(ParameterError) as info:
        sleepers.run(count=5, period_ms=1, duration_ms=2, variants="threads", repeats=value)
    assert info.value.name == "repeats"
    assert repr(value) in str(info.value) and says in str(info.value)


def test_c_thread_sleepers_unpinned_and_pinned() -> None:
    count, period, duration = 200, 10, 100
    r = sleepers.run(count=count, period_ms=period, duration_ms=duration, stagger_ms=20,
                     variants=["threads", "threads_pinned"])
    assert r.limit_hit is None
    stack_kib = (sysinfo.rlimit("STACK")[0] or 8 << 20) // 1024
    for variant in ("threads", "threads_pinned"):
        row = r.summary["variants"][variant]
        assert row["tasks"] == count
        assert row["wakeups"] == count * (duration // period)
        assert row["peak_os_threads"] >= count + 1
        # each thread wrote at least one page of its stack, far less than the stack
        assert 2 <= row["rss_per_task_kib"] <= 256
        # and reserved its whole stack (default: RLIMIT_STACK) in address space
        assert row["vsz_per_task_kib"] >= 0.9 * min(stack_kib, 8192)
        assert row["user_s"] >= 0 and row["sys_s"] >= 0
    table = r.tables["variants"]
    assert list(table.variant) == ["threads", "threads_pinned"]
    assert {"rss_growth_kib", "cpu_s"} <= set(table.columns)  # what C15 and C17 read


def test_a_refused_thread_is_a_partial_result_naming_the_limit() -> None:
    # 300 threads with 8 MiB stacks need 2.4 GiB of address space; allow 256 MiB
    r = sleepers.run(count=300, period_ms=10, duration_ms=20, stagger_ms=0, stack_kib=8192,
                     variants=["threads"], address_space_mib=256)
    assert r.limit_hit is not None
    assert "thread creation refused" in r.limit_hit["limit"]
    row = r.summary["variants"]["threads"]
    assert 0 < row["tasks"] < 300
    assert row["wakeups"] == row["tasks"] * 2  # the threads that did start ran to the end


@pytest.mark.parametrize("kwargs, name", [
    ({"count": 0}, "count"),
    ({"count": 10**7}, "count"),
    ({"period_ms": 0}, "period_ms"),
    ({"period_ms": 10, "duration_ms": 5}, "duration_ms"),
    ({"stagger_ms": -1}, "stagger_ms"),
    ({"variants": ["fibers"]}, "variants"),
    ({"variants": []}, "variants"),
    ({"stack_kib": 3}, "stack_kib"),
    ({"address_space_mib": 1}, "address_space_mib"),
])
def test_sleepers_bad_parameters(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        sleepers.run(**kwargs)
    assert info.value.name == name
