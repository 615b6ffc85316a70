"""The paper's headline: what one task costs, with one definition per column.

Every cell is read from the latest stored run of the experiment that measures
exactly that definition, on one machine:

- **launch**: a task's whole life, one at a time: create, first run, join/wait,
  exit. Thread and process (fork): notebook 03's lifecycle samples (parent
  process touching nothing extra). Goroutine: ``go`` + first run + ``wg.Done`` +
  ``Wait`` (GOMAXPROCS=1, pinned). Fiber: create + first switch in and back
  (medians) + unmapping its stack (mean); a run stored before the unmapping
  was timed gives a cell marked partial.
  Dot: median; line: fastest to p90.
- **switch**: one switch. Threads and processes: the futex ping-pong with both
  tasks pinned to one CPU, round trip divided by the switches counted per round
  trip (median; line: fastest to p90). Fibers and goroutines: pinned
  (goroutines with GOMAXPROCS=1), a batch of round trips timed as a whole
  divided by two switches each, so no clock read is inside (goroutines: median
  of the C04 pairs' pinned runs, line: their range).
- **memory**: per idle task, resident plus kernel side, slope over task counts
  with its 95% interval. Thread: RSS growth + kernel stack + page tables +
  unreclaimable slab. Process: USS + the same kernel counters. Fiber and
  goroutine: resident growth only; they hold no kernel task of their own.

A cell whose run is missing says which experiment would fill it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from threadcost import datastore, machine, vocabulary

TASKS = vocabulary.TASKS
COLUMNS = {  # column -> (panel title, unit, factor from the stored ns / KiB)
    "launch": ("launch: create, first run, join/wait, exit", "µs", 1e-3),
    "switch": ("one context switch, same CPU", "ns", 1.0),
    "memory": ("memory per idle task: resident + kernel side", "KiB", 1.0),
}
CELL_COLS = ["task", "column", "value", "low", "high", "partial", "definition", "source",
             "not_run", "resident"]


def _latest(experiment: str, data_dir: Any, mid: str, where: Any = None) -> datastore.Run | None:
    runs = datastore.list_runs(experiment, data_dir=data_dir, machine_id=mid)
    if where is not None:
        runs = [r for r in runs if where(r)]
    return runs[-1] if runs else None


def _cell(task: str, column: str, value: float | None = None, low: float | None = None,
          high: float | None = None, definition: str = "", source: str = "",
          not_run: str | None = None, partial: bool = False,
          resident: float | None = None) -> dict[str, Any]:
    """``resident``: for a memory cell, the part of ``value`` its process's RSS (or USS)
    shows; the rest is kernel side."""
    ok = value is not None and math.isfinite(value)
    return {"task": task, "column": column, "value": value if ok else None,
            "low": low, "high": high, "partial": partial, "definition": definition,
            "source": source, "not_run": None if ok else (not_run or "no value stored"),
            "resident": resident if ok else None}


def _src(run: datastore.Run) -> str:
    return f"{run.experiment} run {run.meta['run_id']}"


def _launch_cells(data_dir: Any, mid: str) -> list[dict[str, Any]]:
    out = []
    run = _latest("launch", data_dir, mid)
    for task, kind in (("thread", "thread"), ("process", "fork")):
        if run is None:
            out.append(_cell(task, "launch", not_run="no launch run stored (notebook 03)"))
            continue
        d = run.table("distributions")
        hit = d[(d.kind == kind) & (d.parent_touch_mib == 0) & (d.phase == "steady")
                & (d.metric == "lifecycle_ns")]
        if hit.empty:
            out.append(_cell(task, "launch", not_run=f"{kind} not in the launch run's kinds"))
            continue
        r = hit.iloc[0]
        out.append(_cell(task, "launch", r.p50, r["min"], r.p90,
                         f"{kind}: create, first run, {'join' if kind == 'thread' else 'waitpid'}"
                         f", exit; median of {int(r.n):,} launches", _src(run)))
    fib = _latest("fibers", data_dir, mid, lambda r: r.meta["params"].get("impl") == "asm")
    per = (fib.meta["summary"].get("per_fiber") or {}) if fib else {}
    if per.get("create_ns", {}).get("n") and per.get("start_ns", {}).get("n"):
        c, s = per["create_ns"], per["start_ns"]
        free = per.get("free_ns_mean")
        if free is not None:
            out.append(_cell("fiber", "launch", c["p50"] + s["p50"] + free,
                             c["min"] + s["min"] + free, c["p90"] + s["p90"] + free,
                             "create (stack mapping + context), first switch in and back "
                             "(medians), and unmapping its stack (mean over all fibers)",
                             _src(fib)))
        else:  # a run stored before the unmapping was timed
            out.append(_cell("fiber", "launch", c["p50"] + s["p50"], c["min"] + s["min"],
                             c["p90"] + s["p90"],
                             "create (stack mapping + context) + first switch in and back; "
                             "the unmapping was not timed in this run", _src(fib),
                             partial=True))
    else:
        out.append(_cell("fiber", "launch", not_run="no asm fibers run stored (notebook 05)"))
    go = _latest("goroutine_launch", data_dir, mid)
    if go is None or go.meta["summary"].get("skipped"):
        why = go.meta["summary"]["skipped"] if go else "no goroutine launch run stored " \
                                                        "(notebook 05)"
        out.append(_cell("goroutine", "launch", not_run=why))
    else:
        d = go.meta["summary"]["launch_ns"]
        out.append(_cell("goroutine", "launch", d["p50"], d["min"], d["p90"],
                         "go + first run + wg.Done + Wait, GOMAXPROCS=1 pinned; median of "
                         f"{int(d['n']):,}", _src(go)))
    return out


def _switch_cells(data_dir: Any, mid: str) -> list[dict[str, Any]]:
    out = []
    run = _latest("context_switch", data_dir, mid)
    for task, tasks in (("thread", "threads"), ("process", "processes")):
        if run is None:
            out.append(_cell(task, "switch", not_run="no context switch run stored "
                                                     "(notebook 04)"))
            continue
        c = run.table("configs")
        hit = c[(c.mechanism == "futex") & (c.placement == "same-cpu") & (c.tasks == tasks)]
        if hit.empty:
            out.append(_cell(task, "switch", not_run="the futex same-cpu configuration is not "
                                                     "in the stored run"))
            continue
        r = hit.iloc[0]
        out.append(_cell(task, "switch", r.switch_p50_ns, r.switch_min_ns, r.switch_p90_ns,
                         f"futex ping-pong, both {tasks} on one CPU: round trip / "
                         f"{r.switches_per_round_trip:.2f} switches counted", _src(run)))
    fib = _latest("fibers", data_dir, mid, lambda r: r.meta["params"].get("impl") == "asm")
    if fib is not None and fib.meta["summary"].get("switch_ns_batch"):
        out.append(_cell("fiber", "switch", fib.meta["summary"]["switch_ns_batch"],
                         definition="hand-written switch, pinned: batch of round trips / 2, "
                                    "no clock read inside", source=_src(fib)))
    else:
        out.append(_cell("fiber", "switch", not_run="no asm fibers run stored (notebook 05)"))
    pin = _latest("goroutine_pinning", data_dir, mid)
    if pin is not None and not pin.meta["summary"].get("skipped"):
        runs = pin.table("runs")
        pinned = runs[runs["mode"] == "gomaxprocs1_pinned"]["switch_ns_batch"]
        out.append(_cell("goroutine", "switch", float(pinned.median()), float(pinned.min()),
                         float(pinned.max()),
                         f"channel ping-pong, GOMAXPROCS=1 pinned: batch / 2, median of "
                         f"{len(pinned)} runs", _src(pin)))
    else:
        peer = _latest("peers", data_dir, mid)
        pp = (peer.meta["summary"].get("channel_pingpong") or {}) if peer else {}
        if pp.get("switch_ns_batch"):
            out.append(_cell("goroutine", "switch", pp["switch_ns_batch"],
                             definition="channel ping-pong, GOMAXPROCS=1 pinned: batch / 2",
                             source=_src(peer)))
        else:
            why = (peer.meta["summary"].get("skipped") if peer else None) or \
                "no Go peer run stored (notebook 05)"
            out.append(_cell("goroutine", "switch", not_run=why))
    return out


def _memory_cells(data_dir: Any, mid: str) -> list[dict[str, Any]]:
    out = []
    tm = _latest("thread_memory", data_dir, mid)
    fits = tm.meta["summary"]["per_thread"]["fit"] if tm else {}
    fit = fits.get("total_kib")
    if fit:
        rss = (fits.get("rss_kib") or {}).get("per_thread")
        out.append(_cell("thread", "memory", fit["per_thread"], fit.get("ci95_low"),
                         fit.get("ci95_high"), "RSS growth + kernel stack + page tables + "
                         "unreclaimable slab, slope over thread counts", _src(tm),
                         resident=rss))
    else:
        out.append(_cell("thread", "memory", not_run="no thread memory run stored "
                                                     "(notebook 02)"))
    pm = _latest("process_memory", data_dir, mid)
    pfits = pm.meta["summary"]["fits"] if pm else {}
    fit = pfits.get("total_kib")
    if fit:
        uss = (pfits.get("uss_kib") or {}).get("per_process_kib")
        out.append(_cell("process", "memory", fit["per_process_kib"], fit.get("ci95_low"),
                         fit.get("ci95_high"), "USS + kernel stack + page tables + "
                         "unreclaimable slab of a forked idle child, slope over child counts",
                         _src(pm), resident=uss))
    else:
        out.append(_cell("process", "memory", not_run="no process memory run stored "
                                                      "(notebook 02)"))
    fib = _latest("fibers", data_dir, mid, lambda r: r.meta["params"].get("impl") == "asm")
    per = (fib.meta["summary"].get("per_fiber") or {}) if fib else {}
    if per.get("rss_kib") is not None:
        lo, hi = per.get("rss_ci95") or (None, None)
        out.append(_cell("fiber", "memory", per["rss_kib"], lo, hi,
                         f"RSS growth per idle fiber ({per.get('touch_kib', 0)} KiB of stack "
                         "written); no kernel task", _src(fib), resident=per["rss_kib"]))
    else:
        out.append(_cell("fiber", "memory", not_run="no asm fibers run stored (notebook 05)"))
    peer = _latest("peers", data_dir, mid)
    mem = (peer.meta["summary"].get("goroutine_memory") or {}) if peer else {}
    if mem.get("per_goroutine_rss_kib") is not None:
        lo, hi = mem.get("per_goroutine_rss_kib_ci95") or (None, None)
        out.append(_cell("goroutine", "memory", mem["per_goroutine_rss_kib"], lo, hi,
                         "RSS growth per goroutine blocked on a channel; runs on the "
                         "runtime's threads, no kernel task of its own", _src(peer),
                         resident=mem["per_goroutine_rss_kib"]))
    else:
        why = (peer.meta["summary"].get("skipped") if peer else None) or \
            "no Go peer run stored (notebook 05)"
        out.append(_cell("goroutine", "memory", not_run=why))
    return out


def cells(data_dir: str | Path | None = None, machine_id: str | None = None) -> pd.DataFrame:
    """One row per (task, column): value in ns or KiB, interval, definition, source,
    or the reason it is missing."""
    mid = machine_id or machine.machine_id()
    rows = _launch_cells(data_dir, mid) + _switch_cells(data_dir, mid) + \
        _memory_cells(data_dir, mid)
    return pd.DataFrame(rows, columns=CELL_COLS)


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{min(digits, 2)}f}"


def table(values: pd.DataFrame) -> pd.DataFrame:
    """Tasks by column, in the figure's units; brackets: the interval drawn."""
    out = pd.DataFrame(index=list(TASKS), columns=[f"{t} ({u})" for t, u, _ in
                                                   COLUMNS.values()], dtype=object)
    for row in values.itertuples(index=False):
        title, unit, factor = COLUMNS[row.column]
        if row.value is None or pd.isna(row.value):
            text = f"not measured: {row.not_run}"
        else:
            text = _fmt(row.value * factor)
            if row.low is not None and row.high is not None and not (
                    pd.isna(row.low) or pd.isna(row.high)):
                text += f" [{_fmt(row.low * factor)} to {_fmt(row.high * factor)}]"
            if row.partial:
                text += " (partial: see note)"
        out.loc[row.task, f"{title} ({unit})"] = text
    out.index.name = "task"
    return out


