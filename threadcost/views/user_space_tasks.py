"""Threads vs processes vs fibers vs goroutines: the one table, figures, widget.

Notebook 05 calls these. The kernel-task rows (thread, process) come from the
experiments of notebooks 02-04 (:mod:`threadcost.experiments.context_switch`,
:mod:`threadcost.experiments.thread_memory`, :mod:`threadcost.experiments.launch`)
run here, in the same session, so every number of the table comes from one
run on this machine. When one of those experiments is not available, its rows
say why instead of holding a number.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import findings, vocabulary
from threadcost.results import Result
from threadcost.settings.validate import one_cpu
from threadcost.views import tables

# ------------------------------------------------------------ rows of the table

def switch_of(name: str, results: list[Any]) -> findings.Quantity | None:
    """One switch of a row, the paper's one definition (half a pinned batch's mean round
    trip; the median of runs where there are several): the finding ``name`` of the row's
    own runs, or None when no finding of that name exists (a row without a ping-pong)."""
    try:
        return findings.of_results(name, [r for r in results if r is not None])
    except KeyError:
        return None


def _row(task: str, kind: str, *, round_trip: dict[str, float] | None = None,
         switch: findings.Quantity | None = None, rss_kib: float | None = None,
         vsz_kib: float | None = None, kernel_kib: float | None = None,
         create_ns: float | None = None, life_ns: float | None = None,
         switch_how: str = "", memory_how: str = "",
         missing: str | None = None, kernel_thread: bool = False,
         switches_per_round_trip: float | None = None) -> dict[str, Any]:
    rt = round_trip or {}
    return {
        "task": task, "kind": kind,
        "round_trip_p50_ns": rt.get("p50"), "round_trip_p99_ns": rt.get("p99"),
        "round_trip_min_ns": rt.get("min"),
        # one switch: the finding's value (None: not measured, or no ping-pong pinned to
        # one CPU in this row); ``switch``: the finding itself, for the prose
        "switch_ns": switch.value if switch is not None and switch.measured else None,
        "switch": switch,
        "switches_per_round_trip": switches_per_round_trip,
        "rss_per_task_kib": rss_kib, "vsz_per_task_kib": vsz_kib,
        # create alone (pthread_create; a fiber's stack and context) and the whole life
        # (create, first run, exit, join: the runtimes' launch), two quantities
        "kernel_per_task_kib": kernel_kib, "create_ns": create_ns, "life_ns": life_ns,
        "switch_how": switch_how, "memory_how": memory_how, "missing": missing,
        # a language's kernel thread (Rust's, Java's platform thread): no one-switch cell
        "kernel_thread": kernel_thread,
        "round_trip": dict(rt),
    }


def _measured(q: findings.Quantity) -> float | None:
    return q.value if q.measured else None


def fiber_rows(results: dict[str, Result]) -> list[dict[str, Any]]:
    """One row per fiber implementation (memory: the first touch depth)."""
    rows = []
    for impl, result in results.items():
        s = result.summary
        pf = s["per_fiber"] or {}
        fiber = vocabulary.TASK_LABELS["fiber"]
        name = f"{fiber}, hand-written switch" if impl == "asm" else f"{fiber}, ucontext"
        if impl == "asm" and not s["asm_native"]:
            name = f"{fiber}, asm requested (ucontext fallback)"
        switch = ("switch_fiber_batch_mean_ns" if impl == "asm"
                  else f"fiber_{impl}_switch_batch_mean_ns")
        rows.append(_row(
            name, "fiber", round_trip=s["round_trip_ns"],
            switch=switch_of(switch, [result]), rss_kib=pf.get("rss_kib"),
            vsz_kib=pf.get("vsz_kib"), kernel_kib=None,
            create_ns=fiber_create(result)["create_ns"],
            life_ns=_measured(findings.of_results("launch_fiber_median_ns", [result]))
            if impl == "asm" else None,
            switches_per_round_trip=s.get("switches_per_round_trip"),
            switch_how="A->B->A on one thread pinned to one CPU",
            memory_how=f"slope over {pf.get('fibers', 0):,} idle fibers, "
                       f"{result.params['stack_kib']} KiB stacks, "
                       f"{pf.get('touch_kib', 0)} KiB touched; kernel side: one VMA pair, "
                       f"no kernel task"))
    return rows


def goroutine_rows(result: Result, pinning: Any = None) -> list[dict[str, Any]]:
    """The Go peer's two ping-pongs. One switch (pinned, GOMAXPROCS=1 only: the default
    runtime is not pinned to one CPU) is the headline's finding: the median of the C04
    pairs' pinned runs (``pinning``, the goroutine_pinning run), else this run's batch."""
    s = result.summary
    if s.get("skipped"):
        return [_row(vocabulary.TASK_LABELS["goroutine"], "goroutine", missing=s["skipped"])]
    mem = s["goroutine_memory"]
    rows = []
    goroutine = vocabulary.TASK_LABELS["goroutine"]
    for key, name in (("channel_pingpong", f"{goroutine}, GOMAXPROCS=1 pinned"),
                      ("channel_pingpong_default", f"{goroutine}, default GOMAXPROCS")):
        m = s[key]
        pinned = key == "channel_pingpong"
        runs = [pinning, result] if isinstance(pinning, Result) else [result]
        rows.append(_row(
            name, "goroutine", round_trip=m["round_trip_ns"],
            switch=switch_of("switch_goroutine_median_ns", runs) if pinned else None,
            rss_kib=mem["per_goroutine_rss_kib"], vsz_kib=mem["per_goroutine_vsz_kib"],
            switch_how="channel send + receive, unbuffered, " + m["mode"],
            memory_how=f"slope over {mem['goroutines']:,} goroutines blocked on a channel"))
    return rows


def _try_import(name: str) -> tuple[Any, str | None]:
    try:
        return importlib.import_module(f"threadcost.experiments.{name}"), None
    except ImportError as exc:
        return None, (f"threadcost.experiments.{name} is not available in this checkout "
                      f"({exc.__class__.__name__}: {exc})")


def _dist_of(summary: Any, *keys: str) -> dict[str, float] | None:
    """The first distribution-like dict found under one of ``keys`` (nested)."""
    if not isinstance(summary, dict):
        return None
    for key in keys:
        value = summary.get(key)
        if isinstance(value, dict) and "p50" in value:
            return value
    return None


def kernel_task_results(cpu: int | str | None, switch_iterations: int, thread_counts: list[int],
                        launch_iterations: int) -> tuple[dict[str, Result], dict[str, str]]:
    """Run the kernel-task experiments of notebooks 02-04 for the comparison.

    Returns (results by name, reason by name for each one that could not run).
    Names: ``switch_thread``, ``switch_process`` (futex ping-pong on one CPU),
    ``thread_memory``, ``launch``.
    """
    results: dict[str, Result] = {}
    missing: dict[str, str] = {}
    # "auto" (the notebook's default) is resolved here, once, to the CPU every kernel-task
    # experiment pins to; passing it through as pin=["auto"] was rejected by launch.run.
    cpu = one_cpu("tasks_cpu", cpu, allow_none=True)
    pin = [cpu] if cpu is not None else None

    # An experiment that raises fails the notebook (and `make paper`): no row says
    # "failed here". Only a module that is absent from this checkout is reported.
    module, why = _try_import("context_switch")
    for name, peer in (("switch_thread", "thread"), ("switch_process", "process")):
        if module is None:
            missing[name] = str(why)
            continue
        results[name] = _run_switch(module, peer, cpu, switch_iterations)

    module, why = _try_import("thread_memory")
    if module is None:
        missing["thread_memory"] = str(why)
    else:
        results["thread_memory"] = module.run(thread_counts=thread_counts, repeats=1)

    module, why = _try_import("launch")
    if module is None:
        missing["launch"] = str(why)
    else:
        results["launch"] = module.run(kinds="thread", iterations=launch_iterations, pin=pin)
    return results, missing


# bare batches per kernel-task row: runs timed whole, no clock read inside (one switch,
# the paper's definition, is their median / 2, the interval their range). Many short
# batches rather than a few long ones: a batch's mean takes in every preemption inside
# it (on a busy machine 3 batches of 50,000 gave 2.2, 8.0 and 19.7 µs), and the median of
# 11 batches passes over the few a preemption hit.
BARE_BATCHES = 11
BARE_BATCH_SHARE = 10  # a batch: the sampled run's round trips / this (1,000 to all)


def _run_switch(module: Any, peer: str, cpu: int | None, iterations: int) -> Result:
    """The futex ping-pong between two threads (or a thread and a forked process),
    both pinned to one CPU, in a child process (notebook 04's experiment): one run
    timing each round trip (the distribution), then ``BARE_BATCHES`` runs timed only as
    a whole, each a fresh pair of tasks (``summary["batch_round_trip_ns_runs"]``: their
    mean round trips, what one switch is read from)."""
    how = dict(mechanism="futex", placement="same-cpu",
               tasks="threads" if peer == "thread" else "processes",
               iterations=iterations, warmup=max(iterations // 10, 100), baselines=False,
               isolated=True)
    result: Result = module.run(**how)
    batch = {**how, "iterations": min(iterations, max(iterations // BARE_BATCH_SHARE, 1000)),
             "warmup": max(iterations // BARE_BATCH_SHARE // 10, 100)}
    bare = [module.run(**batch, per_sample=False, record_cpus=False)
            for _ in range(BARE_BATCHES)]
    result.summary["batch_round_trip_ns_runs"] = [
        float(b.summary["whole_run_mean_ns"]) for b in bare]
    result.params["bare_batches"] = BARE_BATCHES
    result.params["bare_batch_iterations"] = batch["iterations"]
    return result


def kernel_task_rows(results: dict[str, Result], missing: dict[str, str]
                     ) -> list[dict[str, Any]]:
    """Thread and process rows from the other notebooks' experiments."""
    mem = results.get("thread_memory")
    per_thread = (mem.summary.get("per_thread") or {}) if mem else {}
    launch = results.get("launch")
    create = _dist_of(launch.summary, "create_ns") if launch else None
    life = _dist_of(launch.summary, "lifecycle_ns") if launch else None
    rows = []
    for name, kind in (("switch_thread", "thread"), ("switch_process", "process")):
        task = f"{vocabulary.TASK_LABELS[kind]}, futex, same CPU"
        result = results.get(name)
        rt = _switch_distribution(result) if result else None
        reason = missing.get(name) if result is None else (
            None if rt else "the context-switch result has no round-trip distribution")
        is_thread = kind == "thread"
        # the run under the name it is stored with (an unsaved one carries its kernel's)
        switch = switch_of(f"switch_{kind}_batch_median_ns", [dataclasses.replace(
            result, experiment=f"tasks_{name}")]) if result else None
        rows.append(_row(
            task, kind, round_trip=rt, switch=switch,
            rss_kib=per_thread.get("rss_kib") if is_thread else None,
            vsz_kib=per_thread.get("vsz_kib") if is_thread else None,
            kernel_kib=per_thread.get("kernel_kib") if is_thread else None,
            create_ns=create["p50"] if (is_thread and create) else None,
            life_ns=life["p50"] if (is_thread and life) else None,
            switches_per_round_trip=result.summary.get("switches_per_round_trip")
            if result else None,
            switch_how="futex wait/wake ping-pong, both pinned to one CPU",
            memory_how=("slope over idle threads (notebook 2)" if is_thread and per_thread
                        else (missing.get("thread_memory", "") if is_thread
                              else "not measured per process here (see notebook 3)")),
            missing=reason))
    return rows


def _switch_distribution(result: Result) -> dict[str, float] | None:
    s = result.summary
    found = _dist_of(s, "round_trip_ns")
    if found:
        return found
    for value in s.values():  # e.g. a list of series, one per mechanism
        if isinstance(value, list):
            for item in value:
                got = _dist_of(item, "round_trip_ns")
                if got:
                    return got
        got = _dist_of(value, "round_trip_ns") if isinstance(value, dict) else None
        if got:
            return got
    return None


SWITCH_COLUMN = "one switch: half a pinned batch's mean round trip (ns)"


def comparison_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The one table: switch time and memory per task, readable units."""
    frame = pd.DataFrame(rows)
    out = pd.DataFrame({
        "task": frame.task,
        "round trip p50 (ns)": frame.round_trip_p50_ns,
        "round trip p99 (ns)": frame.round_trip_p99_ns,
        SWITCH_COLUMN: frame.switch_ns,
        # two decimals: the kernel counts whole switches, and a count of 1 in 200,000
        # round trips (a fiber's) reads as 0.00, not as 0.00000500
        "switches per round trip (kernel's count)": frame.switches_per_round_trip.map(
            lambda v: v if pd.isna(v) else f"{v:.2f}"),
        "RSS per task (KiB)": frame.rss_per_task_kib,
        "VSZ per task (KiB)": frame.vsz_per_task_kib,
        "kernel memory per task, this page's run (KiB)": frame.kernel_per_task_kib,
        "create alone p50 (ns)": frame.create_ns,
        "whole life p50 (ns): create, first run, exit, join": frame.life_ns,
        "not measured because": frame.missing.fillna(""),
    }).set_index("task")
    out = out.astype({c: float for c in out.columns if c != "not measured because"})
    if not out["not measured because"].astype(bool).any():  # every row measured
        out = out.drop(columns=["not measured because"])
    return out


def switch_distribution_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Round-trip distribution of every task kind (ns; each sample one round trip, two
    switches, timed with one clock read), with how it was measured."""
    out = []
    for row in rows:
        d = row.get("round_trip") or {}
        if not d:
            continue
        out.append({"task": row["task"],
                    **{k: d.get(k) for k in ("min", "p50", "p90", "p99", "max", "mean")},
                    "round trips": d.get("n"),
                    "how": row["switch_how"]})
    return pd.DataFrame(out).set_index("task")


def switch_note_text(rows: list[dict[str, Any]]) -> str:
    """What the one-switch column is, and each row whose value is partial (a batch that
    also timed each round trip) or absent (no ping-pong pinned to one CPU)."""
    partial = [r["task"] for r in rows if r.get("switch") is not None
               and r["switch"].measured and r["switch"].extra.get("partial")]
    kernel = [r["task"] for r in rows if r.get("kernel_thread")
              and r.get("round_trip_p50_ns") is not None]
    unpinned = [r["task"] for r in rows if r.get("switch") is None
                and r.get("round_trip_p50_ns") is not None and r["task"] not in kernel]
    text = ("One switch, the paper's one definition (page 0's headline reads the same "
            "findings): half the mean round trip of a batch of round trips timed whole, "
            "with no clock read inside, both tasks pinned to one CPU; the median of runs "
            "where there are several.")
    if partial:
        text += (" Partial here: " + "; ".join(f"*{t}*" for t in partial) + " (the stored "
                 "run also timed each round trip, so one clock read and a CPU note are "
                 "inside every round trip of its batch; a run measured now adds batches "
                 "without them).")
    if unpinned:
        text += (" None for " + "; ".join(f"*{t}*" for t in unpinned) + ": not pinned to "
                 "one CPU, so a round trip is not two switches on one CPU.")
    if kernel:
        text += (" None for " + "; ".join(f"*{t}*" for t in kernel) + ": a kernel thread, "
                 "switched by the kernel as the OS thread is (the first row); its ping-pong "
                 "over its language's standard channel adds the channel's own locking around "
                 "each wake-up, so half its round trip is not one switch (the round-trip "
                 "columns show it).")
    return text


# ---------------------------------------------------------------------- figures

def _color(kind: str) -> str:
    """A task kind's colour (a row's "kind" is its key in threadcost/vocabulary.py)."""
    return vocabulary.TASK_COLOURS.get(kind, "grey")


def switch_figure(rows: list[dict[str, Any]]) -> plt.Figure:
    """Round-trip time per task kind: p50 bar, whisker from min to p99 (log scale)."""
    frame = pd.DataFrame(rows)
    frame = frame[frame.round_trip_p50_ns.notna()].iloc[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * max(len(frame), 2) + 1.4))
    y = np.arange(len(frame))
    p50 = frame.round_trip_p50_ns.to_numpy(float)
    lo = p50 - frame.round_trip_min_ns.to_numpy(float)
    hi = frame.round_trip_p99_ns.to_numpy(float) - p50
    ax.barh(y, p50, color=[_color(k) for k in frame.kind], alpha=0.85)
    ax.errorbar(p50, y, xerr=[lo, hi], fmt="none", ecolor="black", capsize=3, lw=1)
    for yi, v in zip(y, p50, strict=True):
        ax.text(v * 1.15, yi + 0.18, f"{v:,.0f} ns", va="center", fontsize=9)
    ax.set_yticks(y, frame.task)
    ax.set_xscale("log")
    ax.set(xlabel="round trip A->B->A, two switches, each timed with one clock read\n"
                  "(ns, log scale; bar p50, whisker min..p99)",
           title="Round trip (two switches): kernel tasks vs user-space tasks")
    return fig


