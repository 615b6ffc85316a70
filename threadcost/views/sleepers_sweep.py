"""Figure and table of the sleepers sweep: C threads and goroutines at counts from
hundreds to 10,000 (context; C15 and C17 are judged on S4's program on the peers)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter

from threadcost import findings, stats, vocabulary
from threadcost.results import Result

STYLE = {"threads": ("o", "-"), "threads_pinned": ("s", "--"), "goroutines": ("^", ":")}
NAMES = {"threads": "threads, placed by the scheduler",
         "threads_pinned": "threads, pinned round-robin", "goroutines": "goroutines"}


def name(variant: str) -> str:
    """A variant in words (``threads_pinned`` is "threads, pinned round-robin")."""
    return NAMES.get(variant, variant.replace("_", " "))


def figure(result: Result) -> plt.Figure:
    """CPU µs per wake-up (user + system, and the system part), and resident KiB per
    task, against the task count; hollow markers: saturated points (CPUs busy or the
    run behind schedule). getrusage splits CPU time into user and system by
    scheduler ticks, so the split is coarser than the total."""
    pts = result.tables["points"]
    if "not_run" in pts:
        pts = pts[pts["not_run"].isna()]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharex=True)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    pts = pts.assign(cpu_us_per_wakeup=pts.user_us_per_wakeup + pts.sys_us_per_wakeup)
    panels = (("cpu_us_per_wakeup", "CPU µs per wake-up (user + system)"),
              ("sys_us_per_wakeup", "of which system µs"),
              ("rss_per_task_kib", "peak RSS growth per task (KiB)"))
    for ax, (col, label) in zip(axes, panels, strict=True):
        for i, (variant, (marker, ls)) in enumerate(STYLE.items()):
            g = pts[pts.variant == variant].groupby("count").agg(
                value=(col, "median"), saturated=("saturated", "any")).reset_index()
            if g.empty:
                continue
            ax.plot(g["count"], g["value"], ls=ls, color=cycle[i], label=name(variant))
            for sat, fill in ((False, cycle[i]), (True, "white")):
                sub = g[g.saturated == sat]
                ax.scatter(sub["count"], sub["value"], marker=marker, s=45,
                           facecolors=fill, edgecolors=cycle[i], zorder=3)
        ax.set_xscale("log")
        ax.set_xticks(sorted(pts["count"].unique()))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set(xlabel="tasks (log scale)", ylabel=label)
        ax.set_ylim(bottom=0)
    axes[0].legend(frameon=False, fontsize=9)
    fig.suptitle("Sleeping tasks: CPU per wake-up and memory per task\n(hollow: saturated, "
                 f"the CPUs at least {stats.SATURATION_SHARE:.0%} busy or the run behind "
                 "schedule)", fontweight="bold")
    fig.tight_layout()
    return fig


def table(result: Result) -> pd.DataFrame:
    """One row per (tasks, variant): medians over the repeats, and in how many repeats
    the point was saturated."""
    pts = result.tables["points"]
    if "not_run" in pts:
        pts = pts[pts["not_run"].isna()]
    pts = pts.assign(cpu_us=pts.user_us_per_wakeup + pts.sys_us_per_wakeup)
    rows = []
    for (count, variant), g in pts.groupby(["count", "variant"], sort=True):
        sat = int(g.saturated.astype(bool).sum())
        rows.append({
            "tasks": f"{int(count):,}", "variant": name(variant), "repeats": len(g),
            "wake-ups": round(float(g.wakeups.median())),
            "create all (ms)": float(g.spawn_s.median()) * 1000,
            "wall (s)": float(g.wall_s.median()), "CPU µs / wake-up": float(g.cpu_us.median()),
            "user µs / wake-up": float(g.user_us_per_wakeup.median()),
            "sys µs / wake-up": float(g.sys_us_per_wakeup.median()),
            "CPUs busy": float(g.cpu_busy.median()),
            "RSS KiB / task": float(g.rss_per_task_kib.median()),
            "saturated": "no" if sat == 0 else f"yes ({sat} of {len(g)})"})
    return pd.DataFrame(rows)


def text(result: Result) -> str:
    s = result.summary
    busy = findings.parameter("stats.SATURATION_SHARE", f"{stats.SATURATION_SHARE:.0%}")
    late = findings.parameter("stats.LATE_FACTOR", f"{stats.LATE_FACTOR:g}x")
    planned = findings.parameter("sleep_ms", f"{s['planned_s']:.1f} s")
    parts = [f"This machine has {s['cpus']} usable CPUs; a point counts as saturated when its "
             f"tasks kept them at least {busy} busy or the run took "
             f"more than {late} its {planned} of planned sleeping."]
    for variant, count in s["first_saturated_count"].items():
        parts.append(f"{name(variant).capitalize()}: "
                     + (f"saturated from {count:,} tasks." if count else
                        "never saturated in this sweep."))
    for variant, reason in s["not_run"].items():
        parts.append(f"{name(variant).capitalize()} not run: {vocabulary.bare_reason(reason)}.")
    return " ".join(parts)
