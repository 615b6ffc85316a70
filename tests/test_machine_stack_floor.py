"""The thread stack floor is the machine's, not a constant: sysinfo.thread_stack_min_kib
is what this C library accepts (and one page less is refused), every thread stack size
is validated against it, and the stack-size grid, one list for every machine, leaves out
the sizes below it (the default grid's 16 and 64 KiB on arm64, where glibc's floor is
128 KiB). native/tests/test_thread_memory.c checks that a thread at the floor takes a
signal; `make cross-arm64` runs it under qemu-aarch64, with 2048-bit SVE registers too."""

from __future__ import annotations

import ctypes
import os
import platform
from typing import Any

import pandas as pd
import pytest

from threadcost.errors import ParameterError
from threadcost.experiments.thread_memory import run as thread_memory
from threadcost.host import sysinfo
from threadcost.settings import validate

PTHREAD_ATTR_BYTES = 128  # larger than pthread_attr_t on every Linux ABI (56 or 64 bytes)
EINVAL = 22


def _setstacksize(size: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(PTHREAD_ATTR_BYTES)
    assert libc.pthread_attr_init(attr) == 0
    try:
        return int(libc.pthread_attr_setstacksize(attr, ctypes.c_size_t(size)))
    finally:
        libc.pthread_attr_destroy(attr)


def test_the_floor_is_what_the_c_library_accepts() -> None:
    floor = sysinfo.thread_stack_min_kib() * 1024
    assert floor % sysinfo.PAGE_SIZE == 0
    assert floor >= os.sysconf("SC_THREAD_STACK_MIN")
    assert _setstacksize(floor) == 0
    if platform.libc_ver()[0] == "glibc" and floor - sysinfo.PAGE_SIZE >= sysinfo.PAGE_SIZE:
        assert _setstacksize(floor - sysinfo.PAGE_SIZE) == EINVAL


def test_the_floor_without_sysconf_is_glibcs_per_architecture(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def unknown(name: str) -> int:
        raise ValueError(name)

    real = os.uname()
    for arch, kib in (("aarch64", 128), ("x86_64", 16)):
        fake = os.uname_result((*real[:4], arch))
        with monkeypatch.context() as m:
            m.setattr(os, "sysconf", unknown)
            m.setattr(os, "uname", lambda fake=fake: fake)
            assert sysinfo.thread_stack_min_kib() == max(kib, sysinfo.PAGE_SIZE // 1024)


def test_a_thread_stack_below_the_floor_is_refused_by_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sysinfo, "thread_stack_min_kib", lambda: 128)  # as on arm64
    with pytest.raises(ParameterError) as caught:
        validate.stack_kib("stack_kib", 64)
    message = str(caught.value)
    assert "stack_kib" in message and "64" in message and "at least 128 KiB" in message
    assert "_SC_THREAD_STACK_MIN" in message
    assert validate.stack_kib("stack_kib", 128) == 128
    assert validate.stack_kib("stack_kib", 0) == 0
    # a fiber's stack is the fibers' own mapping: glibc's floor does not apply
    assert validate.stack_kib("stack_kib", 64, allow_default=False) == 64


def test_the_stack_grid_names_the_sizes_below_the_floor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Which sizes reach the measurement (the measurement itself is faked: it starts
    threads in child processes, tests/test_thread_memory.py runs it)."""
    measured: list[list[int]] = []

    def fake_grid(name: str, key: str, values: list[int], *rest: Any,
                  **options: Any) -> tuple[pd.DataFrame, pd.DataFrame, None]:
        measured.append(values)
        return pd.DataFrame(), pd.DataFrame({key: values}), None

    monkeypatch.setattr(thread_memory, "_grid", fake_grid)
    monkeypatch.setattr(sysinfo, "thread_stack_min_kib", lambda: 128)
    with pytest.raises(ParameterError) as caught:
        thread_memory.stack_grid(stack_sizes_kib=[16, 64], threads=2, repeats=1)
    assert "below this machine's smallest thread stack (128 KiB)" in str(caught.value)
    assert not measured
    result = thread_memory.stack_grid(stack_sizes_kib=[16, 64, 128, 0], threads=2, repeats=1)
    assert measured == [[128, 0]]
    assert result.params["stack_sizes_kib"] == [128, 0]
    assert result.summary["below_min_kib"] == [16, 64]
    assert result.summary["thread_stack_min_kib"] == 128
