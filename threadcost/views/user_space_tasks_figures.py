"""Page 05's figures: round trip and memory per task kind, fibers' memory against the touch,
and the creation of a task (notebook 05 calls these; each draws only from stored runs, or from
the rows :mod:`threadcost.views.user_space_tasks` made of them)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import vocabulary
from threadcost.results import Result
from threadcost.views import tables


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


def creation_figure(results: dict[str, Result], launch_samples: pd.DataFrame | None
                    ) -> plt.Figure:
    """Distribution (ECDF) of fiber creation and first switch vs thread creation
    (``launch_samples``: the samples of the launch run notebook 03 stored, the run its
    findings read; see :func:`threadcost.views.user_space_tasks.thread_launch_samples`)."""
    fig, ax = plt.subplots()
    for impl, result in results.items():
        c = result.tables["creation"]
        first = c[c.touch_kib == c.touch_kib.min()]
        for col, what in (("create_ns", "create (mmap + guard + context)"),
                          ("start_ns", "first switch in and back")):
            v = np.sort(first[col].to_numpy(float))
            if v.size:
                ax.plot(v, np.arange(1, v.size + 1) / v.size, label=f"fiber {impl}: {what}")
    if launch_samples is not None:
        frame = launch_samples
        if "create_ns" in frame:
            # the steady launches from the smallest parent: what the finding reads
            pick = (frame.kind == "thread") & (frame.phase == "steady")
            if "parent_touch_mib" in frame:
                pick &= frame.parent_touch_mib == frame[pick].parent_touch_mib.min()
            v = np.sort(frame[pick].create_ns.dropna().to_numpy(float))
            if v.size:
                ax.plot(v, np.arange(1, v.size + 1) / v.size, color="black", lw=2,
                        label="thread: pthread_create (notebook 3)")
    ax.set_xscale("log")
    ax.set(xlabel="time per task (ns, log scale)", ylabel="share of tasks at or below",
           title="Creating a task")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8,
              frameon=False)
    return fig