def memory_figure(rows: list[dict[str, Any]]) -> plt.Figure:
    """Resident, virtual and kernel memory per task (KiB, log scale)."""
    frame = pd.DataFrame(rows)
    frame = frame[frame.rss_per_task_kib.notna()].drop_duplicates("kind").iloc[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.8 * max(len(frame), 2) + 1.4))
    y = np.arange(len(frame))
    h = 0.27
    series = [("rss_per_task_kib", "resident (RSS)", 0.95),
              ("vsz_per_task_kib", "virtual (VSZ)", 0.45),
              ("kernel_per_task_kib", "kernel memory (not in RSS)", 0.7)]
    for i, (col, label, alpha) in enumerate(series):
        vals = frame[col].to_numpy(float)
        shown = np.where(vals > 0, vals, np.nan)
        ax.barh(y + (1 - i) * h, shown, height=h, label=label, alpha=alpha,
                color=["#0173b2", "#949494", "#d55e00"][i])
        for yi, v in zip(y + (1 - i) * h, shown, strict=True):
            if np.isfinite(v):
                ax.text(v * 1.1, yi, tables.format_number(v), va="center", fontsize=8)
    # the kind without how it was measured ("OS thread, futex, same CPU": "OS thread"),
    # unless two rows would then read alike ("Tokio task, multi-thread runtime")
    short = [t.split(",")[0] for t in frame.task]
    labels = [s if short.count(s) == 1 else t for s, t in zip(short, frame.task, strict=True)]
    ax.set_yticks(y, labels)
    ax.set_xscale("log")
    ax.set_xlabel("per task (KiB, log scale; slope over many idle tasks)")
    ax.set_title("Memory per task", pad=26)
    left, right = ax.get_xlim()
    ax.set_xlim(left, right * 4)  # room for the value labels
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8,
              frameon=False)
    return fig


