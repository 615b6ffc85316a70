"""Memory per thread: virtual, resident, and the kernel memory RSS hides.

Claims C05, C06, C10, C12 and C16 (C08 is the limits explorer's,
:mod:`threadcost.experiments.thread_memory.limits`).

Every measurement starts N threads in a fresh child process (a clean baseline:
glibc caches the stacks of joined threads, so a second run in the same process
would reuse them; and a limit cannot hurt the caller). Each thread writes
``touch_kib`` of its own stack, checks in and sleeps on a futex. With all of
them asleep the C kernel reads the process's counters (/proc/self/status) and
the system's (/proc/meminfo), and /proc/self/smaps_rollup, an independent
count of resident pages (the kernel walks the page tables for it); optionally
``pmap -x`` reads the process from outside.
The per-thread cost is the slope of each counter against the number of
threads, fitted over many runs, with R^2 and a 95% interval.

What each counter covers:

- ``vsz_kib``: VmSize, address space reserved (stack + guard page per thread);
- ``rss_kib``: VmRSS, user pages resident (the stack pages touched);
- ``rss_rollup_kib``: Rss of smaps_rollup, the same by page walk;
- ``page_tables_kib``: VmPTE, this process's page tables (per process, exact);
- ``kernel_stack_kib``: KernelStack of /proc/meminfo, system-wide (noisy);
- ``slab_kib``: SUnreclaim, system-wide unreclaimable slab (task_struct and
  friends; noisy);
- ``kernel_kib``: kernel stack + page tables + slab, what RSS does not show;
- ``total_kib``: rss + kernel, the true cost of a thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import LimitReached, ParameterError, check_status, errno_name
from threadcost.experiments.thread_memory.checks import (
    DEFAULT_COUNTS,
    DEFAULT_STACK_SIZES,
    DEFAULT_TOUCH_DEPTHS,
    EXPERIMENT,
    EXPERIMENT_STACK,
    EXPERIMENT_TOUCH,
    GRID_REPEATS,
    MAX_REPEATS,
    MAX_THREADS,
    S2_SWEEP,
    SAFETY_KIB,
    check_address_space,
    check_params,
    check_touch,
    effective_stack_kib,
)
from threadcost.experiments.thread_memory.spec import HEADLINE, SERIES
from threadcost.host import sysinfo
from threadcost.progress import bar as tqdm
from threadcost.results import Result
from threadcost.runsafety import syslimits
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

# Re-exported: callers (commands, other experiments, prechecks) import them from here.
__all__ = [
    "DEFAULT_COUNTS", "DEFAULT_STACK_SIZES", "DEFAULT_TOUCH_DEPTHS", "EXPERIMENT",
    "EXPERIMENT_STACK", "EXPERIMENT_TOUCH", "HEADLINE", "MAX_REPEATS", "MAX_THREADS",
    "S2_SWEEP", "SAFETY_KIB", "SERIES", "check_address_space", "check_params", "check_touch",
    "effective_stack_kib",
]


# ------------------------------------------------------- one measurement (child)

def pmap_rss_kib(pid: int) -> int | None:
    """Total RSS of a process as ``pmap -x`` reads it from outside, or None."""
    import shutil
    import subprocess

    if shutil.which("pmap") is None:
        return None
    try:
        proc = subprocess.run(["pmap", "-x", str(pid)], capture_output=True, text=True,
                              timeout=60, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in reversed(proc.stdout.splitlines()):
        fields = line.split()
        if fields[:2] == ["total", "kB"] and len(fields) >= 4:
            return int(fields[3])
    return None


def reserve_budget(threads: int, touch_kib: int, exhaust: bool) -> tuple[int, Any]:
    """How many of ``threads`` this run may start: all of them with ``exhaust``,
    else as many as leave the machine its reserves (:mod:`threadcost.runsafety.syslimits`).
    Returns (threads to start, the binding budget or None)."""
    if exhaust:
        return threads, None

    budget = syslimits.thread_budget(syslimits.NOMINAL_THREAD_KIB + touch_kib)
    if not budget.caps(threads):
        return threads, None
    if budget.allowed is None or budget.allowed < 1:
        hit = syslimits.reserve_hit(budget, 0, threads)
        raise LimitReached(hit["limit"], 0, None, hit["detail"])
    return budget.allowed, budget


# Joined threads still hold their process ids for a moment while the kernel
# releases them: the child waits (bounded) until they are gone before answering.
RELEASE_WAIT_S = 10.0


def wait_threads_released(baseline: int, timeout: float = RELEASE_WAIT_S) -> int:
    """Wait until this process has at most ``baseline`` threads; return the count."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        now = int(_status_field("Threads"))
        if now <= baseline or time.monotonic() >= deadline:
            return now
        time.sleep(0.01)


