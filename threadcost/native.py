"""Access to the compiled C kernels (``threadcost._native``).

Import ``ffi`` and ``lib`` from here, never from ``_native`` directly, so a
missing build gives one clear message instead of an ImportError deep inside.
"""

from __future__ import annotations

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
    """``func(*args)`` (a C kernel that polls the stop flag) in a helper thread, so
    the main thread stays free to take SIGINT/SIGTERM: Python's handler raises here,
    the flag asks the kernel to stop (within 100 ms), and the interrupt goes on once
    the kernel has cleaned up. Outside the main thread it simply calls ``func``."""
    if threading.current_thread() is not threading.main_thread():
        return func(*args)
    lib.tc_clear_stop()
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["value"] = func(*args)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=call, name="threadcost-kernel", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except BaseException:
        lib.tc_request_stop()
        worker.join()
        lib.tc_clear_stop()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


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
