"""Notebook 08's tables, figures and sentences: six more published sources (S7-S12).

Every number in a sentence is read from the results passed in; nothing here
measures. Per switch is half a round trip throughout, and every per-switch
figure stands beside the switches the kernel counted per round trip.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from threadcost import claims, findings, textout, vocabulary
from threadcost.claims.logic import number, numbers
from threadcost.claims.whys import SYSCALL_STATISTIC
from threadcost.results import Result
from threadcost.views import tables

COLORS = {"fork_exec": "#b2182b", "posix_spawn": "#2166ac", "fork": "#999999"}
LABELS = {"fork_exec": "fork + exec", "posix_spawn": "posix_spawn", "fork": "fork alone"}


def _log_if_wide(ax: plt.Axes, values: Any) -> None:
    """Log y only when the values span a decade or more (else the ticks repeat)."""
    vals = np.asarray(values, dtype=float)
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if vals.size and vals.max() / vals.min() >= 10:
        ax.set_yscale("log")


def _us(ns: float) -> str:
    return f"{number(ns / 1000)} µs"


def _show(name: str, result: Result) -> str:
    """The finding ``name`` of this page's run (stored or not), marked with its name."""
    return findings.span(findings.of_results(name, [result]))


def _judged(m: Any) -> bool:
    """A claim's reading (a Measurement with a value), not a Missing or None."""
    return m is not None and getattr(m, "value", None) is not None


def reading_text(m: Any, unit: str = "", name: str = "",
                 interval: str = "95% interval ") -> str:
    """"63.5 [95% interval 56.0 to 71.9]": a claim's reading, value and 95% interval at
    one precision; the value marked with ``name`` (``claims.reading_name``: the claims'
    tables print the same reading under it). ``interval``: the words before the two
    ends ("" in a table cell whose header says what the brackets hold)."""
    u = f" {unit}" if unit else ""

    def mark(x: str) -> str:
        runs = [r for r in str(getattr(m, "run_id", "") or "").replace("; ", ", ").split(", ")
                if r]
        said = f" (read from {len(runs)} runs)" if len(runs) > 1 else ""
        return findings.tag(name, x, f"{x}{u}{said}", runs) if name else f"{x}{u}"

    if m.low is None or m.high is None or m.low == m.high:
        return mark(numbers(m.value)[0])
    x, lo, hi = numbers(m.value, m.low, m.high)
    return findings.Marked(f"{mark(x)} [{interval}{lo} to {hi}]")  # a table keeps the span


# ------------------------------------------------------------------ S7

def spawn_table(result: Result) -> Any:
    frame = result.tables["repeats"]
    wide = frame.pivot_table(index="parent_touch_mib", columns="kind",
                             values="lifecycle_ns_p50", aggfunc="median") / 1000
    wide = wide[[k for k in LABELS if k in wide.columns]]
    wide.columns = [f"{LABELS[k]}, µs" for k in wide.columns]
    wide.index.name = "parent memory written, MiB"
    return tables.show(wide.reset_index(), note="Median over repeats of each series' "
                       "median whole life: create, first run, exit, wait.")


def spawn_figure(result: Result) -> plt.Figure:
    frame = result.tables["repeats"]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for kind, rows in frame.groupby("kind"):
        med = rows.groupby("parent_touch_mib").lifecycle_ns_p50.median() / 1000
        ax.scatter(rows.parent_touch_mib, rows.lifecycle_ns_p50 / 1000, s=10, alpha=0.4,
                   color=COLORS.get(str(kind)))
        ax.plot(med.index, med.values, marker="o", color=COLORS.get(str(kind)),
                label=LABELS.get(str(kind), str(kind)))
    ax.set_xlabel("parent's memory, every page written (MiB)")
    ax.set_ylabel("launch, whole life (µs)")
    _log_if_wide(ax, frame.lifecycle_ns_p50 / 1000)
    ax.set_title("fork + exec grows with the parent, posix_spawn does not")
    ax.legend()
    return fig


