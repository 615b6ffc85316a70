"""Memory per idle process: what one forked, sleeping child holds, user and kernel side.

The process counterpart of :mod:`threadcost.experiments.thread_memory.run`. Each
run forks N children of a fresh measuring process (native/process_memory.c);
each child writes ``touch_kib`` KiB of fresh memory (0: none), then sleeps on a
futex. With all of them asleep the run reads:

- the system's kernel counters (/proc/meminfo), before forking and with the
  children asleep, before anything reads their /proc files (reading them
  allocates reclaimable slab of its own);
- each child's /proc/<pid>/smaps_rollup: ``uss_kib`` (Private_Clean +
  Private_Dirty: pages only this child holds), ``pss_kib`` (shared pages
  divided among their sharers), ``rss_kib``;
- each child's /proc/<pid>/status VmPTE (``page_tables_kib``: its page tables,
  exact and per process).

Per idle process is the slope of each sum against the children actually
started, fitted over every run (counts x repeats), with R^2 and a 95%
interval. ``kernel_stack_kib`` (KernelStack) and ``slab_kib`` (SUnreclaim:
task_struct, mm_struct, VMAs and friends) are system-wide deltas, so other
activity on the machine is noise in them; the slope over many runs is what
makes them usable. ``kernel_kib`` = kernel stack + page tables + slab;
``total_kib`` = USS + kernel: the memory an idle process costs that its
parent's does not already count.

A forked child shares its parent's pages until either writes them, so USS
depends on how much the child writes (``touch_kib``) and PSS on how big the
parent is: the parent's own RSS and VmPTE are recorded with every run.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

from threadcost import stats
from threadcost.errors import KernelError, check_status
from threadcost.experiments.parameters import declared
from threadcost.experiments.thread_memory.spec import PROCESS_SERIES
from threadcost.host import sysinfo
from threadcost.native import ffi, lib
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

EXPERIMENT = "process_memory"
# Rough cost of one idle forked child (page tables copied from a Python parent,
# kernel stack, task and mm structures) for the memory check before running.
PROCESS_BUDGET_KIB = 512
PID_RESERVE = 4096  # pids left for everyone else, whatever is asked


COUNTS, TOUCH_KIB = declared("memory_process_counts"), declared("memory_process_touch_kib")
REPEATS = declared("memory_process_repeats")


def max_children() -> int:
    """At most a quarter of pid_max minus a reserve (the machine is shared), and at most
    the declared count's maximum."""
    pid_max = sysinfo.sysctl("kernel.pid_max") or 32768
    return max(1, min(int(COUNTS.maximum or 0), (pid_max - PID_RESERVE) // 4))


def check_params(counts: Any = tuple(COUNTS.default), touch_kib: Any = TOUCH_KIB.default,
                 repeats: Any = REPEATS.default, settle_ms: Any = 50) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError); defaults and
    ranges are the notebook parameters' (threadcost.experiments.parameters)."""
    p: dict[str, Any] = {
        "counts": validate.integer_list("counts", counts, minimum=COUNTS.minimum,
                                        maximum=max_children()),
        "touch_kib": validate.integer("touch_kib", touch_kib, **TOUCH_KIB.bounds),
        "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
        "settle_ms": validate.integer("settle_ms", settle_ms, minimum=0, maximum=10_000),
    }
    biggest = max(p["counts"])
    validate.memory_fits("counts", counts, biggest * (PROCESS_BUDGET_KIB + p["touch_kib"]))
    return p


def _meminfo() -> dict[str, int]:
    m = ffi.new("tc_meminfo *")
    lib.tc_read_meminfo(m)
    return {"kstack": int(m.kernel_stack_kib), "pt": int(m.page_tables_kib),
            "slab": int(m.sunreclaim_kib)}


def _rollup(pid: int) -> dict[str, int]:
    fields = {"Rss": 0, "Pss": 0, "Private_Clean": 0, "Private_Dirty": 0}
    text = sysinfo.read_text(f"/proc/{pid}/smaps_rollup") or ""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in fields:
            fields[name] = int(rest.split()[0])
    return fields


def _status_kib(pid: int | str, key: str) -> int:
    text = sysinfo.read_text(f"/proc/{pid}/status") or ""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name == key:
            return int(rest.split()[0])
    return 0


def _one_run(count: int, touch_kib: int, settle_ms: int, lifetime_s: float) -> dict[str, Any]:
    """In a child process: fork, read, stop. Returns plain data."""
    pids = ffi.new("int32_t[]", count)
    out = ffi.new("tc_procmem_result *")
    handle = ffi.new("tc_procmem **")
    parent_rss = _status_kib("self", "VmRSS")
    parent_pte = _status_kib("self", "VmPTE")
    before = _meminfo()
    status = lib.tc_procmem_start(count, touch_kib, int(lifetime_s * 1e9), pids, out, handle)
    if status in (lib.TC_EINVAL, lib.TC_ENOMEM):
        check_status("tc_procmem_start", status, out.err)
    try:
        if settle_ms:
            time.sleep(settle_ms / 1000)
        after = _meminfo()  # before any /proc/<child> read adds slab of its own
        started = int(out.started)
        children = []
        for i in range(started):
            roll = _rollup(int(pids[i]))
            children.append({"uss": roll["Private_Clean"] + roll["Private_Dirty"],
                             "pss": roll["Pss"], "rss": roll["Rss"],
                             "pte": _status_kib(int(pids[i]), "VmPTE")})
    finally:
        stop = ffi.new("tc_procmem_result *")
        lib.tc_procmem_stop(handle[0], stop)
    if status == lib.TC_ETIMEOUT:
        raise KernelError("tc_procmem_start", int(status), 0,
                          f"the children were not all asleep within {lifetime_s:g} s")
    return {"status": int(status), "err": int(out.err), "started": int(out.started),
            "ready": int(out.ready), "stopped": int(stop.stopped) + int(out.stopped),
            "before": before, "after": after, "children": children,
            "parent_rss_kib": parent_rss, "parent_pte_kib": parent_pte}


def fit_series(points: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per-process slope of each counter against the children started."""
    fits: dict[str, dict[str, Any]] = {}
    for name in PROCESS_SERIES:
        data = points[["started", name]].dropna()
        if len(data) >= 3 and data["started"].nunique() >= 2:
            f = stats.fit_line(data["started"], data[name])
            fits[name] = {"per_process_kib": f.slope, "ci95_low": f.slope_ci95_low,
                          "ci95_high": f.slope_ci95_high, "r2": f.r2,
                          "intercept_kib": f.intercept, "n": f.n, "method": "slope"}
        elif not data.empty:
            ratio = (data[name] / data["started"].clip(lower=1)).astype(float)
            fits[name] = {"per_process_kib": float(ratio.median()), "ci95_low": None,
                          "ci95_high": None, "r2": None, "intercept_kib": None,
                          "n": len(data), "method": "median of delta / children"}
    return fits


def run(counts: Any = (50, 100, 150, 200, 250, 300), touch_kib: Any = 0, repeats: Any = 3,
        settle_ms: Any = 50, progress: bool = False) -> Result:
    """Fork each count of idle children ``repeats`` times (counts interleaved) and
    fit the per-process cost of every counter. ``touch_kib``: fresh memory each
    child writes before sleeping; ``settle_ms``: wait with all asleep before
    reading. A refused fork gives a partial result naming the limit."""
    p = check_params(counts, touch_kib, repeats, settle_ms)
    plan = [(r, n) for r in range(p["repeats"]) for n in p["counts"]]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(plan), desc="idle processes", unit="run")
    rows = []
    limit_hit = None
    for rep, n in plan:
        lifetime = 60.0 + n * 0.01
        raw = run_isolated(_one_run, {"count": n, "touch_kib": p["touch_kib"],
                                      "settle_ms": p["settle_ms"], "lifetime_s": lifetime},
                           timeout=lifetime + 60)
        kids = raw["children"]
        b, a = raw["before"], raw["after"]
        row = {
            "repeat": rep, "requested": n, "started": raw["started"], "ready": raw["ready"],
            "stopped": raw["stopped"], "touch_kib": p["touch_kib"],
            "uss_kib": sum(c["uss"] for c in kids), "pss_kib": sum(c["pss"] for c in kids),
            "rss_kib": sum(c["rss"] for c in kids),
            "page_tables_kib": sum(c["pte"] for c in kids),
            "kernel_stack_kib": a["kstack"] - b["kstack"], "slab_kib": a["slab"] - b["slab"],
            "system_page_tables_kib": a["pt"] - b["pt"],
            "parent_rss_kib": raw["parent_rss_kib"], "parent_pte_kib": raw["parent_pte_kib"],
        }
        row["kernel_kib"] = row["kernel_stack_kib"] + row["page_tables_kib"] + row["slab_kib"]
        row["total_kib"] = row["uss_kib"] + row["kernel_kib"]
        rows.append(row)
        if bar is not None:
            bar.update(1)
        if raw["status"] == lib.TC_ELIMIT:
            limit_hit = {"limit": "fork refused (pid_max, threads-max, cgroup pids.max, "
                                  "RLIMIT_NPROC or memory)", "errno": raw["err"],
                         "children_started": raw["started"], "requested": n}
            break
    if bar is not None:
        bar.close()
    points = pd.DataFrame(rows)
    fits = fit_series(points)
    fit_rows = [{"quantity": k, "meaning": PROCESS_SERIES[k], **v} for k, v in fits.items()]
    summary: dict[str, Any] = {
        "per_process_kib": {k: v["per_process_kib"] for k, v in fits.items()},
        "fits": fits,
        "children_started": int(points["started"].sum()),
        "children_stopped": int(points["stopped"].sum()),
        "parent_rss_kib": int(points["parent_rss_kib"].median()),
        "parent_pte_kib": int(points["parent_pte_kib"].median()),
        "runs": len(points),
    }
    return Result(EXPERIMENT, p, summary, {"points": points, "fits": pd.DataFrame(fit_rows)},
                  limit_hit)
