"""Findings of the headline: what one task costs (launch, switch, memory), one definition
per column, read from the latest stored run of the experiment that measures exactly it.

Names: ``<column>_<task>_<statistic>_<unit>``. Each value carries ``extra["source"]``
("<experiment> run <id>"), ``extra["partial"]`` (a run older than the definition) and,
for memory, ``extra["resident"]`` (the part the process's RSS or USS shows).
"""

from __future__ import annotations

import statistics
from typing import Any

import pandas as pd

from threadcost import peers, vocabulary
from threadcost.findings import Value, newest, quantity
from threadcost.measured.runs import Runs
from threadcost.store import datastore

LAUNCH = dict(unit="ns", fmt="auto", scale=1e-3, display_unit="µs")
SWITCH = dict(unit="ns", fmt="auto")
MEMORY = dict(unit="KiB", fmt="auto")


def latest(runs: Runs, experiment: str, where: Any = None) -> datastore.Run | None:
    """The newest stored run of an experiment (the headline's rule), by creation time;
    a newer one that could not be read raises (``measured.runs.UnreadableRun``)."""
    runs.refuse_unreadable(experiment, newest=True)
    found = [r for r in runs.runs if r.experiment == experiment
             and (where is None or where(r))]
    found.sort(key=lambda r: (r.meta.get("created_utc", ""), r.meta["run_id"]))
    return found[-1] if found else None


def _src(run: datastore.Run) -> str:
    """Where a cell comes from, as its table prints it: the stored run (its id names its
    experiment; the experiment's own identifier is not words)."""
    return f"stored run {run.meta['run_id']}"


def _value(run: datastore.Run, value: float, low: Any = None, high: Any = None,
           n: int = 1, definition: str = "", partial: bool = False,
           resident: Any = None) -> Value:
    extra: dict[str, Any] = {"source": _src(run), "partial": partial}
    if resident is not None:
        extra["resident"] = float(resident)
    return Value(value, low, high, n, [run], extra=extra, definition=definition)


def _asm_fibers(runs: Runs) -> datastore.Run | None:
    return latest(runs, "fibers", lambda r: r.meta["params"].get("impl") == "asm")


# --- launch -----------------------------------------------------------------------------

def _kernel_launch(runs: Runs, kind: str) -> Value | str:
    run = latest(runs, "launch")
    if run is None:
        return "no launch run stored (notebook 03)"
    d = run.table("distributions")
    hit = d[(d.kind == kind) & (d.parent_touch_mib == 0) & (d.phase == "steady")
            & (d.metric == "lifecycle_ns")]
    if hit.empty:
        return f"{kind} not in the launch run's kinds"
    r = hit.iloc[0]
    return _value(run, r.p50, r["min"], r.p90, int(r.n),
                  f"{kind}: create, first run, {'join' if kind == 'thread' else 'waitpid'}, "
                  f"exit; median of {int(r.n):,} launches")


# a thread's and a process's whole life (the launch run's kinds "thread" and "fork")
for _name, _kind, _words in (
        ("launch_thread_median_ns", "thread", "a thread's whole life, one at a time: "
         "pthread_create, first run, join, exit"),
        ("launch_process_median_ns", "fork", "a process's whole life from a small parent: "
         "fork, first run, waitpid, exit")):
    quantity(_name, statistic="median", definition=f"{_words}; median (interval: fastest "
             "to p90)", **LAUNCH, reads=newest("launch"))(
        lambda runs, kind=_kind: _kernel_launch(runs, kind))


@quantity("launch_fiber_median_ns", statistic="sum of medians and a mean",
          definition="a fiber's whole life: create (stack mapping + context) and first "
          "switch in and back (medians), and unmapping its stack (mean over all fibers); "
          "interval: fastest to p90 of the first two", **LAUNCH,
          reads=newest("fibers (hand-written)"))
