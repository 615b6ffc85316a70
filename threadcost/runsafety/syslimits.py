"""The system's limits on tasks and memory, and the reserves a run leaves the rest
of the machine: the layer under every experiment.

It reads limits (the default thread stack, the pids and memory cgroups, what the
pids cgroup refused) and computes the reserves of process ids, threads and memory
a run keeps free. Experiments, :mod:`threadcost.runsafety.isolate` and the CLI use it; it
uses no experiment (``tests/test_import_graph.py`` holds every module of
``threadcost`` to an acyclic import graph).

What a run leaves the rest of the machine: reserves of process ids, threads and memory.

kernel.pid_max and kernel.threads-max are shared by every process of the
system, and so is MemAvailable. A run that starts threads until one of them
runs out takes them from everyone: the user's shell cannot fork, their build
fails, the Jupyter server cannot start a kernel. So by default a run stops
short of each one, keeping a reserve of

- ``max(512, 2%)`` of kernel.pid_max, and the same of kernel.threads-max
  (minus what the machine already uses: every existing thread holds a process id);
- ``max(512 MiB, 5%)`` of MemTotal out of MemAvailable.

A run that stops at a reserve reports it as its limit, naming the limit the
reserve protects (``reserve kept below kernel.pid_max``). ``exhaust=True`` (CLI
``--exhaust``) goes to the limit itself, e.g. for C08's spawn-until-failure.

A cgroup's pids.max is shared the same way by everything in the cgroup (in a
container: the user's shell too), so it gets a reserve of ``max(16, 2%)``.
Limits of the run's own process (RLIMIT_AS, RLIMIT_NPROC) get none: reaching
them starves no one else, and the run names them from the errno when it does.
"""

from __future__ import annotations

import errno
import math
from dataclasses import dataclass
from typing import Any

from threadcost.errors import errno_name
from threadcost.host import sysinfo

DEFAULT_STACK_KIB = 8192  # only if the C default cannot be read
# Rough resident cost of one idle thread when nothing better is known (KiB):
# a kernel stack (16), its slab objects (~6), a page-table page (4), user RSS (8).
NOMINAL_THREAD_KIB = 34


def default_stack_kib() -> int:
    """The stack size a thread gets when none is asked for (KiB)."""
    from threadcost.native import lib

    value = int(lib.tc_default_stack_bytes())
    return value // 1024 if value > 0 else DEFAULT_STACK_KIB


def int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if text in ("", "max"):
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= 1 << 60 else value  # v1 "unlimited" is a huge number


def memory_cgroup() -> tuple[int | None, int | None]:
    """(limit, usage) in bytes of this process's memory cgroup (v2, else v1)."""
    limit = int_or_none(sysinfo.cgroup_value("memory.max"))
    usage = int_or_none(sysinfo.cgroup_value("memory.current"))
    if limit is None and usage is None:
        limit = int_or_none(sysinfo.cgroup_v1_value("memory", "memory.limit_in_bytes"))
        usage = int_or_none(sysinfo.cgroup_v1_value("memory", "memory.usage_in_bytes"))
    return limit, usage


def pids_cgroup() -> tuple[int | None, int | None]:
    limit = int_or_none(sysinfo.cgroup_value("pids.max"))
    current = int_or_none(sysinfo.cgroup_value("pids.current"))
    if limit is None and current is None:
        limit = int_or_none(sysinfo.cgroup_v1_value("pids", "pids.max"))
        current = int_or_none(sysinfo.cgroup_v1_value("pids", "pids.current"))
    return limit, current


def pids_refused() -> int | None:
    """How many forks or clones this process's pids cgroup has refused so far
    (the ``max`` count of pids.events), or None without a pids cgroup."""
    text = sysinfo.cgroup_value("pids.events") or sysinfo.cgroup_v1_value("pids", "pids.events")
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "max" and value.strip().isdigit():
            return int(value)
    return None


