"""Run a measurement in a child process, so nothing it does can hurt the caller.

Experiments that can exhaust threads, processes or memory call their C kernel
through :func:`run_isolated`. The child is forked from a forkserver that has
already imported threadcost (so it starts in milliseconds, and never inherits
the Jupyter kernel's own threads); it has a deadline, after which it is killed;
a crash (a signal) becomes a :class:`~threadcost.errors.KernelError`. The
caller's process, e.g. a notebook's kernel, survives every outcome.

The function must be importable (a module-level function), and its arguments
and return value picklable. Validate parameters *before* calling this.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from threadcost.errors import KernelError, RunTimeout

_PRELOAD = ["threadcost.native", "threadcost.results", "numpy", "pandas"]
_context: Any = None
_inline_depth = 0


@contextlib.contextmanager
def inline() -> Iterator[None]:
    """For leak tests only: inside this block run_isolated calls the function
    in this very process (no child, no deadline, no rlimits), so
    threadcost.leakcheck can see whatever a kernel leaves behind."""
    global _inline_depth
    _inline_depth += 1
    try:
        yield
    finally:
        _inline_depth -= 1


def _ctx() -> Any:
    global _context
    if _context is None:
        _context = mp.get_context("forkserver")
        _context.set_forkserver_preload(_PRELOAD)
    return _context


def _child(conn: Any, func: Callable[..., Any], kwargs: Mapping[str, Any],
           rlimits: Mapping[int, tuple[int, int]]) -> None:
    import resource

    try:
        for which, value in rlimits.items():
            resource.setrlimit(which, value)
        value = func(**kwargs)
        conn.send(("ok", value))
    except BaseException as exc:
        try:
            conn.send(("error", exc))
        except Exception:  # an exception that does not pickle: send its text
            conn.send(("error", KernelError(getattr(func, "__name__", "child"), 4, 0,
                                            "".join(traceback.format_exception(exc))[-500:])))
    finally:
        conn.close()


def run_isolated(func: Callable[..., Any], kwargs: Mapping[str, Any] | None = None, *,
                 timeout: float = 120.0,
                 rlimits: Mapping[int, tuple[int, int]] | None = None) -> Any:
    """Call ``func(**kwargs)`` in a child process and return its value.

    Exceptions raised in the child are re-raised here. ``rlimits`` maps
    ``resource.RLIMIT_*`` to (soft, hard), applied in the child only (tests use
    RLIMIT_AS to provoke a limit). Raises RunTimeout after ``timeout`` seconds.
    """
    if _inline_depth:
        return func(**dict(kwargs or {}))
    ctx = _ctx()
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(sender, func, dict(kwargs or {}),
                                            dict(rlimits or {})), daemon=True)
    proc.start()
    sender.close()
    try:
        ready = multiprocessing.connection.wait([receiver, proc.sentinel], timeout)
        if receiver in ready:
            try:
                kind, value = receiver.recv()
            except EOFError:
                kind, value = "died", None
        elif ready:
            kind, value = "died", None
        else:
            raise RunTimeout(f"{getattr(func, '__name__', 'run')} did not finish within "
                             f"{timeout:g} s and was stopped")
    finally:
        receiver.close()
        if proc.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
        proc.join(10)
        if proc.exitcode is not None:
            proc.close()
    if kind == "ok":
        return value
    if kind == "error":
        raise value
    raise KernelError(getattr(func, "__name__", "child"), 4, 0,
                      "the measuring child process died before reporting "
                      "(killed by a signal or out of memory)")