def launch_fiber(runs: Runs) -> Value | str:
    fib = _asm_fibers(runs)
    per = (fib.meta["summary"].get("per_fiber") or {}) if fib else {}
    if fib is None or not (per.get("create_ns", {}).get("n") and per.get("start_ns", {}).get("n")):
        return "no asm fibers run stored (notebook 05)"
    c, s = per["create_ns"], per["start_ns"]
    free = per.get("free_ns_mean")
    if free is None:  # a run stored before the unmapping was timed
        return _value(fib, c["p50"] + s["p50"], c["min"] + s["min"], c["p90"] + s["p90"],
                      int(c["n"]), "create (stack mapping + context) + first switch in and "
                      "back; the unmapping was not timed in this run", partial=True)
    return _value(fib, c["p50"] + s["p50"] + free, c["min"] + s["min"] + free,
                  c["p90"] + s["p90"] + free, int(c["n"]),
                  "create (stack mapping + context), first switch in and back (medians), "
                  "and unmapping its stack (mean over all fibers)")


@quantity("launch_goroutine_median_ns", statistic="median", definition="go + first run + "
          "wg.Done + Wait, GOMAXPROCS=1 pinned; median (interval: fastest to p90)", **LAUNCH,
          reads=newest("goroutine_launch"))
def launch_goroutine(runs: Runs) -> Value | str:
    go = latest(runs, "goroutine_launch")
    if go is None:
        return "no goroutine launch run stored (notebook 05)"
    if go.meta["summary"].get("skipped"):
        return str(go.meta["summary"]["skipped"])
    d = go.meta["summary"]["launch_ns"]
    return _value(go, d["p50"], d["min"], d["p90"], int(d["n"]),
                  f"go + first run + wg.Done + Wait, GOMAXPROCS=1 pinned; median of "
                  f"{int(d['n']):,}")


# --- switch ----------------------------------------------------------------------------

# THE paper's switch, one definition for every task, column and page: half the round trip
# of a ping-pong between two tasks pinned to one CPU (each round trip hands the CPU over
# twice), from a batch of round trips timed whole, with no clock read inside: the batch's
# mean round trip / 2; across several runs, the median of runs (interval: their range).
# The per-sample round trips (one clock read in each) are distributions of their own,
# printed as round trips; the time per switch the kernel counted is a quantity of its own
# (``switch_thread_per_counted_median_ns``, page 04).
# the stamped batch: a run that also timed each round trip (a clock read and a CPU note
# inside every round trip), the whole run's mean standing in for a bare batch
STAMPED = ("the run also timed each round trip, so one clock read and a CPU note are "
           "inside every round trip of the batch (page 04 measures what they add)")


def _futex_row(runs: Runs, tasks: str) -> tuple[datastore.Run, Any] | str:
    run = latest(runs, "context_switch")
    if run is None:
        return "no context switch run stored (notebook 04)"
    c = run.table("configs")
    hit = c[(c.mechanism == "futex") & (c.placement == "same-cpu") & (c.tasks == tasks)]
    if hit.empty:
        return f"the stored run has no futex ping-pong between {tasks} on one CPU"
    return run, hit.iloc[0]


def _kernel_switch(runs: Runs, experiment: str, tasks: str) -> Value | str:
    """One switch between two kernel tasks, futex ping-pong, both pinned to one CPU:
    page 05's bare batches, median / 2 (interval: their range). A folder stored before
    the bare batches gives a stamped run timed whole / 2, marked partial: page 05's run,
    else notebook 04's sweep."""
    how = f"futex ping-pong, both {tasks} pinned to one CPU"
    run = latest(runs, experiment)
    s = run.meta["summary"] if run is not None else {}
    bare = [float(x) / 2 for x in s.get("batch_round_trip_ns_runs") or []]
    if run is not None and bare:
        several = len(bare) > 1
        return _value(run, statistics.median(bare), min(bare) if several else None,
                      max(bare) if several else None, len(bare),
                      f"{how}: a batch of round trips timed whole / 2, no clock read "
                      "inside; " + (f"median of {len(bare)} runs (interval: their range)"
                                    if several else "one run"))
    if run is not None and s.get("whole_run_mean_ns") is not None:
        return _value(run, float(s["whole_run_mean_ns"]) / 2, partial=True,
                      definition=f"{how}: {int(s.get('completed') or 0):,} round trips "
                                 f"timed whole / 2 (one run); {STAMPED}")
    got = _futex_row(runs, tasks)
    if isinstance(got, str) or pd.isna(got[1].get("whole_run_mean_ns")):
        return f"no {experiment} run stored (notebook 05 measures it)"
    sweep, r = got
    return _value(sweep, float(r.whole_run_mean_ns) / 2, partial=True,
                  definition=f"{how}: notebook 04's sweep, {int(r.iterations):,} round trips "
                             f"timed whole / 2 (one run; no run of notebook 05's rows "
                             f"stored); {STAMPED}")


