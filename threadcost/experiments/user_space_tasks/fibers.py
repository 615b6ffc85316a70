"""C fibers: user-space tasks with their own small stacks, switched on one thread.

Two implementations of the switch (``impl``):

- ``ucontext``: glibc's ``makecontext``/``swapcontext``. Each switch also saves
  and restores the signal mask (``rt_sigprocmask``), so it enters the kernel
  once per switch even though nothing is scheduled there.
- ``asm``: a hand-written x86-64 register switch (native/fibers.c): callee-saved
  registers pushed, stack pointer swapped, registers popped. No system call.
  On other architectures it falls back to ucontext and says so.

Three measurements, all in a child process pinned to one CPU
(:func:`threadcost.runsafety.isolate.run_isolated`):

- switch: fibers A and B ping-pong; one round trip is A->B->A (two switches);
- memory: ``count`` idle fibers, each having written ``touch_kib`` of its stack;
  RSS and VSZ per fiber are the slopes of /proc/self/status against the count;
- creation: per fiber, the time to map its stack with a guard page and prepare
  its context, and the first switch into it.

A fiber that overflowed its stack would hit the PROT_NONE guard page below it
and die with SIGSEGV; valid input never gets there (``touch_kib`` must leave
``RESERVE_KIB`` of the stack free), and the child process would take the
fault, not the caller.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import ParameterError, check_status
from threadcost.experiments.parameters import declared
from threadcost.host import sysinfo
from threadcost.native import ffi, lib, proc_status_dict
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate
from threadcost.settings.validate import one_cpu

EXPERIMENT = "fibers"
IMPLS = {"ucontext": lib.TC_FIBER_UCONTEXT, "asm": lib.TC_FIBER_ASM}
RESERVE_KIB = int(lib.TC_FIBER_RESERVE_KIB)
MAX_ITERATIONS = 10_000_000
# Each fiber stack is two mappings (guard page + stack): stay well inside
# vm.max_map_count, with room for the process's own mappings.
MAP_MARGIN = 4000


def asm_is_native() -> bool:
    """True when ``impl="asm"`` is the hand-written switch on this machine."""
    return bool(lib.tc_fiber_asm_native())


def impl_description(impl: str) -> str:
    if impl == "ucontext":
        return "glibc makecontext/swapcontext (saves the signal mask: one syscall per switch)"
    if asm_is_native():
        return "hand-written x86-64 register switch (no syscall)"
    return "ucontext fallback (no hand-written switch for this architecture)"


def max_fibers() -> int:
    map_count = sysinfo.sysctl("vm.max_map_count") or 65530
    return max(1, (map_count - MAP_MARGIN) // 2)


# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters).
SWITCHES, WARMUP = declared("tasks_switch_iterations"), declared("tasks_warmup")
COUNT, STACK_KIB = declared("tasks_fiber_count"), declared("tasks_fiber_stack_kib")
POINTS, TOUCH_KIB = declared("tasks_memory_points"), declared("tasks_touch_kib")
CPU, IMPL = declared("tasks_cpu"), declared("tasks_fiber_impls")


def check_params(switch_iterations: Any = SWITCHES.default, count: Any = COUNT.default,
                 stack_kib: Any = STACK_KIB.default, touch_kib: Any = tuple(TOUCH_KIB.default),
                 impl: Any = "asm", warmup: Any = WARMUP.default, cpu: Any = CPU.default,
                 points: Any = POINTS.default) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError)."""
    p: dict[str, Any] = {
        "switch_iterations": validate.integer("switch_iterations", switch_iterations,
                                              **SWITCHES.bounds),
        "warmup": validate.integer("warmup", warmup, **WARMUP.bounds),
        "count": validate.integer("count", count, minimum=COUNT.minimum, maximum=max_fibers()),
        "stack_kib": validate.stack_kib("stack_kib", stack_kib, allow_default=False),
        "impl": validate.choice("impl", impl, IMPL.choices),
        "points": validate.integer("points", points, **POINTS.bounds),
    }
    touches = validate.integer_list("touch_kib", touch_kib, **TOUCH_KIB.bounds, max_items=32)
    limit = p["stack_kib"] - RESERVE_KIB
    for t in touches:
        if t > limit:
            raise ParameterError(
                "touch_kib", touch_kib,
                f"every depth must be at most stack_kib - {RESERVE_KIB} = {limit} KiB "
                f"(the fiber's own frames and a signal frame need the rest; touching "
                f"the whole stack would hit its guard page)")
    p["touch_kib"] = touches
    p["points"] = min(p["points"], p["count"] + 1)
    p["cpu"] = one_cpu("cpu", cpu, allow_none=True)
    # each fiber: its stack's touched pages plus a page of frames, a page of
    # page tables at worst; the virtual reservation is overcommitted
    need = p["count"] * (max(touches) + 8)
    validate.memory_fits("count", count, need)
    return p


