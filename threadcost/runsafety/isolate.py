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

import atexit
import contextlib
import errno
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from threadcost.errors import KernelError, LimitReached, RunTimeout
from threadcost.runsafety import syslimits

# What every isolated child imports anyway, imported once by the forkserver: a child
# forked from it then only imports its experiment's own module (a few ms). Without the
# last two (the settings, parameters, peers' registry and host modules every experiment
# module imports) each child spent about 40 ms importing them, in every one of the
# paper's ~500 isolated runs (brigade's 2-task runs: 60 ms instead of 25).
_PRELOAD = ["threadcost.runsafety.forkserver_init", "threadcost.native", "threadcost.results",
            "numpy", "pandas", "threadcost.runsafety.isolate",
            "threadcost.experiments.user_space_tasks.goroutines",
            "threadcost.runsafety.forkserver_ready"]  # last: says the imports are done
_context: Any = None
_inline_depth = 0


@contextlib.contextmanager
def inline() -> Iterator[None]:
    """For leak tests only: inside this block run_isolated calls the function
    in this very process (no child, no deadline, no rlimits), so
    threadcost.runsafety.leakcheck can see whatever a kernel leaves behind."""
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


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[list[int]]:
    """SIGINT and SIGTERM noted, not raised, while a child is being started (bounded by
    START_WAIT_S): an interrupt landing inside multiprocessing's start-up (the
    forkserver's handshake, its locks) left a half-started forkserver that printed a
    traceback, or a child nobody reaped. Once the child exists and the handlers are
    back, :func:`_raise_noted` delivers the first one noted to the handler that was in
    place. A signal that was ignored stays ignored. Outside the main thread (no handler
    can be set there) nothing is deferred."""
    noted: list[int] = []
    previous: dict[int, Any] = {}

    def note(signum: int, frame: object) -> None:
        if previous.get(signum) != signal.SIG_IGN:
            noted.append(signum)

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, note)
    except ValueError:  # not the main thread
        pass
    try:
        yield noted
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _child(conn: Any, func: Callable[..., Any], kwargs: Mapping[str, Any],
           rlimits: Mapping[int, tuple[int, int]]) -> None:
    import resource

    # The forkserver starts its children ignoring SIGINT (threadcost.runsafety.forkserver_init):
    # from here on an interrupt passed on to this child reaches its kernel's stop flag.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    try:
        # one sent meanwhile (blocked, pending: threadcost.runsafety.forkserver_init) raises here
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        for which, value in rlimits.items():
            resource.setrlimit(which, value)
        value = func(**kwargs)
        conn.send(("ok", value))
    except BaseException as exc:
        try:
            conn.send(("error", exc))
        except OSError:  # the parent is gone (interrupted too): no one to tell, quietly
            pass
        except Exception:  # an exception that does not pickle: send its text
            with contextlib.suppress(OSError):
                conn.send(("error", KernelError(
                    getattr(func, "__name__", "child"), 4, 0,
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

    Every wait is bounded: for an earlier child to be reaped (REAP_WAIT_S), for
    the forkserver to start this one (START_WAIT_S), for the answer
    (``timeout``), and for this child to be reaped (EXIT_GRACE_S, then SIGKILL
    and REAP_WAIT_S). The call returns only once the child and all its threads
    are gone, so the next run starts on a machine with its tasks back.
    """
    if _inline_depth:
        return func(**dict(kwargs or {}))
    name = getattr(func, "__name__", "run")
    _wait_for_earlier_children(name)
    wait_forkserver_ready(name)  # before interrupts are deferred: a long wait stays stoppable
    ctx = _ctx()
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(sender, func, dict(kwargs or {}),
                                            dict(rlimits or {})), daemon=True)
    try:
        with _interrupts_deferred() as noted:
            _start(proc, name)
    except BaseException:
        receiver.close()
        sender.close()
        raise
    sender.close()
    grace = EXIT_GRACE_S  # a child that answered exits by itself; a stuck one is killed
    try:
        if noted:  # an interrupt came while the child was being started
            _raise_noted(noted[0], proc)
        ready = multiprocessing.connection.wait([receiver, proc.sentinel], timeout)
        if receiver in ready:
            try:
                kind, value = receiver.recv()
            except EOFError:
                kind, value = "died", None
        elif ready:
            kind, value = "died", None
        else:
            grace = 0.0
            raise RunTimeout(f"{name} did not finish within {timeout:g} s and was stopped")
    except KeyboardInterrupt:
        # Interrupted (SIGINT or SIGTERM here): tell the child, whose kernel polls its
        # stop flag, cleans up (threads joined, children reaped) and returns; it is then
        # reaped below within the grace period.
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGINT)
        raise
    finally:
        receiver.close()
        _reap(proc, grace)
    if kind == "ok":
        return value
    if kind == "error":
        raise value
    raise KernelError(name, 4, 0, "the measuring child process died before reporting "
                                  "(killed by a signal or out of memory)")


def _raise_noted(signum: int, proc: Any) -> None:
    """The interrupt noted while ``proc`` started, delivered now to the handler in place
    (``signal.raise_signal``): a build's or a command's stop (one line, 130 or 143),
    Python's KeyboardInterrupt (the caller then passes it on to the child and reaps it).
    Where the handler is the default action of SIGTERM (the process ends at once), the
    child is stopped and reaped first, so that none is left measuring."""
    if signal.getsignal(signum) == signal.SIG_DFL:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGINT)
        proc.join(EXIT_GRACE_S)
        if proc.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.join(REAP_WAIT_S)
    signal.raise_signal(signum)


# ----------------------------------------------------------- bounded waits

# A child that has answered exits at once; one killed with thousands of
# threads takes a moment for the kernel to tear down. Either way it is reaped
# (its process ids and memory back) before the next run may start.
EXIT_GRACE_S = 5.0
REAP_WAIT_S = 20.0
# The forkserver forks a child in milliseconds; one that does not within this
# is stuck (or was starved of process ids) and is replaced.
START_WAIT_S = 15.0
# The forkserver needs no BLAS threads: with one, it never has to create a
# thread at import, which can fail (OpenBLAS then raises SIGINT) when process
# ids are short.
_QUIET_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "THREADCOST_FORKSERVER": "1"}
_unreaped: list[Any] = []

# The forkserver imports its preloads (numpy, pandas, threadcost: under a second on a quiet
# machine, far longer under load) before it can fork the first child; it says when it is
# done by creating a file (threadcost.runsafety.forkserver_ready). That start has a deadline
# of its own, so START_WAIT_S above only bounds the fork of a child.
READY_WAIT_S = 300.0
READY_ENV = "THREADCOST_FORKSERVER_READY"
# Set by `make paper` for a measuring notebook's kernel: start the forkserver as soon as
# this module is imported (the notebook's import cell), so it imports its preloads on the
# other CPU while the notebook imports and draws; every measurement waits until it is
# done (threadcost.store's Stored.get), so none runs beside it.
EARLY_ENV = "THREADCOST_FORKSERVER_EARLY"
_ready: dict[str, Any] = {"pid": None, "path": None, "folder": None}


def _ensure_forkserver() -> None:
    """Start the forkserver unless it runs (returns at once: it imports its preloads
    meanwhile); a new one is given a file to create when it is ready."""
    import tempfile

    if _ready["folder"] is None:
        _ready["folder"] = tempfile.mkdtemp(prefix="threadcost-forkserver-")
    server = _forkserver()
    before = server._forkserver_pid
    path = os.path.join(_ready["folder"], f"ready-{time.monotonic_ns()}")
    with _environ({**_QUIET_ENV, READY_ENV: path}):
        server.ensure_running()
    if server._forkserver_pid != before:  # started just now
        _ready.update(pid=server._forkserver_pid, path=path)


def _running(pid: int) -> bool:
    """``pid`` (our child) exists and has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def wait_forkserver_ready(name: str = "run") -> None:
    """Return once a forkserver started by this process has imported its preloads
    (at once when none is starting), within READY_WAIT_S: one that ends or takes longer
    is stopped and reaped, and the call raises, naming ``name``."""
    pid, path = _ready["pid"], _ready["path"]
    if pid is None or path is None:
        return
    deadline = time.monotonic() + READY_WAIT_S
    while not os.path.exists(path):
        if _forkserver()._forkserver_pid != pid:  # replaced or stopped meanwhile
            break
        if not _running(pid):
            _kill_forkserver()
            _ready.update(pid=None, path=None)
            raise KernelError(name, 4, 0, "the forkserver (the process that starts the "
                              "measuring children) ended while importing its modules")
        if time.monotonic() > deadline:
            _kill_forkserver()
            _ready.update(pid=None, path=None)
            raise RunTimeout(f"{name}: the forkserver did not finish importing its modules "
                             f"within {READY_WAIT_S:g} s (it was stopped; try again)")
        time.sleep(0.005)
    _ready.update(pid=None, path=None)
    with contextlib.suppress(OSError):
        os.unlink(path)


def start_forkserver_early() -> None:
    """Start the forkserver now, without waiting for it (see EARLY_ENV)."""
    if _inline_depth:
        return
    _in_a_notebook_kernel()  # its kernel stops it at shutdown, even if nothing measures
    _ctx()
    with contextlib.suppress(OSError):  # a failure shows again at the first run
        _ensure_forkserver()


@contextlib.contextmanager
def early_forkserver() -> Iterator[None]:
    """Inside this block, a notebook kernel started by this process starts its forkserver
    as soon as it imports this module (see EARLY_ENV)."""
    with _environ({EARLY_ENV: "1"}):
        yield


@atexit.register
def _remove_ready_folder() -> None:
    if _ready["folder"] is not None:
        import shutil

        shutil.rmtree(_ready["folder"], ignore_errors=True)


@contextlib.contextmanager
def _environ(extra: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def _forkserver() -> Any:
    from multiprocessing import forkserver

    return forkserver._forkserver  # the process-wide instance (no public handle)


def _kill_forkserver() -> None:
    """End a stuck forkserver (it is our own child), reap it, and forget it, so
    the next run starts a new one."""
    server = _forkserver()
    pid = getattr(server, "_forkserver_pid", None)
    if not pid:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)  # SIGKILL: it is gone in a moment
    with server._lock:
        if server._forkserver_pid == pid:
            with contextlib.suppress(OSError, TypeError):
                os.close(server._forkserver_alive_fd)
            server._forkserver_pid = None
            server._forkserver_alive_fd = None
            server._forkserver_address = None


def _start_failed(name: str, exc: BaseException) -> BaseException:
    """The child could not be created: a task limit (EAGAIN), memory, or a broken
    forkserver. Name the limit when one is at its edge."""
    err = getattr(exc, "errno", None)
    text = str(exc) or type(exc).__name__
    if err in (errno.EAGAIN, errno.ENOMEM) or isinstance(exc, (EOFError, RuntimeError)):
        limit = syslimits.tightest_task_limit()
        return LimitReached(limit or "a process or thread limit",
                            err if err in (errno.EAGAIN, errno.ENOMEM) else errno.EAGAIN,
                            None, f"could not start the child process for {name} ({text})")
    return KernelError(name, 4, err or 0, f"could not start the child process: {text}")


# ------------------------------------------------- a notebook kernel's shutdown

def stop_helper_processes() -> None:
    """Stop the forkserver (no child of it runs: killed, not asked, which spares its
    interpreter's teardown) and multiprocessing's resource tracker (asked: it cleans
    up what it tracks), and reap both; the next run starts them again."""
    from multiprocessing import resource_tracker

    if mp.active_children():  # a run in flight: ipykernel's own signals stop it, as before
        return
    _kill_forkserver()
    with contextlib.suppress(OSError, ChildProcessError, AttributeError, TypeError):
        resource_tracker._resource_tracker._stop()


def stop_helpers_before_shutdown(kernel: Any) -> None:
    """Make ``kernel`` (an ipykernel kernel) stop the helper processes when it is asked
    to shut down, before it signals its children.

    At shutdown ipykernel sends SIGTERM to every child in its process group and waits
    0.01, 0.03, 0.1, 0.3, 1, 3 ... s for them to be gone. The resource tracker ignores
    SIGTERM and the forkserver, once killed, stays a zombie nobody reaps, so each
    notebook that had measured kept its kernel until the runner gave up on it: 2.6 s
    after its last cell instead of 0.6 (seven measuring notebooks in `make paper`).
    Stopped and reaped first, they leave no child to wait for."""
    if getattr(kernel, "_threadcost_stops_helpers", False):
        return
    original = kernel.do_shutdown

    def do_shutdown(restart: bool) -> Any:
        stop_helper_processes()
        return original(restart)

    kernel.do_shutdown = do_shutdown
    kernel._threadcost_stops_helpers = True


def _in_a_notebook_kernel() -> None:
    """Inside an IPython kernel: stop the helper processes at its shutdown."""
    import sys

    if "ipykernel" not in sys.modules:
        return
    # (IPython is ipykernel's own dependency, imported already: no import of it here)
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    with contextlib.suppress(Exception):  # no shell, or a kernel of another kind
        kernel = getattr(get_ipython() if get_ipython else None, "kernel", None)
        if kernel is not None and hasattr(kernel, "do_shutdown"):
            stop_helpers_before_shutdown(kernel)


def _start(proc: Any, name: str) -> None:
    """``proc.start()`` with a deadline: Process.start reads the child's pid from
    the forkserver without one, and would wait forever on a stuck forkserver."""
    _in_a_notebook_kernel()
    try:
        _ensure_forkserver()
    except OSError as exc:
        raise _start_failed(name, exc) from exc
    wait_forkserver_ready(name)  # one that had died and was started again just now
    failure: list[BaseException] = []

    def start() -> None:
        try:
            proc.start()
        except BaseException as exc:
            failure.append(exc)

    starter = threading.Thread(target=start, name="threadcost-start", daemon=True)
    try:
        starter.start()
    except RuntimeError as exc:  # not even a thread could be created here
        raise _start_failed(name, exc) from exc
    starter.join(START_WAIT_S)
    if starter.is_alive():
        _kill_forkserver()  # closes the pipe start() reads, so it returns
        starter.join(10)
        raise RunTimeout(f"{name}: the forkserver did not start the child process within "
                         f"{START_WAIT_S:g} s (it was replaced; try again)")
    _wait_thread_gone(starter)
    if failure:
        raise _start_failed(name, failure[0]) from failure[0]


def _wait_thread_gone(thread: threading.Thread, timeout: float = 2.0) -> None:
    """join() returns a moment before the OS thread is gone: wait until it has
    left /proc/self/task, so a caller counting its threads sees none extra."""
    tid = thread.native_id
    deadline = time.monotonic() + timeout
    while tid is not None and os.path.exists(f"/proc/self/task/{tid}") \
            and time.monotonic() < deadline:
        time.sleep(0.001)


def _reap(proc: Any, grace: float = EXIT_GRACE_S) -> None:
    """Wait (bounded) until the child is gone; kill it if it lingers."""
    if proc._popen is None:  # never started
        return
    proc.join(grace)
    if proc.exitcode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.join(REAP_WAIT_S)
    if proc.exitcode is None:
        _unreaped.append(proc)
    else:
        proc.close()


def _wait_for_earlier_children(name: str) -> None:
    """An earlier child not yet reaped (killed with many threads) may still hold
    process ids: wait for it, within REAP_WAIT_S, before starting another."""
    deadline = time.monotonic() + REAP_WAIT_S
    for proc in list(_unreaped):
        proc.join(max(deadline - time.monotonic(), 0))
        if proc.exitcode is None:
            raise RunTimeout(f"{name}: an earlier child process (pid {proc.pid}) is still "
                             f"exiting after {REAP_WAIT_S:g} s; not starting another")
        _unreaped.remove(proc)
        proc.close()


@atexit.register
def _forget_unreaped() -> None:
    """multiprocessing joins daemonic children at exit without a deadline: give
    each unreaped one a last bounded wait, then let the exit go on."""
    for proc in list(_unreaped):
        proc.join(EXIT_GRACE_S)
        if proc.exitcode is None:
            mp.process._children.discard(proc)  # type: ignore[attr-defined]


if os.environ.get(EARLY_ENV) == "1" and os.environ.get("THREADCOST_FORKSERVER") != "1" \
        and "ipykernel" in __import__("sys").modules:
    start_forkserver_early()
