"""Exhausted resources: a limit returns the partial result and names the limit.

The machine's real limits (pid_max, threads-max) are shared with everyone on
it, and RLIMIT_NPROC is not enforced for root, so the limits are provoked in a
child process: a lowered RLIMIT_AS (thread stacks and buffers no longer fit),
and a cgroup pids.max where this machine lets us make one. Each test checks
the partial result, the named limit, that the caller survives, and that no
thread or process is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from threadcost import LimitReached, Result
from threadcost.runsafety import isolate
from threadcost.runsafety.isolate import run_isolated

HEADROOM_MIB = 96  # address space the child may add: a dozen 8 MiB stacks


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _native_threads() -> int:
    """Threads Python did not start (the kernels' pthreads, OpenBLAS's pool):
    Python's own helpers such as tqdm's monitor do not count."""
    import threading

    return _threads() - threading.active_count()


def under_address_limit(module: str, func: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Runs in an isolated child: cap RLIMIT_AS at what the child already uses
    plus HEADROOM_MIB, run the experiment with its own isolation inlined (a
    daemonic child cannot start another), and report what happened."""
    import importlib

    # Load everything the run imports lazily *before* the cap: scipy's bundled
    # OpenBLAS hangs in its initialisation when its buffers do not fit.
    for name in ("scipy.stats", "scipy.linalg", "threadcost.stats", "tqdm.auto"):
        importlib.import_module(name)
    entry = getattr(importlib.import_module(module), func)
    threads_before = _native_threads()
    cap = _vm_size_bytes() + (HEADROOM_MIB << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    outcome: dict[str, Any] = {}
    try:
        with isolate.inline():
            value = entry(**kwargs)
        outcome["result"] = value
    except LimitReached as exc:
        outcome["limit_reached"] = exc
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2)
    outcome["threads_before"] = threads_before
    outcome["threads_after"] = _native_threads()
    return outcome


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def _limited(module: str, func: str, **kwargs: Any) -> tuple[Result | None, dict[str, Any]]:
    out = run_isolated(under_address_limit, {"module": module, "func": func,
                                             "kwargs": kwargs}, timeout=120)
    assert out["threads_after"] == out["threads_before"], "threads left behind"
    if "limit_reached" in out:
        exc = out["limit_reached"]
        assert exc.limit, exc
        return exc.partial, {"limit": exc.limit}
    result = out["result"]
    assert isinstance(result, Result)
    assert result.limit_hit, f"no limit reported: {result.summary}"
    assert result.limit_hit.get("limit")
    return result, result.limit_hit


def test_malloc_touch_reports_refused_memory() -> None:
    result, hit = _limited("threadcost.experiments.malloc_touch.run", "run", mib=1024, points=3)
    assert "memory" in hit["limit"]
    assert hit["errno"] == 12  # ENOMEM
    assert result is not None and result.summary["touched_mib"] == 0


def test_thread_memory_reports_partial_thread_count() -> None:
    result, _ = _limited("threadcost.experiments.thread_memory.run", "run",
                           thread_counts=[400], stack_kib=8192, repeats=1)
    assert result is not None
    started = result.summary["threads_started"]
    assert 0 <= started < 400
    assert result.summary["threads_left_behind"] == 0


def test_thread_memory_own_address_space_cap() -> None:
    """The experiment's own RLIMIT_AS parameter, through its own isolation."""
    from threadcost.experiments.thread_memory import run as thread_memory

    result = thread_memory.run(thread_counts=[400], stack_kib=8192, repeats=1,
                               address_space_mib=64)
    assert result.limit_hit and result.limit_hit["limit"]
    assert 0 <= result.summary["threads_started"] < 400
    assert result.summary["threads_left_behind"] == 0
    assert resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY


def test_launch_burst_reports_the_limit() -> None:
    _, hit = _limited("threadcost.experiments.launch.run", "run", kinds="thread",
                           iterations=4, warmup=0, stack_kib=8192, burst_sizes=[400],
                           burst_repeats=1, memcpy_kib=0, baseline=False)
    assert hit["limit"]


def test_fibers_report_refused_stacks() -> None:
    _, hit = _limited("threadcost.experiments.user_space_tasks.fibers", "run", switch_iterations=10,
                           count=4000, stack_kib=64, touch_kib=0, warmup=0, cpu=None,
                           points=3)
    assert "fiber" in hit["limit"] or "map" in hit["limit"]


def test_sleepers_report_the_limit() -> None:
    pytest.importorskip("threadcost.experiments.user_space_tasks.sleepers")
    _, hit = _limited("threadcost.experiments.user_space_tasks.sleepers", "run", count=400,
                           period_ms=1, duration_ms=2, stagger_ms=0, stack_kib=8192,
                           variants="threads")
    assert hit["limit"]


def test_a_crashing_or_hanging_run_leaves_the_caller_alive() -> None:
    """What the notebook kernel sees when a child is killed by the OOM killer or
    hangs: an error it can catch, and this process unharmed."""
    from threadcost import KernelError
    from threadcost.errors import RunTimeout

    with pytest.raises(KernelError):
        run_isolated(os.abort)
    with pytest.raises(RunTimeout):
        run_isolated(sleep, {"seconds": 30}, timeout=0.5)
    assert _threads() >= 1


# ---------------------------------------------------------------- cgroup pids.max

def _pids_cgroup_root() -> tuple[Path | None, str]:
    """A writable pids controller (cgroup v1, or v2 with pids delegated)."""
    if os.geteuid() != 0:
        return None, "not root: cannot make a cgroup"
    v1 = Path("/sys/fs/cgroup/pids")
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1, ""
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.subtree_control"
    if controllers.exists() and "pids" in controllers.read_text().split() \
            and os.access(v2, os.W_OK):
        return v2, ""
    return None, ("no writable cgroup pids controller here (neither /sys/fs/cgroup/pids "
                  "nor a cgroup v2 root with pids in cgroup.subtree_control)")


@pytest.fixture
def pids_cgroup() -> Iterator[Path]:
    root, why = _pids_cgroup_root()
    if root is None:
        pytest.skip(why)
    group = root / f"threadcost-test-{os.getpid()}"
    try:
        group.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot create a cgroup under {root}: {exc}")
    if not (group / "pids.max").exists():
        group.rmdir()
        pytest.skip(f"{group} has no pids.max")
    try:
        yield group
    finally:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.2)


def _join_cgroup(group: Path) -> Callable[[], None]:
    def join() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))
    return join


def test_thread_limit_from_a_pids_cgroup(pids_cgroup: Path) -> None:
    """`threadcost memory --threads 300` in a cgroup capped at 80 tasks: exits 3,
    names the limit, prints the partial result, and every task is gone after."""
    (pids_cgroup / "pids.max").write_text("80")
    proc = subprocess.run(
        [sys.executable, "-m", "threadcost", "memory", "--threads", "300", "--json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=REPO,
        preexec_fn=_join_cgroup(pids_cgroup), check=False)
    assert proc.returncode == 3, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    assert "limit" in proc.stderr.lower()
    data = json.loads(proc.stdout)
    assert data["limit_hit"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        left = int((pids_cgroup / "pids.current").read_text())
        if left == 0:
            break
        time.sleep(0.2)
    assert left == 0, f"{left} tasks still in the cgroup after the CLI exited"
