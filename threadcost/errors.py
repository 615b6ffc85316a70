"""Exceptions, and the one place where C status codes become Python errors."""

from __future__ import annotations

import errno as errno_mod
import os
import re
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
    :mod:`threadcost.store.datastore`, which re-exports it)."""


def one_line(exc: BaseException) -> tuple[str | None, bool]:
    """(one line for the terminal, whether it is a data/disk error) for an error a
    command may meet; (None, False) for one that is a bug and deserves its traceback.

    The line names the file, what is wrong and what to do; nothing is cut from a
    result already printed."""
    if isinstance(exc, DataError):
        return (f"{short(str(exc), 400)}; repair or remove that run folder (other runs "
                "are unaffected)", True)
    if isinstance(exc, OSError) and not isinstance(exc, ThreadcostError):
        err, name = _errno_of(exc)
        where = f"{name}: " if name else ""
        what = os.strerror(err) if err else short(_first_line(exc), 300)
        advice = _DISK_ADVICE.get(err, "check the disk and the folder's permissions")
        named = f" ({errno_name(err)})" if err else ""
        return f"{where}{what}{named}; {advice}", True
    if isinstance(exc, ThreadcostError):
        return short(str(exc), 400), False
    return None, False


_ERRNO_IN_TEXT = re.compile(r"\[Errno (\d+)\][^:]*(?::\s*'([^']*)')?")


def _errno_of(exc: OSError) -> tuple[int, str]:
    """(errno, file) of an OSError, also of one that carries none itself: shutil's
    copytree error (a list of (source, destination, "[Errno 28] ...") for every file it
    could not copy: the first names the problem), or one raised from another OSError."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno:
            return seen.errno, str(seen.filename or "")
        seen = seen.__cause__ or seen.__context__
    args = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
    for item in args:  # shutil.Error: [(src, dst, why), ...]
        if isinstance(item, tuple) and len(item) == 3:
            found = _ERRNO_IN_TEXT.search(str(item[2]))
            if found:
                return int(found.group(1)), str(item[1])
    found = _ERRNO_IN_TEXT.search(str(exc))
    return (int(found.group(1)), found.group(2) or "") if found else (0, "")


def disk_errno(text: str) -> int:
    """The errno of a disk or permission error (ENOSPC, EDQUOT, EACCES, EPERM, EROFS)
    named in an error's text (``[Errno 28] ...``, as a notebook's failure carries it),
    else 0."""
    found = _ERRNO_IN_TEXT.search(text)
    err = int(found.group(1)) if found else 0
    return err if err in (errno_mod.ENOSPC, errno_mod.EDQUOT, errno_mod.EACCES,
                          errno_mod.EPERM, errno_mod.EROFS) else 0


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def short(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis and the length say so)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}… ({len(text):,} characters)"
