"""Selectors of launch (C09), CPU-bound tasks on one CPU (C13, C14) and sleepers
(C15, C17)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost.claims.intervals import log_ratio, over_repeats
from threadcost.claims.model import Measurement, Missing
from threadcost.claims.read.common import (
    _at,
    _has,
    _missing,
)
from threadcost.claims.runs import Runs, run_ids
from threadcost.vocabulary import words

# --- launch (C09) --------------------------------------------------------------------------------

def _launch(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("launch", kinds=_has("thread", "fork"),
                          parent_touch_mib=_has(0, 8))
    table = runs.tables(found, "distributions")
    if table.empty:
        return _missing("launch", "thread and fork at 0 and 8 MiB touched", "notebook 03")
    rows = table[(table.metric == "create_ns") & (table.phase == "steady")]
    return rows, found


def _growth_repeats(kind: str, runs: Runs) -> Measurement | Missing:
    """launch_growth/repeats: median create time at 8 MiB / at 0 MiB, paired by repeat."""
    found = runs.matching("launch_growth", kinds=_has(kind), parent_touch_mib=_has(0, 8))
    table = runs.tables(found, "repeats")
    if table.empty:
        return _missing("launch_growth", f"{kind} at 0 and 8 MiB touched", "notebook 03")
    wide = table[table.kind == kind].pivot_table(index=["run_index", "repeat"],
                                                 columns="parent_touch_mib",
                                                 values="create_ns_p50")
    return log_ratio((wide[8] / wide[0]).dropna(), run_id=run_ids(found),
                     setup={"experiment": "launch_growth", "kind": kind,
                            "parent_touch_mib": "0 vs 8, alternating",
                            "iterations": found[0].meta["params"].get("iterations")},
                     how=f"per repeat: median {kind} create time with 8 MiB touched in the "
                         "parent / with none, each series in a fresh launch process")


def _launch_growth(kind: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        repeated = _growth_repeats(kind, runs)
        if isinstance(repeated, Measurement):
            return repeated
        got = _launch(runs)
        if isinstance(got, Missing):
            return got
        rows, found = got
        wide = rows[rows.kind == kind].pivot_table(index="run_index",
                                                   columns="parent_touch_mib", values="p50")
        return over_repeats((wide[8] / wide[0]).dropna(), "ratio", run_id=run_ids(found),
                            setup={"experiment": "launch", "kind": kind,
                                   "parent_touch_mib": "0 vs 8"},
                            how=f"per run: median {kind} create time with 8 MiB touched in "
                                "the parent / with none")
    return select


c09_thread_growth = _launch_growth("thread")
c09_fork_growth = _launch_growth("fork")


def launch_ns(kind: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _launch(runs)
        if isinstance(got, Missing):
            return got
        rows, found = got
        hit = rows[(rows.kind == kind) & (rows.parent_touch_mib == 0)]
        return over_repeats(hit["mean"], "ns", run_id=run_ids(found))
    return select


# --- S3's CPU-bound tasks on one CPU (C13, C14) ------------------------------------------------

def _cpu_bound(runs: Runs, ws: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("cpu_bound", working_sets=_has(ws),
                          modes=_has("threads", "processes"))
    table = runs.tables(found, "runs")
    if table.empty:
        return _missing("cpu_bound", f"working set '{ws}', threads and processes",
                        "notebook 04")
    return table[table.working_set == ws], found


def _cpu_ratio(runs: Runs, ws: str, quantity: str, words: str) -> Measurement | Missing:
    got = _cpu_bound(runs, ws)
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = rows.pivot_table(index=["run_index", "repeat"], columns="mode", values=quantity)
    if "processes" not in wide or "threads" not in wide:
        return Missing(f"the cpu_bound run has no {quantity} for both modes")
    ratio = (wide["processes"] / wide["threads"]).replace([np.inf, -np.inf], np.nan).dropna()
    p = found[0].meta["params"]
    return log_ratio(ratio, run_id=run_ids(found),
                     setup={"experiment": "cpu_bound", "tasks": p.get("tasks"),
                            "working_set": ws, "cpu": "all tasks on one CPU",
                            "ws_mib": round(p.get("ws_ints", 0) * 8 / 2**20, 1)
                            if ws == "own" else 0,
                            "limit": p.get("ws_limit") if ws == "own" else p.get("limit")},
                     how=f"per repeat (threads and processes back to back): {words}, "
                         "processes / threads; geometric mean, interval on the logarithms")


def c13_process_over_thread_time(runs: Runs) -> Measurement | Missing:
    return _cpu_ratio(runs, "none", "wall_s", "wall time of the run (gate to last task's end)")


TICK_MS_IF_UNKNOWN = 10.0  # HZ=100, the coarsest tick a Linux kernel is built with
# getrusage system time is sampled at the tick: with >= 10 ticks in the smaller total,
# the tick alone moves a total by at most about 10%, well inside the 2x C14 asks for
MIN_TICKS = 10


def c14_process_over_thread_sys(runs: Runs) -> Measurement | Missing:
    got = _cpu_bound(runs, "own")
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


def c14_dtlb_ratio(runs: Runs) -> Measurement | Missing:
    """Context for C14 (S3's mechanism): dTLB load misses, processes / threads, own set."""
    got = _cpu_bound(runs, "own")
    if isinstance(got, Missing):
        return got
    rows, found = got
    if rows.dtlb_misses.isna().all():
        perf = found[0].meta["summary"].get("perf", {}).get("dtlb_misses", "not counted")
        return Missing(f"dTLB misses not counted: {perf}")
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


# --- sleepers at several counts (C15, C17) -----------------------------------------------------

S4_COUNT = 10_000


def _sweep(runs: Runs, *variants: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("sleepers_sweep", variants=_has(*variants))
    table = runs.tables(found, "points")
    if table.empty:
        return _missing("sleepers_sweep", f"the variants {words(variants)}", "notebook 05")
    if "not_run" in table:
        skipped = table[table.not_run.notna() & table.variant.isin(variants)]
        table = table[table.not_run.isna()]
        if table.empty or not set(variants) <= set(table.variant):
            why = skipped.not_run.iloc[0] if not skipped.empty else "no measured points"
            return Missing(f"the sleepers sweep did not measure {', '.join(variants)}: {why}")
    return table[table.variant.isin(variants)], found


def _wide(rows: pd.DataFrame, value: str) -> pd.DataFrame:
    return rows.pivot_table(index=["run_index", "repeat"], columns="variant", values=value)


def c15_thread_over_goroutine_rss(runs: Runs) -> Measurement | Missing:
    """sleepers_sweep/points: RSS per task, threads / goroutines, at 10,000 tasks (or the
    largest count where neither variant saturated the CPUs)."""
    got = _sweep(runs, "threads", "goroutines")
    if isinstance(got, Missing):
        return got
    rows, found = got
    both = [n for n, g in rows.groupby("count") if {"threads", "goroutines"} <= set(g.variant)]
    if S4_COUNT in both:
        count, which = S4_COUNT, "S4's 10,000 tasks"
    else:
        calm = [n for n in both if not rows[rows["count"] == n].saturated.astype(bool).any()]
        if not calm:
            return Missing("no count of the sleepers sweep has both variants unsaturated")
        count = max(calm)
        which = f"{count:,} tasks, the largest unsaturated count (10,000 was not run)"
    wide = _wide(rows[rows["count"] == count], "rss_per_task_kib")
    where = ("at 10,000 tasks" if count == S4_COUNT else
             f"(at {count:,} tasks: the largest unsaturated count; 10,000 was not run)")
    got = log_ratio((wide["threads"] / wide["goroutines"]).dropna(), run_id=run_ids(found),
                     setup={"experiment": "sleepers_sweep", "tasks": count,
                            "period_ms": found[0].meta["params"].get("period_ms")},
                     how=f"per repeat at {which}: peak RSS growth per task, threads / "
                         "goroutines")
    return _at(got, where)


def _unsaturated(rows: pd.DataFrame, variants: tuple[str, str]) -> int | None:
    """The largest count at which every repeat of both variants stayed unsaturated."""
    ok = []
    for n, g in rows.groupby("count"):
        g = g[g.variant.isin(variants)]
        if set(variants) <= set(g.variant) and not g.saturated.astype(bool).any():
            ok.append(int(n))
    return max(ok) if ok else None


def _cpu_per_wakeup(runs: Runs, top: str, bottom: str, words: str,
                    cut: bool = False) -> Measurement | Missing:
    got = _sweep(runs, top, bottom)
    if isinstance(got, Missing):
        return got
    rows, found = got
    count = _unsaturated(rows, (top, bottom))
    if count is None:
        return Missing(f"every count of the sleepers sweep saturated the CPUs for {top} or "
                       f"{bottom}; CPU per wake-up is judged only where they kept up")
    at = rows[rows["count"] == count].assign(
        cpu_us=lambda f: f.user_us_per_wakeup + f.sys_us_per_wakeup)
    wide = _wide(at, "cpu_us")
    ratio = (wide[top] / wide[bottom]).dropna()
    setup = {"experiment": "sleepers_sweep", "tasks": count, "unsaturated": True,
             "period_ms": found[0].meta["params"].get("period_ms"),
             "duration_ms": found[0].meta["params"].get("duration_ms")}
    how = (f"per repeat at {count:,} tasks (the largest count where neither variant "
           f"saturated the CPUs): CPU (user + system) per wake-up, {words}")
    where = f"(at {count:,} tasks: the largest count where neither saturated the CPUs)"
    if not cut:
        return _at(log_ratio(ratio, run_id=run_ids(found), setup=setup, how=how), where)
    return _at(over_repeats(1 - ratio, "fraction", run_id=run_ids(found), setup=setup,
                            how=how + "; cut = 1 - pinned / unpinned"), where)


def c17_threads_over_goroutines_cpu(runs: Runs) -> Measurement | Missing:
    return _cpu_per_wakeup(runs, "threads", "goroutines", "threads / goroutines")


def c17_pinning_cut(runs: Runs) -> Measurement | Missing:
    return _cpu_per_wakeup(runs, "threads_pinned", "threads",
                           "threads pinned round-robin vs unpinned", cut=True)
