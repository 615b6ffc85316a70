"""Access to the compiled C kernels (``threadcost._native``).

Import ``ffi`` and ``lib`` from here, never from ``_native`` directly, so a
missing build gives one clear message instead of an ImportError deep inside.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

try:
    from threadcost._native import ffi, lib
except ImportError as exc:  # pragma: no cover - exercised only without a build
    raise ImportError(
        "threadcost's C kernels are not built. Run `make setup` (or `make native`) "
        "in the repository, or `pip install -e .` with a C compiler available."
    ) from exc

__all__ = ["ffi", "interruptible", "lib", "proc_status_dict"]


def interruptible(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)``: a C kernel that polls the stop flag, stopped within 100 ms by
    SIGINT or SIGTERM.

    Python's own signal handler runs only once the kernel returns, so the kernel is
    told another way: ``signal.set_wakeup_fd`` points at a pipe (CPython writes a
    byte there from its C-level handler the moment a signal arrives) and the kernel
    polls that pipe. No thread is added and no handler replaced; the interrupt is
    raised as usual when the kernel has cleaned up. Outside the main thread (where
    a wakeup fd cannot be set) it simply calls ``func``."""
    if threading.current_thread() is not threading.main_thread():
        return func(*args)
    try:
        read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:  # no descriptors left (EMFILE/ENFILE): the kernel names that limit
        return func(*args)
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):  # no wakeup fd here: run without one
        os.close(read_fd)
        os.close(write_fd)
        return func(*args)
    lib.tc_clear_stop()
    lib.tc_set_stop_fd(read_fd)
    try:
        return func(*args)
    finally:
        # The interrupt may be raised at the first step here (Python runs its handler
        # once the kernel is back); the inner block then undoes everything.
        try:
            lib.tc_set_stop_fd(-1)
        finally:
            lib.tc_set_stop_fd(-1)
            lib.tc_clear_stop()
            signal.set_wakeup_fd(previous)
            os.close(read_fd)
            os.close(write_fd)


def proc_status_dict(s: Any) -> dict[str, int]:
    """A tc_proc_status as a plain dict with the units in the key names."""
    return {
        "vsz_kib": int(s.vsz_kib),
        "rss_kib": int(s.rss_kib),
        "rss_anon_kib": int(s.rss_anon_kib),
        "pte_kib": int(s.pte_kib),
        "stk_kib": int(s.stk_kib),
        "threads": int(s.threads),
    }
