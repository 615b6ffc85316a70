"""Exceptions, and the one place where C status codes become Python errors."""

from __future__ import annotations

import errno as errno_mod
import os
from typing import Any, ClassVar


class ThreadcostError(Exception):
    """Base class of every error threadcost raises on purpose."""


class ParameterError(ThreadcostError, ValueError):
    """A parameter was refused before any C ran.

    The message always names the parameter, the value given and what is allowed.
    """

    # API name -> the notebook parameter that feeds it, set by parameters.check() in a
    # notebook's kernel, so a refusal names what the reader can change (malloc_mib).
    aliases: ClassVar[dict[str, str]] = {}

    def __init__(self, name: str, value: Any, allowed: str) -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        shown = self.aliases.get(name, name)
        super().__init__(f"parameter {shown!r} = {short(repr(value), 80)}: {allowed}")

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across a child process
        return (type(self), (self.name, self.value, self.allowed))


class KernelError(ThreadcostError, RuntimeError):
    """A C kernel failed for a reason that is not a system limit."""

    def __init__(self, kernel: str, status: int, err: int = 0, detail: str = "") -> None:
        self.kernel = kernel
        self.status = status
        self.errno = err
        text = f"{kernel} failed: {STATUS_NAMES.get(status, f'status {status}')}"
        if err:
            text += f" ({errno_name(err)}: {os.strerror(err)})"
        if detail:
            text += f"; {detail}"
        self.detail = detail
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kernel, self.status, self.errno, self.detail))


class LimitReached(ThreadcostError):
    """A system limit cut a run short. ``partial`` holds what was measured."""

    def __init__(self, limit: str, err: int, partial: Any = None, detail: str = "") -> None:
        self.limit = limit
        self.errno = err
        self.partial = partial
        text = f"system limit reached: {limit}"
        if err:
            text += f" ({errno_name(err)}: {os.strerror(err)})"
        if detail:
            text += f"; {detail}"
        self.detail = detail
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.limit, self.errno, self.partial, self.detail))


class RunTimeout(ThreadcostError, TimeoutError):
    """An isolated run did not finish in time and was killed."""


# Mirrors the TC_* codes of native/threadcost.h (checked in tests/test_native.py).
TC_OK, TC_EINVAL, TC_ENOMEM, TC_ELIMIT, TC_ESYS, TC_ETIMEOUT, TC_ESTOPPED = range(7)
STATUS_NAMES = {
    TC_OK: "ok",
    TC_EINVAL: "invalid argument reached C (a validation gap: please report it)",
    TC_ENOMEM: "out of memory for the kernel's own bookkeeping",
    TC_ELIMIT: "a system limit stopped the run",
    TC_ESYS: "a system call failed",
    TC_ETIMEOUT: "the watchdog fired: a partner stopped answering",
    TC_ESTOPPED: "stopped on request (SIGINT or SIGTERM)",
}


def errno_name(err: int) -> str:
    return errno_mod.errorcode.get(err, f"errno {err}")


def check_status(kernel: str, status: int, err: int = 0, detail: str = "") -> None:
    """Raise KernelError for any status but TC_OK and TC_ELIMIT.

    TC_ELIMIT is left to the caller, which knows which limit applies and owns
    the partial result.
    """
    if status in (TC_OK, TC_ELIMIT):
        return
    if status == TC_ESTOPPED:  # the kernel stopped because we were asked to stop
        raise KeyboardInterrupt
    raise KernelError(kernel, status, err, detail)


# errno -> what to do about it, for a file threadcost could not read or write.
_DISK_ADVICE = {
    errno_mod.ENOSPC: "free space on that disk, or point THREADCOST_DATA_DIR elsewhere",
    errno_mod.EDQUOT: "free space under your quota, or point THREADCOST_DATA_DIR elsewhere",
    errno_mod.EACCES: "make the folder writable for you, or point THREADCOST_DATA_DIR "
                      "at one that is",
    errno_mod.EPERM: "make the folder writable for you, or point THREADCOST_DATA_DIR "
                     "at one that is",
    errno_mod.EROFS: "the disk is read-only: point THREADCOST_DATA_DIR at a writable folder",
    errno_mod.ENOENT: "check the path",
    errno_mod.ENOTDIR: "check the path",
    errno_mod.EISDIR: "check the path",
}


class DataError(ThreadcostError):
    """A data file is missing, unreadable or does not match the schema (raised by
    :mod:`threadcost.datastore`, which re-exports it)."""


def one_line(exc: BaseException) -> tuple[str | None, bool]:
    """(one line for the terminal, whether it is a data/disk error) for an error a
    command may meet; (None, False) for one that is a bug and deserves its traceback.

    The line names the file, what is wrong and what to do; nothing is cut from a
    result already printed."""
    if isinstance(exc, DataError):
        return (f"{short(str(exc), 400)}; repair or remove that run folder (other runs "
                "are unaffected)", True)
    if isinstance(exc, OSError) and not isinstance(exc, ThreadcostError):
        name = exc.filename or ""
        where = f"{name}: " if name else ""
        what = os.strerror(exc.errno) if exc.errno else str(exc)
        advice = _DISK_ADVICE.get(exc.errno or 0, "check the disk and the folder's permissions")
        return f"{where}{what} ({errno_name(exc.errno or 0)}); {advice}", True
    if isinstance(exc, ThreadcostError):
        return short(str(exc), 400), False
    return None, False


def short(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis and the length say so)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}… ({len(text):,} characters)"
