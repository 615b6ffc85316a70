"""The paper's headline: what one task costs, with one definition per column.

Every cell is a finding (``threadcost.findings.headline``: computed once, from the
latest stored run of the experiment that measures exactly that definition, on one
machine); the abstract and the across-machines view read the same findings:

- **launch**: a task's whole life, one at a time: create, first run, join/wait,
  exit. Thread and process (fork): notebook 03's lifecycle samples (parent
  process touching nothing extra). Goroutine: ``go`` + first run + ``wg.Done`` +
  ``Wait`` (GOMAXPROCS=1, pinned). Fiber: create + first switch in and back
  (medians) + unmapping its stack (mean); a run stored before the unmapping
  was timed gives a cell marked partial.
  Dot: median; line: fastest to p90.
- **switch**: one switch, the paper's one definition: half the round trip of a
  ping-pong between two tasks pinned to one CPU, from a batch of round trips timed
  whole (no clock read inside): the batch's mean round trip / 2; across several runs,
  the median of runs (line: their range). Threads and processes: notebook 05's futex
  ping-pong; a folder stored before its bare batches gives a run that also timed each
  round trip, timed whole (a clock read and a CPU note inside each round trip), marked
  partial. Fibers, goroutines (GOMAXPROCS=1) and Tokio tasks: their own batches.
- **memory**: per idle task, resident plus kernel side, slope over task counts
  with its 95% interval. Thread: RSS growth + kernel stack + page tables +
  unreclaimable slab. Process: USS + the same kernel counters. Fiber and
  goroutine: resident growth only; they hold no kernel task of their own.

The sources' own runtimes (notebook 05's ``peer_runtimes``, the Rust and Java
peers) fill the rows below with the same columns: launch = spawn, first run,
exit, join, one at a time (median); switch = a channel ping-pong pinned to one
CPU, batch / 2, median of runs, for the runtimes' own tasks (a Tokio task, a Java
virtual thread: the Java peer has no ping-pong); a Rust or Java platform thread is a
kernel thread, switched by the kernel as the OS thread is, so its switch cell points
there (its std channel rendezvous is a different quantity, page 05); memory = RSS growth
slope: complete for a Tokio task and a Java virtual thread (no kernel task of
their own), partial for a Rust or Java platform thread (its kernel side is not
counted by the peer).

A cell whose run is missing says which experiment would fill it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from threadcost import findings, vocabulary
from threadcost.findings.headline import CELLS, KERNEL_THREAD_SWITCH
from threadcost.host import machine

if TYPE_CHECKING:  # pyplot is imported where a figure is drawn: the index and the
    import matplotlib.pyplot as plt  # claims CLI print text without loading it

TASKS = vocabulary.TASKS
COLUMNS = {  # column -> (panel title, unit, factor from the stored ns / KiB)
    "launch": ("launch: create, first run, join/wait, exit", "µs", 1e-3),
    "switch": ("one switch: half a pinned batch's mean round trip", "ns", 1.0),
    "memory": ("memory per idle task: resident + kernel side", "KiB", 1.0),
}
PER = {"launch": "per launch", "switch": "per switch", "memory": "per idle task"}
CELL_COLS = ["task", "column", "value", "low", "high", "partial", "definition", "source",
             "not_run", "resident", "quantity", "note", "runs"]


def _cell(task: str, column: str, q: findings.Quantity) -> dict[str, Any]:
    """One row of the grid from its finding; ``resident``: for a memory cell, the part
    of ``value`` its process's RSS (or USS) shows; the rest is kernel side."""
    if not q.measured:
        return {"task": task, "column": column, "value": None, "low": None, "high": None,
                "partial": False, "definition": "", "source": "",
                "not_run": q.missing or "no value stored", "resident": None,
                "quantity": q.name, "note": "", "runs": ()}
    return {"task": task, "column": column, "value": q.value, "low": q.low, "high": q.high,
            "partial": bool(q.extra.get("partial")), "definition": q.definition,
            "source": str(q.extra.get("source", q.run_id)), "not_run": None,
            "resident": q.extra.get("resident"), "quantity": q.name,
            "note": str(q.extra.get("note") or ""), "runs": q.run_ids}


