"""Figure, tables and text of S3's CPU-bound experiment (C13, C14)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import findings, vocabulary
from threadcost.findings import cpu_bound as cpu_findings
from threadcost.results import Result
from threadcost.views import tables

WS_LABEL = {"none": "no working set", "own": "own working set"}
PANELS = (("wall_s", "wall (s)"), ("user_s", "user (s, all tasks)"),
          ("sys_s", "system (s, all tasks)"))
MODE_MARK = {"threads": "o", "processes": "s"}


def _ws_label(result: Result, ws: str, marked: bool = False) -> str:
    """The working set in words; ``marked``: its size in its parameter's span (prose)."""
    if ws == "own":
        size = f"{result.params['ws_ints'] * 8 / 1e6:,.1f} MB"
        return (findings.parameter("cpu_bound_ws_ints", size) if marked else size) + " each"
    return WS_LABEL[ws]


def totals_figure(result: Result) -> plt.Figure:
    """Wall, user and system time of each run (dots, one per repeat; bar: the
    median), threads vs processes, per working-set condition; rows share one axis."""
    runs = result.tables["runs"]
    rows = [(ws, mode) for ws in result.params["working_sets"] for mode in result.params["modes"]]
    labels = [f"{mode}, {_ws_label(result, ws)}" for ws, mode in rows]
    fig, axes = plt.subplots(1, len(PANELS), figsize=(11, 1.0 + 0.55 * len(rows)), sharey=True)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (col, title) in zip(axes, PANELS, strict=True):
        for y, (ws, mode) in enumerate(rows):
            vals = runs[(runs.working_set == ws) & (runs["mode"] == mode)][col].to_numpy()
            color = cycle[0] if mode == "threads" else cycle[1]
            ax.scatter(vals, np.full(vals.size, y), marker=MODE_MARK[mode], color=color,
                       alpha=0.6, s=28)
            if vals.size:
                med = float(np.median(vals))
                ax.plot([med, med], [y - 0.3, y + 0.3], color="black", lw=2)
        ax.set_xlabel(title)
        ax.set_xlim(left=0)
    axes[0].set_yticks(range(len(rows)), labels)
    axes[0].invert_yaxis()
    fig.suptitle(f"{result.params['tasks']} CPU-bound tasks on CPU {result.params['cpu']}: "
                 f"each run a dot, the median a bar ({result.params['repeats']} repeats)",
                 fontweight="bold")
    fig.tight_layout()
    return fig


def _ratio(x: float) -> str:
    """A ratio: three decimals near 1 (S3's "~1%" needs them), else three significant
    figures (81.6, not 81.553)."""
    return f"{x:.3f}" if 0.1 <= abs(x) < 10 else tables.format_number(float(x))


def totals_table(result: Result) -> pd.DataFrame:
    """Median over repeats of each run's totals, per condition."""
    t = result.tables["totals"]
    out = pd.DataFrame({
        "working set": [_ws_label(result, w) for w in t.working_set],
        "tasks as": t["mode"],
        "runs": t["repeats"],
        "wall (s)": t.wall_s_median,
        "user (s)": t.user_s_median,
        "system (ms)": t.sys_s_median * 1000,
        "system, whole run (ms)": t.whole_sys_s_median * 1000,
        "switches": t.switches_median,
        "dTLB load misses (millions)": t.dtlb_misses_median / 1e6,
    })
    if out["dTLB load misses (millions)"].isna().all():  # not counted here: said in the text
        out = out.drop(columns=["dTLB load misses (millions)"])
    return out.set_index(["working set", "tasks as"])


def ratios_table(result: Result) -> pd.DataFrame:
    """processes / threads per quantity: geometric mean of the per-repeat ratios,
    95% interval."""
    r = result.tables["ratios"]
    names = {"wall_s": "wall", "user_s": "user", "sys_s": "system (loops)",
             "cpu_s": "CPU clock", "whole_user_s": "user, whole run",
             "whole_sys_s": "system, whole run", "dtlb_misses": "dTLB load misses",
             "switches": "context switches"}
    out = pd.DataFrame({
        "working set": [_ws_label(result, w) for w in r.working_set],
        "quantity": r.quantity.map(names),
        "pairs": r.n,
        # the same words as the prose beside it (one value per printed ratio)
        "processes / threads": [_ratio(x) if pd.notna(x) else "-" for x in r.ratio],
        "95% interval": [f"{_ratio(lo)} to {_ratio(hi)}" if pd.notna(lo) else "-"
                         for lo, hi in zip(r.ci95_low, r.ci95_high, strict=True)],
    })
    return out.set_index(["working set", "quantity"])