def fiber_memory_figure(results: dict[str, Result]) -> plt.Figure:
    """Per-fiber RSS (slope, 95% CI) against how much of its stack each fiber wrote."""
    fig, ax = plt.subplots()
    for impl, result in results.items():
        table = result.tables["per_fiber"]
        yerr = [table.rss_kib - table.rss_ci95_low, table.rss_ci95_high - table.rss_kib]
        ax.errorbar(table.touch_kib, table.rss_kib, yerr=yerr, marker="o", capsize=3,
                    label=f"{impl}: RSS per fiber")
    first = next(iter(results.values())).tables["per_fiber"]
    x = np.array([0, first.touch_kib.max()])
    ax.plot(x, x, ls=":", color="grey", label="1 KiB per KiB touched")
    stack = next(iter(results.values())).params["stack_kib"]
    ax.set(xlabel="stack each idle fiber has written (KiB)",
           ylabel="resident memory per fiber (KiB)",
           title=f"Fibers with {stack} KiB stacks: RSS follows the touch")
    ax.legend(loc="upper left")
    return fig


def creation_figure(results: dict[str, Result], launch: Result | None) -> plt.Figure:
    """Distribution (ECDF) of fiber creation and first switch vs thread creation."""
    fig, ax = plt.subplots()
    for impl, result in results.items():
        c = result.tables["creation"]
        first = c[c.touch_kib == c.touch_kib.min()]
        for col, what in (("create_ns", "create (mmap + guard + context)"),
                          ("start_ns", "first switch in and back")):
            v = np.sort(first[col].to_numpy(float))
            if v.size:
                ax.plot(v, np.arange(1, v.size + 1) / v.size, label=f"fiber {impl}: {what}")
    if launch is not None:
        frame = launch.tables.get("samples")
        if frame is not None and "create_ns" in frame:
            v = np.sort(frame[(frame.kind == "thread") & (frame.phase == "steady")]
                        .create_ns.dropna().to_numpy(float))
            if v.size:
                ax.plot(v, np.arange(1, v.size + 1) / v.size, color="black", lw=2,
                        label="thread: pthread_create (notebook 3)")
    ax.set_xscale("log")
    ax.set(xlabel="time per task (ns, log scale)", ylabel="share of tasks at or below",
           title="Creating a task")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8,
              frameon=False)
    return fig