def _as_array(buf: Any, n: int) -> np.ndarray:
    return np.frombuffer(ffi.buffer(buf, n * 8), dtype=np.int64).copy()


def _measure(p: dict[str, Any]) -> dict[str, Any]:
    """Child side: pin, then the switch and one memory run per touch depth."""
    if p["cpu"] is not None:
        err = lib.tc_pin_self(p["cpu"])
        if err:
            raise ParameterError("cpu", p["cpu"], f"cannot pin to it (errno {err})")
    impl = IMPLS[p["impl"]]
    n = p["switch_iterations"]
    samples = ffi.new("int64_t[]", n)
    pr = ffi.new("tc_fiber_pingpong_result *")
    status = lib.tc_fiber_pingpong(impl, n, p["warmup"], p["stack_kib"], samples, pr)
    check_status("tc_fiber_pingpong", status, pr.err)
    out: dict[str, Any] = {
        "switch_status": int(status), "switch_err": int(pr.err),
        "samples": _as_array(samples, n) if status == lib.TC_OK else np.zeros(0, np.int64),
        "batch_ns": int(pr.batch_ns), "timer_overhead_ns": int(pr.timer_overhead_ns),
        "batch_voluntary": int(pr.batch_voluntary),
        "batch_involuntary": int(pr.batch_involuntary),
        "cpu_before": int(pr.cpu_before), "cpu_after": int(pr.cpu_after),
        "memory": [],
    }
    count, npoints = p["count"], p["points"]
    for touch in p["touch_kib"]:
        pts = ffi.new("tc_fiber_mem_point[]", npoints)
        cns = ffi.new("int64_t[]", count)
        sns = ffi.new("int64_t[]", count)
        mr = ffi.new("tc_fiber_memory_result *")
        status = lib.tc_fiber_memory(impl, count, p["stack_kib"], touch, npoints, pts,
                                     cns, sns, mr)
        check_status("tc_fiber_memory", status, mr.err)
        made = int(mr.created)
        out["memory"].append({
            "touch_kib": touch, "status": int(status), "err": int(mr.err), "created": made,
            "points": [{"fibers": int(pts[i].fibers), "vsz_kib": int(pts[i].vsz_kib),
                        "rss_kib": int(pts[i].rss_kib), "rss_anon_kib": int(pts[i].rss_anon_kib)}
                       for i in range(mr.points_filled)],
            "create_ns": _as_array(cns, made), "start_ns": _as_array(sns, made),
            "before": proc_status_dict(mr.before), "after_free": proc_status_dict(mr.after_free),
            "free_ns": int(mr.free_ns),
        })
        if status == lib.TC_ELIMIT:
            break
    return out


def _slope(points: pd.DataFrame, column: str) -> dict[str, float] | None:
    if len(points) < 3 or points.fibers.nunique() < 2:
        return None
    return stats.fit_line(points.fibers, points[column]).as_dict()


def _per_fiber_row(row: dict[str, Any]) -> dict[str, Any]:
    """One flat CSV row of a per-touch-depth summary."""
    rss_ci = row["rss_ci95"] or [None, None]
    vsz_ci = row["vsz_ci95"] or [None, None]
    return {"touch_kib": row["touch_kib"], "fibers": row["fibers"],
            "rss_kib": row["rss_kib"], "rss_ci95_low": rss_ci[0], "rss_ci95_high": rss_ci[1],
            "rss_r2": row["rss_r2"], "vsz_kib": row["vsz_kib"], "vsz_ci95_low": vsz_ci[0],
            "vsz_ci95_high": vsz_ci[1], "vsz_r2": row["vsz_r2"],
            "create_ns_p50": row["create_ns"]["p50"], "start_ns_p50": row["start_ns"]["p50"]}