def measure_point(threads: int, stack_kib: int, touch_kib: int, cpus: list[int] | None,
                  address_space_mib: int | None, pmap: bool = False,
                  exhaust: bool = False) -> dict[str, Any]:
    """Start ``threads`` threads in *this* process, read every counter while they
    sleep, join them. Meant to run in a fresh child (see :func:`measure_isolated`).

    Returns the raw readings as a flat dict (KiB, counts, ns); ``limit_hit`` is
    set when creation stopped at a system limit, or (without ``exhaust``) at the
    reserve kept below one (:mod:`threadcost.runsafety.syslimits`).
    """
    import resource

    from threadcost.native import ffi, lib

    if address_space_mib is not None:
        vsz = int(_status_field("VmSize"))
        cap = (vsz + address_space_mib * 1024) * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    cpu_arr = ffi.new("int[]", cpus) if cpus else ffi.NULL
    out = ffi.new("tc_thread_memory_result *")
    group = ffi.new("tc_thread_group **")
    import os

    pmap_before = pmap_rss_kib(os.getpid()) if pmap else None
    baseline_threads = int(_status_field("Threads"))
    to_start, budget = reserve_budget(threads, touch_kib, exhaust)
    refused_before = syslimits.pids_refused()
    status = lib.tc_thread_memory_start(to_start, stack_kib, touch_kib, cpu_arr,
                                        len(cpus or []), group, out)
    refused_after = syslimits.pids_refused()
    pmap_during = None
    try:
        if pmap and pmap_before is not None and status == lib.TC_OK:
            pmap_during = pmap_rss_kib(os.getpid())
    finally:
        if group[0] != ffi.NULL:
            lib.tc_thread_memory_stop(group[0], out)
        wait_threads_released(baseline_threads)
    if status == lib.TC_EINVAL:
        raise ParameterError("stack_kib", stack_kib,
                             "was refused by pthread_attr_setstacksize or leaves no room "
                             f"for a {touch_kib} KiB touch")
    check_status("tc_thread_memory", status, out.err)

    def status_of(s: Any) -> dict[str, int]:
        return {"vsz": s.vsz_kib, "rss": s.rss_kib, "pte": s.pte_kib, "threads": s.threads}

    def mem_of(m: Any) -> dict[str, int]:
        return {"kstack": m.kernel_stack_kib, "pt": m.page_tables_kib,
                "slab": m.sunreclaim_kib}

    b, d, a = status_of(out.before), status_of(out.during), status_of(out.after)
    mb, md, ma = mem_of(out.mem_before), mem_of(out.mem_during), mem_of(out.mem_after)
    point: dict[str, Any] = {
        "requested": threads, "started": int(out.started),
        "stack_bytes": int(out.stack_bytes), "guard_bytes": int(out.guard_bytes),
        "touch_kib": touch_kib, "too_deep": int(out.too_deep),
        "cached_stacks_held": int(out.ballast),
        "vsz_kib": d["vsz"] - b["vsz"], "rss_kib": d["rss"] - b["rss"],
        "rss_rollup_kib": (out.rollup_during_kib - out.rollup_before_kib)
        if out.rollup_during_kib > 0 and out.rollup_before_kib > 0 else math.nan,
        "rss_pmap_kib": (pmap_during - pmap_before)
        if pmap_during is not None and pmap_before is not None else math.nan,
        "page_tables_kib": d["pte"] - b["pte"],
        "kernel_stack_kib": md["kstack"] - mb["kstack"],
        "slab_kib": md["slab"] - mb["slab"],
        "system_page_tables_kib": md["pt"] - mb["pt"],
        "threads_before": b["threads"], "threads_during": d["threads"],
        "threads_after": a["threads"],
        "rss_after_kib": a["rss"] - b["rss"], "vsz_after_kib": a["vsz"] - b["vsz"],
        "kernel_stack_after_kib": ma["kstack"] - mb["kstack"],
        "create_ns": int(out.create_ns), "settle_ns": int(out.settle_ns),
        "join_ns": int(out.join_ns),
        "limit_hit": None,
    }
    point["kernel_kib"] = (point["kernel_stack_kib"] + point["page_tables_kib"]
                           + point["slab_kib"])
    point["total_kib"] = point["rss_kib"] + point["kernel_kib"]
    if status == lib.TC_ELIMIT:
        probe = {"maps": int(out.probe.maps), "system_threads": int(out.probe.system_threads),
                 "vsz_kib": int(out.probe.vsz_kib), "threads": int(out.probe.threads)}
        if refused_before is not None and refused_after is not None:
            probe["cgroup_refused"] = refused_after - refused_before
        hit = syslimits.explain_failure(int(out.err), probe, int(out.stack_bytes),
                                      int(out.guard_bytes))
        hit.update({"threads_started": int(out.started), "threads_requested": threads})
        point["limit_hit"] = hit
    elif budget is not None:
        point["limit_hit"] = syslimits.reserve_hit(budget, int(out.started), threads)
    point["requested"] = threads
    return point


