"""An idle thread beside an idle process: the per-task slopes side by side."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from threadcost import findings
from threadcost.results import Result

# (label, thread counter, process counter)
ROWS = (
    ("user pages (thread: RSS; process: USS)", "rss_kib", "uss_kib"),
    ("page tables (VmPTE)", "page_tables_kib", "page_tables_kib"),
    ("kernel stack", "kernel_stack_kib", "kernel_stack_kib"),
    ("kernel objects (unreclaimable slab)", "slab_kib", "slab_kib"),
    ("total: user pages + kernel side", "total_kib", "total_kib"),
)


def _fit(result: Result, name: str) -> dict[str, float | None]:
    if result.experiment == "process_memory":
        f = result.summary["fits"].get(name)
        key = "per_process_kib"
    else:
        f = result.summary["per_thread"]["fit"].get(name)
        key = "per_thread"
    if not f:
        return {"value": None, "low": None, "high": None, "r2": None}
    return {"value": f[key], "low": f.get("ci95_low"), "high": f.get("ci95_high"),
            "r2": f.get("r2")}


def side_by_side(threads: Result, processes: Result) -> pd.DataFrame:
    """Per idle thread and per idle process (KiB, slope with 95% interval)."""
    rows = []
    for label, tname, pname in ROWS:
        for kind, res, name in (("thread", threads, tname), ("process", processes, pname)):
            f = _fit(res, name)
            rows.append({"counter": label, "task": kind, "KiB per task": f["value"],
                         "95% CI low": f["low"], "95% CI high": f["high"], "R²": f["r2"]})
    return pd.DataFrame(rows)


def side_by_side_table(threads: Result, processes: Result) -> pd.DataFrame:
    t = side_by_side(threads, processes)
    wide = t.pivot(index="counter", columns="task", values="KiB per task")
    wide = wide.reindex([r[0] for r in ROWS])[["thread", "process"]]
    wide.columns = ["KiB per idle thread", "KiB per idle process"]
    wide["process / thread"] = wide["KiB per idle process"] / wide["KiB per idle thread"]
    return wide


def side_by_side_figure(threads: Result, processes: Result) -> plt.Figure:
    """Dots with 95% intervals on a log axis, one row per counter."""
    t = side_by_side(threads, processes)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labels = [r[0] for r in ROWS]
    for offset, (kind, color, marker) in zip((-0.15, 0.15), (("thread", cycle[0], "o"),
                                                               ("process", cycle[1], "s")),
                                             strict=True):
        sub = t[t.task == kind].set_index("counter").reindex(labels)
        y = np.arange(len(labels)) + offset
        val = sub["KiB per task"].astype(float).to_numpy()
        lo = sub["95% CI low"].astype(float).to_numpy()
        hi = sub["95% CI high"].astype(float).to_numpy()
        ok = np.isfinite(val) & (val > 0)
        err = np.vstack([np.where(np.isfinite(lo), val - np.maximum(lo, val * 0.1), 0),
                         np.where(np.isfinite(hi), hi - val, 0)])
        ax.errorbar(val[ok], y[ok], xerr=err[:, ok], fmt=marker, color=color, capsize=3,
                    label=f"per idle {kind}")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("KiB per idle task (slope over runs, log scale; bars: 95% interval, "
                  "drawn from a tenth of the value when it reaches lower)")
    fig.legend(loc="lower center", ncol=2, frameon=False, bbox_to_anchor=(0.5, -0.06))
    ax.set_title("An idle thread beside an idle forked process", fontweight="bold")
    fig.tight_layout()
    return fig


def process_text(processes: Result) -> str:
    """The idle children's memory, each number a named finding of this run (the total is
    the headline's ``memory_process_slope_kib``)."""
    s = processes.summary

    def f(name: str) -> str:
        return findings.span(findings.of_results(name, [processes]))

    return (f"{s['runs']} runs forked {s['children_started']:,} idle children in all from a "
            f"measuring process of {f('process_memory_parent_rss_recorded_mib')} resident and "
            f"{f('process_memory_parent_page_tables_recorded_kib')} of page tables. Per idle "
            f"process: **{f('memory_process_uss_slope_kib')}** private resident (USS), "
            f"{f('memory_process_pss_slope_kib')} PSS, {f('memory_process_page_tables_slope_kib')}"
            f" of page tables, {f('memory_process_kernel_stack_slope_kib')} of kernel stack and "
            f"{f('memory_process_slab_slope_kib')} of kernel objects: "
            f"**{f('memory_process_slope_kib')}** with the kernel side. A forked child shares "
            f"its parent's pages until one of them writes, so its USS is what it wrote, and "
            f"its page tables are a copy of the parent's: a bigger parent makes a costlier "
            f"child.")