def spawn_text(result: Result) -> str:
    frame = result.tables["repeats"]
    big = int(frame.parent_touch_mib.max())
    med = frame.groupby(["kind", "parent_touch_mib"]).lifecycle_ns_p50.median()
    slopes = result.summary.get("lifecycle_slope_ns_per_mib", {})
    del med  # the sentences print the findings (the same medians)
    size = findings.parameter("spawn_parent_touch_mib", f"{big:,} MiB")
    parts = [f"From a parent holding nothing to one holding {size}, fork + exec of the "
             f"tiny program went from {_show('spawn_fork_exec_empty_parent_median_ns', result)} "
             f"to {_show('spawn_fork_exec_largest_parent_median_ns', result)} (median), "
             f"posix_spawn of the same program from "
             f"{_show('spawn_posix_spawn_empty_parent_median_ns', result)} to "
             f"{_show('spawn_posix_spawn_largest_parent_median_ns', result)}."]
    if "fork_exec" in slopes and "fork" in slopes:
        parts.append(f"fork + exec grows by {_show('spawn_fork_exec_growth_slope_ns', result)} "
                     f"per MiB and a bare fork by {_show('spawn_fork_growth_slope_ns', result)} "
                     "per MiB (slopes over the "
                     "repeats): the growth is fork's, which copies the parent's page tables "
                     "and marks every page copy-on-write; glibc's posix_spawn starts the child "
                     "with clone(CLONE_VM | CLONE_VFORK) and never copies them.")
    return " ".join(parts)


# ------------------------------------------------------------------ S8

def gap_table(result: Result) -> Any:
    frame = result.tables["repeats"]
    what = {"asm": "hand-written switch (as Boost's fcontext)",
            "ucontext": "swapcontext (as Boost's ucontext)",
            "sigprocmask": "one empty sigprocmask system call (the yardstick)"}
    rows = []
    for key, label in what.items():
        sel = frame[frame.what == key]
        spr = sel.switches_per_round_trip.astype(float)
        # the mean is the finding the sentences below print (C31's statistic), by name
        mean = findings.of_results(f"fiber_gap_{key}_mean_ns", [result])
        rows.append({"what": label, "ns (mean over repeats)":
                     findings.tag(mean.name, mean.number(), mean.number(), mean.run_ids)
                     if mean.measured else None,
                     "ns (min over repeats)": float(sel.ns.min()),
                     "ns (max over repeats)": float(sel.ns.max()),
                     "kernel switches counted (all repeats)":
                     f"{int((sel.voluntary + sel.involuntary).sum()):,}"
                     if spr.notna().any() else None})
    return tables.show(pd.DataFrame(rows), missing="not a switch",
                       note="Per switch: half a round trip of a batch without clock reads.")


def gap_figure(result: Result) -> plt.Figure:
    frame = result.tables["repeats"]
    order = ["asm", "ucontext", "sigprocmask"]
    labels = ["hand-written\nswitch", "swapcontext\nswitch", "empty\nrt_sigprocmask"]
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for i, key in enumerate(order):
        vals = frame[frame.what == key].ns
        ax.bar(i, vals.median(), color=["#1b7837", "#762a83", "#999999"][i])
        ax.scatter(np.full(len(vals), i), vals, color="black", s=8, zorder=3)
    ax.set_xticks(range(3), labels)
    ax.set_ylabel("ns per switch (per call)")
    ax.set_title("swapcontext's extra cost is about one system call")
    return fig