def _elsewhere(task: str, column: str, why: str) -> dict[str, Any]:
    """A cell the column's definition does not fill for this task (its reason)."""
    return {"task": task, "column": column, "value": None, "low": None, "high": None,
            "partial": False, "definition": "", "source": "", "not_run": why,
            "resident": None, "quantity": "", "note": "", "runs": ()}


def cells(data_dir: str | Path | None = None, machine_id: str | None = None) -> pd.DataFrame:
    """One row per (task, column): value in ns or KiB, interval, definition, source,
    or the reason it is missing; ``quantity`` names the finding each cell reads
    (``threadcost.findings``: computed once, the abstract and the claims read the same)."""
    mid = machine_id or machine.machine_id()
    found = findings.get_many((name for name in CELLS.values() if name is not None),
                              data_dir, mid)
    rows = [_cell(task, column, found[name]) if name is not None
            else _elsewhere(task, column, KERNEL_THREAD_SWITCH)
            for column in COLUMNS for task in TASKS
            for name in [CELLS[(task, column)]]]
    return pd.DataFrame(rows, columns=CELL_COLS)


def _fmt(x: float) -> str:
    return findings.number(x, "auto")  # the findings' own printing: every page agrees


def table(values: pd.DataFrame, spans: bool = False) -> pd.DataFrame:
    """Tasks by column, in the figure's units; brackets: the interval drawn.

    ``spans``: each value wrapped in its finding's ``data-quantity`` span (HTML: show it
    with :func:`styled_table`, which does not escape it)."""
    out = pd.DataFrame(index=list(TASKS), columns=[f"{t} ({u})" for t, u, _ in
                                                   COLUMNS.values()], dtype=object)
    for row in values.itertuples(index=False):
        title, unit, factor = COLUMNS[row.column]
        if (row.value is None or pd.isna(row.value)) and row.not_run == KERNEL_THREAD_SWITCH:
            text = row.not_run
        elif row.value is None or pd.isna(row.value):
            text = f"not measured: {row.not_run}"
        else:
            number = _fmt(row.value * factor)
            text = findings.tag(row.quantity, number, runs=row.runs) if spans else number
            if row.low is not None and row.high is not None and not (
                    pd.isna(row.low) or pd.isna(row.high)):
                lo, hi = _fmt(row.low * factor), _fmt(row.high * factor)
                if lo != hi:  # "33.8 [33.8 to 33.8]" says nothing more than "33.8"
                    text += f" [{lo} to {hi}]"
            if row.partial:
                text += " (partial: see note)"
            if row.note:
                text += f" ({row.note})"
        out.loc[row.task, f"{title} ({unit})"] = text
    out.index.name = "task"
    return out


def styled_table(values: pd.DataFrame) -> Any:
    """:func:`table` with every value in its finding's span, as a Styler (not escaped);
    the tasks by their names."""
    out = table(values, spans=True)
    out.index = [vocabulary.TASK_LABELS[t] for t in out.index]
    # "task" heads the row labels on the header row itself, not on a blank row of its own
    out.columns.name, out.index.name = "task", None
    return out.style


def notes(values: pd.DataFrame) -> pd.DataFrame:
    """What each cell is, and where it comes from."""
    frame = values[["task", "column", "definition", "source"]].copy()
    frame = frame[values["value"].notna()]
    frame["task"] = frame["task"].map(vocabulary.TASK_LABELS)
    frame.columns = ["task", "column", "what the number is", "from"]
    return frame.set_index(["column", "task"])


