"""The reserves a run leaves the rest of the machine (kept for older imports).

They live in :mod:`threadcost.syslimits`, the layer under the experiments; this
module re-exports them so ``from threadcost import reserve`` keeps working.
"""

from __future__ import annotations

from threadcost.syslimits import (
    CGROUP_TASK_RESERVE_MIN,
    MEMORY_RESERVE_FRACTION,
    MEMORY_RESERVE_MIN_KIB,
    RESERVE_PREFIX,
    TASK_RESERVE_FRACTION,
    TASK_RESERVE_MIN,
    Budget,
    is_reserve,
    memory_budget,
    memory_reserve_kib,
    reserve_hit,
    task_budgets,
    task_reserve,
    thread_budget,
    tightest_task_limit,
)

__all__ = ["CGROUP_TASK_RESERVE_MIN", "MEMORY_RESERVE_FRACTION", "MEMORY_RESERVE_MIN_KIB",
           "RESERVE_PREFIX", "TASK_RESERVE_FRACTION", "TASK_RESERVE_MIN", "Budget",
           "is_reserve", "memory_budget", "memory_reserve_kib", "reserve_hit", "task_budgets",
           "task_reserve", "thread_budget", "tightest_task_limit"]