def notes(values: pd.DataFrame) -> pd.DataFrame:
    """What each cell is, and where it comes from."""
    frame = values[["task", "column", "definition", "source"]].copy()
    frame = frame[values["value"].notna()]
    frame.columns = ["task", "column", "what the number is", "from"]
    return frame.set_index(["column", "task"])


def figure(values: pd.DataFrame, title: str = "") -> plt.Figure:
    """Dots with intervals on log axes, one panel per column, rows shared."""
    fig, axes = plt.subplots(1, len(COLUMNS), figsize=(13, 3.6), sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    got = {(r.task, r.column): r for r in values.itertuples(index=False)}
    y = np.arange(len(TASKS))
    for ax, (column, (title_c, unit, factor)) in zip(axes, COLUMNS.items(), strict=True):
        shown = []
        for i, task in enumerate(TASKS):
            r = got.get((task, column))
            if r is None or r.value is None or pd.isna(r.value):
                why = r.not_run if r is not None else "not measured"
                ax.annotate(f"not measured: {why}", (0.02, i), xycoords=("axes fraction", "data"),
                            va="center", color="grey", fontsize=8, style="italic", wrap=True)
                continue
            v = r.value * factor
            shown.append(v)
            if r.low is not None and r.high is not None and not (
                    pd.isna(r.low) or pd.isna(r.high)):
                lo, hi = r.low * factor, r.high * factor
                ax.plot([max(lo, v / 100), hi], [i, i], color=colours[0], lw=2, alpha=0.6)
                shown += [max(lo, v / 100), hi]
            ax.plot(v, i, marker="o", ms=8, color=colours[0],
                    mfc="white" if r.partial else colours[0], mew=2)
            ax.annotate(f"{_fmt(v)} {unit}" + (" (partial)" if r.partial else ""), (v, i),
                        xytext=(0, 9), textcoords="offset points", ha="center", fontsize=9)
        ax.set_xscale("log")
        if shown:
            ax.set_xlim(min(shown) / 4, max(shown) * 4)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
        ax.set_title(title_c, fontsize=10)
        ax.set_xlabel(f"{unit} per task (log scale)")
    axes[0].set_yticks(y, TASKS)
    axes[0].set_ylim(len(TASKS) - 0.5, -0.7)
    fig.suptitle(title or "What one task costs on this machine", fontweight="bold")
    fig.text(0.5, -0.04, "Dots: median (launch, switch) or slope (memory); lines: fastest to "
             "p90 (launch, thread/process switch), range of runs (goroutine switch) or 95% "
             "interval (memory). Hollow dot: a partial definition (see the notes).",
             ha="center", fontsize=8, wrap=True)
    fig.tight_layout()
    return fig


def sentence(values: pd.DataFrame) -> str:
    """One sentence of ratios from the cells that were measured."""
    v = {(r.task, r.column): r.value for r in values.itertuples(index=False)
         if r.value is not None and not pd.isna(r.value)}
    parts = []

    def ratio(a: tuple[str, str], b: tuple[str, str]) -> float | None:
        return v[a] / v[b] if a in v and b in v and v[b] else None

    launch = ratio(("process", "launch"), ("thread", "launch"))
    if launch is not None:
        parts.append(f"a fork-and-wait costs **{launch:.1f}x** a thread's create-and-join")
    switch = ratio(("thread", "switch"), ("goroutine", "switch"))
    if switch is not None:
        parts.append(f"a thread switch costs **{switch:.0f}x** a goroutine switch")
    memory = ratio(("process", "memory"), ("thread", "memory"))
    if memory is not None:
        parts.append(f"an idle process holds **{memory:.0f}x** the memory of an idle thread, "
                     "kernel side included")
    if not parts:
        return "Too few cells were measured on this machine for a comparison."
    return "On this machine " + "; ".join(parts) + "."
