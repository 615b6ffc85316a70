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

import errno
import math
from typing import Any

import pandas as pd

from threadcost import sysinfo, validate
from threadcost.errors import ParameterError, errno_name
from threadcost.results import Result

EXPERIMENT = "thread_limits"
DEFAULT_STACK_KIB = 8192  # only if the C default cannot be read
# Rough resident cost of one idle thread when nothing better is known (KiB):
# a kernel stack (16), its slab objects (~6), a page-table page (4), user RSS (8).
NOMINAL_THREAD_KIB = 34
PID_MAX_LIMIT = 4_194_304  # the kernel's ceiling for kernel.pid_max on 64-bit
SPAWN_MAX = 100_000


def default_stack_kib() -> int:
    """The stack size a thread gets when none is asked for (KiB)."""
    from threadcost.native import lib

    value = int(lib.tc_default_stack_bytes())
    return value // 1024 if value > 0 else DEFAULT_STACK_KIB


def _int_or_none(text: str | None) -> int | None:
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


def _memory_cgroup() -> tuple[int | None, int | None]:
    """(limit, usage) in bytes of this process's memory cgroup (v2, else v1)."""
    limit = _int_or_none(sysinfo.cgroup_value("memory.max"))
    usage = _int_or_none(sysinfo.cgroup_value("memory.current"))
    if limit is None and usage is None:
        limit = _int_or_none(sysinfo.cgroup_v1_value("memory", "memory.limit_in_bytes"))
        usage = _int_or_none(sysinfo.cgroup_v1_value("memory", "memory.usage_in_bytes"))
    return limit, usage


def _pids_cgroup() -> tuple[int | None, int | None]:
    limit = _int_or_none(sysinfo.cgroup_value("pids.max"))
    current = _int_or_none(sysinfo.cgroup_value("pids.current"))
    if limit is None and current is None:
        limit = _int_or_none(sysinfo.cgroup_v1_value("pids", "pids.max"))
        current = _int_or_none(sysinfo.cgroup_v1_value("pids", "pids.current"))
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


def _row(limit: str, value: Any, unit: str, allows: int | None, applies: bool,
         note: str, kind: str) -> dict[str, Any]:
    return {"limit": limit, "value": value, "unit": unit,
            "threads_allowed": None if allows is None else max(int(allows), 0),
            "applies": applies, "kind": kind, "note": note}


def limits_table(stack_kib: int = 0, touch_kib: int = 0,
                 per_thread_kib: float | None = None) -> pd.DataFrame:
    """:func:`limit_rows` as a DataFrame."""
    return pd.DataFrame(limit_rows(stack_kib, touch_kib, per_thread_kib))


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

    pids_max, pids_current = _pids_cgroup()
    rows.append(_row(
        "cgroup pids.max", pids_max, "tasks",
        None if pids_max is None else pids_max - (pids_current or 0),
        pids_max is not None,
        "no pids controller limit" if pids_max is None else
        f"{pids_current or 0:,} tasks in the cgroup now", "cgroup"))

    cost = (per_thread_kib if per_thread_kib else NOMINAL_THREAD_KIB) + touch_kib
    how = "measured" if per_thread_kib else "nominal"
    mem_limit, mem_usage = _memory_cgroup()
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
        from threadcost import reserve

        if (pids_refused() or 0) > 0:
            return "cgroup pids.max"
        nearest = reserve.tightest_task_limit()
        for budget in reserve.task_budgets():
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
    pids_max, pids_now = _pids_cgroup()
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


def check_params(stack_kib: Any = 0, touch_kib: Any = 0, target_threads: Any = 1_000_000,
                 per_thread_kib: Any = None) -> dict[str, Any]:
    stack = validate.stack_kib("stack_kib", stack_kib)
    touch = validate.integer("touch_kib", touch_kib, minimum=0, maximum=1024 * 1024)
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


def run(stack_kib: Any = 0, touch_kib: Any = 0, target_threads: Any = 1_000_000,
        per_thread_kib: Any = None) -> Result:
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
    from threadcost.experiments import thread_memory

    return thread_memory.measure_point(max_threads, stack_kib, 0, None, address_space_mib,
                                       exhaust=exhaust)


def spawn_until_failure(max_threads: Any = 40_000, stack_kib: Any = 0,
                        address_space_mib: Any = None, timeout: Any = 300,
                        exhaust: Any = False) -> Result:
    """Opt-in: start up to ``max_threads`` threads in a child process and report
    how many started and which limit stopped them (None if none did).

    Bounded by ``max_threads`` (at most {SPAWN_MAX:,}); the threads block, are
    counted, then released and joined. By default the run stops at the reserve
    of process ids, threads and memory it leaves the rest of the machine
    (:mod:`threadcost.reserve`), and ``limit_hit`` names the limit protected.
    ``exhaust=True`` goes to the limit itself (C08's spawn-until-failure): it
    takes process ids from the whole system while it runs, so do not use it on a
    machine others rely on.
    """
    from threadcost.experiments import thread_memory
    from threadcost.isolate import run_isolated

    n = validate.integer("max_threads", max_threads, minimum=1, maximum=SPAWN_MAX)
    stack = validate.stack_kib("stack_kib", stack_kib)
    cap = thread_memory.check_address_space("address_space_mib", address_space_mib)
    wait = validate.integer("timeout", timeout, minimum=1, maximum=3600)
    if not isinstance(exhaust, bool):
        raise ParameterError("exhaust", exhaust, "must be True or False")
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