def gap_text(result: Result, judged: Any = None) -> str:
    """``judged``: C31's reading of the ratio (``claims.measure``): the page prints the
    statistic the claim judges, Boost's (a mean over many switches), not a median."""
    s = result.summary
    frame = result.tables["repeats"]
    mean = {w: float(frame[frame.what == w].ns.mean()) for w in ("asm", "ucontext",
                                                                  "sigprocmask")}
    n = s["ucontext_over_asm"]["n"]
    ratio = (reading_text(judged, name=claims.reading_name("C31", "ucontext_t switch"))
             + ", the geometric mean of the repeats' ratios as C31 reads "
             "it" if _judged(judged) else number(s["ucontext_over_asm"]["p50"]) + " (median)")
    del mean  # the sentences print the findings (the same means)
    return (f"Here a hand-written switch took {_show('fiber_gap_asm_mean_ns', result)} and a "
            f"swapcontext switch {_show('fiber_gap_ucontext_mean_ns', result)} (means over "
            f"{n} repeats, as Boost reports a mean): a ratio of {ratio}, against Boost's "
            f"{number(547 / 9)} ({findings.published('C31', '547 ns')} / "
            f"{findings.published('C31', '9 ns')}, published). The gap, "
            f"{_show('fiber_gap_ucontext_minus_asm_mean_ns', result)}, is "
            f"{_show('fiber_gap_over_sigprocmask_mean_ratio', result)} times one empty "
            f"rt_sigprocmask call ({_show('fiber_gap_sigprocmask_mean_ns', result)}) "
            "measured in the same process: swapcontext saves and restores the signal "
            "mask with that system call on every switch. " + _kernel_count_text(frame))


def _kernel_count_text(frame: pd.DataFrame) -> str:
    """What the kernel's switch counter said over every timed fiber round trip: a fiber
    switch is no kernel switch, and a rare preemption is said as one, never hidden."""
    fibers = frame[frame.what.isin(["asm", "ucontext"])]
    counted = int((fibers.voluntary + fibers.involuntary).sum())
    trips = int(fibers.operations.sum())
    if counted == 0:
        return ("Neither switch made a kernel context switch (the kernel's counter stayed "
                "at zero): a trip into the kernel is not a switch.")
    return (f"Neither switch makes a kernel context switch: over all {trips:,} timed round "
            f"trips of both the kernel counted {counted:,} (an involuntary one is the "
            "scheduler preempting the thread, not a fiber switch): a trip into the kernel "
            "is not a switch.")


# ------------------------------------------------------------------ S9: every mechanism

MECH_LABELS = {"pipe": "pipe", "condvar": "mutex + condvar", "futex": "futex",
               "eventfd": "eventfd", "futex_yield": "futex + sched_yield (tsuna's loop)"}


def all_switch_rows(counts: Result, gap: Result | None, go: Result | None,
                    indirect: Result | None) -> pd.DataFrame:
    """One row per mechanism: per switch (half a round trip) and the kernel's count."""
    rows = []
    runs = counts.tables["runs"]
    for (mech, kind), g in runs.groupby(["mechanism", "tasks"], sort=False):
        rows.append({"mechanism": MECH_LABELS.get(str(mech), str(mech)), "tasks": kind,
                     "per switch, ns": g.switch_ns.mean(),
                     "switches per round trip (kernel)": g.switches_per_round_trip.mean(),
                     "counter": "getrusage of both sides"})
    if indirect is not None:
        pts = indirect.tables["runs"]
        sw = pts[(pts["mode"] == "switch") & (pts.array_kib == 0)]
        rows.append({"mechanism": "pipe, Li/Ding/Shen method (no array)",
                     "tasks": "processes", "per switch, ns": sw.ns_per_hop.mean(),
                     "switches per round trip (kernel)":
                     float((2 * (sw.voluntary + sw.involuntary) / sw.hops).mean()),
                     "counter": "getrusage of both processes"})
    if gap is not None:
        frame = gap.tables["repeats"]
        for key, label in (("asm", "fiber, hand-written switch"),
                           ("ucontext", "fiber, swapcontext")):
            g = frame[frame.what == key]
            rows.append({"mechanism": label, "tasks": "fibers on one thread",
                         "per switch, ns": g.ns.mean(),
                         "switches per round trip (kernel)":
                         g.switches_per_round_trip.astype(float).mean(),
                         "counter": "getrusage of the thread"})
    if go is not None and not go.summary.get("skipped"):
        frame = go.tables["runs"]
        for locked, label in ((False, "goroutines, channel"),
                              (True, "goroutines locked to OS threads")):
            g = frame[frame.locked == locked]
            rows.append({"mechanism": label, "tasks": "goroutines (GOMAXPROCS=1)",
                         "per switch, ns": g.switch_ns.mean(),
                         "switches per round trip (kernel)": g.switches_per_round_trip.mean(),
                         "counter": "getrusage of the Go process"})
    return pd.DataFrame(rows)