for _name, _experiment, _tasks in (
        ("switch_thread_batch_median_ns", "tasks_switch_thread", "threads"),
        ("switch_process_batch_median_ns", "tasks_switch_process", "processes")):
    quantity(_name, statistic="median of runs", definition=f"one switch between two "
             f"{_tasks} pinned to one CPU (futex ping-pong): a batch of round trips timed "
             "whole / 2, no clock read inside; median of runs (interval: their range). A "
             "folder stored before the bare batches gives a run that also timed each round "
             "trip, timed whole / 2, marked partial", **SWITCH,
             reads=f"{newest(_experiment)} (else the newest context_switch run)")(
        lambda runs, e=_experiment, t=_tasks: _kernel_switch(runs, e, t))


@quantity("switch_thread_per_counted_median_ns", statistic="median", definition="the time "
          "per switch the kernel counted: the median round trip of a futex ping-pong between "
          "two threads pinned to one CPU, each timed with one clock read, divided by the "
          "switches the kernel counted per round trip (not the paper's switch)",
          **SWITCH, reads=newest("context_switch"))
def switch_thread_per_counted(runs: Runs) -> Value | str:
    got = _futex_row(runs, "threads")
    if isinstance(got, str):
        return got
    run, r = got
    return _value(run, r.round_trip_p50_ns / r.switches_per_round_trip,
                  definition=f"futex ping-pong, both threads pinned to one CPU: median round "
                  f"trip / {r.switches_per_round_trip:.2f} switches counted per round trip")


@quantity("switch_fiber_batch_mean_ns", statistic="mean of a batch", definition="one fiber "
          "switch, hand-written, pinned: a batch of round trips timed whole / 2, no clock "
          "read inside", **SWITCH, reads=newest("fibers (hand-written)"))
def switch_fiber(runs: Runs) -> Value | str:
    fib = _asm_fibers(runs)
    if fib is None or not fib.meta["summary"].get("switch_ns_batch"):
        return "no asm fibers run stored (notebook 05)"
    return _value(fib, fib.meta["summary"]["switch_ns_batch"],
                  definition="hand-written switch, pinned: batch of round trips / 2, no "
                             "clock read inside")


@quantity("switch_goroutine_median_ns", statistic="median of runs", definition="one "
          "goroutine switch, channel ping-pong with GOMAXPROCS=1 pinned: a batch timed whole "
          "/ 2, median of the pinned runs (interval: their range)", **SWITCH,
          reads="the newest goroutine_pinning run (else the newest peers run)")
def switch_goroutine(runs: Runs) -> Value | str:
    pin = latest(runs, "goroutine_pinning")
    if pin is not None and not pin.meta["summary"].get("skipped"):
        table = pin.table("runs")
        pinned = table[table["mode"] == "gomaxprocs1_pinned"]["switch_ns_batch"]
        if len(pinned):
            return _value(pin, float(pinned.median()), float(pinned.min()),
                          float(pinned.max()), len(pinned),
                          f"channel ping-pong, GOMAXPROCS=1 pinned: batch / 2, median of "
                          f"{len(pinned)} runs (interval: their range)")
    peer = latest(runs, "peers")
    pp = (peer.meta["summary"].get("channel_pingpong") or {}) if peer else {}
    if peer is not None and pp.get("switch_ns_batch"):
        return _value(peer, pp["switch_ns_batch"],
                      definition="channel ping-pong, GOMAXPROCS=1 pinned: batch / 2")
    return ((peer.meta["summary"].get("skipped") if peer else None)
            or "no Go peer run stored (notebook 05)")


