"""Findings of notebook 04's CPU-bound runs (S3's experiment, C13 and C14): how much CPU
one run took, and what the calibration that sized the runs measured, each from the
newest cpu_bound run (a notebook passes its unsaved result through
``findings.of_results``).

The selectors of C13 and C14 (S3's CPU-bound tasks on one CPU). S4's sleepers (C15,
C17) are read in :mod:`threadcost.findings.sleepers`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import vocabulary
from threadcost.findings.selectors import (
    holds_all,
    no_run,
)
from threadcost.findings.summary import from_run
from threadcost.measured.intervals import log_ratio, over_repeats
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

WORKING_SETS = {"none": "without a working set", "own": "with each task's working set"}
# the calibration's cost per unit of each loop: working set -> (summary key, unit of work)
CALIBRATED_COST = {"none": ("ns_per_division", "one trial division"),
                   "own": ("ns_per_write", "writing one 64-bit integer of the working set")}


def run_cpu_name(working_set: str) -> str:
    return f"cpu_bound_{working_set}_run_cpu_median_s"


def cost_name(working_set: str) -> str:
    return f"cpu_bound_{working_set}_calibration_slope_ns"


def _run_cpu(working_set: str) -> Any:
    def read(run: Any) -> float | None:
        try:
            runs = run.table("runs")
        except (KeyError, OSError, ValueError):
            return None
        if runs is None or "cpu_s" not in runs or "working_set" not in runs:
            return None
        cpu = runs[runs.working_set == working_set].cpu_s.dropna()
        return float(cpu.median()) if cpu.size else None
    return read


def _cost(working_set: str) -> Any:
    key = CALIBRATED_COST[working_set][0]

    def read(run: Any) -> float | None:
        sizing = (run.meta.get("summary") or {}).get("sizing") or {}
        value = (sizing.get(working_set) or {}).get(key)
        return None if value is None else float(value)
    return read


for _ws, _words in WORKING_SETS.items():
    from_run(run_cpu_name(_ws), "cpu_bound", _run_cpu(_ws), "s", "median over its runs",
             f"the CPU time (user + system, all five tasks) of one run {_words}, median "
             "over the run's threads and processes repeats", fmt=".2f")
    from_run(cost_name(_ws), "cpu_bound", _cost(_ws), "ns",
             "slope of CPU time over work in the calibration's probes",
             f"the CPU cost of {CALIBRATED_COST[_ws][1]}, fitted from the calibration's "
             "probes (before the timed runs), from which each loop was sized", fmt=".2f",
             lacking="was not calibrated (a fixed size)")


# --- S3's CPU-bound tasks on one CPU (C13, C14) ------------------------------------------------

def cpu_bound_runs(runs: Runs, ws: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("cpu_bound", working_sets=holds_all(ws),
                          modes=holds_all("threads", "processes"))
    table = runs.tables(found, "runs")
    if table.empty:
        return no_run("cpu_bound", f"working set '{ws}', threads and processes",
                        "notebook 04")
    return table[table.working_set == ws], found


def _cpu_ratio(runs: Runs, ws: str, quantity: str, words: str) -> Measurement | Missing:
    got = cpu_bound_runs(runs, ws)
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = rows.pivot_table(index=["run_index", "repeat"], columns="mode", values=quantity)
    if "processes" not in wide or "threads" not in wide:
        return Missing(f"the cpu_bound run has no {quantity} for both modes")
    ratio = (wide["processes"] / wide["threads"]).replace([np.inf, -np.inf], np.nan).dropna()
    p = found[0].meta["params"]
    setup = {"experiment": "cpu_bound", "tasks": p.get("tasks"), "working_set": ws,
             "cpu": "all tasks on one CPU",
             "ws_mib": round(p.get("ws_ints", 0) * 8 / 2**20, 1) if ws == "own" else 0,
             "limit": p.get("ws_limit") if ws == "own" else p.get("limit")}
    target = p.get("ws_run_s" if ws == "own" else "run_s")  # only a calibrated size has one
    if target is not None:
        setup["sized"] = f"calibrated here to about {target:g} s of CPU per run"
    return log_ratio(ratio, run_id=run_ids(found), setup=setup,
                     how=f"per repeat (threads and processes back to back): {words}, "
                         "processes / threads; geometric mean, interval on the logarithms")


def own_user_s(runs: Runs, mode: str) -> float | None:
    """The median user time of one mode's runs with their own working set (the time
    command's user figure): how long a run's work lasted, to set against S3's."""
    got = cpu_bound_runs(runs, "own")
    if isinstance(got, Missing) or "whole_user_s" not in got[0]:
        return None
    user = got[0][got[0]["mode"] == mode].whole_user_s
    return float(user.median()) if user.size and user.median() > 0 else None


def c13_process_over_thread_time(runs: Runs) -> Measurement | Missing:
    return _cpu_ratio(runs, "none", "wall_s", "wall time of the run (gate to last task's end)")


TICK_MS_IF_UNKNOWN = 10.0  # HZ=100, the coarsest tick a Linux kernel is built with
# getrusage system time is sampled at the tick: with >= 10 ticks in the smaller total,
# the tick alone moves a total by at most about 10%, well inside the 2x C14 asks for
MIN_TICKS = 10