def figure(values: pd.DataFrame, title: str = "") -> plt.Figure:
    """Dots with intervals on log axes, one panel per column, rows shared."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(1, len(COLUMNS), figsize=(13, 1.6 + 0.5 * len(TASKS)),
                             sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    got = {(r.task, r.column): r for r in values.itertuples(index=False)}
    y = np.arange(len(TASKS))
    for ax, (column, (title_c, unit, factor)) in zip(axes, COLUMNS.items(), strict=True):
        shown = []
        for i, task in enumerate(TASKS):
            r = got.get((task, column))
            if r is None or r.value is None or pd.isna(r.value):
                why = r.not_run if r is not None else "not measured"
                label = why if why == KERNEL_THREAD_SWITCH else "not measured (the table says why)"
                # short, and clipped to its own panel: it never runs into the next one
                ax.text(0.02, i, label, transform=ax.get_yaxis_transform(), va="center",
                        color="grey", fontsize=8, style="italic", clip_on=True)
                continue
            v = r.value * factor
            shown.append(v)
            if r.low is not None and r.high is not None and not (
                    pd.isna(r.low) or pd.isna(r.high)):
                lo, hi = r.low * factor, r.high * factor
                # end caps: on a log axis a narrow interval hides behind its dot
                ax.plot([max(lo, v / 100), hi], [i, i], color=colours[0], lw=2, alpha=0.6,
                        marker="|", ms=12, mew=2)
                shown += [max(lo, v / 100), hi]
            ax.plot(v, i, marker="o", ms=6, color=colours[0],
                    mfc="white" if r.partial else colours[0], mew=2)
            if r.note:  # under the dot, towards the panel's inside
                ax.annotate(r.note, (v, i), xytext=(-8, -13), textcoords="offset points",
                            ha="right", fontsize=8, color="dimgrey")
            ax.annotate(f"{_fmt(v)} {unit}" + (" (partial)" if r.partial else ""), (v, i),
                        xytext=(0, 9), textcoords="offset points", ha="center", fontsize=10)
        ax.set_xscale("log")
        shown = [s for s in shown if s > 0]  # a log axis shows only what is above 0
        if shown:
            ax.set_xlim(min(shown) / 4, max(shown) * 4)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
        # wrapped to its panel's width: a long title runs into its neighbours' otherwise
        ax.set_title("\n".join(textwrap.wrap(title_c, 36)), fontsize=11)
        ax.set_xlabel(f"{unit} {PER.get(column, 'per task')} (log scale)")
    axes[0].set_yticks(y, [vocabulary.TASK_LABELS[t] for t in TASKS])
    axes[0].set_ylim(len(TASKS) - 0.5, -0.7)
    fig.suptitle(title or "What one task costs on this machine", fontweight="bold")
    fig.text(0.5, -0.03, "Dots: median (launch), half a batch's mean round trip, median "
             "of runs (switch) or slope (memory); lines: fastest to p90 (launch), range of "
             "runs (switch) or 95% interval (memory). Hollow dot: a partial definition (a "
             "switch whose batch also timed each round trip; Rust and Java platform threads' "
             "memory: resident only; see the notes). A switch is half a round trip between "
             "two tasks pinned to one CPU, timed in batches without a clock read inside; "
             "Rust and Java platform threads are kernel threads, switched as the OS thread is.",
             ha="center", va="top", fontsize=9, wrap=True)
    fig.tight_layout()
    return fig


def sentence(values: pd.DataFrame) -> str:
    """One sentence of ratios from the cells that were measured, each ratio marked with
    the two findings it divides (the abstract prints the same spans)."""
    v = {(r.task, r.column): (r.value, r.quantity) for r in values.itertuples(index=False)
         if r.value is not None and not pd.isna(r.value)}
    runs = {(r.task, r.column): tuple(r.runs) for r in values.itertuples(index=False)}
    parts = []

    def ratio(a: tuple[str, str], b: tuple[str, str], fmt: str) -> str | None:
        if a not in v or b not in v or not v[b][0]:
            return None
        shown = findings.number(v[a][0] / v[b][0], fmt)
        return f"**{findings.tag(f'{v[a][1]}/{v[b][1]}', shown, f'{shown}x', runs[a] + runs[b])}**"

    launch = ratio(("process", "launch"), ("thread", "launch"), ".1f")
    if launch is not None:
        parts.append(f"a fork-and-wait costs {launch} a thread's create-and-join")
    switch = ratio(("thread", "switch"), ("goroutine", "switch"), ".0f")
    if switch is not None:
        parts.append(f"a thread switch costs {switch} a goroutine switch")
    memory = ratio(("process", "memory"), ("thread", "memory"), ".0f")
    if memory is not None:
        parts.append(f"an idle process (forked from this study's Python harness) holds "
                     f"{memory} the memory of an idle thread, kernel side included")
    if not parts:
        return "Too few cells were measured on this machine for a comparison."
    return "On this machine " + "; ".join(parts) + "."
