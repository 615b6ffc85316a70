"""The limits explorer: every limit that caps how many threads one process can
start, how many more threads each one allows right now, and which binds first.

Claim C08: one process could start about 32K threads, "a kernel limit, not
memory". On Linux several limits sit near that number at once (kernel.pid_max
defaults to 32768; vm.max_map_count to 65530, two mappings per thread), so the
explorer computes every one of them for the chosen stack size and names the
smallest. It also explains which sysctls a million threads (claim C10) needs.

Nothing here starts a thread except :func:`spawn_until_failure`, which is
opt-in, bounded by ``max_threads`` and runs in a child process.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from threadcost.errors import ParameterError
from threadcost.experiments.parameters import declared
from threadcost.experiments.thread_memory import run as thread_memory
from threadcost.host import sysinfo
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated

# The limits' readers, and the naming of a limit from an errno, live under the
# experiments (threadcost.runsafety.syslimits); re-exported here for the notebooks and tests.
from threadcost.runsafety.syslimits import CGROUP_MARGIN as CGROUP_MARGIN
from threadcost.runsafety.syslimits import MEMORY_REFUSED as MEMORY_REFUSED
from threadcost.runsafety.syslimits import NOMINAL_THREAD_KIB as NOMINAL_THREAD_KIB
from threadcost.runsafety.syslimits import TASK_REFUSED as TASK_REFUSED
from threadcost.runsafety.syslimits import default_stack_kib as default_stack_kib
from threadcost.runsafety.syslimits import explain_failure as explain_failure
from threadcost.runsafety.syslimits import memory_cgroup as memory_cgroup
from threadcost.runsafety.syslimits import name_from_errno as name_from_errno
from threadcost.runsafety.syslimits import pids_cgroup as pids_cgroup
from threadcost.runsafety.syslimits import pids_refused as pids_refused
from threadcost.settings import validate

EXPERIMENT = "thread_limits"
PID_MAX_LIMIT = 4_194_304  # the kernel's ceiling for kernel.pid_max on 64-bit
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters).
STACK_KIB, TOUCH_KIB = declared("memory_stack_kib_requested"), declared("memory_touch_kib")
SPAWN = declared("memory_spawn_max")


def _row(limit: str, value: Any, unit: str, allows: int | None, applies: bool,
         note: str, kind: str) -> dict[str, Any]:
    return {"limit": limit, "value": value, "unit": unit,
            "threads_allowed": None if allows is None else max(int(allows), 0),
            "applies": applies, "kind": kind, "note": note}


def limit_rows(stack_kib: int = 0, touch_kib: int = 0,
               per_thread_kib: float | None = None) -> list[dict[str, Any]]:
    """One row per limit: its value, and how many more threads this process
    could start with this stack size before it bites (None: no cap).

    ``per_thread_kib`` is the resident cost of one thread (user RSS + kernel);
    ``touch_kib`` is added to it. Without a measurement a nominal
    {NOMINAL_THREAD_KIB} KiB is used, and the note says so.
    """
    stack = stack_kib or default_stack_kib()
    page_kib = sysinfo.PAGE_SIZE // 1024
    guard_kib = page_kib
    threads_now = sysinfo.system_threads()
    maps_now = sysinfo.map_count() or 0
    vsz_now = _status_kib("VmSize")
    root = sysinfo.is_root()
    rows: list[dict[str, Any]] = []

    tmax = sysinfo.sysctl("kernel.threads-max")
    rows.append(_row(
        "kernel.threads-max", tmax, "threads",
        None if tmax is None or threads_now is None else tmax - threads_now,
        tmax is not None, f"system-wide cap on threads; {threads_now:,} exist now"
        if threads_now is not None else "system-wide cap on threads", "sysctl"))

    pmax = sysinfo.sysctl("kernel.pid_max")
    rows.append(_row(
        "kernel.pid_max", pmax, "ids",
        None if pmax is None or threads_now is None else pmax - 1 - threads_now,
        pmax is not None,
        "every thread takes a process id; ids in use by the whole system (and its "
        "other users) count against it", "sysctl"))

    mmax = sysinfo.sysctl("vm.max_map_count")
    maps_per_thread = 2 if guard_kib else 1
    rows.append(_row(
        "vm.max_map_count", mmax, "mappings",
        None if mmax is None else (mmax - maps_now) // maps_per_thread,
        mmax is not None,
        f"per process; each thread stack is {maps_per_thread} mappings (stack + guard "
        f"page); this process already has {maps_now:,}", "sysctl"))

    as_soft, _ = sysinfo.rlimit("AS")
    rows.append(_row(
        "RLIMIT_AS", None if as_soft is None else as_soft // 1024, "KiB",
        None if as_soft is None else (as_soft // 1024 - vsz_now) // (stack + guard_kib),
        as_soft is not None,
        f"address space per process; each thread reserves {stack + guard_kib:,} KiB "
        "(stack + guard)" if as_soft is not None else "unlimited", "rlimit"))

    np_soft, _ = sysinfo.rlimit("NPROC")
    rows.append(_row(
        "RLIMIT_NPROC", np_soft, "tasks", None if root or np_soft is None else np_soft,
        not root and np_soft is not None,
        "not enforced: this process runs as root" if root else
        "threads of all this user's processes count against it", "rlimit"))

    st_soft, _ = sysinfo.rlimit("STACK")
    rows.append(_row(
        "RLIMIT_STACK", None if st_soft is None else st_soft // 1024, "KiB", None, False,
        f"caps no count: it sets the default thread stack ({default_stack_kib():,} KiB "
        "here), which RLIMIT_AS and vm.overcommit_memory=2 then count", "rlimit"))

    overcommit = sysinfo.sysctl("vm.overcommit_memory")
    commit_limit = sysinfo.meminfo_kib("CommitLimit")
    committed = sysinfo.meminfo_kib("Committed_AS")
    strict = overcommit == 2 and commit_limit is not None and committed is not None
    rows.append(_row(
        "vm.overcommit_memory", overcommit, "mode",
        (commit_limit - committed) // stack if strict and commit_limit and committed else None,
        strict,
        "mode 2 (strict) counts every stack in full against CommitLimit" if strict else
        f"mode {overcommit}: stacks are not charged until touched", "sysctl"))

    pids_max, pids_current = pids_cgroup()
    rows.append(_row(
        "cgroup pids.max", pids_max, "tasks",
        None if pids_max is None else pids_max - (pids_current or 0),
        pids_max is not None,
        "no pids controller limit" if pids_max is None else
        f"{pids_current or 0:,} tasks in the cgroup now", "cgroup"))

    cost = (per_thread_kib if per_thread_kib else NOMINAL_THREAD_KIB) + touch_kib
    how = "measured" if per_thread_kib else "nominal"
    mem_limit, mem_usage = memory_cgroup()
    rows.append(_row(
        "memory cgroup", None if mem_limit is None else mem_limit // 1024, "KiB",
        None if mem_limit is None else (mem_limit - (mem_usage or 0)) // 1024 / cost,
        mem_limit is not None,
        "no memory cgroup limit" if mem_limit is None else
        f"at {cost:,.0f} KiB per thread ({how} cost)", "cgroup"))

    avail = sysinfo.mem_available_kib()
    rows.append(_row(
        "MemAvailable", avail, "KiB", int(avail / cost), True,
        f"RAM the system can give without swapping, at {cost:,.0f} KiB per thread "
        f"({how} resident + kernel cost{', plus the touched stack' if touch_kib else ''})",
        "memory"))
    return rows


def _status_kib(key: str) -> int:
    text = sysinfo.read_text("/proc/self/status") or ""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name == key:
            return int(rest.split()[0])
    return 0


def binding_limit(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The applicable limit that allows the fewest threads."""
    capped = [r for r in rows if r["applies"] and r["threads_allowed"] is not None]
    if not capped:
        return None
    row = min(capped, key=lambda r: r["threads_allowed"])
    return {"limit": row["limit"], "threads_allowed": int(row["threads_allowed"]),
            "note": row["note"]}


