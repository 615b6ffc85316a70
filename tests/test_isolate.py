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
