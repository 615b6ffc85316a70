"""Findings of notebook 03 (launch): each number its sentences print, from the newest
launch run (a notebook passes its unsaved result through ``findings.of_results``). A
kind's whole life at the median is the headline's finding (``launch_thread_median_ns``,
``launch_process_median_ns``), read from the same run; the other kinds and times are
named here.

The selectors of launch (C09): each kind's growth with the parent's touched memory."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.findings.selectors import (
    holds_all,
    no_run,
)
from threadcost.findings.summary import from_run, from_summary
from threadcost.measured.intervals import log_ratio, over_repeats
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

US = dict(scale=1e-3, display_unit="µs")
KIND_NAMES = {"fork": "fork", "vfork": "vfork", "posix_spawn": "posix_spawn",
              "clone": "clone", "thread": "thread"}
METRICS = {"lifecycle_ns": "its whole life (create, first run, join or waitpid)",
           "create_ns": "the create call, until it returns in the parent",
           "first_run_ns": "create called to the child's first instruction"}


def series(run: Any, kind: str, mib: int | None = None) -> dict[str, Any] | None:
    """One launch series of a run's summary (the smallest parent by default)."""
    mib = min(run.meta["params"]["parent_touch_mib"]) if mib is None else mib
    for e in run.meta["summary"]["series"]:
        if e["kind"] == kind and e["parent_touch_mib"] == mib:
            return e
    return None


def name(kind: str, metric: str) -> str:
    """The finding of one kind's median ``metric`` (a whole life: the headline's names)."""
    if metric == "lifecycle_ns" and kind == "thread":
        return "launch_thread_median_ns"
    if metric == "lifecycle_ns" and kind == "fork":
        return "launch_process_median_ns"
    return f"launch_{kind}_{metric[:-3]}_median_ns"


def _median(kind: str, metric: str) -> Any:
    def read(run: Any) -> float | None:
        e = series(run, kind)
        return None if e is None else e[metric]["p50"]
    return read


for _kind in KIND_NAMES:
    for _metric, _words in METRICS.items():
        if name(_kind, _metric).startswith("launch_") and name(_kind, _metric) in (
                "launch_thread_median_ns", "launch_process_median_ns"):
            continue  # the headline's findings
        from_run(name(_kind, _metric), "launch", _median(_kind, _metric), "ns", "median",
                 f"a {_kind} launch from the small C driver, parent holding nothing extra: "
                 f"{_words}; median of the steady launches", **US)

from_run("launch_thread_very_first_recorded_ns", "launch",
         lambda run: (series(run, "thread") or {}).get("very_first_lifecycle_ns"), "ns",
         "recorded (one launch)", "the very first thread of a fresh launch process: its "
         "whole life, one launch (an indication, not a distribution)", **US)
from_run("launch_clock_read_median_ns", "launch",
         lambda run: run.meta["summary"]["timer_overhead_ns"], "ns", "median",
         "one clock read: the median of 100,001 back-to-back reads in the launch run",
         fmt=",.0f")
from_run("launch_clock_share_of_thread_median_share_pct", "launch",
         lambda run: 100 * run.meta["summary"]["timer_overhead_share_of_median"], "%",
         "share of the median thread lifecycle", "two clock reads (one timed interval) as a "
         "share of the median thread lifecycle", fmt=".2f")
from_run("launch_plain_loop_thread_mean_ns", "launch",
         lambda run: run.meta["summary"]["baseline"]["mean_ns"], "ns", "mean",
         "a plain create + join loop (default attributes, after the series): the mean per "
         "thread, a cross-check of the per-launch series", **US)
from_run("launch_thread_lifecycle_mean_ns", "launch",
         lambda run: run.meta["summary"]["baseline"]["series_mean_lifecycle_ns"], "ns",
         "mean", "a thread's whole life in the per-launch series: the mean (beside the plain "
         "loop's mean)", **US)


# least-squares slopes the launch run stores: name -> (summary path, format, in µs)
SLOPES = {
    "launch_fork_create_slope_ns": (["memory_fit", "fork", "slope"], ".2f", True),
    "launch_thread_create_slope_ns": (["memory_fit", "thread", "slope"], ".1f", False),
    "launch_burst_create_slope_ns": (["burst_fit", "create_total_ns", "slope"], ",.1f", True),
    "launch_burst_wall_slope_ns": (["burst_fit", "wall_ns", "slope"], ",.1f", True),
}
SLOPE_WORDS = {
    "launch_fork_create_slope_ns": "how much the fork call grows per MiB the parent holds: "
    "least-squares slope over every launch (per MiB)",
    "launch_thread_create_slope_ns": "how much pthread_create grows per MiB the parent "
    "holds: least-squares slope over every launch (per MiB)",
    "launch_burst_create_slope_ns": "creating N threads that stay alive: slope of the "
    "burst's create time over N (per thread)",
    "launch_burst_wall_slope_ns": "a burst of N threads with their release and joins: slope "
    "of its wall time over N (per thread)",
}
for _name, (_path, _fmt, _us) in SLOPES.items():
    from_summary(_name, "launch", _path, "ns", "slope", SLOPE_WORDS[_name], fmt=_fmt,
                 **(US if _us else {}))


from_run("launch_driver_rss_recorded_mib", "launch",
         lambda run: (series(run, "fork") or {}).get("parent_rss_kib", 0) / 1024, "MiB",
         "recorded", "the small C launch driver's resident memory (the parent of the forks)",
         fmt=",.1f")
from_run("launch_python_parent_rss_recorded_mib", "launch_python_parent",
         lambda run: run.meta["summary"]["series"][0]["parent_rss_kib"] / 1024, "MiB",
         "recorded", "the Python process the forks of the python-parent run come from: its "
         "resident memory", fmt=",.0f")
from_run("launch_fork_from_python_create_median_ns", "launch_python_parent",
         lambda run: run.meta["summary"]["series"][0]["create_ns"]["p50"], "ns", "median",
         "the fork call from a Python process (the python-parent run): median", **US)


from_run("launch_serial_thread_create_mean_ns", "launch",
         lambda run: (series(run, "thread") or {}).get("create_ns", {}).get("mean"), "ns",
         "mean", "one pthread_create at a time, each thread joined before the next: the "
         "mean create call", **US)


# --- launch (C09) --------------------------------------------------------------------------------

def _launch(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("launch", kinds=holds_all("thread", "fork"),
                          parent_touch_mib=holds_all(0, 8))
    table = runs.tables(found, "distributions")
    if table.empty:
        return no_run("launch", "thread and fork at 0 and 8 MiB touched", "notebook 03")
    rows = table[(table.metric == "create_ns") & (table.phase == "steady")]
    return rows, found


def _growth_repeats(kind: str, runs: Runs) -> Measurement | Missing:
    """launch_growth/repeats: median create time at 8 MiB / at 0 MiB, paired by repeat."""
    found = runs.matching("launch_growth", kinds=holds_all(kind), parent_touch_mib=holds_all(0, 8))
    table = runs.tables(found, "repeats")
    if table.empty:
        return no_run("launch_growth", f"{kind} at 0 and 8 MiB touched", "notebook 03")
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