def sysctl_advice(target_threads: int, stack_kib: int = 0,
                  per_thread_kib: float | None = None) -> pd.DataFrame:
    """What a process with ``target_threads`` threads needs raised (claim C10's
    million threads needed vm.max_map_count and kernel.threads-max)."""
    stack = stack_kib or default_stack_kib()
    cost = per_thread_kib or NOMINAL_THREAD_KIB
    threads_now = sysinfo.system_threads() or 0
    need = {
        "kernel.threads-max": target_threads + threads_now + 1,
        "kernel.pid_max": target_threads + threads_now + 301,
        "vm.max_map_count": 2 * target_threads + (sysinfo.map_count() or 0) + 1,
    }
    rows = []
    for key, needed in need.items():
        current = sysinfo.sysctl(key)
        ok = current is not None and current >= needed
        note = ""
        if key == "kernel.pid_max" and needed > PID_MAX_LIMIT:
            note = f"above the kernel's ceiling of {PID_MAX_LIMIT:,}: not possible"
        rows.append({"setting": key, "current": current, "needed": needed, "enough": ok,
                     "command": "" if ok else f"sysctl -w {key}={needed}", "note": note})
    avail = sysinfo.mem_available_kib()
    mem_need = int(target_threads * cost)
    rows.append({"setting": "MemAvailable (KiB)", "current": avail, "needed": mem_need,
                 "enough": avail >= mem_need, "command": "",
                 "note": f"{cost:,.0f} KiB per thread"})
    as_soft, _ = sysinfo.rlimit("AS")
    as_need = target_threads * (stack + sysinfo.PAGE_SIZE // 1024)
    rows.append({"setting": "RLIMIT_AS (KiB)", "current": as_soft // 1024 if as_soft else None,
                 "needed": as_need, "enough": as_soft is None or as_soft // 1024 >= as_need,
                 "command": "" if as_soft is None else "ulimit -v unlimited",
                 "note": f"{target_threads:,} x {stack:,} KiB stacks of address space"})
    return pd.DataFrame(rows)


def check_params(stack_kib: Any = STACK_KIB.default, touch_kib: Any = TOUCH_KIB.default,
                 target_threads: Any = 1_000_000, per_thread_kib: Any = None) -> dict[str, Any]:
    stack = validate.stack_kib("stack_kib", stack_kib)  # its range: STACK_KIB's (a test)
    touch = validate.integer("touch_kib", touch_kib, **TOUCH_KIB.bounds)
    target = validate.integer("target_threads", target_threads, minimum=1,
                              maximum=100_000_000)
    cost = None
    if per_thread_kib is not None:
        if isinstance(per_thread_kib, bool) or not isinstance(per_thread_kib, int | float):
            raise ParameterError("per_thread_kib", per_thread_kib,
                                          "must be a positive number of KiB or None")
        if not math.isfinite(per_thread_kib) or per_thread_kib <= 0:
            raise ParameterError("per_thread_kib", per_thread_kib,
                                          "must be a positive number of KiB or None")
        cost = float(per_thread_kib)
    return {"stack_kib": stack, "touch_kib": touch, "target_threads": target,
            "per_thread_kib": cost}


def run(stack_kib: Any = STACK_KIB.default, touch_kib: Any = TOUCH_KIB.default,
        target_threads: Any = 1_000_000, per_thread_kib: Any = None) -> Result:
    """Read every limit, compute which binds first, and advise the sysctls a
    ``target_threads`` run needs. Starts no thread."""
    p = check_params(stack_kib, touch_kib, target_threads, per_thread_kib)
    rows = limit_rows(p["stack_kib"], p["touch_kib"], p["per_thread_kib"])
    table = pd.DataFrame(rows)
    advice = sysctl_advice(p["target_threads"], p["stack_kib"], p["per_thread_kib"])
    binding = binding_limit(rows)
    stack = p["stack_kib"] or default_stack_kib()
    summary: dict[str, Any] = {
        "stack_kib": stack,
        "limits": rows,
        "binding": binding,
        "max_threads": None if binding is None else binding["threads_allowed"],
        "advice": advice.to_dict(orient="records"),
        "running_as_root": sysinfo.is_root(),
    }
    return Result(EXPERIMENT, p, summary, {"limits": table, "advice": advice}, None)


def _spawn_child(max_threads: int, stack_kib: int,
                 address_space_mib: int | None, exhaust: bool = False) -> dict[str, Any]:
    return thread_memory.measure_point(max_threads, stack_kib, 0, None, address_space_mib,
                                       exhaust=exhaust)


def check_spawn_until_failure(max_threads: Any, stack_kib: Any, address_space_mib: Any = None,
                              timeout: Any = 300,
                              exhaust: Any = False) -> tuple[int, int, Any, int]:
    """What :func:`spawn_until_failure` refuses, before anything runs (prechecks)."""
    n = validate.integer("max_threads", max_threads, **SPAWN.bounds)
    stack = validate.stack_kib("stack_kib", stack_kib)
    cap = thread_memory.check_address_space("address_space_mib", address_space_mib)
    wait = validate.integer("timeout", timeout, minimum=1, maximum=3600)
    if not isinstance(exhaust, bool):
        raise ParameterError("exhaust", exhaust, "must be True or False")
    return n, stack, cap, wait


def spawn_until_failure(max_threads: Any = SPAWN.default, stack_kib: Any = STACK_KIB.default,
                        address_space_mib: Any = None, timeout: Any = 300,
                        exhaust: Any = False) -> Result:
    """Opt-in: start up to ``max_threads`` threads in a child process and report
    how many started and which limit stopped them (None if none did).

    Bounded by ``max_threads`` (at most the ``memory_spawn_max`` parameter's
    maximum); the threads block, are counted, then released and joined. By default
    the run stops at the reserve of process ids, threads and memory it leaves the rest
    of the machine
    (:mod:`threadcost.runsafety.syslimits`), and ``limit_hit`` names the limit protected.
    ``exhaust=True`` goes to the limit itself (C08's spawn-until-failure): it
    takes process ids from the whole system while it runs, so do not use it on a
    machine others rely on.
    """
    n, stack, cap, wait = check_spawn_until_failure(max_threads, stack_kib,
                                                    address_space_mib, timeout, exhaust)
    point = run_isolated(_spawn_child, {"max_threads": n, "stack_kib": stack,
                                        "address_space_mib": cap, "exhaust": exhaust},
                         timeout=wait)
    stack_used = point["stack_bytes"] // 1024
    limit_hit = point.get("limit_hit")
    summary = {"requested": n, "started": point["started"], "stack_kib": stack_used,
               "limit_hit": limit_hit, "create_seconds": point["create_ns"] / 1e9}
    limit = None
    if limit_hit:
        limit = {k: limit_hit[k] for k in ("limit", "errno", "errno_name", "detail",
                                           "protects", "reserve") if k in limit_hit}
        limit["threads_started"] = point["started"]
    return Result("thread_spawn", {"max_threads": n, "stack_kib": stack,
                                   "address_space_mib": cap, "exhaust": exhaust},
                  summary, {"spawn": pd.DataFrame([{k: v for k, v in point.items()
                                                    if not isinstance(v, dict)}])}, limit)