def c14_process_over_thread_sys(runs: Runs) -> Measurement | Missing:
    got = cpu_bound_runs(runs, "own")
    if isinstance(got, Missing):
        return got
    rows, found = got
    hz = _hz(found)
    tick_s = 1.0 / hz if hz else TICK_MS_IF_UNKNOWN / 1000
    tick_words = f"HZ={hz}" if hz else "HZ unknown, taken as 100"
    smallest_ms = float(rows.whole_sys_s.min() * 1000)
    ticks = smallest_ms / (tick_s * 1000)
    by_mode = rows.groupby("mode").whole_sys_s.median()
    totals = (f"median totals: processes {by_mode.get('processes', float('nan')):.3f} s, "
              f"threads {by_mode.get('threads', float('nan')):.3f} s (S3: 0.74 s vs 0.084 s)")
    short = (f"the smallest system-time total is {smallest_ms:,.1f} ms, {ticks:,.1f} scheduler "
             f"ticks ({tick_words}); getrusage CPU time is sampled at the tick, so a ratio "
             f"needs >= {MIN_TICKS} ticks in every run")
    wide = rows.pivot_table(index=["run_index", "repeat"], columns="mode", values="whole_sys_s")
    if "processes" not in wide or "threads" not in wide:
        return Missing("the cpu_bound run lacks threads or processes with the working set")
    if (wide["threads"] <= 0).any():
        # below one tick in some run: the ratio is only bounded; show it with the threads'
        # totals taken as one tick, never judged
        floor = wide["threads"].clip(lower=tick_s)
        value = float((wide["processes"] / floor).median())
        return Measurement(value, "ratio", value, value, repeats=len(wide),
                           run_id=run_ids(found),
                           setup={"experiment": "cpu_bound", "working_set": "own"},
                           how=f"{totals}; the threads' system time was below one tick in some "
                               "runs, taken as one tick (an upper bound on them)",
                           unjudgeable=short)
    meas = _cpu_ratio(runs, "own", "whole_sys_s", "system time of the whole run like "
                      "the time command (RUSAGE_SELF + RUSAGE_CHILDREN)")
    if isinstance(meas, Missing):
        return meas
    meas = Measurement(**{**meas.__dict__, "how": f"{meas.how}; {totals}"})
    if ticks < MIN_TICKS:
        meas = Measurement(**{**meas.__dict__, "unjudgeable": short})
    return meas


def sys_per_user_ms(mode: str) -> Any:
    """System time per second of user time over the whole run (the time command's sys /
    user), per repeat: S3's runs were about 180x longer than these, so absolute seconds
    do not compare, the system time each second of the same work costs does."""
    def select(runs: Runs) -> Measurement | Missing:
        got = cpu_bound_runs(runs, "own")
        if isinstance(got, Missing):
            return got
        rows, found = got
        if "whole_user_s" not in rows or "whole_sys_s" not in rows:
            return Missing("the stored cpu_bound run predates the whole run's user and "
                           "system time (the time command's figures)")
        rows = rows[(rows["mode"] == mode) & (rows.whole_user_s > 0)]
        if rows.empty:
            return Missing(f"the cpu_bound run has no {mode} with the working set")
        wall = float(rows.wall_s.median())
        return over_repeats(rows.whole_sys_s / rows.whole_user_s * 1000, "ms",
                            run_id=run_ids(found),
                            setup={"experiment": "cpu_bound", "mode": mode,
                                   "working_set": "own (8 MB per task)",
                                   "run": f"{wall:.2f} s (S3: about 146 s)"},
                            how="per repeat: system time / user time of the whole run, like "
                                "the time command's sys / user, in ms per user second",
                            where=f"(runs of {wall:.2f} s)")
    return select


def setup_share(runs: Runs, mode: str = "processes") -> tuple[float, float, str] | None:
    """(system seconds inside the tasks' loops, system seconds of the whole run, run ids)
    of one mode (threads or processes) with their own working set: means over repeats,
    the statistic of the readings they explain."""
    got = cpu_bound_runs(runs, "own")
    if isinstance(got, Missing):
        return None
    rows, found = got
    rows = rows[rows["mode"] == mode]
    if rows.empty or "sys_s" not in rows or "whole_sys_s" not in rows:
        return None
    return float(rows.sys_s.mean()), float(rows.whole_sys_s.mean()), run_ids(found)


def c14_dtlb_ratio(runs: Runs) -> Measurement | Missing:
    """Context for C14 (S3's mechanism): dTLB load misses, processes / threads, own set."""
    got = cpu_bound_runs(runs, "own")
    if isinstance(got, Missing):
        return got
    rows, found = got
    if rows.dtlb_misses.isna().all():
        perf = found[0].meta["summary"].get("perf", {}).get("dtlb_misses", "not counted")
        return Missing(f"dTLB misses not counted: {vocabulary.perf_words(str(perf))}")
    return _cpu_ratio(runs, "own", "dtlb_misses", "dTLB load misses over the loops")


def _hz(found: list[Any]) -> int | None:
    for run in found:
        fp = run.meta.get("machine", {})
        hz = fp.get("hz") or fp.get("kernel_config", {}).get("CONFIG_HZ")
        if hz:
            try:
                return int(hz)
            except (TypeError, ValueError):
                return None
    return None