def _status_field(key: str) -> str:
    text = sysinfo.read_text("/proc/self/status") or ""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name == key:
            return rest.split()[0]
    return "0"


def measure_isolated(threads: int, stack_kib: int, touch_kib: int,
                     cpus: list[int] | None = None, address_space_mib: int | None = None,
                     pmap: bool = False, exhaust: bool = False) -> dict[str, Any]:
    """:func:`measure_point` in a fresh child process with a deadline."""

    return run_isolated(measure_point, {
        "threads": threads, "stack_kib": stack_kib, "touch_kib": touch_kib, "cpus": cpus,
        "address_space_mib": address_space_mib, "pmap": pmap, "exhaust": exhaust,
    }, timeout=60.0 + threads / 500)


# ------------------------------------------------------------------ analysis

# pmap -x reads a process's every mapping from outside (two per thread): at 10,000 threads
# each reading took about half a second. Its total differs from VmRSS by an offset (a few
# hundred KiB, what its bracketing adds) that is the same in every repeat of a count:
# within 8 KiB at 109 of the 110 counts of the five stored default sweeps, 56 KiB at one.
# So only each count's first repeat reads it, and its slope over every count is fitted
# as before (the same to 0.001 KiB per thread in those sweeps, refitted on repeat 0).
PMAP_REPEATS = 1