# --- memory ----------------------------------------------------------------------------

def _thread_fit(runs: Runs, key: str, definition: str = "") -> Value | str:
    """The thread_memory run's per-thread slope of ``key`` with its 95% interval (and
    the RSS part beside the total)."""
    tm = latest(runs, "thread_memory")
    fits = tm.meta["summary"]["per_thread"]["fit"] if tm else {}
    fit = fits.get(key)
    if tm is None or not fit:
        return "no thread memory run stored (notebook 02)"
    rss = (fits.get("rss_kib") or {}).get("per_thread") if key == "total_kib" else None
    return _value(tm, fit["per_thread"], fit.get("ci95_low"), fit.get("ci95_high"),
                  definition=definition, resident=rss)


@quantity("memory_thread_slope_kib", statistic="slope", definition="memory per idle thread: "
          "RSS growth + kernel stack + page tables + unreclaimable slab, slope over thread "
          "counts with its 95% interval", **MEMORY, reads=newest("thread_memory"))
def memory_thread(runs: Runs) -> Value | str:
    return _thread_fit(runs, "total_kib", "RSS growth + kernel stack + page tables + "
                       "unreclaimable slab, slope over thread counts")


@quantity("memory_thread_rss_slope_kib", statistic="slope", definition="the part of an idle "
          "thread's memory its process's resident set (RSS) shows: slope of RSS over thread "
          "counts", **MEMORY, reads=newest("thread_memory"))
def memory_thread_rss(runs: Runs) -> Value | str:
    return _thread_fit(runs, "rss_kib")


@quantity("memory_process_slope_kib", statistic="slope", definition="memory per idle child "
          "forked from the Python harness (its size recorded with the run): USS + kernel "
          "stack + page tables + unreclaimable slab, slope over child counts with its 95% "
          "interval", **MEMORY, reads=newest("process_memory"))
def memory_process(runs: Runs) -> Value | str:
    pm = latest(runs, "process_memory")
    fits = pm.meta["summary"]["fits"] if pm else {}
    fit = fits.get("total_kib")
    if pm is None or not fit:
        return "no process memory run stored (notebook 02)"
    uss = (fits.get("uss_kib") or {}).get("per_process_kib")
    parent = pm.meta["summary"].get("parent_rss_kib")
    forked = (f"forked from a {parent / 1024:,.0f} MiB parent (the Python harness: the "
              "child's page tables copy the parent's)" if parent else "forked")
    got = _value(pm, fit["per_process_kib"], fit.get("ci95_low"), fit.get("ci95_high"),
                 definition=f"USS + kernel stack + page tables + unreclaimable slab of an "
                            f"idle child {forked}, slope over child counts", resident=uss)
    if parent:
        got.extra["note"] = f"forked from a {parent / 1024:,.0f} MiB parent"
    return got


@quantity("memory_fiber_slope_kib", statistic="slope", definition="RSS growth per idle fiber "
          "(slope over fiber counts); a fiber holds no kernel task", **MEMORY,
          reads=newest("fibers (hand-written)"))
def memory_fiber(runs: Runs) -> Value | str:
    fib = _asm_fibers(runs)
    per = (fib.meta["summary"].get("per_fiber") or {}) if fib else {}
    if fib is None or per.get("rss_kib") is None:
        return "no asm fibers run stored (notebook 05)"
    lo, hi = per.get("rss_ci95") or (None, None)
    return _value(fib, per["rss_kib"], lo, hi,
                  definition=f"RSS growth per idle fiber ({per.get('touch_kib', 0)} KiB of stack "
                  "written); no kernel task", resident=per["rss_kib"])


