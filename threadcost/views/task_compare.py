"""Notebook 05's comparison of any two tasks: their switch times and memory side by
side, the ratio A / B, and why any value is missing (a widget in JupyterLab)."""

from __future__ import annotations

from typing import Any

import pandas as pd

# Below one page per task a memory slope is noise around zero (a goroutine's VSZ grows
# by whole arenas, not per goroutine): a ratio to it would print six-digit nonsense.
MIN_KIB_FOR_RATIO = 4.0


def compare_ratio(a: Any, b: Any, column: str) -> float:
    """A / B, or NaN when either is missing, zero, or (memory) below one page per task."""
    if pd.isna(a) or pd.isna(b) or not float(b):
        return float("nan")
    if column.endswith("_kib") and min(abs(float(a)), abs(float(b))) < MIN_KIB_FOR_RATIO:
        return float("nan")
    return float(a) / float(b)


COMPARE_METRICS = {"one switch: half a pinned batch's mean round trip (ns)": "switch_ns",
                   "round trip p50 (ns)": "round_trip_p50_ns",
                   "round trip p99 (ns)": "round_trip_p99_ns",
                   "RSS per task (KiB)": "rss_per_task_kib",
                   "VSZ per task (KiB)": "vsz_per_task_kib",
                   "kernel memory per task (KiB)": "kernel_per_task_kib",
                   "create alone p50 (ns)": "create_ns",
                   "whole life p50 (ns)": "life_ns"}


def compare_pair(frame: pd.DataFrame) -> tuple[str, str]:
    """The pair the comparison opens on: the two tasks measured on the most quantities
    in common (the table's order breaks ties), so it does not open on dashes."""
    cols = [c for c in COMPARE_METRICS.values() if c in frame.columns]
    have = frame[cols].notna()
    names = list(frame.index)
    if len(names) < 2:
        return names[0], names[0]
    best = max(((a, b) for i, a in enumerate(names) for b in names[i + 1:]),
               key=lambda pair: int((have.loc[pair[0]] & have.loc[pair[1]]).sum()))
    return best


def compare_rows(frame: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The two tasks' quantities and A / B, each missing value saying why."""
    out = []
    for label, col in COMPARE_METRICS.items():
        va = frame.at[a, col] if col in frame.columns else float("nan")
        vb = frame.at[b, col] if col in frame.columns else float("nan")
        ratio = compare_ratio(va, vb, col)
        if pd.isna(va) or pd.isna(vb):
            why = "not measured for " + (" and ".join(t for t, v in ((a, va), (b, vb))
                                                    if pd.isna(v)))
        elif pd.isna(ratio):
            why = (f"no ratio: below {MIN_KIB_FOR_RATIO:g} KiB per task, the difference "
                   "of two slopes is within a page")
        else:
            why = ""
        out.append({"quantity": label,
                    "A": "—" if pd.isna(va) else f"{float(va):,.1f}",
                    "B": "—" if pd.isna(vb) else f"{float(vb):,.1f}",
                    "A / B": "—" if pd.isna(ratio) else f"{ratio:,.2f}",
                    "why a value is missing": why})
    return pd.DataFrame(out).set_index("quantity")


def compare_widget(rows: list[dict[str, Any]]) -> Any:
    """Pick any two tasks; see their switch time and memory side by side, the ratio
    A / B as a chart, and why any value is missing."""
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import display

    frame = pd.DataFrame(rows).set_index("task")
    names = list(frame.index)
    first, second = compare_pair(frame)
    left = w.Dropdown(options=names, value=first, description="task A")
    right = w.Dropdown(options=names, value=second, description="task B")

    def show(a: str, b: str) -> None:
        table = compare_rows(frame, a, b)
        shown = table[table["A / B"] != "—"]
        if not shown.empty:
            ratios = shown["A / B"].str.replace(",", "").astype(float)
            fig, ax = plt.subplots(figsize=(6.5, 0.5 + 0.4 * len(ratios)))
            ax.barh(list(ratios.index), ratios.to_numpy(), color="#4c72b0")
            ax.axvline(1.0, color="black", lw=1)
            ax.set_xscale("log")
            ax.invert_yaxis()
            ax.set(xlabel=f"A / B (log scale): {a} against {b}")
            plt.show()
            plt.close(fig)
        display(table)

    return w.interactive(show, a=left, b=right)
