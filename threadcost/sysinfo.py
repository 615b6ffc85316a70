"""Small readers of the machine's state: memory, CPUs, sysctls, rlimits, cgroups.

Pure Python and cheap, so validation can call them before any C runs.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def meminfo_kib(key: str) -> int | None:
    """A field of /proc/meminfo in KiB (e.g. ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                name, _, rest = line.partition(":")
                if name == key:
                    return int(rest.split()[0])
    except OSError:
        return None
    return None


def mem_available_kib() -> int:
    value = meminfo_kib("MemAvailable")
    return value if value is not None else 0


def affinity() -> list[int]:
    """The CPUs this process may run on, sorted."""
    return sorted(os.sched_getaffinity(0))


def read_text(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def read_int(path: str | Path) -> int | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


def sysctl(name: str) -> int | None:
    """An integer sysctl such as ``kernel.threads-max``, or None if unreadable."""
    return read_int("/proc/sys/" + name.replace(".", "/"))


def rlimit(name: str) -> tuple[int | None, int | None]:
    """(soft, hard) of RLIMIT_<name>; None stands for unlimited."""
    soft, hard = resource.getrlimit(getattr(resource, "RLIMIT_" + name))

    def norm(v: int) -> int | None:
        return None if v == resource.RLIM_INFINITY else v

    return norm(soft), norm(hard)


def cgroup_dir() -> Path | None:
    """This process's cgroup v2 directory, when there is one."""
    text = read_text("/proc/self/cgroup")
    if not text:
        return None
    for line in text.splitlines():
        if line.startswith("0::"):
            path = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
            return path if path.is_dir() else Path("/sys/fs/cgroup")
    return None


def cgroup_value(filename: str) -> str | None:
    """A cgroup v2 control file (``pids.max``, ``memory.max``) of this process."""
    directory = cgroup_dir()
    if directory is None:
        return None
    return read_text(directory / filename)


def is_root() -> bool:
    return os.geteuid() == 0