# ------------------------------------------------------- sentences for the prose

def fiber_switch_text(result: Result) -> str:
    s = result.summary
    d = s["round_trip_ns"]
    impl = s["impl"]

    def show(name: str) -> str:
        return findings.span(findings.of_results(name, [result]))

    switch = ("switch_fiber_batch_mean_ns" if impl == "asm"
              else f"fiber_{impl}_switch_batch_mean_ns")
    return (f"**{impl}** ({s['impl_description']}): round trip p50 "
            f"**{show(f'fiber_{impl}_round_trip_median_ns')}** "
            f"(min {d['min']:,.0f}, p90 {d['p90']:,.0f}, p99 {d['p99']:,.0f}, max {d['max']:,.0f}; "
            f"{d['n']:,} round trips, each including one clock read of about "
            f"{show(f'fiber_{impl}_clock_read_median_ns')}). Without clock reads: "
            f"{show(f'fiber_{impl}_batch_round_trip_mean_ns')} per round trip, i.e. "
            f"**{show(switch)} per switch**.")


def fiber_memory_text(results: dict[str, Result]) -> str:
    impl, result = next(iter(results.items()))
    rows = result.summary["per_fiber_by_touch"]
    lo, hi = rows[0], rows[-1]
    if lo["rss_kib"] is None:
        return "Too few readings for a per-fiber slope."
    def show(name: str) -> str:
        return findings.span(findings.of_results(name, [result]))

    low = (findings.span(findings.of_results("memory_fiber_slope_kib", [result]))
           if impl == "asm" else f"{lo['rss_kib']:,.2f} KiB")
    touched = [findings.parameter("tasks_fiber_touch_kib", f"{r['touch_kib']} KiB")
               for r in (lo, hi)]
    most = (show("fiber_asm_rss_most_touched_slope_kib") if impl == "asm"
            else f"{hi['rss_kib']:,.2f} KiB")
    vsz = show("fiber_asm_vsz_slope_kib") if impl == "asm" else f"{lo['vsz_kib']:,.0f} KiB"
    return (f"With `{impl}`, a fiber that has touched {touched[0]} of its stack costs "
            f"**{low}** of resident memory (95% CI {lo['rss_ci95'][0]:,.2f} "
            f"to {lo['rss_ci95'][1]:,.2f}, R² {lo['rss_r2']:.4f}): its first stack page plus "
            f"its share of the fiber records (each holds a "
            f"{findings.parameter('ucontext_size', '~1 KiB')} `ucontext_t`). At {touched[1]} "
            f"touched it costs {most}. Virtual size "
            f"grows {vsz} per fiber whatever the touch: the whole stack and "
            f"its guard page are reserved. Resident memory is what a fiber has used, not what "
            f"it was given.")


