"""After every experiment's run, this process holds what it held before.

Two ways per experiment, each after one warm-up call (threadcost.runsafety.leakcheck
explains why):
- *inline*: ``threadcost.runsafety.isolate.inline()`` makes the isolated parts run in this
  very process, so a thread, fd or mapping a C kernel forgets shows up here;
- *as shipped*: isolated parts run in their child process; afterwards no child
  is left (running or zombie), and no fd or thread of the pipes and watchers
  stays open.

Sizes are tiny: this checks what is given back, not what is measured. Pinning
and rlimit parameters are left unset, so nothing here changes this process's
affinity or limits (the fixture restores them anyway).
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from threadcost.runsafety import isolate, leakcheck


def _entries() -> list[tuple[str, Callable[[], Any]]]:
    from threadcost.experiments.launch import run as launch
    from threadcost.experiments.malloc_touch import run as malloc_touch
    from threadcost.experiments.thread_memory import limits
    from threadcost.experiments.thread_memory import run as thread_memory
    from threadcost.experiments.user_space_tasks import fibers

    found: list[tuple[str, Callable[[], Any]]] = [
        ("malloc_touch.malloc", lambda: malloc_touch.run(mib=8, allocator="malloc", points=5)),
        ("malloc_touch.mmap", lambda: malloc_touch.run(mib=8, allocator="mmap", points=5)),
        ("launch.all_kinds", lambda: launch.run(
            kinds="thread,fork,vfork,posix_spawn,clone", iterations=8, warmup=2,
            burst_sizes=[4], burst_repeats=1, memcpy_kib=16, baseline=True)),
        ("thread_memory.run", lambda: thread_memory.run(thread_counts=[4, 8], repeats=1)),
        ("thread_memory.stack_grid", lambda: thread_memory.stack_grid(
            stack_sizes_kib=[0, 64], threads=4, repeats=1)),
        ("thread_memory.touch_grid", lambda: thread_memory.touch_grid(
            touch_depths_kib=[0, 16], threads=4, repeats=1)),
        ("limits.run", lambda: limits.run(target_threads=1000)),
        ("limits.spawn_until_failure", lambda: limits.spawn_until_failure(max_threads=8)),
        ("fibers.run", lambda: fibers.run(switch_iterations=100, count=8, warmup=10,
                                          cpu=None, points=3)),
        ("fibers.run_order", lambda: fibers.run_order(nfibers=3, rounds=2)),
    ]
    try:
        from threadcost.experiments.user_space_tasks import sleepers

        found.append(("sleepers.run", lambda: sleepers.run(
            count=4, period_ms=1, duration_ms=5, stagger_ms=1, variants="threads")))
    except ImportError:
        pass
    try:
        from threadcost.experiments.context_switch import run as context_switch

        for mechanism in ("pipe", "condvar", "futex", "eventfd"):
            for tasks in ("threads", "processes"):
                found.append((f"context_switch.{mechanism}.{tasks}",
                               lambda m=mechanism, t=tasks: context_switch.run(
                                   mechanism=m, placement="unpinned", tasks=t,
                                   iterations=100, warmup=10, baselines=True)))
        found.append(("context_switch.watchdog", lambda: _stalled(context_switch)))
    except ImportError:
        pass
    try:
        from threadcost.experiments.user_space_tasks import goroutines as peers

        # the Go program runs as a subprocess (skipped inside when Go is absent)
        found.append(("peers.run", lambda: peers.run(
            iterations=100, warmup=10, memory_count=10, memory_points=3, sleepers_count=0)))
    except ImportError:
        pass
    try:
        from threadcost.experiments.context_switch import echo

        found.append(("echo.run", lambda: echo.run(placements="unpinned", iterations=100,
                                                   repeats=1, warmup=10)))
    except ImportError:
        pass
    return found


def _stalled(context_switch: Any) -> Any:
    """A partner that stops answering: the watchdog ends the run (an error or a
    partial result); either way nothing may stay behind."""
    from threadcost import ThreadcostError

    try:
        return context_switch.run(mechanism="pipe", placement="unpinned", tasks="processes",
                                  iterations=200, warmup=10, baselines=False,
                                  timeout_s=0.5, test_stall_after=50)
    except ThreadcostError as exc:
        return exc


ENTRIES = _entries()


@pytest.fixture(autouse=True)
def _restore_process_state() -> Iterator[None]:
    mask = os.sched_getaffinity(0)
    limit = resource.getrlimit(resource.RLIMIT_AS)
    yield
    os.sched_setaffinity(0, mask)
    resource.setrlimit(resource.RLIMIT_AS, limit)


@pytest.mark.parametrize("call", [c for _, c in ENTRIES], ids=[n for n, _ in ENTRIES])
def test_inline_run_gives_everything_back(call: Callable[[], Any]) -> None:
    with isolate.inline():
        problems = leakcheck.check(call, warmup=1, repeat=2)
    assert not problems, problems


@pytest.mark.parametrize("call", [c for _, c in ENTRIES], ids=[n for n, _ in ENTRIES])
def test_isolated_run_leaves_no_child_fd_or_thread(call: Callable[[], Any]) -> None:
    problems = leakcheck.check(call, warmup=1, repeat=1)
    assert not problems, problems


def test_leakcheck_sees_a_leaked_thread_fd_and_child() -> None:
    """The checker itself: a deliberate leak of each kind is reported."""
    import subprocess
    import threading

    release = threading.Event()
    held: list[Any] = []

    def leak() -> None:
        t = threading.Thread(target=release.wait)
        t.start()
        held.append(t)
        held.append(open(os.devnull))  # noqa: SIM115 - the leak under test
        held.append(subprocess.Popen(["sleep", "30"]))

    before = leakcheck.snapshot()
    leak()
    problems = leakcheck.compare(before, leakcheck.snapshot())
    release.set()
    held[0].join()
    held[1].close()
    held[2].kill()
    held[2].wait()
    text = " ".join(problems)
    assert "threads" in text and "file descriptors" in text and "child processes" in text


def test_leakcheck_sees_a_leaked_mapping() -> None:
    import mmap

    before = leakcheck.snapshot()
    block = mmap.mmap(-1, 64 << 20)
    problems = leakcheck.compare(before, leakcheck.snapshot())
    block.close()
    assert any("mapped memory" in p for p in problems), problems


def test_a_new_malloc_arena_is_not_a_leak_but_other_growth_is() -> None:
    from threadcost.runsafety.leakcheck import ARENA_BYTES, Mapping, Snapshot, compare

    lib = Mapping(0x1000, 0x2000, "r-xp", "/usr/lib/libc.so.6")
    before = Snapshot(threads=1, fds={}, children={}, mappings=(lib,))
    base = 5 * ARENA_BYTES
    arena = (Mapping(base, base + (132 << 10), "rw-p", ""),
             Mapping(base + (132 << 10), base + ARENA_BYTES, "---p", ""))
    assert compare(before, Snapshot(1, {}, {}, (lib, *arena))) == []
    unaligned = Mapping(base + 4096, base + 4096 + ARENA_BYTES, "rw-p", "")
    problems = compare(before, Snapshot(1, {}, {}, (lib, unaligned)))
    assert problems and "mapped memory grew" in problems[0]