TASK_RESERVE_MIN = 512
CGROUP_TASK_RESERVE_MIN = 16
TASK_RESERVE_FRACTION = 0.02
MEMORY_RESERVE_MIN_KIB = 512 * 1024
MEMORY_RESERVE_FRACTION = 0.05
RESERVE_PREFIX = "reserve kept below "


def task_reserve(total: int, minimum: int = TASK_RESERVE_MIN) -> int:
    """Ids (or threads) kept free out of ``total``: max(512, 2% of it)."""
    return max(minimum, math.ceil(total * TASK_RESERVE_FRACTION))


def memory_reserve_kib(mem_total_kib: int) -> int:
    """KiB of MemAvailable kept free: max(512 MiB, 5% of MemTotal)."""
    return max(MEMORY_RESERVE_MIN_KIB, math.ceil(mem_total_kib * MEMORY_RESERVE_FRACTION))


@dataclass(frozen=True)
class Budget:
    """How many more tasks a run may start before it touches a reserve.

    ``allowed`` is None when no system-wide limit could be read (no cap);
    ``protects`` names the limit whose reserve binds first.
    """

    allowed: int | None
    protects: str | None
    reserve: int | None
    total: int | None
    in_use: int | None
    unit: str
    detail: str

    def caps(self, wanted: int) -> bool:
        return self.allowed is not None and self.allowed < wanted


def _task_budget(name: str, total: int | None, in_use: int | None,
                 minimum: int = TASK_RESERVE_MIN) -> Budget | None:
    if total is None or in_use is None:
        return None
    keep = task_reserve(total, minimum)
    allowed = max(total - keep - in_use, 0)
    return Budget(allowed, name, keep, total, in_use, "tasks",
                  f"{name} is {total:,}; {in_use:,} in use; a reserve of "
                  f"{keep:,} stays free for everyone else, so this run may start "
                  f"{allowed:,} more")


def task_budgets(pid_max: int | None = None, threads_max: int | None = None,
                 tasks_now: int | None = None,
                 cgroup: tuple[int | None, int | None] | None = None) -> list[Budget]:
    """One budget per shared task limit: kernel.pid_max, kernel.threads-max and
    this process's cgroup pids.max, if any (values default to this machine's;
    ``cgroup`` is (pids.max, pids.current))."""
    pid_max = sysinfo.sysctl("kernel.pid_max") if pid_max is None else pid_max
    threads_max = sysinfo.sysctl("kernel.threads-max") if threads_max is None else threads_max
    tasks_now = sysinfo.system_threads() if tasks_now is None else tasks_now
    pids_max, pids_now = pids_cgroup() if cgroup is None else cgroup
    found = [_task_budget("kernel.pid_max", pid_max, tasks_now),
             _task_budget("kernel.threads-max", threads_max, tasks_now),
             _task_budget("cgroup pids.max", pids_max, pids_now, CGROUP_TASK_RESERVE_MIN)]
    return [b for b in found if b is not None]