def _count_text(v: float) -> str:
    """A mean count of switches per round trip: three significant digits ("2.00", "10.0"),
    and a rare switch in plain decimals ("0.000002": one in 500,000), never "0.00"."""

    if pd.isna(v):
        return ""
    return findings.number(v, "auto") if v == 0 or abs(v) >= 0.01 else textout.plain_number(v)


def switch_count_table(rows: pd.DataFrame) -> Any:
    shown = rows.assign(**{"switches per round trip (kernel)": rows[
        "switches per round trip (kernel)"].map(_count_text)})
    return tables.show(shown, note="Per switch = half a round trip (the whole run timed at "
                       "once); switches per round trip = context switches the kernel "
                       "counted, voluntary + involuntary, over the timed round trips; both "
                       "means over repeats.")


def switch_count_figure(rows: pd.DataFrame) -> plt.Figure:
    labels = [f"{m}, {t}" for m, t in zip(rows.mechanism, rows.tasks, strict=True)]
    fig, ax = plt.subplots(figsize=(7.0, 0.32 * len(rows) + 1.2))
    y = np.arange(len(rows))
    ax.barh(y, rows["switches per round trip (kernel)"], color="#4d4d4d")
    ax.axvline(2, color="#b2182b", linestyle="--", linewidth=1)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("context switches per round trip, counted by the kernel")
    ax.set_title("How many switches one round trip really makes")
    return fig


def tsuna_text(counts: Result) -> str:
    # the sentences print the findings, by name
    return (f"tsuna's program divides its time by four switches per iteration; the "
            f"repository's open issue says six. The kernel counted "
            f"{_show('tsuna_loop_total_switches_mean', counts)} per iteration of the "
            f"same loop between two processes on one CPU: "
            f"{_show('tsuna_loop_voluntary_switches_mean', counts)} voluntary (a side "
            f"went to sleep in FUTEX_WAIT) and "
            f"{_show('tsuna_loop_involuntary_switches_mean', counts)} involuntary (a side "
            "was switched out while still runnable, as one is when it calls sched_yield "
            "with the other side ready; the run counts switches, not the loop's calls). "
            "Without the yields the futex ping-pong makes "
            f"{_show('switch_counts_futex_per_round_trip_mean', counts)} per round trip. "
            "Dividing by an assumed count, not a counted one, is how one loop gets three "
            "answers.")


# ------------------------------------------------------------------ S10

def indirect_figure(result: Result) -> plt.Figure:
    """S10's total cost per switch (c2: per hop with the partner - per hop alone), the
    median over repeats of each array size and stride, as the table beside it."""
    pts = result.tables["points"]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    base = pts[pts.array_kib == 0].c2_ns.median() / 1000
    for stride, rows in pts[pts.array_kib > 0].groupby("stride_bytes"):
        med = rows.groupby("array_kib").c2_ns.median() / 1000
        med = med[med > 0]  # at or below zero: noise, no cost; the table shows it
        ax.plot(med.index, med.values, marker="o", label=f"stride {stride} B")
    ax.axhline(base, color="#999999", linestyle=":", label="no array: the direct cost")
    llc = result.summary.get("llc_kib")
    if llc:
        ax.axvline(llc, color="#b2182b", linestyle="--", linewidth=1,
                   label="last-level cache")
    ax.set_xscale("log", base=2)
    _log_if_wide(ax, [base, *(pts[pts.array_kib > 0].groupby(["array_kib", "stride_bytes"])
                              .c2_ns.median() / 1000)])
    ax.set_xlabel("array each process walks between switches (KiB)")
    ax.set_ylabel("c2 per switch (µs), median over repeats")
    # what is drawn: the total cost per switch (direct + indirect), each point and the
    # no-array line a median over the repeats, as the table beside it
    ax.set_title("Total cost per switch (c2) against the array walked: medians")
    ax.legend(fontsize=8)
    return fig


