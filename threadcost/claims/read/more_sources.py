"""Selectors of the claims C30..C35 (sources S7..S12): one small function each.

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

from threadcost.host import sysinfo
from threadcost.measured.intervals import log_ratio, over_repeats
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

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
            return Missing(f"the {experiment.replace('_', ' ')} run did not run: {skipped[0]}")
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
