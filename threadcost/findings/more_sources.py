"""Findings of notebook 08 (S7-S12): each number its sentences print, from the newest run
of its experiment (a notebook passes its unsaved result through ``findings.of_results``).
The numbers a claim judges are the claim's readings (``claims.reading_name``).

Selectors of the claims C30..C35 (sources S7..S12): one small function each.

Each reads the stored runs of one experiment of notebook 08 by setup, pools every
matching run, and returns a Measurement (a value with its interval over the
independent repeats) or a Missing with the reason. The claims' whys of these sources
(:mod:`threadcost.claims.whys`) read the same tables (:func:`stored_table`). Every time
is a mean over repeats, as the claims read it, so a why and its reading print the same
number.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import vocabulary
from threadcost.findings.summary import from_run
from threadcost.host import sysinfo
from threadcost.measured.intervals import log_ratio, over_repeats
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

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


# --- selectors of the claims ------------------------------------------------------------
NOTEBOOK = "notebook 08"


def stored_table(runs: Runs, experiment: str,
                 name: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    """Table ``name`` of every stored ``experiment`` run that ran, pooled, or why none."""
    found = [r for r in runs.matching(experiment) if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, name)
    if table.empty:
        skipped = [r.meta["summary"]["skipped"] for r in runs.matching(experiment)
                   if r.meta["summary"].get("skipped")]
        if skipped:
            return Missing(f"the {experiment.replace('_', ' ')} run did not run: "
                           f"{vocabulary.bare_reason(skipped[0])}")
        return Missing(f"no stored {experiment.replace('_', ' ')} run on this machine "
                       f"({NOTEBOOK})")
    return table, found


# ------------------------------------------------------------------ S7 (C30)

def s7_growth(kind: str) -> Any:
    """launch_spawn_growth/repeats: whole life at the largest parent size / at 0 MiB,
    paired within each repeat (both series of one repeat, fresh processes)."""
    def select(runs: Runs) -> Measurement | Missing:
        got = stored_table(runs, "launch_spawn_growth", "repeats")
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table.kind == kind]
        big = int(rows.parent_touch_mib.max())
        if big == 0:
            return Missing("the stored run grows no parent memory")
        wide = rows.pivot_table(index=["run_index", "repeat"], columns="parent_touch_mib",
                                values="lifecycle_ns_p50")
        return log_ratio((wide[big] / wide[0]).dropna(), run_id=run_ids(found),
                         setup={"experiment": "launch_spawn_growth", "kind": kind,
                                "parent": "small static C process, every page written",
                                "sizes_mib": f"0 and {big}"},
                         how=f"per repeat: median whole life (create, exec, exit, wait) at "
                             f"{big} MiB / at 0 MiB", where=f"{big} MiB against 0")
    return select


# ------------------------------------------------------------------ S8 (C31)

def s8_ratio(runs: Runs) -> Measurement | Missing:
    got = stored_table(runs, "fiber_gap", "ratios")
    if isinstance(got, Missing):
        return got
    table, found = got
    return log_ratio(table.ucontext_over_asm, run_id=run_ids(found),
                     setup={"experiment": "fiber_gap", "switches": "hand-written x86-64 vs "
                            "glibc swapcontext", "cpu": "pinned, one thread"},
                     how="per repeat: swapcontext switch / hand-written switch, each half a "
                         "round trip of a batch without clock reads")


def s8_ns(what: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = stored_table(runs, "fiber_gap", "repeats")
        if isinstance(got, Missing):
            return got
        table, found = got
        return over_repeats(table[table.what == what].ns, "ns", run_id=run_ids(found))
    return select


# ------------------------------------------------------------------ S9 (C32)

def s9_count(mechanism: str, tasks: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = stored_table(runs, "switch_counts", "runs")
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[(table.mechanism == mechanism) & (table.tasks == tasks)]
        if rows.empty:
            return Missing(f"the stored switch_counts run has no {mechanism} {tasks}")
        return over_repeats(rows.switches_per_round_trip, "switches", run_id=run_ids(found),
                            setup={"experiment": "switch_counts", "mechanism": mechanism,
                                   "tasks": tasks, "placement": "same-cpu"},
                            how="per repeat: both sides' voluntary + involuntary context "
                                "switches (getrusage) over the timed iterations / iterations",
                            where=f"{tasks}, one CPU")
    return select


def s9_virtualization(runs: Runs) -> Missing:
    return Missing("needs the same machine measured with and without virtualization; this "
                   "project measures one machine as it is (a guest or not) and has no "
                   "bare-metal twin to compare with")


# ------------------------------------------------------------------ S10 (C33)

def _points(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    return stored_table(runs, "indirect_cost", "points")


def s10_direct_us(runs: Runs) -> Measurement | Missing:
    got = _points(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[table.array_kib == 0]
    return over_repeats(rows.c2_ns / 1000, "µs", run_id=run_ids(found),
                        setup={"experiment": "indirect_cost", "array_kib": 0,
                               "tasks": "two processes, one CPU, a pipe pair"},
                        how="per repeat: time per hop with the partner minus time per hop "
                            "alone (their c2 = s1/20000 - s2/10000, a difference)",
                        where="no array")


def s10_growth(runs: Runs) -> Measurement | Missing:
    """c2 at the largest array within the last-level cache (smallest stride) / c1.

    Their c2 "ranges from several microseconds to more than one thousand
    microseconds" with the array size and the stride; the reading holds the stride at
    the smallest of the sweep (a sequential walk, whose refills a prefetcher hides best:
    the least growth of the sweep's strides) and asks for 2x. A repeat whose c2 or c1 is
    at or below zero has no ratio: it is never dropped (that would bias the growth
    upward); the reading is then not judged and says why."""
    got = _points(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    llc = found[0].meta["params"].get("llc_kib") if found else None
    inside = table[(table.array_kib > 0) & (table.array_kib <= (llc or 0))]
    if inside.empty:
        return Missing("no array of the stored sweep fits in the last-level cache "
                       f"({llc or 'unknown'} KiB)")
    size = int(inside.array_kib.max())
    stride = int(inside.stride_bytes.min())
    rows = inside[(inside.array_kib == size) & (inside.stride_bytes == stride)]
    info: dict[str, Any] = {
        "run_id": run_ids(found),
        "setup": {"experiment": "indirect_cost", "array_kib": size, "stride_bytes": stride,
                  "llc_kib": llc},
        "how": "per repeat: total cost per switch with the array / with none",
        "where": f"{size:,} KiB, stride {stride} B"}
    unusable = _s10_nonpositive(rows, size, stride)
    if unusable:
        value = float(rows.c2_ns.mean() / rows.c1_ns.mean()) if rows.c1_ns.mean() else 0.0
        return Measurement(value, "ratio", repeats=len(rows), unjudgeable=unusable,
                           **{**info, "how": "mean c2 over the repeats / mean c1 (no "
                                             "per-repeat ratio: see why not)"})
    return log_ratio((rows.c2_ns / rows.c1_ns).to_numpy(), **info)


def _s10_nonpositive(rows: pd.DataFrame, size: int, stride: int) -> str:
    """Why the per-repeat ratios c2 / c1 cannot be read ("": they can)."""
    n = len(rows)
    low_c1 = rows[rows.c1_ns <= 0]
    if not low_c1.empty:
        return (f"the direct cost c1 (no array) came out at or below zero in {len(low_c1)} "
                f"of {n} repeats (median {_ns(low_c1.c1_ns.median())}): the two processes "
                "were not slower per hop than the one alone, so there is no cost to "
                "compare with")
    low = rows[rows.c2_ns <= 0]
    if low.empty:
        return ""
    alone, both = _ns(low.single.median()), _ns(low.switch.median())
    said = (f"at {size:,} KiB, stride {stride} B, c2 = (per hop with the partner) - (per hop "
            "alone) came out at or below zero in ")
    why = ("; alone, the process walks the same array with no partner evicting it, so a c2 "
           "below zero is no cost of a switch: ")
    if len(low) == n:
        return (f"{said}every repeat (median {alone} per hop alone against {both} with the "
                f"partner){why}the two runs did not time the same work (their code or the "
                "machine's state differed), and no growth can be read from them")
    rest = rows[rows.c2_ns > 0]
    return (f"{said}{len(low)} of {n} repeats (median {alone} per hop alone against {both} "
            f"with the partner; in the other repeats {_ns(rest.single.median())} against "
            f"{_ns(rest.switch.median())}){why}in those repeats the noise was larger than "
            "the cost, and leaving them out would bias the growth upward")


def _ns(x: float) -> str:
    return f"{x:,.0f} ns"


# ------------------------------------------------------------------ S11 (C34)

def _go_pairs(runs: Runs, column: str) -> tuple[pd.Series, list[Any]] | Missing:
    got = stored_table(runs, "go_lockosthread", "runs")
    if isinstance(got, Missing):
        return got
    table, found = got
    wide = table.pivot_table(index=["run_index", "repeat"], columns="locked", values=column)
    return (wide[True] / wide[False]).replace([np.inf, -np.inf], np.nan).dropna(), found


def s11_time_ratio(runs: Runs) -> Measurement | Missing:
    got = _go_pairs(runs, "ns_per_round_trip")
    if isinstance(got, Missing):
        return got
    ratio, found = got
    return log_ratio(ratio, run_id=run_ids(found),
                     setup={"experiment": "go_lockosthread", "gomaxprocs": 1,
                            "channel": "unbuffered, one round trip per op"},
                     how="per pair of runs: ns per round trip with LockOSThread / without")


def s11_switch_ratio(runs: Runs) -> Measurement | Missing:
    got = _go_pairs(runs, "switches_per_round_trip")
    if isinstance(got, Missing):
        return got
    ratio, found = got
    if ratio.empty:
        return Missing("the unlocked runs counted no kernel switch at all (no ratio)")
    return log_ratio(ratio, run_id=run_ids(found),
                     setup={"experiment": "go_lockosthread", "counter": "getrusage "
                            "RUSAGE_SELF of the Go process, all its threads"},
                     how="per pair: kernel switches per round trip locked / unlocked")


# ------------------------------------------------------------------ S12 (C35)

def s12_seconds(runs: Runs) -> Measurement | Missing:
    got = stored_table(runs, "thread_waves", "repeats")
    if isinstance(got, Missing):
        return got
    table, found = got
    wave = found[0].meta["params"].get("wave")
    total = int(table.threads.sum())
    return over_repeats(1e5 / table.threads_per_s, "s", run_id=run_ids(found),
                        setup={"experiment": "thread_waves", "wave": wave,
                               "threads": total, "stack": "glibc default"},
                        how="per repeat (a fresh process, waves of threads all alive at "
                            "once, then released and joined): 100,000 / threads per second",
                        where=f"{total:,} threads in waves of {wave:,}")


def s12_concurrent(runs: Runs) -> Missing:
    pid_max = sysinfo.sysctl("kernel.pid_max")
    limit = f"kernel.pid_max is {pid_max:,} here" if pid_max else "kernel.pid_max is unknown"
    return Missing(f"100,000 threads alive at once need 100,000 process ids; {limit}, and "
                   "every run keeps a reserve of process ids below it, so the threads come in "
                   "waves")
