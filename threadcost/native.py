"""Access to the compiled C kernels (``threadcost._kernels``, declared in
``threadcost._native``).

Import ``ffi`` and ``lib`` from here, never from ``_native`` directly. Importing this
module opens nothing: ``ffi`` is the declarations (cffi's ABI mode, no compiler needed),
the integer constants of the headers (``lib.TC_OK``, ``lib.TC_SW_PIPE``) are read from
them, and the shared library is opened at the first kernel call. So every module that
measures imports, and the views draw stored runs, on a machine where the C build is
missing or failed; calling a kernel there raises :class:`KernelsNotBuilt`, one clear
line (an ImportError, and a ThreadcostError the commands report without a traceback).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cffi import FFI

from threadcost import cbuild
from threadcost.errors import ThreadcostError

T = TypeVar("T")

DECLARATIONS = "threadcost._native"  # written by native/build_native.py (no compiler)
MISSING = ("threadcost's C kernels are not built. Run `make setup` (or `make native`) "
           "in the repository, or `pip install -e .` with a C compiler available.")


class KernelsNotBuilt(ImportError, ThreadcostError):
    """A kernel was called, and the kernels' shared library is missing or cannot be
    loaded (the stored runs still draw: nothing else needs it)."""


def _declarations() -> Any:
    """cffi's declarations of the kernels: the generated module, or, before any build
    wrote it (a checkout whose build never ran), the same module generated here from the
    headers' CFFI regions into a temporary file (the headers stay the one definition)."""
    try:
        from threadcost._native import ffi as declarations
    except ImportError:
        if not cbuild.cffi_headers():
            raise KernelsNotBuilt(MISSING) from None
    else:
        return declarations
    builder = FFI()
    builder.cdef(cbuild.cffi_declarations())
    builder.set_source(DECLARATIONS, None)  # ABI mode: a pure Python module
    with tempfile.TemporaryDirectory(prefix="threadcost-declarations-") as folder:
        path = Path(folder) / "_native.py"
        builder.emit_python_code(str(path))
        spec = importlib.util.spec_from_file_location(DECLARATIONS, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    sys.modules.setdefault(DECLARATIONS, module)
    return module.ffi


ffi: Any = _declarations()
_opened: list[Any] = []  # the kernels' library, once a kernel has been called


def _kernels() -> Any:
    """The kernels' shared library that native/build_native.py builds, opened on the
    first call (cffi's ABI mode: no Python headers). Missing or unloadable: a
    :class:`KernelsNotBuilt` naming what to run, again at each call (a build made
    meanwhile, e.g. from a Jupyter kernel's terminal, is then opened)."""
    if _opened:
        return _opened[0]
    try:
        spec = importlib.util.find_spec("threadcost._kernels")
    except ImportError:  # an import hook that refuses it
        spec = None
    if spec is None or not spec.origin:
        raise KernelsNotBuilt(MISSING) from None
    try:
        _opened.append(ffi.dlopen(spec.origin))
    except OSError as exc:  # a damaged or foreign build
        raise KernelsNotBuilt(f"threadcost's C kernels ({spec.origin}) cannot be loaded: "
                              f"{exc}. Run `make native` to build them again.") from exc
    return _opened[0]


def require_kernels() -> None:
    """Open the kernels now: a measuring build calls it before its first notebook, so a
    missing build stops it in one line before anything runs."""
    _kernels()


__all__ = ["STOPPABLE", "KernelsNotBuilt", "ffi", "interruptible", "lib", "proc_status_dict",
           "require_kernels", "run_stoppable"]

# The kernels whose long loops poll the stop flag (tc_stop_requested, at least every
# 100 ms) and end with TC_ESTOPPED after cleaning up as on any other error. Called
# through ``lib``, each runs under :func:`interruptible`, so SIGINT or SIGTERM stops it
# promptly; ``errors.check_status`` turns TC_ESTOPPED into KeyboardInterrupt, the path
# every interrupted command takes (exit 130, one line).
STOPPABLE = frozenset({
    "tc_brigade_run", "tc_cpu_bound_run", "tc_fiber_memory", "tc_fiber_order",
    "tc_fiber_pingpong", "tc_fiber_sigmask_ns", "tc_indirect_run", "tc_launch_burst",
    "tc_launch_plain_loop", "tc_launch_series", "tc_malloc_touch", "tc_memcpy_series",
    "tc_procmem_start", "tc_sleepers_run", "tc_switch_baseline", "tc_switch_pingpong",
    "tc_thread_memory_run", "tc_thread_memory_start", "tc_yardstick_memcpy_cold",
    "tc_yardstick_run", "tc_yieldloop_run",
})


class _Library:
    """The compiled library as callers use it: every name the kernels' library declares,
    with the kernels of :data:`STOPPABLE` run under :func:`interruptible`. An integer
    constant of the headers is read from the declarations, so reading one (also at a
    module's import) opens nothing; a kernel opens the library (:func:`_kernels`)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # introspection (IPython, inspect): no kernel has one
            raise AttributeError(name)
        try:
            return ffi.integer_const(name)
        except (AttributeError, ffi.error):  # not an integer constant: a kernel
            pass
        value = getattr(_kernels(), name)
        if name not in STOPPABLE:
            return value

        def stoppable(*args: Any) -> Any:
            return interruptible(value, *args)

        stoppable.__name__ = name
        return stoppable

    def __dir__(self) -> list[str]:
        with contextlib.suppress(KernelsNotBuilt):
            return dir(_kernels())
        return []


lib: Any = _Library()
_active = 0  # depth of interruptible calls (a kernel called inside one needs no second)


def interruptible(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)``: a C kernel that polls the stop flag, stopped within 100 ms by
    SIGINT or SIGTERM.

    Python's own signal handler runs only once the kernel returns, so the kernel is
    told another way: ``signal.set_wakeup_fd`` points at a pipe (CPython writes a
    byte there from its C-level handler the moment a signal arrives) and the kernel
    polls that pipe. No thread is added and no handler replaced; the interrupt is
    raised as usual when the kernel has cleaned up. Outside the main thread (where
    a wakeup fd cannot be set) it simply calls ``func``."""
    global _active
    if _active or threading.current_thread() is not threading.main_thread():
        return func(*args)
    kernels = _kernels()  # the stop flag's setters (opened already when func is a kernel)
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
    kernels.tc_clear_stop()
    kernels.tc_set_stop_fd(read_fd)
    _active += 1
    try:
        return func(*args)
    finally:
        # The interrupt may be raised at the first step here (Python runs its handler
        # once the kernel is back); the inner block then undoes everything.
        try:
            kernels.tc_set_stop_fd(-1)
        finally:
            _active -= 1
            kernels.tc_set_stop_fd(-1)
            kernels.tc_clear_stop()
            signal.set_wakeup_fd(previous)
            os.close(read_fd)
            os.close(write_fd)


def run_stoppable(args: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(args, capture_output=True)`` for a native helper program (such as
    build/native/launch_driver) that stops its kernel on SIGINT: an interrupt arriving
    here is passed on to it at once, so it ends its loop, reaps what it started and
    exits, and the interrupt is raised here. A timeout kills it (TimeoutExpired)."""
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL) as proc:
        def forward(signum: int, frame: object) -> None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
            raise KeyboardInterrupt

        try:
            previous: Any = signal.signal(signal.SIGINT, forward)
        except ValueError:  # not the main thread: no handler to set
            previous = None
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


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