@quantity("memory_goroutine_slope_kib", statistic="slope", definition="RSS growth per "
          "goroutine blocked on a channel (slope over goroutine counts); it runs on the "
          "runtime's threads and holds no kernel task of its own", **MEMORY, reads=newest("peers"))
def memory_goroutine(runs: Runs) -> Value | str:
    peer = latest(runs, "peers")
    mem = (peer.meta["summary"].get("goroutine_memory") or {}) if peer else {}
    if peer is None or mem.get("per_goroutine_rss_kib") is None:
        return ((peer.meta["summary"].get("skipped") if peer else None)
                or "no Go peer run stored (notebook 05)")
    lo, hi = mem.get("per_goroutine_rss_kib_ci95") or (None, None)
    return _value(peer, mem["per_goroutine_rss_kib"], lo, hi,
                  definition="RSS growth per goroutine blocked on a channel; runs on the runtime's "
                  "threads, no kernel task of its own", resident=mem["per_goroutine_rss_kib"])


# --- the sources' own runtimes (the Rust and Java peers, peer_runtimes) ---------------

def _label(kind: str, runtime: bool = False, plural: bool = False) -> str:
    return vocabulary.task_label(kind, runtime=runtime, plural=plural)


def _peer(runs: Runs, kind: str) -> tuple[datastore.Run, dict[str, Any]] | str:
    """The newest peer_runtimes run that measured ``kind``, and its summary row."""
    run = latest(runs, "peer_runtimes")
    if run is None:
        return "no peer_runtimes run stored (notebook 05)"
    row = run.meta["summary"]["kinds"].get(kind)
    if not row:
        return f"the stored peer_runtimes run did not include the {_label(kind)}"
    if row.get("not_run"):
        return str(row["not_run"])
    return run, row


def _peer_launch(runs: Runs, kind: str) -> Value | str:
    got = _peer(runs, kind)
    if isinstance(got, str):
        return got
    run, row = got
    d = row.get("create_ns")
    if not d:
        return f"its peer measured no launch of a {_label(kind)}"
    return _value(run, d["p50"], d["min"], d["p90"], int(d["n"]),
                  f"{_label(kind, runtime=True)}: spawn, first run, exit, join, one at a time; "
                  f"median of {int(d['n']):,}")


def _peer_switch(runs: Runs, kind: str) -> Value | str:
    got = _peer(runs, kind)
    if isinstance(got, str):
        return got
    run, row = got
    if row.get("switch_ns_batch") is None:
        return f"its peer has no ping-pong between {_label(kind, plural=True)}"
    reps = [float(x) for x in row.get("switch_ns_batch_repeats") or []]
    label = _label(kind, runtime=True)
    if len(reps) > 1:
        return _value(run, row["switch_ns_batch"], min(reps), max(reps), len(reps),
                      f"{label}: channel ping-pong pinned to one CPU, a batch timed whole / "
                      f"2, median of {len(reps)} runs (interval: their range)")
    return _value(run, row["switch_ns_batch"], n=1,
                  definition=f"{label}: channel ping-pong pinned to one CPU, a batch timed "
                             "whole / 2 (one run)")


def _peer_memory(runs: Runs, kind: str, kernel_side: bool) -> Value | str:
    got = _peer(runs, kind)
    if isinstance(got, str):
        return got
    run, row = got
    mem = row.get("memory") or {}
    if mem.get("per_task_rss_kib") is None:
        return f"its peer measured no memory slope for a {_label(kind)}"
    lo, hi = mem.get("per_task_rss_kib_ci95") or (None, None)
    label = _label(kind, runtime=True)
    if kernel_side:  # a kernel task each: the peer reads RSS only
        return _value(run, mem["per_task_rss_kib"], lo, hi,
                      definition=f"{label}: RSS growth per idle task, slope over "
                                 f"{int(mem.get('tasks', 0)):,}; the kernel side (kernel stack, "
                                 "page tables, slab) is not counted by the peer",
                      partial=True, resident=mem["per_task_rss_kib"])
    return _value(run, mem["per_task_rss_kib"], lo, hi,
                  definition=f"{label}: RSS growth per idle task, slope over "
                             f"{int(mem.get('tasks', 0)):,}; no kernel task of its own",
                  resident=mem["per_task_rss_kib"])


