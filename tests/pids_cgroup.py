"""A throw-away cgroup with a small pids.max, to provoke a task limit safely.

kernel.pid_max is shared by everyone on the machine; a cgroup's pids.max caps
only the processes moved into it. Tests start their subprocess in one
(``preexec_fn=join(group)``) and so exercise the same EAGAIN path at a count of
a few hundred. cgroup v1 (/sys/fs/cgroup/pids) or v2 with pids delegated; the
tests that need one skip when neither is writable (not root, no controller).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path


def pids_root() -> tuple[Path | None, str]:
    """A writable pids controller, or (None, why not)."""
    if os.geteuid() != 0:
        return None, "not root: cannot make a cgroup"
    v1 = Path("/sys/fs/cgroup/pids")
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1, ""
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.subtree_control"
    if controllers.exists() and "pids" in controllers.read_text().split() \
            and os.access(v2, os.W_OK):
        return v2, ""
    return None, ("no writable cgroup pids controller here (neither /sys/fs/cgroup/pids "
                  "nor a cgroup v2 root with pids in cgroup.subtree_control)")


@contextlib.contextmanager
def pids_cgroup(limit: int, tag: str) -> Iterator[Path]:
    """A new cgroup capped at ``limit`` tasks; removed afterwards (after its
    tasks are gone, waiting at most 20 s). Raises OSError when it cannot be made."""
    root, why = pids_root()
    if root is None:
        raise OSError(why)
    group = root / f"threadcost-test-{tag}-{os.getpid()}"
    group.mkdir()
    try:
        if not (group / "pids.max").exists():
            raise OSError(f"{group} has no pids.max")
        (group / "pids.max").write_text(str(limit))
        yield group
    finally:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def join(group: Path) -> Callable[[], None]:
    """A preexec_fn that moves the new process into ``group``."""
    def move() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))
    return move


def tasks_in(group: Path) -> int:
    return int((group / "pids.current").read_text())


def wait_empty(group: Path, timeout: float = 20) -> int:
    """Wait until no task is charged to ``group``; return what is left."""
    deadline = time.monotonic() + timeout
    left = tasks_in(group)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = tasks_in(group)
    return left