def perf_text(result: Result) -> str:
    perf = result.summary["perf"]
    parts = []
    for key, label in (("dtlb_misses", "dTLB load misses"),
                       ("perf_switches", "context switches (perf)")):
        note = perf.get(key, "not measured")
        parts.append(f"{label}: {vocabulary.perf_words(str(note))}")
    return "Hardware and software counters: " + "; ".join(parts) + "."


def summary_text(result: Result) -> str:
    r = result.tables["ratios"]

    def ratio(ws: str, q: str) -> str:
        row = r[(r.working_set == ws) & (r.quantity == q)]
        if row.empty or pd.isna(row.ratio.iloc[0]):
            return "not measurable (a zero in a run)"
        lo, hi = row.ci95_low.iloc[0], row.ci95_high.iloc[0]
        ci = f" (95% interval {_ratio(lo)} to {_ratio(hi)})" if pd.notna(lo) else ""
        return f"**{_ratio(row.ratio.iloc[0])}**{ci}"

    parts = []
    for ws in result.params["working_sets"]:
        parts.append(f"With {_ws_label(result, ws, marked=True)}, processes / threads: wall "
                     f"{ratio(ws, 'wall_s')}, user {ratio(ws, 'user_s')}, system in the "
                     f"loops {ratio(ws, 'sys_s')}, system over the whole run "
                     f"{ratio(ws, 'whole_sys_s')}.")
    return " ".join(parts)


def conclusion_text(result: Result) -> str:
    """One sentence on S3's comparison: the wall-time ratio per working set."""
    r = result.tables.get("ratios")
    if r is None or r.empty:
        return ""
    wall = r[r.quantity == "wall_s"].set_index("working_set")
    parts = []
    for ws in result.params["working_sets"]:
        if ws in wall.index and pd.notna(wall.loc[ws, "ratio"]):
            label = "no working set" if ws == "none" else _ws_label(result, ws, marked=True)
            parts.append(f"**{_ratio(wall.loc[ws, 'ratio'])}** with {label}")
    if not parts:
        return ""
    return (f"The wall time of processes over threads ({result.params['tasks']} CPU-bound "
            "tasks sharing one CPU, S3's experiment above) was " + " and ".join(parts) + ".")


def _cpu_median(result: Result, ws: str, machine_id: str) -> str:
    q = findings.of_results(cpu_findings.run_cpu_name(ws), [result], machine_id)
    return f"; its runs took a median {findings.show(q)} of CPU" if q.measured else ""


SIZE_WORDS = {  # working set -> (the loop in words, its size's parameter, target, cost)
    "none": ("Without a working set each task counted primes up to", "limit",
             "cpu_bound_run_s", "ns_per_division", "a division"),
    "own": ("With the working sets each task ran", "ws_limit", "cpu_bound_ws_run_s",
            "ns_per_write", "writing one integer")}


def sizing_text(result: Result, machine_id: str = "") -> str:
    """How large each run was and how that size was chosen: calibrated here to last
    about a declared time (with the calibration's cost per division or per write), or
    fixed (a given size; every run stored before the calibration)."""
    sizing = result.summary.get("sizing") or {}
    parts = []
    for ws in result.params.get("working_sets", []):
        words, size_key, param, _cost_key, unit = SIZE_WORDS[ws]
        got = sizing.get(ws) or {"sized": "fixed", "size": result.params.get(size_key)}
        if got.get("size") is None:
            continue
        size = f"**{int(got['size']):,}**" + (" outer iterations" if ws == "own" else "")
        spent = _cpu_median(result, ws, machine_id)
        if got.get("sized") == "calibrated":
            target = findings.parameter(param, f"{got['target_s']:g} s")
            cost = findings.of_results(cpu_findings.cost_name(ws), [result], machine_id)
            cost_words = (f" ({unit} took {findings.show(cost)} in its probes)"
                          if cost.measured else "")
            parts.append(f"{words} {size}, sized here so that a run lasts about {target} "
                         f"of CPU{cost_words}{spent}.")
        else:
            parts.append(f"{words} {size}, a fixed size{spent}.")
    if any((sizing.get(ws) or {}).get("sized") == "calibrated" for ws in sizing):
        parts.append("A short calibration before the timed runs (the same tasks as threads, "
                     "in probes of growing size) chose the sized loops, so a run lasts "
                     "about as long on any CPU.")
    return " ".join(parts)
