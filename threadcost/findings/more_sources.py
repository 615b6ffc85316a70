"""Findings of notebook 08 (S7-S12): each number its sentences print, from the newest run
of its experiment (a notebook passes its unsaved result through ``findings.of_results``).
The numbers a claim judges are the claim's readings (``claims.reading_name``)."""

from __future__ import annotations

from typing import Any

from threadcost.findings.summary import from_run

US = dict(scale=1e-3, display_unit="µs")


# --- S7: fork + exec against posix_spawn as the parent grows --------------------------------

def _spawn_median(kind: str, largest: bool) -> Any:
    def read(run: Any) -> float:
        frame = run.table("repeats")
        mib = int(frame.parent_touch_mib.max()) if largest else 0
        rows = frame[(frame.kind == kind) & (frame.parent_touch_mib == mib)]
        return float(rows.lifecycle_ns_p50.median())
    return read


for _kind, _words in (("fork_exec", "fork + exec of the tiny static program"),
                      ("posix_spawn", "posix_spawn of the tiny static program")):
    from_run(f"spawn_{_kind}_empty_parent_median_ns", "launch_spawn_growth",
             _spawn_median(_kind, False), "ns", "median over repeats",
             f"{_words} from a parent holding nothing: the median over repeats of each "
             "repeat's median launch (whole life)", **US)
    from_run(f"spawn_{_kind}_largest_parent_median_ns", "launch_spawn_growth",
             _spawn_median(_kind, True), "ns", "median over repeats",
             f"{_words} from the largest parent measured: the median over repeats of each "
             "repeat's median launch (whole life)", **US)
for _kind, _words in (("fork_exec", "fork + exec"), ("fork", "a bare fork")):
    from_run(f"spawn_{_kind}_growth_slope_ns", "launch_spawn_growth",
             lambda run, k=_kind: run.meta["summary"]["lifecycle_slope_ns_per_mib"][k]["slope"],
             "ns", "slope", f"how much {_words} grows per MiB the parent holds: slope of the "
             "launch over the parent's size, fitted over the repeats (per MiB)", **US)


# --- S8: the fiber switch gap ----------------------------------------------------------------

def _gap_mean(what: str) -> Any:
    def read(run: Any) -> float:
        frame = run.table("repeats")
        return float(frame[frame.what == what].ns.mean())
    return read


GAP = {"asm": "one hand-written fiber switch (as Boost's fcontext)",
       "ucontext": "one swapcontext switch (as Boost's ucontext)",
       "sigprocmask": "one empty rt_sigprocmask system call in the same process"}
for _what, _words in GAP.items():
    from_run(f"fiber_gap_{_what}_mean_ns", "fiber_gap", _gap_mean(_what), "ns",
             "mean over repeats", f"{_words}: the mean over the repeats")
from_run("fiber_gap_ucontext_minus_asm_mean_ns", "fiber_gap",
         lambda run: _gap_mean("ucontext")(run) - _gap_mean("asm")(run), "ns",
         "mean over repeats", "the gap between a swapcontext switch and a hand-written one: "
         "the difference of their means over the repeats")
from_run("fiber_gap_over_sigprocmask_mean_ratio", "fiber_gap",
         lambda run: ((_gap_mean("ucontext")(run) - _gap_mean("asm")(run))
                      / _gap_mean("sigprocmask")(run)), "ratio", "ratio of means",
         "the swapcontext gap in empty rt_sigprocmask calls: (mean swapcontext switch - mean "
         "hand-written switch) / mean rt_sigprocmask call")


# --- S11: LockOSThread ------------------------------------------------------------------------

def _go(locked: bool, column: str) -> Any:
    def read(run: Any) -> float:
        runs = run.table("runs")
        return float(runs[runs.locked.astype(bool) == locked][column].mean())
    return read


for _locked, _tag, _words in ((False, "unlocked", "two goroutines"),
                              (True, "locked", "two goroutines each locked to its own OS "
                                               "thread (LockOSThread)")):
    from_run(f"go_{_tag}_round_trip_mean_ns", "go_lockosthread", _go(_locked,
             "ns_per_round_trip"), "ns", "mean over repeats", f"one round trip over two "
             f"channels between {_words}: the mean over repeats, as a Go benchmark's ns/op")
    from_run(f"go_{_tag}_switches_per_round_trip_mean", "go_lockosthread",
             _go(_locked, "switches_per_round_trip"), "switches", "mean over repeats",
             f"the switches the kernel counted per round trip between {_words}: the mean "
             "over repeats", fmt="sig3")
    from_run(f"go_{_tag}_switches_per_1000_round_trips_mean", "go_lockosthread",
             _go(_locked, "switches_per_round_trip"), "switches", "mean over repeats",
             f"the switches the kernel counted per 1,000 round trips between {_words}: the "
             "mean over repeats (a rare switch reads better per 1,000)", fmt="sig3",
             scale=1000)


# --- S9: switches counted per round trip (tsuna's loop) --------------------------------------

def _tsuna(column: str) -> Any:
    def read(run: Any) -> float:
        runs = run.table("runs")
        proc = runs[(runs.mechanism == "futex_yield") & (runs.tasks == "processes")]
        if column == "total":  # C32's reading: the mean over the runs
            return float(((proc.voluntary + proc.involuntary) / proc.round_trips).mean())
        return float((proc[column] / proc.round_trips).mean())
    return read


for _col, _words in (("total", "every switch"), ("voluntary", "voluntary switches"),
                     ("involuntary", "involuntary switches")):
    from_run(f"tsuna_loop_{_col}_switches_mean", "switch_counts", _tsuna(_col),
             "switches", "mean over runs", f"tsuna's futex + sched_yield loop between two "
             f"processes on one CPU: {_words} the kernel counted per iteration, mean over "
             "runs (C32's statistic)", fmt="sig3")
from_run("switch_counts_futex_per_round_trip_mean", "switch_counts",
         lambda run: float(run.table("runs").query(
             "mechanism == 'futex' and tasks == 'processes'").switches_per_round_trip.mean()),
         "switches", "mean over runs", "the futex ping-pong between two processes on one "
         "CPU, without yields: the switches the kernel counted per round trip, mean over "
         "runs (C32's statistic)", fmt="sig3")
# The empty system call each of these runs also timed is not a finding of its own: the
# paper prints one empty system call, the yardsticks' (``yardstick_syscall_mean_ns``).


# --- S10: the indirect cost of a switch -------------------------------------------------------

def _indirect_worst(run: Any) -> float | None:
    pts = run.table("points")
    llc = run.meta["summary"].get("llc_kib") or 0
    inside = pts[(pts.array_kib > 0) & (pts.array_kib <= llc)]
    if inside.empty:
        return None
    return float(inside.groupby(["array_kib", "stride_bytes"]).c2_ns.median().max())


from_run("indirect_worst_in_cache_switch_median_ns", "indirect_cost", _indirect_worst, "ns",
         "median over repeats", "the cost per switch with an array walked between switches "
         "(c2), at the array size and stride within the last-level cache where it is "
         "largest: median over repeats", **US)


# --- S12: NPTL's 100,000 threads ---------------------------------------------------------------

for _stat in ("min", "max"):
    from_run(f"waves_100k_seconds_{_stat}_s", "thread_waves",
             lambda run, s=_stat: run.meta["summary"]["seconds_per_100k"][s], "s",
             "computed (scaled to 100,000 threads)", f"the time 100,000 threads take to be "
             f"created and destroyed in waves, at each repeat's rate: the {_stat}imum "
             "over the repeats", computed=True)