def goroutine_text(result: Result) -> str:
    g = result.summary
    if g.get("skipped"):
        why = str(g["skipped"]).removeprefix("not run here: ")  # a peer's reason says it
        return (f"**Goroutine rows not run here:** {why}. Install Go (for example "
                f"conda-forge `go`, as `environment.yml` does) and rerun.")
    a, b = g["channel_pingpong"], g["channel_pingpong_default"]

    def show(name: str) -> str:
        return findings.span(findings.of_results(name, [result]))

    memory = findings.of_results("memory_goroutine_slope_kib", [result])
    pinned = show("go_pingpong_pinned_round_trip_median_ns")
    return (f"{g['go_version']}. Round trip p50: **{pinned}"
            f"** ({a['mode']}) and **{show('go_pingpong_default_round_trip_median_ns')}** "
            f"({b['mode']}); over a batch without clock reads "
            f"{a['round_trips_per_s'] / 1e6:,.2f} and {b['round_trips_per_s'] / 1e6:,.2f} "
            "million round trips per second. An idle goroutine costs "
            f"**{findings.span(memory)}** resident (95% CI "
            f"{memory.interval_text().strip('[]') or 'not stored'}), of which the runtime "
            f"counts {show('goroutine_stack_slope_kib')} as stack.")


def fiber_create(result: Result) -> dict[str, Any]:
    """The one source of a fiber's creation numbers (table, prose and headline agree).

    The medians of the touch depth the headline uses (``summary["per_fiber"]``):
    ``create_ns`` (map the stack, guard page, context), ``start_ns`` (first switch
    in and back), ``launch_ns`` (their sum: the headline's "launch"), ``touch_kib``.
    """
    per = result.summary.get("per_fiber") or result.summary["per_fiber_by_touch"][0]
    create, start = per["create_ns"]["p50"], per["start_ns"]["p50"]
    return {"create_ns": create, "start_ns": start, "touch_kib": per.get("touch_kib"),
            "launch_ns": (create + start) if create is not None and start is not None
            else None}