# the peers' kinds in the headline (page 5's runtimes that are headline rows) -> whether
# each holds a kernel task of its own, as its registry entry declares it (threadcost.peers;
# its words: threadcost.vocabulary.TASK_LABELS, like every other task kind's)
PEER_KERNEL_TASK: dict[str, bool] = {name: kind.kernel_task
                                     for name, kind in peers.KINDS.items()
                                     if kind.page5 and kind.headline}


def _peer_switch_quantity(kind: str, label: str) -> None:
    quantity(f"switch_{kind.replace('-', '_')}_batch_median_ns", statistic="median of runs",
             definition=f"one switch between two {label}s over a channel, pinned to one "
             "CPU: a batch timed whole / 2, median of runs (interval: their range)",
             reads=newest("peer_runtimes"), **SWITCH)(
        lambda runs: _peer_switch(runs, kind))


def _peer_quantities(kind: str, label: str, kernel_task: bool) -> None:
    key = kind.replace("-", "_")
    quantity(f"launch_{key}_median_ns", statistic="median",
             definition=f"a {label}'s whole life, one at a time: spawn, first run, exit, "
             "join; median (interval: fastest to p90)", reads=newest("peer_runtimes"), **LAUNCH)(
        lambda runs: _peer_launch(runs, kind))
    _peer_switch_quantity(kind, label)
    quantity(f"memory_{key}_rss_slope_kib", statistic="slope",
             definition=f"RSS growth per idle {label} (slope over task counts)"
             + ("; its kernel side is not counted" if kernel_task else
                "; no kernel task of its own"), reads=newest("peer_runtimes"), **MEMORY)(
        lambda runs: _peer_memory(runs, kind, kernel_task))


for _kind, _kernel in PEER_KERNEL_TASK.items():
    _peer_quantities(_kind, vocabulary.TASK_LABELS[_kind], _kernel)
# page 5's other rows with a ping-pong (the multi-thread Tokio runtime): their switch only
for _kind in (k for k, r in peers.KINDS.items()
              if r.page5 and r.switch_how and k not in PEER_KERNEL_TASK):
    _peer_switch_quantity(_kind, vocabulary.TASK_LABELS[_kind])


# (task, column) -> finding name: the headline's grid. A Rust or Java platform thread is a
# kernel thread: the kernel switches it exactly as the OS thread of the first row, and its
# peer's ping-pong over a std channel (a rendezvous with locks around the futex) is a
# different quantity (page 05 prints it by its own name), so its switch cell is None.
CELLS: dict[tuple[str, str], str | None] = {
    ("thread", "launch"): "launch_thread_median_ns",
    ("process", "launch"): "launch_process_median_ns",
    ("fiber", "launch"): "launch_fiber_median_ns",
    ("goroutine", "launch"): "launch_goroutine_median_ns",
    ("thread", "switch"): "switch_thread_batch_median_ns",
    ("process", "switch"): "switch_process_batch_median_ns",
    ("fiber", "switch"): "switch_fiber_batch_mean_ns",
    ("goroutine", "switch"): "switch_goroutine_median_ns",
    ("thread", "memory"): "memory_thread_slope_kib",
    ("process", "memory"): "memory_process_slope_kib",
    ("fiber", "memory"): "memory_fiber_slope_kib",
    ("goroutine", "memory"): "memory_goroutine_slope_kib",
} | {
    (kind, column): (None if column == "switch" and kernel_task
                     else f"{prefix}_{kind.replace('-', '_')}_{suffix}")
    for kind, kernel_task in PEER_KERNEL_TASK.items()
    for column, prefix, suffix in (("launch", "launch", "median_ns"),
                                   ("switch", "switch", "batch_median_ns"),
                                   ("memory", "memory", "rss_slope_kib"))
}
# what an empty cell says instead of a number
KERNEL_THREAD_SWITCH = "a kernel thread: its switch is the OS thread's"
