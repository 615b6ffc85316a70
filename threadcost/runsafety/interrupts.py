"""Stopping a build (``make paper``, ``threadcost paper``) on Ctrl-C or SIGTERM.

A build runs notebooks in kernels (their own sessions: a terminal's Ctrl-C never
reaches them), in worker processes, and measurements in children of the kernels. An
interrupt unwinding through all of that took seconds and printed tracebacks from
several processes (papermill's, a kernel's ZMQ loop's). Here the build's main process
owns the stop, from the signal handler itself:

1. every process below it (kernels, workers, isolated measurements: the whole tree,
   whatever session it is in) is killed at once with SIGKILL, so none prints a word;
2. what the build was writing is removed: ``<out>.partial/``, the kernels' socket
   folder, and the hidden ``.<run>.partial`` folder of a run a killed kernel was saving
   (:func:`threadcost.store.datastore.remove_stale_partials` knows a dead writer's);
3. one line goes to stderr and the process leaves at once with 130 (SIGINT) or 143
   (SIGTERM), without unwinding (no traceback, no wait on a kernel that is gone).

The previous paper is never touched: it is replaced only by two renames at the very end,
which run with interrupts held back (:func:`held`). Worker processes are started with
SIGINT ignored (:func:`ignore_in_children`), so a Ctrl-C that reaches the whole process
group is answered by the main process alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
# How long the stop may spend killing the process tree (a fork racing the kill is
# caught by the next sweep); the whole stop stays well under two seconds.
KILL_SWEEP_S = 0.6

_state: dict[str, Any] = {"prog": None, "remove": [], "sweep": [], "held": 0, "pending": None}


def exit_code(signum: int) -> int:
    return EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED


@contextlib.contextmanager
def guard(prog: str, note: str = "") -> Iterator[None]:
    """While inside, SIGINT and SIGTERM stop the build as the module says, printing
    ``<prog>: interrupted<note>``. Nested guards keep the outer one's name. Outside the
    main thread (no handler can be set there) nothing changes."""
    if _state["prog"] is not None:
        yield
        return
    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, _handler)
    except ValueError:  # not the main thread
        yield
        return
    _state.update(prog=prog, note=note, remove=[], sweep=[], held=0, pending=None)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _state.update(prog=None, remove=[], sweep=[])


def install(prog: str, note: str = "") -> None:
    """:func:`guard` for the rest of the process (a command's entry point, from its
    first import on); a later guard inside keeps this one's name."""
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _handler)
    except ValueError:  # not the main thread
        return
    _state.update(prog=prog, note=note, remove=[], sweep=[], held=0, pending=None)


def remove_on_stop(path: Path) -> None:
    """A folder the build is writing, removed if it is stopped."""
    _state["remove"].append(Path(path))


def sweep_on_stop(cleanup: Callable[[], Any]) -> None:
    """A cleanup to run after the processes are killed (errors are ignored)."""
    _state["sweep"].append(cleanup)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """An interrupt arriving inside is acted on when the block is done (for the renames
    that put a finished paper in place: the old one or the new one, never neither)."""
    _state["held"] += 1
    try:
        yield
    finally:
        _state["held"] -= 1
        pending = _state["pending"]
        if not _state["held"] and pending is not None:  # what was held has completed
            _state["note"] = "; the paper was complete and is in place"
            stop(pending)


def _handler(signum: int, frame: object) -> None:
    if _state["held"]:
        _state["pending"] = signum
        return
    stop(signum)


def stop(signum: int) -> None:
    """Kill the tree below this process, remove what the build was writing, print one
    line and leave with 130 or 143. Never returns."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_IGN)
    with contextlib.suppress(BaseException):
        kill_tree()
    with contextlib.suppress(BaseException):
        _unlink_semaphores()
    for path in _state["remove"]:
        with contextlib.suppress(BaseException):
            _remove(path)
    for cleanup in _state["sweep"]:
        with contextlib.suppress(BaseException):
            cleanup()
    what = "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"
    # on a line of its own (a progress bar may have left the cursor mid-line)
    line = f"\n{_state['prog'] or 'threadcost'}: {what}{_state.get('note', '')}\n"
    with contextlib.suppress(OSError):
        os.write(2, line.encode())
    os._exit(exit_code(signum))


def _unlink_semaphores() -> None:
    """The named semaphores of this process's worker pools (``/dev/shm/sem.mp-*``): the
    process that would have unlinked them at exit (multiprocessing's resource tracker)
    was killed with the rest, and this one leaves without its finalizers."""
    sync = sys.modules.get("multiprocessing.synchronize")
    if sync is None:
        return
    import _multiprocessing
    import gc

    for obj in gc.get_objects():
        if isinstance(obj, sync.SemLock):
            name = getattr(obj._semlock, "name", None)
            if name:
                with contextlib.suppress(OSError):
                    _multiprocessing.sem_unlink(name)


def _remove(path: Path) -> None:
    """Rename first (one step: a thread still writing into the old name then fails,
    or recreates a folder the next build removes), then delete."""
    if not path.exists():
        return
    gone = path.with_name(f".{path.name}.{os.getpid()}.stopped")
    try:
        os.rename(path, gone)
    except OSError:
        gone = path
    shutil.rmtree(gone, ignore_errors=True)


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (children, their children ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                text = fh.read()
            parents[int(entry.name)] = int(text.rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def kill_tree(within_s: float = KILL_SWEEP_S) -> None:
    """SIGKILL every process below this one, in sweeps until none is left alive, for at
    most ``within_s``. A process forked while a sweep ran (a kernel starting in its own
    session) is found by the next: this process is made the subreaper of its tree first,
    so the orphan of a killed parent comes to it instead of to init, out of sight."""
    me = os.getpid()
    _become_subreaper()
    deadline = time.monotonic() + within_s
    groups: set[int] = set()  # kernels lead sessions of their own: whole groups go too
    while True:
        below = {pid for pid in descendants(me) if _alive(pid)}
        if not below:
            return
        for pid in below:
            with contextlib.suppress(OSError):
                if os.getpgid(pid) == pid and pid != os.getpgrp():
                    groups.add(pid)
        for group in groups:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)
        # reap this process's children (its own, and orphans it adopted) so they leave /proc
        with contextlib.suppress(ChildProcessError, OSError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass


PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def _become_subreaper() -> None:
    """prctl(PR_SET_CHILD_SUBREAPER): best effort (the next sweeps still run without)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def ignore_in_children() -> None:
    """Worker initializer: SIGINT ignored (the build's main process answers it), and
    unblocked again (:func:`spawning` blocked it while the worker started)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """SIGINT blocked while worker processes are started (they inherit the mask, so a
    Ctrl-C during their start cannot raise in them before :func:`ignore_in_children`
    runs); one that arrived meanwhile is delivered here when the block ends."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
