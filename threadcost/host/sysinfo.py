"""Small readers of the machine's state: memory, CPUs, sysctls, rlimits, cgroups.

Pure Python and cheap, so validation can call them before any C runs.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# glibc's PTHREAD_STACK_MIN where the C library cannot be asked (sysconf answers -1 or is
# missing): 128 KiB on arm64 (two of the 64 KiB pages an arm64 kernel may use), 16 KiB on
# x86-64 and most others.
_STACK_MIN_BY_MACHINE = {"aarch64": 128 * 1024, "arm64": 128 * 1024}
_STACK_MIN_ELSEWHERE = 16 * 1024


def thread_stack_min_kib() -> int:
    """The smallest thread stack this machine's C library accepts, in KiB, rounded up to a
    whole number of pages: ``sysconf(_SC_THREAD_STACK_MIN)``, which glibc (2.34 and
    later) answers at run time as the larger of its PTHREAD_STACK_MIN (16 KiB on x86-64,
    128 KiB on arm64) and the kernel's smallest signal frame for this CPU
    (``getauxval(AT_MINSIGSTKSZ)``: AVX-512, AMX, SVE and SME make it larger).
    pthread_attr_setstacksize refuses anything smaller."""
    try:
        floor = int(os.sysconf("SC_THREAD_STACK_MIN"))
    except (ValueError, OSError):
        floor = -1
    if floor <= 0:
        floor = _STACK_MIN_BY_MACHINE.get(os.uname().machine, _STACK_MIN_ELSEWHERE)
    pages = -(-floor // PAGE_SIZE)
    return pages * PAGE_SIZE // 1024


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


def cgroup_v1_value(controller: str, filename: str) -> str | None:
    """A cgroup v1 control file of this process (``memory``, ``memory.limit_in_bytes``)."""
    text = read_text("/proc/self/cgroup") or ""
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and controller in parts[1].split(","):
            base = Path("/sys/fs/cgroup") / controller
            return read_text(base / parts[2].lstrip("/") / filename) or read_text(
                base / filename)
    return None


def system_threads() -> int | None:
    """Scheduling entities (threads) that exist on the system (/proc/loadavg)."""
    text = read_text("/proc/loadavg")
    try:
        return int(text.split()[3].split("/")[1]) if text else None
    except (IndexError, ValueError):
        return None


def map_count(pid: int | str = "self") -> int | None:
    """Memory mappings of a process (what vm.max_map_count caps)."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return None


def cpu_vulnerabilities() -> dict[str, str]:
    """The kernel's view of each CPU vulnerability and its mitigation
    (/sys/devices/system/cpu/vulnerabilities/*), e.g. {"meltdown": "Not affected"}."""
    base = Path("/sys/devices/system/cpu/vulnerabilities")
    try:
        files = sorted(p for p in base.iterdir() if p.is_file())
    except OSError:
        return {}
    return {p.name: read_text(p) or "unreadable" for p in files}


# Kernel build options that shape timing and CPU-time numbers.
KERNEL_CONFIG_KEYS = (
    "CONFIG_HZ", "CONFIG_HZ_PERIODIC", "CONFIG_NO_HZ_IDLE", "CONFIG_NO_HZ_FULL",
    "CONFIG_TICK_CPU_ACCOUNTING", "CONFIG_VIRT_CPU_ACCOUNTING_GEN",
    "CONFIG_IRQ_TIME_ACCOUNTING", "CONFIG_PREEMPT_NONE", "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT", "CONFIG_PREEMPT_DYNAMIC", "CONFIG_PREEMPT_RT", "CONFIG_PREEMPT_LAZY",
    "CONFIG_VMAP_STACK", "CONFIG_PAGE_TABLE_ISOLATION", "CONFIG_MITIGATION_PAGE_TABLE_ISOLATION",
)


def kernel_config() -> tuple[dict[str, str], str]:
    """(selected build options, where they were read) of the running kernel.

    Reads /boot/config-<release> or /proc/config.gz; ({}, "unknown: ...") when
    neither is readable.
    """
    import gzip

    release = os.uname().release
    text = read_text(f"/boot/config-{release}")
    where = f"/boot/config-{release}"
    if text is None:
        try:
            with gzip.open("/proc/config.gz", "rt") as fh:
                text = fh.read()
            where = "/proc/config.gz"
        except OSError:
            return {}, "unknown: neither /boot/config-<release> nor /proc/config.gz is readable"
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in KERNEL_CONFIG_KEYS:
            found[key] = value.strip('"')
    return found, where


THP_DIR = Path("/sys/kernel/mm/transparent_hugepage")


def _chosen(text: str | None) -> str | None:
    """The bracketed choice of a sysfs setting ("always [madvise] never" -> "madvise")."""
    if not text:
        return None
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else text.split()[0]


def transparent_hugepages(root: Path = THP_DIR) -> dict[str, object] | None:
    """The kernel's transparent huge page settings, which decide how many pages one fault
    makes resident (a thread stack's first touch, a malloc'd block): ``enabled`` and
    ``defrag`` (always, madvise or never) and, on kernels with multi-size THP (6.8 and
    later), each folio size's own setting (``{"16kB": "never", "2048kB": "inherit"}``).
    None where the kernel has no THP."""
    enabled = _chosen(read_text(root / "enabled"))
    if enabled is None:
        return None
    sizes = {}
    for path in sorted(root.glob("hugepages-*kB/enabled"),
                       key=lambda p: int(p.parent.name.removeprefix("hugepages-")[:-2])):
        sizes[path.parent.name.removeprefix("hugepages-")] = _chosen(read_text(path))
    return {"enabled": enabled, "defrag": _chosen(read_text(root / "defrag")), "sizes": sizes}