def indirect_table(result: Result) -> Any:
    pts = result.tables["points"]
    agg = pts.groupby(["array_kib", "stride_bytes"]).agg(
        c2=("c2_ns", "median"), indirect=("indirect_ns", "median"),
        switches=("switches_per_round_trip", "median")).reset_index()
    agg["c2"] /= 1000
    agg["indirect"] /= 1000
    agg.columns = ["array, KiB", "stride, bytes", "c2 per switch, µs (median over repeats)",
                   "indirect, µs (median over repeats)",
                   "switches per round trip (kernel, median over repeats)"]
    return tables.show(agg, note="Medians over repeats (one repeat's outlier moves a mean, "
                       "not a median). The direct "
                       "cost C33 judges, below, is the mean over repeats, a different "
                       "statistic of the no-array row. c2 = per hop with a partner - per hop "
                       "alone; indirect = c2 - c2 without an array (the direct cost). A value "
                       "at or below zero (left out of the figure) is no cost of a switch: "
                       "alone, the process walks the same array with no partner evicting it. "
                       "It is noise larger than the cost or, in every repeat, two runs that "
                       "did not time the same work (C33's growth reading says which).")


def indirect_text(result: Result, judged: Any = None,
                  syscall: findings.Quantity | None = None) -> str:
    """``judged``: C33's reading of the direct cost (``claims.measure``, µs): the page
    prints the claim's statistic (a mean over repeats), not a median of its own.
    ``syscall``: the empty system call of the yardsticks (the finding every page and why
    prints), for scale; None leaves it out."""
    s = result.summary
    pts = result.tables["points"]
    llc = s.get("llc_kib")
    inside = pts[(pts.array_kib > 0) & (pts.array_kib <= (llc or 0))]
    if _judged(judged):
        direct = (f"{reading_text(judged, 'µs', claims.reading_name('C33', 'direct cost'))} "
                  f"per switch here (mean over {judged.repeats} "
                  "repeats, as C33 reads it)")
    else:
        direct = f"{_us(s['direct_ns']['p50'])} per switch here (the run's median over " \
                 f"{s['direct_ns']['n']} repeats; C33's mean could not be read)"
    text = (f"The direct cost (no array) was {direct}, against their "
            f"{findings.published('C33', '3.8 µs')}")
    if syscall is not None and syscall.measured:  # for scale: the paper's one system call
        text += (f"; for scale, an empty system call costs {findings.span(syscall)} on "
                 f"this machine (the yardsticks of notebook 4, {SYSCALL_STATISTIC})")
    text += "."
    if not inside.empty:
        top = inside.groupby(["array_kib", "stride_bytes"]).c2_ns.median()
        kib, stride = top.idxmax()
        array = findings.parameter("indirect_array_kib", f"{kib:,} KiB")
        cache = findings.parameter("llc_kib", f"{llc:,} KiB")
        text += (f" With an array, the cost per switch rose to "
                 f"{_show('indirect_worst_in_cache_switch_median_ns', result)} (median over "
                 f"repeats, as in the table; {array}, "
                 f"stride {stride} B, within the {cache} last-level cache): the partner "
                 "evicted the data and the next walk brought it back.")
    return text


# ------------------------------------------------------------------ S11

def _per_round_trip(switches: float, tag: str, result: Result) -> str:
    """Switches per round trip as a reader reads them: a rare switch per 1,000 round
    trips ("2.49 switches per 1,000 round trips"), never "0.00249"."""
    if 0 < switches < 0.1:
        return f"{_show(f'go_{tag}_switches_per_1000_round_trips_mean', result)} per 1,000 " \
               "round trips"
    return f"{_show(f'go_{tag}_switches_per_round_trip_mean', result)} per round trip"