def creation_text(results: dict[str, Result], launch: Result | None) -> str:
    parts = []
    for impl, result in results.items():
        f = fiber_create(result)
        # the headline's launch is the finding (create + first run + unmapping the stack)
        life = findings.of_results("launch_fiber_median_ns", [result])
        def show(name: str, r: Result = result) -> str:
            return findings.span(findings.of_results(name, [r]))

        together = (show("fiber_ucontext_create_and_start_median_ns") if impl == "ucontext"
                    else f"{f['launch_ns'] / 1000:,.2f} µs")
        whole = (f"its whole life, with the unmapping of its stack (the headline's launch): "
                 f"{findings.span(life)}" if impl == "asm" and life.measured else
                 f"the two together: {together}")
        touched = findings.parameter("tasks_fiber_touch_kib", f"{f['touch_kib']} KiB")
        create = show(f"fiber_{impl}_create_median_ns")
        parts.append(f"a fiber switched by `{impl}` takes **{create}"
                     f"** to create (map its stack, set the guard page, prepare the context) and "
                     f"{show(f'fiber_{impl}_start_median_ns')} for its first switch in and back "
                     f"(with {touched} of stack touched); {whole}")
    text = "Medians: " + "; ".join(parts)
    create = _dist_of(launch.summary, "create_ns") if launch else None
    if create:
        shown = findings.span(findings.of_results(
            "tasks_launch_thread_create_median_ns",
            [dataclasses.replace(launch, experiment="tasks_launch")]))
        text += (f"; `pthread_create` takes **{shown}** (notebook 3's "
                 f"kernel, glibc may reuse a cached stack).")
    else:
        text += "; the thread launch experiment did not run here (see the missing rows)."
    return text + (" A fiber's create maps its stack and sets its guard page (`mmap`, "
                   "`mprotect`), as a thread's stack needs, without a `clone`; how its time "
                   "divides between those calls is not measured here.")