def memory_budget(per_task_kib: float, mem_available_kib: int | None = None,
                  mem_total_kib: int | None = None) -> Budget | None:
    """Tasks of ``per_task_kib`` each that fit in MemAvailable minus its reserve."""
    avail = sysinfo.meminfo_kib("MemAvailable") if mem_available_kib is None \
        else mem_available_kib
    total = sysinfo.meminfo_kib("MemTotal") if mem_total_kib is None else mem_total_kib
    if avail is None or total is None or per_task_kib <= 0:
        return None
    keep = memory_reserve_kib(total)
    allowed = max(int((avail - keep) // per_task_kib), 0)
    return Budget(allowed, "MemAvailable", keep, total, total - avail, "KiB",
                  f"MemAvailable is {avail:,} KiB; a reserve of {keep:,} KiB stays free, so "
                  f"{allowed:,} more tasks of about {per_task_kib:,.0f} KiB fit")


def thread_budget(per_thread_kib: float, **overrides: Any) -> Budget:
    """The binding budget over process ids, threads-max and memory.

    ``overrides`` (pid_max, threads_max, tasks_now, cgroup, mem_available_kib,
    mem_total_kib) replace this machine's readings, for tests.
    """
    tasks = task_budgets(overrides.get("pid_max"), overrides.get("threads_max"),
                         overrides.get("tasks_now"), overrides.get("cgroup"))
    memory = memory_budget(per_thread_kib, overrides.get("mem_available_kib"),
                           overrides.get("mem_total_kib"))
    budgets = [*tasks, *([memory] if memory is not None else [])]
    if not budgets:
        return Budget(None, None, None, None, None, "tasks", "no system-wide limit readable")
    return min(budgets, key=lambda b: b.allowed if b.allowed is not None else math.inf)


def reserve_hit(budget: Budget, started: int, requested: int) -> dict[str, Any]:
    """A ``limit_hit`` record for a run that stopped at ``budget``'s reserve."""
    return {"limit": f"{RESERVE_PREFIX}{budget.protects}", "errno": 0, "errno_name": "",
            "detail": f"stopped at the reserve: {budget.detail} (started {started:,} of "
                      f"{requested:,}; exhaust=True / --exhaust goes to the limit itself)",
            "protects": budget.protects, "reserve": budget.reserve,
            "threads_started": started, "threads_requested": requested}


# Limits every process of the system shares: a sweep never starts a count that
# would reach into their reserve (see :func:`refused_before_spawn`).
SYSTEM_WIDE_TASK_LIMITS = ("kernel.pid_max", "kernel.threads-max")


def refused_before_spawn(threads: int, per_thread_kib: float = NOMINAL_THREAD_KIB,
                         **overrides: Any) -> dict[str, Any] | None:
    """A ``limit_hit`` record when ``threads`` cannot start without reaching into
    the reserve of a system-wide task limit (kernel.pid_max, kernel.threads-max),
    else None. Read before any thread starts, so a count above what the system
    allows (``--threads 37768`` where kernel.pid_max is 32,768) is answered at
    once, and a sweep never brings the whole machine near its process-id limit
    (where other processes, the run's own helpers included, fail to fork).
    """
    for budget in task_budgets(overrides.get("pid_max"), overrides.get("threads_max"),
                               overrides.get("tasks_now"), overrides.get("cgroup")):
        if budget.protects in SYSTEM_WIDE_TASK_LIMITS and budget.caps(threads):
            hit = reserve_hit(budget, 0, threads)
            hit["detail"] = (f"refused before starting any thread: {threads:,} threads do "
                             f"not fit: {budget.detail} (exhaust=True / --exhaust goes to "
                             "the limit itself)")
            return hit
    return None


def is_reserve(limit_hit: dict[str, Any] | None) -> bool:
    return bool(limit_hit) and str(limit_hit.get("limit", "")).startswith(RESERVE_PREFIX)


def tightest_task_limit() -> str | None:
    """The task limit closest to its edge right now: a cgroup's pids.max,
    kernel.pid_max or kernel.threads-max (None when none can be read)."""
    room: dict[str, int] = {}
    for budget in task_budgets():
        if budget.total is not None and budget.in_use is not None:
            room[str(budget.protects)] = budget.total - budget.in_use
    return min(room, key=lambda k: room[k]) if room else None


# Tasks that may come and go in a cgroup between a failure and its reading.
CGROUP_MARGIN = 16
MEMORY_REFUSED = "memory (the kernel refused to allocate: RAM, overcommit or a memory cgroup)"
TASK_REFUSED = ("a task limit (EAGAIN: the kernel refused a new task, and no known limit "
                "was at its edge when read)")


def name_from_errno(err: int, creating: str = "tasks") -> str:
    """Name the limit behind a failed call from its errno and the machine's
    state now: EMFILE/ENFILE are open-file limits, ENOMEM is memory, EAGAIN
    while ``creating`` threads or processes is the task limit nearest its edge
    (a pids cgroup that counted a refusal, kernel.pid_max, kernel.threads-max)
    or, for a non-root user, RLIMIT_NPROC."""
    if err == errno.EMFILE:
        return "RLIMIT_NOFILE (open files of this process)"
    if err == errno.ENFILE:
        return "fs.file-max (open files of the whole system)"
    if err == errno.ENOMEM:
        return MEMORY_REFUSED
    if err == errno.EAGAIN:
        if (pids_refused() or 0) > 0:
            return "cgroup pids.max"
        nearest = tightest_task_limit()
        for budget in task_budgets():
            if budget.protects == nearest and budget.total is not None \
                    and budget.in_use is not None \
                    and budget.total - budget.in_use <= max(CGROUP_MARGIN, budget.total // 100):
                return str(nearest)
        np_soft, _ = sysinfo.rlimit("NPROC")
        if not sysinfo.is_root() and np_soft is not None:
            return f"RLIMIT_NPROC or memory for the {creating}' stacks (EAGAIN)"
        return f"a task limit or memory for the {creating}' stacks (EAGAIN; no limit at its " \
               "edge when read)"
    return f"a system limit ({errno_name(err)})"


def _own_threads() -> int:
    text = sysinfo.read_text("/proc/self/status") or ""
    for line in text.splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 1


def explain_failure(err: int, probe: dict[str, int], stack_bytes: int,
                    guard_bytes: int) -> dict[str, Any]:
    """Name the limit that made pthread_create fail, from the errno and the
    readings taken at the moment of failure (glibc reports most of them as
    EAGAIN; ENOMEM is memory). Called after the threads were joined: a cgroup's
    task count then is corrected by the threads this process had at the failure.
    """
    as_soft, _ = sysinfo.rlimit("AS")
    reserve_kib = (stack_bytes + guard_bytes) // 1024
    reasons: list[str] = []
    name = MEMORY_REFUSED if err == errno.ENOMEM else TASK_REFUSED
    mmax = sysinfo.sysctl("vm.max_map_count")
    tmax = sysinfo.sysctl("kernel.threads-max")
    pmax = sysinfo.sysctl("kernel.pid_max")
    pids_max, pids_now = pids_cgroup()
    pids_at_failure = None if pids_now is None else \
        pids_now - _own_threads() + probe.get("threads", 0)
    np_soft, _ = sysinfo.rlimit("NPROC")
    sys_threads = probe.get("system_threads", -1)
    if as_soft is not None and probe["vsz_kib"] + reserve_kib > as_soft // 1024:
        name = "RLIMIT_AS"
        reasons.append(f"VmSize {probe['vsz_kib']:,} KiB + one stack {reserve_kib:,} KiB "
                       f"> RLIMIT_AS {as_soft // 1024:,} KiB")
    elif mmax is not None and probe["maps"] + 2 > mmax:
        name = "vm.max_map_count"
        reasons.append(f"{probe['maps']:,} mappings of {mmax:,} allowed")
    elif tmax is not None and sys_threads >= tmax - 1:
        name = "kernel.threads-max"
        reasons.append(f"{sys_threads:,} threads on the system of {tmax:,}")
    elif pmax is not None and sys_threads >= pmax - 301:
        name = "kernel.pid_max"
        reasons.append(f"{sys_threads:,} threads on the system of {pmax:,} process ids")
    elif probe.get("cgroup_refused", 0) > 0:
        name = "cgroup pids.max"
        reasons.append(f"the pids cgroup refused {probe['cgroup_refused']:,} task(s) during "
                       f"the run (pids.events); it allows {pids_max or 0:,} tasks")
    elif pids_max is not None and pids_at_failure is not None \
            and pids_at_failure >= pids_max - CGROUP_MARGIN:
        name = "cgroup pids.max"
        reasons.append(f"about {pids_at_failure:,} tasks in the cgroup ({probe['threads']:,} "
                       f"of them this process's threads), it allows {pids_max:,}")
    elif not sysinfo.is_root() and np_soft is not None and probe["threads"] >= np_soft - 1:
        name = "RLIMIT_NPROC"
    return {"limit": name, "errno": int(err), "errno_name": errno_name(err),
            "detail": "; ".join(reasons), "probe": dict(probe)}