def _timeout(p: dict[str, Any]) -> float:
    work = p["switch_iterations"] * 2 * 5e-6 + p["count"] * len(p["touch_kib"]) * 2e-4
    return 60.0 + 3 * work


def headline_rows(p: dict[str, Any], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The fiber's cells of the paper's headline figure (see threadcost.views.summary).

    Only the hand-written switch speaks for "a fiber" there (it is what fiber
    libraries use); a ucontext run reports no headline rows.
    """
    rows: list[dict[str, Any]] = []
    if p["impl"] != "asm" or not summary.get("asm_native"):
        return rows
    rt = summary["round_trip_ns"]
    if rt.get("n"):
        rows.append({"task": "fiber", "metric": "switch_ns", "value": rt["p50"] / 2,
                     "ci_low": rt["min"] / 2, "ci_high": rt["p90"] / 2,
                     "note": f"{p['impl']} switch: median round trip / 2 (two switches per "
                             "round trip, clock reads included); interval min..p90"})
    per = summary.get("per_fiber")
    if per and per.get("rss_kib") is not None:
        lo, hi = per["rss_ci95"] or (None, None)
        rows.append({"task": "fiber", "metric": "rss_kib", "value": per["rss_kib"],
                     "ci_low": lo, "ci_high": hi,
                     "note": f"slope of RSS over fiber count, {per['touch_kib']} KiB of stack "
                             "touched; a fiber has no kernel task, only its stack mapping"})
        create, start = per["create_ns"], per["start_ns"]
        if create.get("n") and start.get("n"):
            rows.append({"task": "fiber", "metric": "launch_ns",
                         "value": create["p50"] + start["p50"],
                         "ci_low": create["min"] + start["min"],
                         "ci_high": create["p90"] + start["p90"],
                         "note": "median create (mmap'd stack with guard page + context "
                                 "set-up) + median first switch into it"})
    return rows


def run(switch_iterations: Any = SWITCHES.default, count: Any = COUNT.default,
        stack_kib: Any = STACK_KIB.default, touch_kib: Any = tuple(TOUCH_KIB.default),
        impl: Any = "asm", warmup: Any = WARMUP.default, cpu: Any = CPU.default,
        points: Any = POINTS.default) -> Result:
    """Fiber switch, memory and creation for one implementation.

    ``switch_iterations`` timed round trips (after ``warmup``) between two
    fibers with ``stack_kib`` KiB stacks; ``count`` idle fibers per depth in
    ``touch_kib`` (an int or a list), with /proc/self/status read ``points``
    times; everything pinned to CPU ``cpu`` ("auto": the first CPU this process
    may use; None: not pinned) in a child
    process. Times are ns; ``round_trip_ns`` includes one clock read
    (``timer_overhead_ns`` measures it); ``batch_round_trip_ns`` has none.
    """
    p = check_params(switch_iterations, count, stack_kib, touch_kib, impl, warmup, cpu, points)
    raw = run_isolated(_measure, {"p": p}, timeout=_timeout(p))

    samples = raw["samples"]
    n = p["switch_iterations"]
    summary: dict[str, Any] = {
        "impl": p["impl"],
        "impl_description": impl_description(p["impl"]),
        "asm_native": asm_is_native(),
        "round_trip_ns": stats.distribution(samples),
        "batch_round_trip_ns": raw["batch_ns"] / n,
        "switch_ns_batch": raw["batch_ns"] / n / 2,
        "timer_overhead_ns": raw["timer_overhead_ns"],
        # the kernel's own count (getrusage of the thread) over the batch: a switch
        # between fibers is not a kernel context switch
        "switches_per_round_trip": (raw["batch_voluntary"] + raw["batch_involuntary"]) / n
        if raw["batch_voluntary"] >= 0 else None,
        "pinned_cpu": p["cpu"],
        "cpu_before_after": [raw["cpu_before"], raw["cpu_after"]],
    }
    limit_hit = None
    point_rows: list[dict[str, Any]] = []
    creation_rows: list[pd.DataFrame] = []
    per_touch: list[dict[str, Any]] = []
    for mem in raw["memory"]:
        frame = pd.DataFrame(mem["points"])
        for row in mem["points"]:
            point_rows.append({"touch_kib": mem["touch_kib"], **row})
        creation_rows.append(pd.DataFrame({
            "touch_kib": mem["touch_kib"], "fiber": np.arange(mem["created"]),
            "create_ns": mem["create_ns"], "start_ns": mem["start_ns"]}))
        rss, vsz = _slope(frame, "rss_kib"), _slope(frame, "vsz_kib")
        per_touch.append({
            "touch_kib": mem["touch_kib"], "fibers": mem["created"],
            "rss_kib": rss["slope"] if rss else None,
            "rss_ci95": [rss["slope_ci95_low"], rss["slope_ci95_high"]] if rss else None,
            "rss_r2": rss["r2"] if rss else None,
            "vsz_kib": vsz["slope"] if vsz else None,
            "vsz_ci95": [vsz["slope_ci95_low"], vsz["slope_ci95_high"]] if vsz else None,
            "vsz_r2": vsz["r2"] if vsz else None,
            "create_ns": stats.distribution(mem["create_ns"]),
            "start_ns": stats.distribution(mem["start_ns"]),
            "rss_left_after_free_kib": mem["after_free"]["rss_kib"] - mem["before"]["rss_kib"],
            # unmapping the stacks, timed all together: the mean end of one fiber's life
            "free_ns_mean": mem["free_ns"] / mem["created"] if mem["created"] else None,
        })
        if mem["status"] == lib.TC_ELIMIT:
            limit_hit = {"limit": "fiber stack mapping refused (vm.max_map_count, RLIMIT_AS "
                                  "or memory)", "errno": mem["err"],
                         "fibers_created": mem["created"]}
    summary["per_fiber"] = per_touch[0] if per_touch else None
    summary["per_fiber_by_touch"] = per_touch
    all_create = np.concatenate([f.create_ns.to_numpy() for f in creation_rows]) \
        if creation_rows else np.zeros(0)
    summary["create_ns"] = stats.distribution(all_create)
    summary["headline"] = headline_rows(p, summary)
    tables = {
        "round_trips": pd.DataFrame({"round_trip_ns": samples}),
        "memory_points": pd.DataFrame(point_rows),
        "per_fiber": pd.DataFrame([_per_fiber_row(row) for row in per_touch]),
        "creation": pd.concat(creation_rows, ignore_index=True) if creation_rows
        else pd.DataFrame(columns=["touch_kib", "fiber", "create_ns", "start_ns"]),
    }
    return Result(EXPERIMENT, p, summary, tables, limit_hit)


def run_order(nfibers: Any = 4, rounds: Any = 3, impl: Any = "asm",
              stack_kib: Any = 64) -> dict[str, Any]:
    """Round-robin ``nfibers`` fibers for ``rounds`` steps each; returns the trace.

    ``trace`` lists ``(fiber, step)`` in the order the steps ran; a correct
    scheduler and switch give fiber 0..n-1 for step 0, then for step 1, ...
    """
    n = validate.integer("nfibers", nfibers, minimum=1, maximum=1000)
    r = validate.integer("rounds", rounds, minimum=1, maximum=100_000)
    if n * r > 1_000_000:
        raise ParameterError("rounds", rounds, "nfibers * rounds must be at most 1,000,000")
    kind = validate.choice("impl", impl, IMPLS)
    size = validate.stack_kib("stack_kib", stack_kib, allow_default=False)
    return run_isolated(_order_child, {"n": n, "r": r, "impl": IMPLS[kind], "size": size},
                        timeout=60)


def _order_child(n: int, r: int, impl: int, size: int) -> dict[str, Any]:
    trace = ffi.new("int32_t[]", n * r)
    finished = ffi.new("int *")
    status = lib.tc_fiber_order(impl, n, r, size, trace, finished)
    check_status("tc_fiber_order", status)
    return {"status": int(status), "finished": int(finished[0]),
            "trace": [(int(trace[i]) // 1_000_000, int(trace[i]) % 1_000_000)
                      for i in range(n * r)]}
