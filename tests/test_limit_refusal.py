"""A thread count the system cannot hold is answered at once, never spawned.

``threadcost memory --threads 37768`` asks for more threads than kernel.pid_max
(32,768 here) allows: the run is refused before it starts a thread, names the
limit and exits 3, five times back to back, with another job keeping a core
busy. No test here comes near kernel.pid_max: nothing is started for the
refused count (the reserve arithmetic is checked with a pid_max injected).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.conftest import REPO
from threadcost.host import sysinfo
from threadcost.runsafety import syslimits

DEADLINE_S = 30
RUNS = 5


def test_a_count_over_the_pid_reserve_is_refused_before_spawning() -> None:
    common = {"threads_max": 10**6, "tasks_now": 200, "cgroup": (None, None)}
    hit = syslimits.refused_before_spawn(37_768, pid_max=32_768, **common)
    assert hit is not None
    assert hit["limit"] == "reserve kept below kernel.pid_max"
    assert hit["threads_started"] == 0 and hit["threads_requested"] == 37_768
    assert "refused before starting any thread" in hit["detail"]
    assert syslimits.refused_before_spawn(1_000, pid_max=32_768, **common) is None
    # threads-max is system-wide too; a cgroup's pids.max is not (runs stop at its reserve).
    tmax = syslimits.refused_before_spawn(5_000, pid_max=10**6, threads_max=4_000,
                                          tasks_now=200, cgroup=(None, None))
    assert tmax is not None and tmax["protects"] == "kernel.threads-max"
    assert syslimits.refused_before_spawn(5_000, pid_max=10**6, threads_max=10**6,
                                          tasks_now=200, cgroup=(300, 20)) is None


@pytest.fixture
def busy_core() -> Iterator[None]:
    """Another job using one core for the test's whole length (a plain busy loop)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            stdin=subprocess.DEVNULL)
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def test_an_over_pid_max_run_answers_five_times_under_load(busy_core: None) -> None:
    pid_max = sysinfo.sysctl("kernel.pid_max")
    if pid_max is None or pid_max >= 37_768 - syslimits.task_reserve(pid_max):
        pytest.skip(f"kernel.pid_max is {pid_max}: 37,768 threads might fit here")
    args = [sys.executable, "-m", "threadcost", "memory", "--threads", "37768",
            "--stack-kib", "64", "--json"]
    for i in range(RUNS):
        started = time.monotonic()
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=DEADLINE_S,
                                  stdin=subprocess.DEVNULL, cwd=REPO, env=os.environ.copy(),
                                  check=False)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"run {i + 1} of {RUNS} gave no answer within "
                                 f"{DEADLINE_S} s") from None
        seconds = time.monotonic() - started
        assert proc.returncode == 3, (i, proc.returncode, proc.stderr[-2000:])
        assert "kernel.pid_max" in proc.stderr and "refused before starting" in proc.stderr
        assert "Traceback" not in proc.stderr
        assert seconds < DEADLINE_S


def test_a_sweep_keeps_the_counts_that_fit_and_names_the_limit() -> None:
    pid_max = sysinfo.sysctl("kernel.pid_max")
    if pid_max is None or pid_max >= 37_768 - syslimits.task_reserve(pid_max):
        pytest.skip(f"kernel.pid_max is {pid_max}: 37,768 threads might fit here")
    import json

    proc = subprocess.run([sys.executable, "-m", "threadcost", "memory", "--threads",
                           "50,37768", "--stack-kib", "64", "--repeats", "1", "--json"],
                          capture_output=True, text=True, timeout=DEADLINE_S,
                          stdin=subprocess.DEVNULL, cwd=REPO, check=False)
    assert proc.returncode == 3, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["limit_hit"]["limit"] == "reserve kept below kernel.pid_max"
    assert data["max_threads_measured"] == 50