def missing_text(missing: dict[str, str]) -> str:
    if not missing:
        return "All kernel-task experiments ran; every row of the table below is measured."
    return "**Rows missing from the table, and why:**\n\n" + "\n".join(
        f"- `{name}`: {why}" for name, why in missing.items())


def switch_ratio_text(rows: list[dict[str, Any]]) -> str:
    """The thread switch against the hand-written fiber switch, both by the paper's one
    definition (their findings, divided as printed)."""
    thread = next((r.get("switch") for r in rows if r["kind"] == "thread"), None)
    asm = next((r.get("switch") for r in rows if "hand-written" in r["task"]), None)
    got = (findings.ratio(thread, asm, fmt=",.0f")
           if thread is not None and asm is not None else None)
    if got is None or thread is None or asm is None:
        return ("The thread/fiber switch ratio needs both rows' switches; see the missing "
                "rows above for the reason.")
    stamped = ("; the thread's stored batch also timed each round trip" if
               thread.extra.get("partial") else "")
    return (f"On this machine a thread switch through the kernel (futex, same CPU) takes "
            f"**{got[1]}** as long as a hand-written fiber switch ({findings.span(thread)} "
            f"vs {findings.span(asm)}, each half a pinned batch's mean round trip, no clock "
            f"read inside{stamped}).")


def save_runs(results: list[Result], save: bool, data_dir: Any,
              fingerprint: dict[str, Any]) -> str:
    """Store every run (when ``save``) and say where."""
    from threadcost.store import datastore

    if not save:
        return "Not saved (save = False)."
    paths_ = [datastore.save_run(r, data_dir=data_dir, fingerprint=fingerprint)
              for r in results]
    if not paths_:
        return ""
    return (f"Stored {len(paths_)} runs under `data/{paths_[0].parent.name}/`: "
            + ", ".join(f"`{p.name}`" for p in paths_) + ".")