def _measure_all(configs: list[tuple[int, int, int]], cpus: list[int] | None, repeats: int,
                 cap: int | None, progress: bool, label: str,
                 pmap: bool = False,
                 exhaust: bool = False) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """Measure each (threads, stack_kib, touch_kib) ``repeats`` times, repeats
    interleaved (all configs once, then again) so slow drift in the system-wide
    counters spreads over every point. Stops at the first limit (or reserve)."""

    rows: list[dict[str, Any]] = []
    limit_hit = None
    total = len(configs) * repeats
    with tqdm(total=total, desc=label, unit="run", disable=not progress, leave=False) as bar:
        for rep in range(repeats):
            for index, (threads, stack, touch) in enumerate(configs):
                refused = None if exhaust else syslimits.refused_before_spawn(
                    threads, syslimits.NOMINAL_THREAD_KIB + touch)
                if refused is not None:  # answered before any thread starts
                    if not rows:
                        raise LimitReached(refused["limit"], 0, None, refused["detail"])
                    limit_hit = refused
                    break
                try:
                    point = measure_isolated(threads, stack, touch, cpus, cap,
                                             pmap=pmap and rep < PMAP_REPEATS, exhaust=exhaust)
                except LimitReached as exc:  # not even one more thread: keep what ran
                    if not rows:
                        raise
                    limit_hit = {"limit": exc.limit, "errno": exc.errno,
                                 "errno_name": errno_name(exc.errno) if exc.errno else "",
                                 "detail": exc.detail, "threads_started": 0,
                                 "threads_requested": threads}
                    break
                hit = point.pop("limit_hit")
                rows.append({"config": index, "repeat": rep, "threads": threads,
                             "stack_kib": stack,
                             **point, "limited": hit is not None})
                bar.update(1)
                if hit is not None:
                    limit_hit = hit
                    break
            if limit_hit is not None:
                break
    return pd.DataFrame(rows), limit_hit


def fit_series(points: pd.DataFrame, x: str = "started") -> dict[str, dict[str, Any]]:
    """Per-thread slope of every counter against the threads actually started
    (a run cut short by a limit still measured the threads it started).

    With fewer than 3 runs or a single thread count there is no line to fit:
    the per-thread value is then the median of delta / threads, marked so.
    """

    ok = points
    fits: dict[str, dict[str, Any]] = {}
    for name in SERIES:
        data = ok[[x, name]].dropna()
        if data.empty:
            continue
        if len(data) >= 3 and data[x].nunique() >= 2:
            f = stats.fit_line(data[x], data[name])
            fits[name] = {"per_thread": f.slope, "ci95_low": f.slope_ci95_low,
                          "ci95_high": f.slope_ci95_high, "r2": f.r2,
                          "intercept_kib": f.intercept, "n": f.n, "method": "slope"}
        else:
            ratio = (data[name] / data[x]).astype(float)
            fits[name] = {"per_thread": float(ratio.median()), "ci95_low": None,
                          "ci95_high": None, "r2": None, "intercept_kib": None,
                          "n": len(data), "method": "delta / threads"}
    return fits