def go_text(result: Result, judged: Any = None) -> str:
    """``judged``: C34's reading of the ratio (``claims.measure``): a Go benchmark's
    ns/op is a mean, and the page prints the claim's value of it."""
    s = result.summary
    if s.get("skipped"):
        return f"The Go peer did not run: {vocabulary.bare_reason(s['skipped'])}."
    runs = result.tables["runs"]
    free = float(runs[~runs.locked.astype(bool)].ns_per_round_trip.mean())
    locked = float(runs[runs.locked.astype(bool)].ns_per_round_trip.mean())
    sw_free = float(runs[~runs.locked.astype(bool)].switches_per_round_trip.mean())
    sw_locked = float(runs[runs.locked.astype(bool)].switches_per_round_trip.mean())
    ratio = (reading_text(judged, name=claims.reading_name("C34", "about 16 times slower"))
             + " times, the geometric mean of the pairs' ratios as C34 "
             "reads it" if _judged(judged) else f"{number(locked / free)} times")
    return (f"One round trip over the channels took "
            f"{_show('go_unlocked_round_trip_mean_ns', result)} unlocked and "
            f"{_show('go_locked_round_trip_mean_ns', result)} with both goroutines locked to "
            f"their own OS threads (means over repeats, as a Go benchmark's ns/op is; "
            f"{ratio}; the issue: 7,887 / 500 = {number(7887 / 500)}). The kernel counted "
            f"{_per_round_trip(sw_free, 'unlocked', result)} unlocked and "
            f"{_per_round_trip(sw_locked, 'locked', result)} "
            "locked (means, as the why of C34 reads them): unlocked, "
            "the hand-off is a goroutine switch inside one OS thread; locked, every send "
            "wakes another OS thread and puts this one to sleep.")


def go_figure(result: Result) -> plt.Figure:
    frame = result.tables["runs"]
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for i, locked in enumerate((False, True)):
        vals = frame[frame.locked == locked].ns_per_round_trip / 1000
        ax.bar(i, vals.median(), color=["#1b7837", "#b2182b"][i])
        ax.scatter(np.full(len(vals), i), vals, color="black", s=8, zorder=3)
    ax.set_xticks([0, 1], ["goroutines", "goroutines locked\nto OS threads"])
    _log_if_wide(ax, frame.ns_per_round_trip / 1000)
    ax.set_ylabel("round trip (µs)")
    ax.set_title("LockOSThread turns a goroutine switch into a thread switch")
    return fig


# ------------------------------------------------------------------ S12

def waves_text(result: Result, judged: Any = None) -> str:
    """``judged``: C35's reading (``claims.measure``, s): the mean over repeats."""
    s = result.summary
    p = result.params
    secs = s["seconds_per_100k"]
    took = (f"{reading_text(judged, 's', claims.reading_name('C35', 'Creating and destroying'))} "
            f"(mean over {judged.repeats} repeats, as C35 reads it; "
            if _judged(judged) else f"{number(secs['p50'])} s (median; ")
    threads = findings.parameter("waves_threads", f"{s['threads']:,} threads")
    alive = findings.parameter("waves_wave", f"{s['max_alive']:,} threads")
    text = (f"{threads} were created and destroyed in waves of {p['wave']:,} "
            f"(at most {alive} of the process alive at once), in "
            f"{p['repeats']} fresh processes. At each repeat's rate, "
            f"{findings.parameter('nptl_threads', '100,000 threads')} take "
            f"{took}the repeats ranged from {_show('waves_100k_seconds_min_s', result)} to "
            f"{_show('waves_100k_seconds_max_s', result)}), against NPTL's \"not more than two "
            "seconds\" on "
            "IA-32 in 2002.")
    if result.limit_hit:
        text += f" The run stopped early: {result.limit_hit['limit']}."
    return text


def waves_figure(result: Result) -> plt.Figure:
    waves = result.tables["waves"]
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    per_thread = (waves.create_ns + waves.join_ns) / waves.created.clip(lower=1) / 1000
    for rep, rows in waves.assign(per=per_thread).groupby("repeat"):
        ax.plot(rows.wave + 1, rows.per, marker=".", linewidth=0.8,
                label=f"repeat {rep + 1}")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"wave ({int(waves.created.max()):,} threads alive at once, then joined)")
    ax.set_ylabel("create + destroy, per thread (µs)")
    ax.set_title("Threads created and destroyed, wave after wave")
    ax.legend(fontsize=7, ncol=3)
    return fig
