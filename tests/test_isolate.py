"""Isolated runs: values and errors come back, crashes and hangs do not spread."""

from __future__ import annotations

import os
import resource
import signal
import time

import pytest

from threadcost import KernelError, ParameterError
from threadcost.errors import RunTimeout
from threadcost.runsafety.isolate import run_isolated


def add(a: int, b: int) -> int:
    return a + b


def refuse() -> None:
    raise ParameterError("n", -1, "must be >= 1")


def crash() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def hang() -> None:
    time.sleep(60)


def allocate(mib: int) -> int:
    block = bytearray(mib << 20)
    return len(block)


def test_value_comes_back() -> None:
    assert run_isolated(add, {"a": 2, "b": 3}) == 5


def test_errors_come_back_with_their_type_and_fields() -> None:
    with pytest.raises(ParameterError) as info:
        run_isolated(refuse)
    assert info.value.name == "n"


def test_a_crash_becomes_a_kernel_error() -> None:
    with pytest.raises(KernelError, match="died"):
        run_isolated(crash)


def test_a_hang_is_stopped() -> None:
    started = time.monotonic()
    with pytest.raises(RunTimeout):
        run_isolated(hang, timeout=1.0)
    assert time.monotonic() - started < 20


def test_rlimits_apply_in_the_child_only() -> None:
    limit = 2 << 30  # 2 GiB of address space: a Python child fits, 3 GiB does not
    with pytest.raises(MemoryError):
        run_isolated(allocate, {"mib": 3072}, rlimits={resource.RLIMIT_AS: (limit, limit)})
    assert resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY


class _FakeKernel:
    """What ipykernel's kernel offers the hook: ``do_shutdown(restart)``."""

    def __init__(self) -> None:
        self.shutdowns: list[bool] = []

    def do_shutdown(self, restart: bool) -> dict[str, object]:
        self.shutdowns.append(restart)
        return {"status": "ok", "restart": restart}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_kernels_shutdown_stops_and_reaps_the_helper_processes() -> None:
    """ipykernel waits seconds for children that ignore SIGTERM (the resource tracker)
    or that it killed but never reaps (the forkserver): a kernel that measured stops
    both first, and a later run starts them again."""
    from multiprocessing import resource_tracker

    from threadcost.runsafety import isolate

    assert run_isolated(add, {"a": 1, "b": 1}) == 2
    forkserver_pid = isolate._forkserver()._forkserver_pid
    tracker_pid = resource_tracker._resource_tracker._pid
    assert forkserver_pid and tracker_pid and _alive(forkserver_pid) and _alive(tracker_pid)
    kernel = _FakeKernel()
    isolate.stop_helpers_before_shutdown(kernel)
    isolate.stop_helpers_before_shutdown(kernel)  # installed once
    assert kernel.do_shutdown(False) == {"status": "ok", "restart": False}
    assert kernel.shutdowns == [False]
    # reaped, not zombies: the pids are gone (a zombie still answers kill(pid, 0))
    assert not _alive(forkserver_pid) and not _alive(tracker_pid)
    assert isolate._forkserver()._forkserver_pid is None
    assert run_isolated(add, {"a": 2, "b": 2}) == 4


def test_a_run_in_flight_keeps_its_forkserver_at_shutdown() -> None:
    from threadcost.runsafety import isolate

    assert run_isolated(add, {"a": 1, "b": 1}) == 2
    forkserver_pid = isolate._forkserver()._forkserver_pid
    child = isolate._ctx().Process(target=time.sleep, args=(1.0,), daemon=True)
    child.start()
    try:
        isolate.stop_helper_processes()
        assert isolate._forkserver()._forkserver_pid == forkserver_pid
        assert _alive(forkserver_pid)
    finally:
        child.join(10)