def _per_thread(fits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {name: fits[name]["per_thread"] for name in HEADLINE if name in fits}
    out["fit"] = fits
    return out


def run(thread_counts: Any = None, stack_kib: Any = 0, touch_kib: Any = 0, pin: Any = None,
        repeats: Any = 3, address_space_mib: Any = None, pmap: Any = False,
        progress: bool = False, exhaust: Any = False) -> Result:
    """Sweep thread counts; per-thread VSZ, RSS and kernel memory by slope.

    ``thread_counts`` defaults to claim C12's sweep (100..1000 step 50) plus
    2,000, 5,000 and 10,000. ``stack_kib`` 0 is the system default;
    ``touch_kib`` is how much of its stack each thread writes; ``pin`` a CPU
    list (threads pinned round-robin); ``repeats`` runs per count, each in a
    fresh process; ``address_space_mib`` caps the measuring process's address
    space (RLIMIT_AS) that far above its baseline, e.g. to replay a 32-bit
    machine's 3 GiB; ``pmap`` also reads the RSS of each count's first run from
    outside with ``pmap -x`` (:data:`PMAP_REPEATS`; ignored when pmap is not
    installed; the other repeats store no pmap reading). A limit stops the
    sweep: the result is partial and ``limit_hit`` names the limit. Unless
    ``exhaust`` is True, a run stops at the reserve it keeps below each
    system-wide limit (process ids, threads-max, MemAvailable), and
    ``limit_hit`` names the limit that reserve protects.
    """
    p = check_params(thread_counts, stack_kib, touch_kib, pin, repeats, address_space_mib)
    p["pmap"] = _flag(pmap)
    p["exhaust"] = _flag(exhaust, "exhaust")
    configs = [(n, p["stack_kib"], p["touch_kib"]) for n in p["thread_counts"]]
    points, limit_hit = _measure_all(configs, p["pin"], p["repeats"],
                                     p["address_space_mib"], progress, "threads", p["pmap"],
                                     p["exhaust"])

    fits = fit_series(points)
    last = points.iloc[-1]
    summary: dict[str, Any] = {
        "per_thread": _per_thread(fits),
        "threads_started": int(last.started),
        "threads_requested": int(last.requested),
        "stack_kib": int(last.stack_bytes) // 1024,
        "guard_kib": int(last.guard_bytes) // 1024,
        "max_threads_measured": int(points.started.max()),
        "runs": len(points),
        "threads_left_behind": int((points.threads_after - points.threads_before
                                    + points.cached_stacks_held).max()),
        "create_us_per_thread": stats.distribution(
            points.create_ns / points.started.clip(lower=1) / 1e3),
        "counters": SERIES,
    }
    return Result(EXPERIMENT, p, summary, {"points": points}, _limit(limit_hit))


def _flag(value: Any, name: str = "pmap") -> bool:
    if isinstance(value, bool):
        return value
    raise ParameterError(name, value, "must be True or False")


def _limit(hit: dict[str, Any] | None) -> dict[str, Any] | None:
    if hit is None:
        return None
    return {k: hit[k] for k in ("limit", "errno", "errno_name", "detail", "threads_started",
                                "threads_requested", "protects", "reserve") if k in hit}


def _grid(name: str, key: str, values: list[int], threads: int,
          make: Callable[[int], tuple[int, int, int]], cpus: list[int] | None, repeats: int,
          progress: bool,
          exhaust: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any] | None]:
    points, limit_hit = _measure_all([make(v) for v in values], cpus, repeats, None,
                                     progress, name, exhaust=exhaust)
    points[key] = [values[i] for i in points.config]
    ok = points[~points.limited]
    rows = []
    for value, group in ok.groupby(key, sort=False):
        per = {c: group[c] / group.started for c in SERIES}
        rows.append({key: value, "stack_used_kib": int(group.stack_bytes.iloc[0]) // 1024,
                     "runs": len(group),
                     **{f"{c}_per_thread": float(np.median(per[c])) for c in SERIES},
                     **{f"{c}_per_thread_min": float(np.min(per[c])) for c in SERIES},
                     **{f"{c}_per_thread_max": float(np.max(per[c])) for c in SERIES}})
    return points, pd.DataFrame(rows), limit_hit


def check_grid(name: str, values: Any, default: list[int]) -> list[int]:
    return validate.integer_list(name, default if values is None else values, minimum=0,
                                 maximum=1024 * 1024, max_items=64)


def check_stack_grid(stack_sizes_kib: Any, threads: Any, touch_kib: Any = 0, pin: Any = None,
                     repeats: Any = GRID_REPEATS.default) -> dict[str, Any]:
    """What :func:`stack_grid` refuses, before anything runs (threadcost.paper.prechecks)."""
    n = validate.integer("threads", threads, minimum=1, maximum=MAX_THREADS)
    asked = check_grid("stack_sizes_kib", stack_sizes_kib, DEFAULT_STACK_SIZES)
    # One grid for every machine: a size below this machine's smallest thread stack (the
    # 16 and 64 KiB of the default grid on arm64) is left out and named in the summary.
    floor = sysinfo.thread_stack_min_kib()
    below = [s for s in asked if 0 < s < floor]
    sizes = [validate.stack_kib("stack_sizes_kib", s) for s in asked if s not in below]
    if not sizes:
        raise ParameterError("stack_sizes_kib", asked, f"every size is below this machine's "
                             f"smallest thread stack ({floor} KiB)")
    touch = validate.integer("touch_kib", touch_kib, minimum=0, maximum=1024 * 1024)
    for s in sizes:
        check_touch("touch_kib", touch, s, n)
    cpus = validate.cpus("pin", pin)
    reps = validate.integer("repeats", repeats, minimum=1, maximum=MAX_REPEATS)
    p = {"stack_sizes_kib": sizes, "threads": n, "touch_kib": touch, "pin": cpus,
         "repeats": reps, "thread_stack_min_kib": floor, "below_min_kib": below}
    return p


