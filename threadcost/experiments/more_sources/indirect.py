"""S9 and S10: switches per round trip counted by the kernel, and the indirect cost.

- :func:`indirect_cost` (S10, Li, Ding and Shen, ExpCS 2007): their method on this
  machine. Two processes pinned to one CPU pass a byte through a pipe pair; before
  each hand-off the running one walks its own array (one byte read and written
  every ``stride`` bytes). One process alone does the same walks and pipe calls
  through its own pipe, with no switch. Per switch (one hop: half a round trip),
  the total cost is c2 = switch run / hops - single run / hops; the direct cost c1
  is c2 with no array; the indirect cost (refilling the caches the other process
  evicted) is c2 - c1. The array sweeps past the last-level cache.
- :func:`switch_counts` (S9, tsuna): every kernel ping-pong mechanism (pipe,
  condvar, futex, eventfd; threads and processes, one CPU) with the switches per
  round trip read from the kernel's own counters (``getrusage`` of both sides
  around the timed region), and the cost of an empty system call beside them;
  plus tsuna's own loop (futex wake and wait with ``sched_yield`` calls between,
  ``native/yieldloop.c``), whose switches per iteration his repository's open
  issue asks about (4, as his program assumes, or 6, as the issue argues).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import check_status
from threadcost.experiments.context_switch import run as cs
from threadcost.experiments.parameters import declared
from threadcost.experiments.user_space_tasks import fibers
from threadcost.host import cpus as cpu_sets
from threadcost.native import ffi, lib
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

INDIRECT = "indirect_cost"
SWITCH_COUNTS = "switch_counts"
MODES = {"single": lib.TC_IND_SINGLE, "switch": lib.TC_IND_SWITCH}
MAX_HOPS = 20_000  # Li, Ding and Shen: 10,000 round trips
MIN_HOPS = 10
WARMUP_HOPS = 4
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters).
ARRAY_KIB, STRIDES = declared("sources_array_kib"), declared("sources_strides")
REPEATS, CPU = declared("sources_repeats"), declared("sources_cpu")
ACCESSES, ITERATIONS = declared("sources_target_accesses"), declared("sources_switch_iterations")


def last_level_cache_kib(cpu: int | None = None) -> int | None:
    """Size of the highest-level data or unified cache of ``cpu`` (default: the first
    CPU this process may use), KiB (None: unknown)."""
    size = cpu_sets.last_level_cache_bytes(cpu)
    return size // 1024 if size else None


def hops_for(array_kib: int, stride: int, target_accesses: int) -> int:
    """Timed hops of one point: about ``target_accesses`` array accesses in all."""
    per_walk = array_kib * 1024 // stride
    n = MAX_HOPS if per_walk == 0 else target_accesses // per_walk
    n = int(min(MAX_HOPS, max(MIN_HOPS, n)))
    return n + n % 2


def _indirect_child(points: list[tuple[int, int]], repeats: int, cpu: int | None,
                    target: int) -> list[dict[str, Any]]:
    rows = []
    for rep in range(repeats):
        for kib, stride in points:
            hops = hops_for(kib, stride, target)
            modes = ("single", "switch") if rep % 2 == 0 else ("switch", "single")
            for mode in modes:
                out = ffi.new("tc_indirect_result *")
                status = lib.tc_indirect_run(MODES[mode], kib * 1024, stride, hops,
                                             WARMUP_HOPS, -1 if cpu is None else cpu, out)
                check_status("tc_indirect_run", status, out.err, f"{mode}, {kib} KiB")
                rows.append({"repeat": rep, "array_kib": kib, "stride_bytes": stride,
                             "mode": mode, "hops": int(out.hops),
                             "ns_per_hop": out.total_ns / out.hops,
                             "voluntary": int(out.voluntary),
                             "involuntary": int(out.involuntary)})
    return rows


def check_indirect_cost(array_kib: Any, strides: Any, repeats: Any, cpu: Any,
                        target_accesses: Any) -> dict[str, Any]:
    """What :func:`indirect_cost` refuses, before anything runs (threadcost.paper.prechecks)."""
    sizes = validate.integer_list("array_kib", array_kib, **ARRAY_KIB.bounds, max_items=32)
    steps = validate.integer_list("strides", strides, **STRIDES.bounds, max_items=16)
    p = {"array_kib": sorted(set(sizes)), "strides": sorted(set(steps)),
         "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
         "cpu": fibers.one_cpu("cpu", cpu, allow_none=True),
         "target_accesses": validate.integer("target_accesses", target_accesses,
                                             **ACCESSES.bounds)}
    validate.memory_fits("array_kib", array_kib, 3 * max(p["array_kib"]))
    return p


def indirect_cost(array_kib: Any = tuple(ARRAY_KIB.default), strides: Any = tuple(STRIDES.default),
                  repeats: Any = REPEATS.default, cpu: Any = CPU.default,
                  target_accesses: Any = ACCESSES.default) -> Result:
    """S10: c2 per array size and stride, single and switch runs interleaved in every
    repeat (all in one child process; both processes pinned to ``cpu``).

    Tables: ``runs`` (one row per run), ``points`` (per repeat and point: c2, c1 of
    that repeat, indirect = c2 - c1, switches per round trip from the counters).
    """
    p = check_indirect_cost(array_kib, strides, repeats, cpu, target_accesses)
    if 0 not in p["array_kib"]:
        p["array_kib"] = [0, *p["array_kib"]]  # the direct cost: no array
    points = [(0, p["strides"][0])] + [(k, s) for k in p["array_kib"] if k
                                       for s in p["strides"]]
    timeout = 120.0 + p["repeats"] * len(points) * 2.0
    rows = run_isolated(_indirect_child, {"points": points, "repeats": p["repeats"],
                                          "cpu": p["cpu"], "target": p["target_accesses"]},
                        timeout=timeout)
    runs = pd.DataFrame(rows)
    yard_cpu = p["cpu"] if p["cpu"] is not None else -1
    syscall = cs.baseline(lib.TC_SWB_EMPTY_SYSCALL, yard_cpu, 200, 50)  # the yardstick
    wide = runs.pivot_table(index=["repeat", "array_kib", "stride_bytes"], columns="mode",
                            values="ns_per_hop").reset_index()
    counts = runs[runs["mode"] == "switch"].assign(
        switches_per_round_trip=lambda f: 2 * (f.voluntary + f.involuntary) / f.hops)
    wide = wide.merge(counts[["repeat", "array_kib", "stride_bytes",
                              "switches_per_round_trip"]],
                      on=["repeat", "array_kib", "stride_bytes"])
    wide["c2_ns"] = wide["switch"] - wide["single"]
    direct = wide[wide.array_kib == 0].set_index("repeat").c2_ns
    wide["c1_ns"] = wide.repeat.map(direct)
    wide["indirect_ns"] = wide.c2_ns - wide.c1_ns
    llc = last_level_cache_kib(p["cpu"])
    summary: dict[str, Any] = {
        "direct_ns": stats.distribution(direct),
        "llc_kib": llc,
        "c2_ns_p50": {f"{k} KiB, stride {s}": float(g.c2_ns.median())
                      for (k, s), g in wide.groupby(["array_kib", "stride_bytes"])},
        "switches_per_round_trip_p50": float(wide.switches_per_round_trip.median()),
        "empty_syscall_ns": stats.distribution(np.asarray(syscall, dtype=float)),
    }
    return Result(INDIRECT, {**p, "llc_kib": llc}, summary,
                  {"runs": runs, "points": wide,
                   "syscall": pd.DataFrame({"ns_per_call": syscall})})


# ------------------------------------------------------------ S9: switch counts

def _count_row(mech: str, tasks: str, rep: int, iterations: int) -> dict[str, Any]:
    r = cs.run(mech, "same-cpu", tasks, iterations, max(10, iterations // 10),
               per_sample=False, record_cpus=False, baselines=False)
    s = r.summary
    rt = s["whole_run_mean_ns"]
    spr = s["switches_per_round_trip"]
    return {"repeat": rep, "mechanism": mech, "tasks": tasks, "round_trips": s["completed"],
            "round_trip_ns": rt, "switch_ns": rt / 2,
            "voluntary": s["switches"]["a_voluntary"] + s["switches"]["b_voluntary"],
            "involuntary": s["switches"]["a_involuntary"] + s["switches"]["b_involuntary"],
            "switches_per_round_trip": spr,
            "ns_per_counted_switch": rt / spr if spr >= 0.5 else None}


TSUNA = "futex_yield"  # tsuna's loop: futex wake/wait with sched_yield calls


def _tsuna_child(processes: bool, iterations: int, cpu: int) -> dict[str, Any]:
    out = ffi.new("tc_yieldloop_result *")
    status = lib.tc_yieldloop_run(int(processes), iterations, max(10, iterations // 10), cpu,
                                  2000, out)
    check_status("tc_yieldloop_run", status, out.err, "tsuna's futex loop")
    return {"iterations": int(out.iterations), "total_ns": int(out.total_ns),
            "voluntary": int(out.voluntary), "involuntary": int(out.involuntary)}


def _tsuna_row(tasks: str, rep: int, iterations: int, cpu: int) -> dict[str, Any]:
    got = run_isolated(_tsuna_child, {"processes": tasks == "processes",
                                      "iterations": iterations, "cpu": cpu}, timeout=120.0)
    n = got["iterations"]
    rt = got["total_ns"] / n
    spr = (got["voluntary"] + got["involuntary"]) / n
    return {"repeat": rep, "mechanism": TSUNA, "tasks": tasks, "round_trips": n,
            "round_trip_ns": rt, "switch_ns": rt / 2, "voluntary": got["voluntary"],
            "involuntary": got["involuntary"], "switches_per_round_trip": spr,
            "ns_per_counted_switch": rt / spr if spr >= 0.5 else None}


def check_switch_counts(mechanisms: Any, tasks: Any, repeats: Any,
                        iterations: Any) -> dict[str, Any]:
    """What :func:`switch_counts` refuses, before anything runs (threadcost.paper.prechecks)."""
    mechs = validate.choice_list("mechanisms", mechanisms, cs.MECHANISMS)
    kinds = validate.choice_list("tasks", tasks, cs.TASKS)
    p = {"mechanisms": mechs, "tasks": kinds, "placement": "same-cpu",
         "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
         "iterations": validate.integer("iterations", iterations, **ITERATIONS.bounds)}
    return p


def switch_counts(mechanisms: Any = tuple(cs.MECHANISMS), tasks: Any = tuple(cs.TASKS),
                  repeats: Any = REPEATS.default, iterations: Any = ITERATIONS.default
                  ) -> Result:
    """S9: every mechanism between two tasks pinned to one CPU, ``repeats`` rounds with
    the mechanisms in turn; per round trip: the time (the whole run timed at once),
    per switch (half of it) and the switches the kernel counted (both sides'
    ``getrusage(RUSAGE_THREAD)``, voluntary + involuntary, over the timed region).
    Also an empty system call (getppid) on the same CPU: tsuna's system-call cost.
    """
    p = check_switch_counts(mechanisms, tasks, repeats, iterations)
    mechs, kinds = p["mechanisms"], p["tasks"]
    cpu = cs.choose_cpus("same-cpu")[0]
    rows = []
    for rep in range(p["repeats"]):
        rows += [_count_row(m, t, rep, p["iterations"]) for m in mechs for t in kinds]
        rows += [_tsuna_row(t, rep, max(100, p["iterations"] // 5), cpu) for t in kinds]
    frame = pd.DataFrame(rows)
    syscall = cs.baseline(lib.TC_SWB_EMPTY_SYSCALL, cpu, 200, 50)
    per = frame.groupby(["mechanism", "tasks"], sort=False).agg(
        switch_ns=("switch_ns", "median"),
        switches_per_round_trip=("switches_per_round_trip", "median"),
        ns_per_counted_switch=("ns_per_counted_switch", "median")).reset_index()
    summary = {"empty_syscall_ns": stats.distribution(np.asarray(syscall, dtype=float)),
               "configs": per.to_dict("records")}
    return Result(SWITCH_COUNTS, p, summary,
                  {"runs": frame, "syscall": pd.DataFrame({"ns_per_call": syscall})})
