"""What a run leaves the rest of the machine: reserves of process ids, threads and memory.

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

import math
from dataclasses import dataclass
from typing import Any

from threadcost import sysinfo

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
    from threadcost.experiments.limits import _pids_cgroup

    pid_max = sysinfo.sysctl("kernel.pid_max") if pid_max is None else pid_max
    threads_max = sysinfo.sysctl("kernel.threads-max") if threads_max is None else threads_max
    tasks_now = sysinfo.system_threads() if tasks_now is None else tasks_now
    pids_max, pids_now = _pids_cgroup() if cgroup is None else cgroup
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