def stack_grid(stack_sizes_kib: Any = None, threads: Any = 1000, touch_kib: Any = 0,
               pin: Any = None, repeats: Any = GRID_REPEATS.default, progress: bool = False,
               exhaust: Any = False) -> Result:
    """Per-thread VSZ and RSS for each stack size (0 = the default): VSZ follows
    the stack size, RSS does not. Claim C10 (Rust's 2 MiB stacks) when 2048 is
    in the grid."""
    p = check_stack_grid(stack_sizes_kib, threads, touch_kib, pin, repeats)
    floor, below = p.pop("thread_stack_min_kib"), p.pop("below_min_kib")
    sizes, n, touch, cpus, reps = (p["stack_sizes_kib"], p["threads"], p["touch_kib"],
                                   p["pin"], p["repeats"])
    points, table, hit = _grid("stack sizes", "stack_kib_asked", sizes, n,
                               lambda s: (n, s, touch), cpus, reps, progress,
                               _flag(exhaust, "exhaust"))
    summary: dict[str, Any] = {"per_stack_size": table.to_dict(orient="records"),
                               "thread_stack_min_kib": floor, "below_min_kib": below}
    return Result(EXPERIMENT_STACK, p, summary, {"points": points, "per_stack_size": table},
                  _limit(hit))


def check_touch_grid(touch_depths_kib: Any, threads: Any, stack_kib: Any = 0, pin: Any = None,
                     repeats: Any = GRID_REPEATS.default) -> dict[str, Any]:
    """What :func:`touch_grid` refuses, before anything runs (threadcost.paper.prechecks)."""
    n = validate.integer("threads", threads, minimum=1, maximum=MAX_THREADS)
    stack = validate.stack_kib("stack_kib", stack_kib)
    depths = check_grid("touch_depths_kib", touch_depths_kib, DEFAULT_TOUCH_DEPTHS)
    depths = [check_touch("touch_depths_kib", d, stack, n) for d in depths]
    cpus = validate.cpus("pin", pin)
    reps = validate.integer("repeats", repeats, minimum=1, maximum=MAX_REPEATS)
    p = {"touch_depths_kib": depths, "threads": n, "stack_kib": stack, "pin": cpus,
         "repeats": reps}
    return p


def touch_grid(touch_depths_kib: Any = None, threads: Any = 1000, stack_kib: Any = 0,
               pin: Any = None, repeats: Any = GRID_REPEATS.default, progress: bool = False,
               exhaust: Any = False) -> Result:
    """Per-thread RSS for each stack touch depth: RSS follows the depth touched.
    Claim C06 (400 KiB per thread) when 400 is in the grid."""
    p = check_touch_grid(touch_depths_kib, threads, stack_kib, pin, repeats)
    depths, n, stack, cpus, reps = (p["touch_depths_kib"], p["threads"], p["stack_kib"],
                                    p["pin"], p["repeats"])
    points, table, hit = _grid("touch depths", "touch_kib_asked", depths, n,
                               lambda t: (n, stack, t), cpus, reps, progress,
                               _flag(exhaust, "exhaust"))

    ok = points[~points.limited]
    fit = None
    if len(ok) >= 3 and ok.touch_kib.nunique() >= 2:
        f = stats.fit_line(ok.touch_kib, ok.rss_kib / ok.started)
        fit = {"rss_per_touched_kib": f.slope, "ci95_low": f.slope_ci95_low,
               "ci95_high": f.slope_ci95_high, "r2": f.r2, "untouched_kib": f.intercept}
    summary: dict[str, Any] = {"per_touch_depth": table.to_dict(orient="records"),
                               "rss_vs_touch_fit": fit}
    return Result(EXPERIMENT_TOUCH, p, summary, {"points": points, "per_touch_depth": table},
                  _limit(hit))
