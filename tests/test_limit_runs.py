"""Over-limit runs always answer, name the limit, and leave the machine its reserve.

Two kinds of stop, both exit 3 with the partial result:
- the limit itself (``--exhaust``): pthread_create fails with EAGAIN and the
  run names the limit from the errno and the readings at the failure;
- the reserve (the default): the run stops short of a shared limit and names
  the limit the reserve protects (:mod:`threadcost.runsafety.syslimits`).

The task limit is a cgroup's pids.max (tests/pids_cgroup.py), never the
machine's kernel.pid_max, which is shared with everyone on it. The reserve
arithmetic for kernel.pid_max is checked with a small pid_max injected into it.
A pair of back-to-back runs is part of the suite; 20 in a row is the repeat
test (``pytest -m repeat``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.pids_cgroup import join, pids_cgroup, tasks_in, wait_empty
from threadcost import LimitReached, ParameterError
from threadcost.runsafety import syslimits
from threadcost.runsafety.isolate import run_isolated

LIMIT_RUN_DEADLINE_S = 30  # what a limit run may take, whatever ran before it
PIDS_MAX = 300
THREADS = 400  # more than the cgroup allows
REPEATS = 20


# ----------------------------------------------------------- the reserve itself

def test_reserve_is_the_larger_of_512_and_two_percent() -> None:
    assert syslimits.task_reserve(32_768) == 656
    assert syslimits.task_reserve(4_096) == 512
    assert syslimits.task_reserve(4_194_304) == 83_887
    assert syslimits.memory_reserve_kib(4 << 20) == 512 << 10  # 4 GiB: the 512 MiB floor
    assert syslimits.memory_reserve_kib(64 << 20) == 3_355_444  # 64 GiB: 5%, rounded up


def test_budget_stops_short_of_a_small_pid_max() -> None:
    b = syslimits.thread_budget(34, pid_max=4_096, threads_max=10**6, tasks_now=1_000,
                              cgroup=(None, None), mem_available_kib=64 << 20,
                              mem_total_kib=64 << 20)
    assert b.protects == "kernel.pid_max"
    assert b.allowed == 4_096 - 512 - 1_000
    assert b.caps(10_000) and not b.caps(100)


def test_budget_names_the_tightest_reserve() -> None:
    common = {"pid_max": 32_768, "tasks_now": 100, "mem_total_kib": 8 << 20}
    mem = syslimits.thread_budget(1024, threads_max=10**6, cgroup=(None, None),
                                mem_available_kib=(512 << 10) + 100 * 1024, **common)
    assert (mem.protects, mem.allowed) == ("MemAvailable", 100)
    tmax = syslimits.thread_budget(34, threads_max=2_000, cgroup=(None, None),
                                 mem_available_kib=8 << 20, **common)
    assert (tmax.protects, tmax.allowed) == ("kernel.threads-max", 2_000 - 512 - 100)
    cg = syslimits.thread_budget(34, threads_max=10**6, cgroup=(300, 20),
                               mem_available_kib=8 << 20, **common)
    assert (cg.protects, cg.allowed) == ("cgroup pids.max", 300 - 16 - 20)


def test_a_full_machine_allows_nothing_not_a_negative_count() -> None:
    b = syslimits.thread_budget(34, pid_max=1_000, threads_max=10**6, tasks_now=900,
                              cgroup=(None, None), mem_available_kib=8 << 20,
                              mem_total_kib=8 << 20)
    assert b.allowed == 0


def _measure_with_small_pid_max(headroom: int, threads: int) -> Any:
    """In a child: this machine with kernel.pid_max just ``headroom`` ids above
    its reserve; then one measurement asking for ``threads`` threads."""
    from threadcost.experiments.thread_memory import run as thread_memory
    from threadcost.host import sysinfo

    real_sysctl = sysinfo.sysctl
    tasks = 1_000

    def sysctl(name: str) -> int | None:
        if name == "kernel.pid_max":
            return tasks + syslimits.task_reserve(4_096) + headroom
        return real_sysctl(name)

    sysinfo.sysctl = sysctl  # type: ignore[assignment]
    sysinfo.system_threads = lambda: tasks  # type: ignore[assignment]
    try:
        return thread_memory.measure_point(threads, 64, 0, None, None)
    except LimitReached as exc:
        return exc


def test_a_default_run_stops_at_the_pid_reserve_and_names_it() -> None:
    point = run_isolated(_measure_with_small_pid_max, {"headroom": 40, "threads": 200},
                         timeout=LIMIT_RUN_DEADLINE_S)
    assert point["started"] == 40
    hit = point["limit_hit"]
    assert hit["limit"] == "reserve kept below kernel.pid_max"
    assert hit["protects"] == "kernel.pid_max" and hit["reserve"] == 512
    assert hit["threads_started"] == 40 and hit["threads_requested"] == 200
    assert point["threads_after"] <= point["threads_before"]


def test_no_room_above_the_reserve_raises_the_limit_with_nothing_started() -> None:
    exc = run_isolated(_measure_with_small_pid_max, {"headroom": -5, "threads": 10},
                       timeout=LIMIT_RUN_DEADLINE_S)
    assert isinstance(exc, LimitReached)
    assert exc.limit == "reserve kept below kernel.pid_max"


def test_exhaust_must_be_a_flag() -> None:
    from threadcost.experiments.thread_memory import limits
    from threadcost.experiments.thread_memory import run as thread_memory

    with pytest.raises(ParameterError) as info:
        thread_memory.run(thread_counts=[2], repeats=1, exhaust="yes")
    assert info.value.name == "exhaust"
    with pytest.raises(ParameterError):
        limits.spawn_until_failure(max_threads=2, exhaust=1)


# --------------------------------------------- over-limit runs in a pids cgroup

@pytest.fixture
def small_cgroup(request: pytest.FixtureRequest) -> Iterator[Path]:
    try:
        with pids_cgroup(PIDS_MAX, request.node.name[:24].replace("[", "-")
                         .replace("]", "")) as group:
            try:
                yield group
            finally:
                _kill_leftovers(group)
    except OSError as exc:
        pytest.skip(f"no cgroup with a pids.max here: {exc}")


def _kill_leftovers(group: Path) -> None:
    """Processes a failed test left in its own cgroup (all started by it)."""
    for pid in (group / "cgroup.procs").read_text().split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def limit_run(group: Path, exhaust: bool) -> tuple[subprocess.CompletedProcess[str], float]:
    """``threadcost memory --threads 400`` in ``group``; (process, seconds)."""
    args = [sys.executable, "-m", "threadcost", "memory", "--threads", str(THREADS),
            "--stack-kib", "64", "--repeats", "1", "--json"]
    started = time.monotonic()
    try:
        proc = subprocess.run([*args, *(["--exhaust"] if exhaust else [])],
                              capture_output=True, text=True, timeout=LIMIT_RUN_DEADLINE_S,
                              stdin=subprocess.DEVNULL, cwd=REPO, env=os.environ.copy(),
                              preexec_fn=join(group), check=False)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"a limit run (exhaust={exhaust}) gave no answer within "
                             f"{LIMIT_RUN_DEADLINE_S} s; stderr: {exc.stderr!r}") from None
    return proc, time.monotonic() - started


def check_limit_run(proc: subprocess.CompletedProcess[str], seconds: float,
                    exhaust: bool) -> dict[str, Any]:
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    assert seconds < LIMIT_RUN_DEADLINE_S
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    hit = data["limit_hit"]
    if exhaust:
        assert hit["limit"] == "cgroup pids.max", hit
        assert hit["errno_name"] == "EAGAIN"
    else:
        assert hit["limit"] == "reserve kept below cgroup pids.max", hit
        assert data["threads_started"] <= PIDS_MAX - syslimits.CGROUP_TASK_RESERVE_MIN
    assert hit["limit"] in proc.stderr
    assert 0 < data["threads_started"] < THREADS
    assert data["threads_left_behind"] == 0
    return data


def back_to_back(group: Path, runs: int) -> list[float]:
    """``runs`` limit runs, each started the moment the previous one answered,
    alternating --exhaust and the default reserve."""
    times = []
    for i in range(runs):
        exhaust = i % 2 == 0
        proc, seconds = limit_run(group, exhaust)
        check_limit_run(proc, seconds, exhaust)
        times.append(seconds)
    left = wait_empty(group)
    assert left == 0, f"{left} tasks still in the cgroup after the last run"
    return times


def test_a_back_to_back_pair_of_limit_runs_answers(small_cgroup: Path) -> None:
    times = back_to_back(small_cgroup, 2)
    print(f"pair of limit runs: {', '.join(f'{t:.1f} s' for t in times)}")


def test_a_default_run_leaves_its_cgroup_the_reserve(small_cgroup: Path) -> None:
    proc, seconds = limit_run(small_cgroup, exhaust=False)
    data = check_limit_run(proc, seconds, exhaust=False)
    assert "protects" in data["limit_hit"] or "reserve" in data["limit_hit"]["limit"]
    assert tasks_in(small_cgroup) <= PIDS_MAX


@pytest.mark.repeat
@pytest.mark.timeout(REPEATS * LIMIT_RUN_DEADLINE_S + 120)
def test_twenty_back_to_back_limit_runs_answer(small_cgroup: Path) -> None:
    times = back_to_back(small_cgroup, REPEATS)
    print(f"{REPEATS} limit runs: max {max(times):.1f} s, "
          f"all: {', '.join(f'{t:.1f}' for t in times)}")


def _spawn_with_small_pid_max(headroom: int) -> Any:
    """In a child: the bounded spawn with kernel.pid_max just above its reserve
    (isolation inlined: a daemonic child cannot start another)."""
    from threadcost.experiments.thread_memory import limits
    from threadcost.host import sysinfo
    from threadcost.runsafety import isolate

    tasks = 1_000
    real_sysctl = sysinfo.sysctl

    def sysctl(name: str) -> int | None:
        return tasks + 512 + headroom if name == "kernel.pid_max" else real_sysctl(name)

    sysinfo.sysctl = sysctl  # type: ignore[assignment]
    sysinfo.system_threads = lambda: tasks  # type: ignore[assignment]
    with isolate.inline():
        return limits.spawn_until_failure(max_threads=200, stack_kib=64)


def test_the_bounded_spawn_keeps_the_reserve_and_names_it() -> None:
    result = run_isolated(_spawn_with_small_pid_max, {"headroom": 30},
                          timeout=LIMIT_RUN_DEADLINE_S)
    assert result.summary["started"] == 30
    assert result.limit_hit["limit"] == "reserve kept below kernel.pid_max"


def test_a_refusal_counted_by_the_pids_cgroup_names_it() -> None:
    from threadcost.experiments.thread_memory import limits

    probe = {"maps": 10, "system_threads": 200, "vsz_kib": 1, "threads": 5,
             "cgroup_refused": 1}
    hit = limits.explain_failure(11, probe, 64 << 10, 4096)
    assert hit["limit"] == "cgroup pids.max" and "pids.events" in hit["detail"]
    del probe["cgroup_refused"]
    assert limits.explain_failure(12, probe, 64 << 10, 4096)["limit"].startswith("memory")


@pytest.mark.parametrize("err, word", [
    (24, "RLIMIT_NOFILE"),  # EMFILE
    (23, "fs.file-max"),    # ENFILE
    (12, "memory"),         # ENOMEM
    (11, "EAGAIN"),         # a task limit: none at its edge on this machine now
])
def test_each_errno_names_its_limit(err: int, word: str) -> None:
    from threadcost.experiments.thread_memory import limits

    assert word in limits.name_from_errno(err, "threads")


def _open_files_until_refused(limit: int) -> str:
    """In a child with RLIMIT_NOFILE lowered to ``limit``: a context switch run
    needing pipes past it names the limit."""
    import resource

    from threadcost.experiments.context_switch import run as context_switch

    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    held = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    for fd in held[-1:]:
        os.close(fd)  # one left: not enough for a pipe pair
    try:
        r = context_switch.run("pipe", "unpinned", "threads", 100, 10, baselines=False)
        return str((r.limit_hit or {}).get("limit"))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        for fd in held[:-1]:
            os.close(fd)


def test_an_open_file_limit_is_named_from_its_errno() -> None:
    text = run_isolated(_open_files_until_refused, {"limit": 64}, timeout=60)
    assert "RLIMIT_NOFILE" in text, text
