"""The paper's summary views: machine card, headline figure, cross-machine view.

Everything is drawn from the runs stored in a data folder, so it fills in as
experiments land and says "not measured here" where a run is missing.

Headline numbers come from two places in each run's ``summary``:

- the measurements the claims layer selects for them
  (:data:`threadcost.claims.measurements.HEADLINE`: thread launch from C09's
  selector, pinned thread switch from C01's, idle-thread RSS and kernel memory
  from C12's, ...);
- optionally ``summary["headline"]``: rows ``{"task": "thread" | "process" |
  "fiber" | "goroutine", "metric": "launch_ns" | "switch_ns" | "rss_kib" |
  "kernel_kib", "value": ..., "ci_low": ..., "ci_high": ..., "note": ...}``
  for what no claim covers (a process switch, a fiber). They win over claim rows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import claims, datastore, machine, paths

TASKS = ("thread", "process", "fiber", "goroutine")
METRICS = {  # metric -> (panel title, unit shown, factor from the stored unit)
    "launch_ns": ("launch (create + first run + join/wait)", "µs", 1e-3),
    "switch_ns": ("context switch (one switch, half a round trip)", "µs", 1e-3),
    "rss_kib": ("memory per idle task: resident (RSS)", "KiB", 1.0),
    "kernel_kib": ("memory per idle task: kernel side", "KiB", 1.0),
}
# (claim, published quantity) -> (task, metric); first match per (task, metric) wins.
HEADLINE_FROM_CLAIMS: dict[tuple[str, str], tuple[str, str]] = {
    ("C09", "thread_launch_ns"): ("thread", "launch_ns"),
    ("C09", "fork_launch_ns_0mb"): ("process", "launch_ns"),
    ("C01", "switch_pinned_ns"): ("thread", "switch_ns"),
    ("C04", "goroutine_switch_ns"): ("goroutine", "switch_ns"),
    ("C12", "per_thread_rss_kib"): ("thread", "rss_kib"),
    ("C05", "per_thread_rss_kib"): ("thread", "rss_kib"),
    ("C12", "per_thread_kernel_kib"): ("thread", "kernel_kib"),
    ("C16", "per_thread_page_tables_kib"): ("thread", "kernel_kib"),
    ("C11", "per_goroutine_rss_kib"): ("goroutine", "rss_kib"),
}

# --- the machine card -------------------------------------------------------------

def _limit(value: Any) -> str:
    return "unlimited" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _cgroup(value: Any) -> str:
    """A cgroup limit in words: "max" and an absent file both mean no limit set."""
    if value is None:
        return "no limit (no cgroup file)"
    return "no limit (max)" if str(value).strip() == "max" else _limit(
        int(value) if str(value).isdigit() else value)


def _vulnerabilities(found: Any) -> str:
    """Mitigated or vulnerable entries named; the 'Not affected' ones counted."""
    if not isinstance(found, dict) or not found:
        return "not recorded"
    hit = [f"{k}: {v}" for k, v in sorted(found.items()) if v != "Not affected"]
    clear = len(found) - len(hit)
    return "; ".join([*hit, f"{clear} others not affected"]) if hit else "none affected"


def _pools(pools: Any) -> str:
    if not isinstance(pools, list):
        return "not recorded"
    if not pools:
        return "none loaded"
    return ", ".join(f"{p.get('internal_api')} {p.get('num_threads')} threads" for p in pools)


def machine_card(fp: dict[str, Any]) -> pd.DataFrame:
    """The fingerprint in human words: one row per fact that shapes the numbers."""
    lim = fp.get("limits", {})
    virt = fp.get("virtualization", "none")
    cont = fp.get("container", "none")
    smt = fp.get("smt_siblings") or []
    stack = lim.get("rlimit_stack", {}).get("soft")
    git = fp.get("git") or {}
    rows = [
        ("CPU", f"{fp.get('cpu_model')} ({fp.get('arch')})"),
        ("logical CPUs", f"{fp.get('logical_cpus')} ({len(fp.get('affinity', []))} usable by "
                         f"this process: {fp.get('affinity')})"),
        ("SMT", "yes: " + str(smt) if any(len(g) > 1 for g in smt) else "no sibling threads"),
        ("memory", f"{fp.get('mem_total_kib', 0) / 1024**2:.1f} GiB "
                   f"({fp.get('mem_available_kib', 0) / 1024**2:.1f} GiB available at start)"),
        ("runs on", "bare metal" if virt == "none" else f"a virtual machine ({virt})"),
        ("container", "none" if cont == "none" else cont),
        ("kernel", str(fp.get("kernel"))),
        ("C library", f"glibc {fp.get('glibc')} ({fp.get('libpthread')})"),
        ("compiler", str(fp.get("compiler"))),
        ("clock source", str(fp.get("clocksource"))
         + (f" (available: {fp['clocksources_available']})"
            if fp.get("clocksources_available") else "")),
        ("preemption model", str(fp.get("preemption", "not recorded"))),
        ("scheduler tick", f"HZ={fp['hz']}" if fp.get("hz") else "unknown"),
        ("CPU-time accounting", str(fp.get("cpu_time_accounting", "not recorded"))),
        ("CPU vulnerabilities", _vulnerabilities(fp.get("cpu_vulnerabilities"))),
        ("PCID (cheaper address-space switches)",
         "not recorded" if "pcid" not in fp else "yes" if fp["pcid"] else "no"),
        ("numpy thread pools", _pools(fp.get("numpy_thread_pools"))),
        ("page size", f"{fp.get('page_size', 0) // 1024} KiB"),
        ("default thread stack (ulimit -s)",
         "unlimited" if stack is None else f"{stack // 1024:,} KiB"),
        ("kernel.threads-max", _limit(lim.get("kernel.threads-max"))),
        ("kernel.pid_max", _limit(lim.get("kernel.pid_max"))),
        ("vm.max_map_count", _limit(lim.get("vm.max_map_count"))),
        ("vm.overcommit_memory", _limit(lim.get("vm.overcommit_memory"))),
        ("RLIMIT_NPROC (soft)", _limit(lim.get("rlimit_nproc", {}).get("soft"))
         + (" (not enforced: running as root)" if lim.get("running_as_root") else "")),
        ("RLIMIT_AS (soft)", _limit(lim.get("rlimit_as", {}).get("soft"))),
        ("cgroup pids.max", _cgroup(lim.get("cgroup.pids.max"))),
        ("cgroup memory.max", _cgroup(lim.get("cgroup.memory.max"))),
        ("code", f"git {str(git.get('commit'))[:12]}"
                 + (" (with uncommitted changes)" if git.get("dirty") else "")
         if git.get("commit") else "not a git checkout"),
    ]
    return pd.DataFrame(rows, columns=["fact", "this machine"])


def thread_ceiling(fp: dict[str, Any]) -> tuple[int | None, str]:
    """The lowest limit on threads this machine states, and which limit it is."""
    lim = fp.get("limits", {})
    options: list[tuple[int, str]] = []
    for key in ("kernel.threads-max", "kernel.pid_max"):
        if isinstance(lim.get(key), int):
            options.append((lim[key], key))
    if isinstance(lim.get("vm.max_map_count"), int):  # two mappings per thread (stack+guard)
        options.append((lim["vm.max_map_count"] // 2, "vm.max_map_count / 2"))
    pids = lim.get("cgroup.pids.max")
    if isinstance(pids, str) and pids.isdigit():
        options.append((int(pids), "cgroup pids.max"))
    if not options:
        return None, "unknown"
    value, name = min(options)
    return value, name


# --- headline values ----------------------------------------------------------------

def headline_values(data_dir: str | Path | None = None,
                    machine_id: str | None = None) -> pd.DataFrame:
    """One row per (task, metric) measured on one machine: value, interval, where from."""
    from threadcost.claims.measurements import headline_measurements

    mid = machine_id or machine.machine_id()
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for target, (claim_id, m) in headline_measurements(mid, data_dir).items():
        found[target] = {"task": target[0], "metric": target[1], "value": m.value,
                         "ci_low": m.low, "ci_high": m.high, "from": f"{claim_id} selector",
                         "experiment": str(m.setup.get("experiment", "")),
                         "run_id": m.run_id, "note": m.how}
    for run in datastore.list_runs(data_dir=data_dir, machine_id=mid):  # oldest first
        for row in run.meta.get("summary", {}).get("headline") or []:
            if not isinstance(row, dict):
                continue
            target = (str(row.get("task")), str(row.get("metric")))
            value = _finite(row.get("value"))
            if target[0] in TASKS and target[1] in METRICS and value is not None:
                found[target] = _headline_row(target, value, row, 1.0, "headline row", run)
    cols = ["task", "metric", "value", "ci_low", "ci_high", "from", "experiment", "run_id",
            "note"]
    return pd.DataFrame(list(found.values()), columns=cols)


def _finite(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _headline_row(target: tuple[str, str], value: float, row: dict[str, Any], scale: float,
                  origin: str, run: datastore.Run) -> dict[str, Any]:
    lo, hi = _finite(row.get("ci_low")), _finite(row.get("ci_high"))
    return {"task": target[0], "metric": target[1], "value": value,
            "ci_low": lo * scale if lo is not None else None,
            "ci_high": hi * scale if hi is not None else None,
            "from": origin, "experiment": run.experiment, "run_id": run.meta["run_id"],
            "note": row.get("note") or ""}


def published_headline() -> pd.DataFrame:
    """The published numbers for the same (task, metric) cells, with their claim."""
    table = claims.values()
    rows, seen = [], set()
    for (cid, qty), target in HEADLINE_FROM_CLAIMS.items():
        hit = table[(table.claim_id == cid) & (table.quantity == qty)]
        if hit.empty or target in seen:
            continue
        seen.add(target)
        rows.append({"task": target[0], "metric": target[1], "value": float(hit.value.iloc[0]),
                     "claim_id": cid})
    return pd.DataFrame(rows)


def headline_table(values: pd.DataFrame) -> pd.DataFrame:
    """Tasks by metric, in the units of the headline figure ("—": not measured here)."""
    out = pd.DataFrame(index=list(TASKS), columns=[
        f"{METRICS[m][0]} ({METRICS[m][1]})" for m in METRICS], dtype=object)
    out[:] = "—"
    for row in values.itertuples(index=False):
        title, unit, factor = METRICS[row.metric]
        text = _fmt(row.value * factor)
        if row.ci_low is not None and row.ci_high is not None and not (
                pd.isna(row.ci_low) or pd.isna(row.ci_high)):
            text += f" [{_fmt(row.ci_low * factor)}, {_fmt(row.ci_high * factor)}]"
        out.loc[row.task, f"{title} ({unit})"] = text
    out.index.name = "task"
    return out


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{min(digits, 3)}f}"


def headline_figure(values: pd.DataFrame, published: pd.DataFrame | None = None,
                    title: str = "") -> plt.Figure:
    """Launch, switch and memory of one task (thread, process, fiber, goroutine).

    Bars: this machine (whiskers: the interval the experiment reported). Black
    ticks: the published number for the same cell. Memory stacks the resident
    part and the kernel-side part that RSS does not show.
    """
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    y = np.arange(len(TASKS))
    got = {(r.task, r.metric): r for r in values.itertuples(index=False)}
    pub = ({(r.task, r.metric): r for r in published.itertuples(index=False)}
           if published is not None and not published.empty else {})

    def whisker(ax: plt.Axes, i: int, r: Any, factor: float, left: float = 0.0) -> None:
        if r.ci_low is None or r.ci_high is None or pd.isna(r.ci_low) or pd.isna(r.ci_high):
            return
        ax.plot([left + r.ci_low * factor, left + r.ci_high * factor], [i, i], color="k",
                lw=1.2)

    for ax, metric in zip(axes[:2], ("launch_ns", "switch_ns"), strict=True):
        title_m, unit, factor = METRICS[metric]
        vals = [got[(t, metric)].value * factor if (t, metric) in got else np.nan for t in TASKS]
        ax.barh(y, vals, color=colours[0], label="measured here")
        _label_bars(ax, y, vals, unit)
        for i, t in enumerate(TASKS):
            if (t, metric) in got:
                whisker(ax, i, got[(t, metric)], factor)
            if (t, metric) in pub:
                ax.plot(pub[(t, metric)].value * factor, i, marker="|", ms=18, mew=2.5,
                        color="k", ls="none",
                        label="published" if i == min(
                            j for j, tt in enumerate(TASKS) if (tt, metric) in pub) else None)
        finite = [v for v in vals if np.isfinite(v)] + [
            pub[(t, metric)].value * factor for t in TASKS if (t, metric) in pub]
        if finite:
            ax.set_xscale("log")
            ax.set_xlim(min(finite) / 3, max(finite) * 3)
        _mark_missing(ax, y, vals)
        ax.set(title=title_m, xlabel=f"{unit} per task (log scale)")
    ax = axes[2]
    rss = [got[(t, "rss_kib")].value if (t, "rss_kib") in got else np.nan for t in TASKS]
    kern = [got[(t, "kernel_kib")].value if (t, "kernel_kib") in got else np.nan for t in TASKS]
    ax.barh(y, rss, color=colours[0], label="measured here")
    ax.barh(y, kern, left=np.nan_to_num(rss), color=colours[1],
            label="measured here: kernel side, not in RSS")
    for i, t in enumerate(TASKS):
        if (t, "rss_kib") in got:
            whisker(ax, i, got[(t, "rss_kib")], 1.0)
        for metric in ("rss_kib", "kernel_kib"):
            if (t, metric) in pub:
                left = pub[(t, "rss_kib")].value if metric == "kernel_kib" and (
                    t, "rss_kib") in pub else 0.0
                ax.plot(left + pub[(t, metric)].value, i, marker="|", ms=18, mew=2.5,
                        color="k", ls="none")
    total = [np.nansum([a, b]) if np.isfinite(a) or np.isfinite(b) else np.nan
             for a, b in zip(rss, kern, strict=True)]
    _mark_missing(ax, y, total)
    _label_bars(ax, y, total, "KiB")
    ax.set(title="memory per idle task", xlabel="KiB per task (RSS + kernel side)")
    finite_total = [v for v in total if np.isfinite(v)] + [
        r.value for (t, m), r in pub.items() if m in ("rss_kib", "kernel_kib")]
    ax.set_xlim(0, max(finite_total) * 1.35 if finite_total else 1)
    for a in axes:
        a.set_yticks(y, TASKS)
        a.invert_yaxis()
    axes[1].set_yticklabels([])
    axes[2].set_yticklabels([])
    handles, labels = [], []
    for a in axes:
        for h, lab in zip(*a.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False,
               bbox_to_anchor=(0.5, -0.06))
    fig.suptitle(title or "What one task costs on this machine", fontweight="bold")
    fig.tight_layout()
    return fig


def _label_bars(ax: plt.Axes, y: np.ndarray, vals: list[float], unit: str) -> None:
    for i, v in zip(y, vals, strict=True):
        if np.isfinite(v):
            ax.annotate(f" {_fmt(v)} {unit}", (v, i), va="center", ha="left", fontsize=9,
                        xytext=(2, -12), textcoords="offset points")


def _mark_missing(ax: plt.Axes, y: np.ndarray, vals: list[float]) -> None:
    for i, v in zip(y, vals, strict=True):
        if not np.isfinite(v):
            ax.annotate("not measured here", (0.02, i), xycoords=("axes fraction", "data"),
                        va="center", color="grey", fontsize=9, style="italic")


def cost_sentence(values: pd.DataFrame) -> str:
    """One line per task of the headline figure: what was measured here."""
    names = {"launch_ns": ("launch", 1e-3, "µs"), "switch_ns": ("switch", 1e-3, "µs"),
             "rss_kib": ("resident", 1.0, "KiB"), "kernel_kib": ("kernel side", 1.0, "KiB")}
    lines = []
    for task in TASKS:
        got = values[values.task == task]
        if got.empty:
            lines.append(f"- **{task}**: not measured here")
            continue
        parts = [f"{names[m][0]} {_fmt(v * names[m][1])} {names[m][2]}"
                 for m, v in zip(got.metric, got.value, strict=True)]
        lines.append(f"- **{task}**: " + ", ".join(parts))
    return "\n".join(lines)


# --- runs used ----------------------------------------------------------------------------

def runs_table(data_dir: str | Path | None = None, machine_id: str | None = None) -> pd.DataFrame:
    """The newest run of each experiment on this machine: when, parameters, limits hit."""
    mid = machine_id or machine.machine_id()
    latest: dict[str, datastore.Run] = {}
    for run in datastore.list_runs(data_dir=data_dir, machine_id=mid):
        latest[run.experiment] = run
    rows = []
    for name, run in sorted(latest.items()):
        limit = run.meta.get("limit_hit")
        rows.append({"experiment": name, "run": run.meta["run_id"],
                     "when (UTC)": run.meta.get("created_utc", ""),
                     "parameters": ", ".join(f"{k}={v}" for k, v in run.meta["params"].items()),
                     "limit hit": limit.get("limit", str(limit)) if isinstance(limit, dict)
                     else ("" if limit is None else str(limit))})
    return pd.DataFrame(rows, columns=["experiment", "run", "when (UTC)", "parameters",
                                       "limit hit"])


# --- across machines ------------------------------------------------------------------------

def reference_data_dirs(root: Path | None = None) -> list[Path]:
    """The data folders of the committed reference runs (``reference/<machine>/data``)."""
    base = root if root is not None else paths.REPO_ROOT / "reference"
    if not base.is_dir():
        return []
    return sorted(p / "data" for p in base.iterdir() if (p / "data").is_dir())


def machines(data_dir: str | Path | None = None) -> list[str]:
    """Machine folders of a data folder that hold at least one complete run."""
    return sorted({run.meta["machine_id"] for run in datastore.list_runs(data_dir=data_dir)
                   if "machine_id" in run.meta})


def cross_machine_values(data_dirs: list[tuple[str, Path | None]]) -> pd.DataFrame:
    """Headline values of every machine in several data folders.

    ``data_dirs``: (label, folder) pairs, e.g. ``[("this study", None),
    ("reference", Path("reference/x/data"))]``. Columns: machine, source, task,
    metric, value.
    """
    frames = []
    for label, folder in data_dirs:
        for mid in machines(folder):
            vals = headline_values(folder, mid)
            if vals.empty:
                continue
            vals = vals.assign(machine=mid, source=label)
            frames.append(vals[["machine", "source", "task", "metric", "value"]])
    if not frames:
        return pd.DataFrame(columns=["machine", "source", "task", "metric", "value"])
    out = pd.concat(frames, ignore_index=True)
    return out.drop_duplicates(["machine", "source", "task", "metric"], keep="last")


def cross_machine_table(values: pd.DataFrame) -> pd.DataFrame:
    """Machines (rows) by headline cell (columns), in the figure's units."""
    if values.empty:
        return pd.DataFrame()
    v = values.copy()
    v["cell"] = [f"{t} {METRICS[m][0].split(' (')[0].split(':')[-1].strip()} "
                 f"({METRICS[m][1]})" for t, m in zip(v.task, v.metric, strict=True)]
    v["shown"] = [x * METRICS[m][2] for x, m in zip(v.value, v.metric, strict=True)]
    v["row"] = v.machine + " (" + v.source + ")"
    return v.pivot_table(index="row", columns="cell", values="shown", aggfunc="last")


def cross_machine_figure(values: pd.DataFrame) -> plt.Figure:
    """One small panel per headline cell, one bar per machine (and source)."""
    table = cross_machine_table(values)
    cells = list(table.columns)
    n = max(len(cells), 1)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 0.9 + 0.45 * len(table) * rows
                                                  + 1.2 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, cell in zip(axes.flat, cells, strict=False):
        col = table[cell]
        ax.barh(range(len(col)), col.to_numpy(dtype=float))
        ax.set_yticks(range(len(col)), [str(i) for i in col.index] if ax in axes[:, 0]
                      else [""] * len(col))
        ax.invert_yaxis()
        ax.set_title(cell, fontsize=10)
        ax.set_xlabel(cell.rsplit("(", 1)[-1].rstrip(")"))
    fig.suptitle("The same measurements across machines", fontweight="bold")
    fig.tight_layout()
    return fig
