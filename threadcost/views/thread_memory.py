"""Figures, tables and the explorer of notebook 02 (memory per thread)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from threadcost import claims, findings
from threadcost.experiments.thread_memory import checks as thread_memory
from threadcost.experiments.thread_memory.spec import HEADLINE, SERIES
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views import thread_page_gap

KIB_PER_MIB = 1024
# The parts of a thread's true cost, bottom to top of the stacked bar.
PARTS = [("rss_kib", "user stack pages (VmRSS)"),
         ("kernel_stack_kib", "kernel stack (KernelStack)"),
         ("page_tables_kib", "page tables (VmPTE)"),
         ("slab_kib", "kernel objects (SUnreclaim slab)")]
# a published slab count (S2's slabtop: objects in use in every cache, reclaimable ones
# included), drawn in the slab colour, hatched: the same kind, counted another way
SLABTOP = "slabtop_kib"
PUBLISHED_PARTS = [(SLABTOP, "slab as slabtop counts it (S2)")]
SLAB_AT = [name for name, _ in PARTS].index("slab_kib")


def _fit(result: Result, name: str) -> dict[str, Any]:
    return result.summary["per_thread"]["fit"][name]


def _fit_label(f: dict[str, Any], unit: str = "KiB") -> str:
    if f["method"] != "slope":
        return f"{f['per_thread']:,.1f} {unit}/thread (delta / N)"
    half = (f["ci95_high"] - f["ci95_low"]) / 2
    digits = 0 if abs(f["per_thread"]) >= 100 else 2
    return (f"slope {f['per_thread']:,.{digits}f} {unit}/thread (95% CI "
            f"±{half:,.{max(digits, 2)}f}), R² = {f['r2']:.4f}")


def vs_threads_figure(result: Result, log_virtual: bool = False) -> plt.Figure:
    """VSZ (left) and RSS (right) growth against the threads started, each run a
    dot, with the fitted line. Growth is this process's, from before the first
    thread to all threads asleep."""
    pts = result.tables["points"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 5.6))
    x = pts.started
    xs = np.linspace(0, float(x.max()), 50)
    for ax, name, label, scale, unit in (
            (left, "vsz_kib", "virtual size (VmSize)", KIB_PER_MIB * 1024, "GiB"),
            (right, "rss_kib", "resident set (VmRSS)", KIB_PER_MIB, "MiB")):
        f = _fit(result, name)
        ax.plot(x, pts[name] / scale, "o", ms=4, alpha=0.6, label=f"{label}, each run")
        intercept = f["intercept_kib"] or 0.0
        ax.plot(xs, (f["per_thread"] * xs + intercept) / scale, "-", lw=1.5,
                label=_fit_label(f))
        ax.set(xlabel="threads running (all asleep)",
               ylabel=f"growth of {label} ({unit})")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if "rss_rollup_kib" in pts and pts.rss_rollup_kib.notna().any():
        right.plot(x, pts.rss_rollup_kib / KIB_PER_MIB, "x", ms=5, color="grey",
                   label="same, counted by page walk (smaps_rollup)")
    if "rss_pmap_kib" in pts and pts.rss_pmap_kib.notna().any():
        right.plot(x, pts.rss_pmap_kib / KIB_PER_MIB, "+", ms=7, color="black",
                   label="same, read from outside (pmap -x)")
    for ax in (left, right):  # under each panel: the points fill the plot's diagonal
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=9,
                  frameon=False)
    if log_virtual:
        left.set_yscale("log")
    stack = result.summary["stack_kib"]
    left.set_title(f"Virtual: each thread reserves a {stack:,} KiB stack")
    right.set_title("Resident: only the pages the thread wrote")
    fig.tight_layout()
    return fig


def per_thread_table(result: Result) -> pd.DataFrame:
    """Every counter's per-thread slope with its 95% interval and R^2."""
    rows = []
    for name in [*HEADLINE, "system_page_tables_kib"]:
        f = result.summary["per_thread"]["fit"].get(name)
        if f is None:
            continue
        rows.append({"counter": SERIES[name],
                     "KiB per thread": f["per_thread"],
                     "95% CI low (KiB)": f["ci95_low"], "95% CI high (KiB)": f["ci95_high"],
                     # four decimals for every row: 0.99995 and 0.9999 read alike
                     "R²": "—" if f["r2"] is None else f"{f['r2']:.4f}",
                     "runs": f["n"], "method": f["method"]})
    out = pd.DataFrame(rows).set_index("counter")
    if not out.empty and (out["method"] == "slope").all():
        out = out.drop(columns=["method"])  # the text above says every value is a slope
    return out


def _published_bars() -> list[tuple[str, dict[str, float]]]:
    """Published per-thread costs that can be drawn as bars (KiB)."""
    out = []
    try:
        # S2's kernel memory is slabtop's count of slab alone (no kernel stack, no page
        # tables): drawn as slab, hatched, never as the whole kernel side
        out.append(("C12 published (S2)\nkernel: slab only",
                    {"rss_kib": claims.value("C12", "per_thread_rss_kib"),
                     SLABTOP: claims.value("C12", "per_thread_kernel_kib")}))
        out.append(("C16 published (S4)\npage tables only",
                    {"page_tables_kib": claims.value("C16", "per_thread_page_tables_kib")}))
    except KeyError:
        pass
    return out


def breakdown_figure(result: Result, with_published: bool = True) -> plt.Figure:
    """A stacked bar of one thread's true cost on this machine (user RSS and each
    kernel part, KiB per thread from the slopes), beside published numbers."""
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fits = result.summary["per_thread"]["fit"]
    bars: list[tuple[str, dict[str, float]]] = [
        ("this machine", {name: fits[name]["per_thread"] for name, _ in PARTS})]
    if with_published:
        bars += _published_bars()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.9 * len(bars)))
    labels_done: set[str] = set()
    for i, (_label, parts) in enumerate(reversed(bars)):
        left = 0.0
        for j, (name, text) in enumerate([*PARTS, *PUBLISHED_PARTS]):
            value = parts.get(name)
            if value is None:
                continue
            value = max(value, 0.0)
            published = name == SLABTOP
            # a published slab count takes the colour of this machine's slab
            colour = colours[(SLAB_AT if published else j) % len(colours)]
            ax.barh(i, value, left=left, color=colour, hatch="//" if published else None,
                    edgecolor="white", label=None if text in labels_done else text)
            labels_done.add(text)
            if value >= 3:
                ax.text(left + value / 2, i, f"{value:.1f}", ha="center", va="center",
                        fontsize=9, color="white")
            left += value
        ax.text(left + 0.5, i, f"{left:.1f} KiB", va="center", fontsize=10)
    ax.set_yticks(range(len(bars)), [b[0] for b in reversed(bars)])
    total = fits["total_kib"]
    ax.set(xlabel="memory per thread (KiB), including the kernel's",
           title=f"One idle thread costs {total['per_thread']:.1f} KiB, "
                 f"{fits['rss_kib']['per_thread']:.1f} KiB of it visible in RSS")
    ax.set_xlim(0, ax.get_xlim()[1] * 1.15)
    handles, names = ax.get_legend_handles_labels()
    order = [t for _, t in [*PARTS, *PUBLISHED_PARTS]]
    pairs = sorted(zip(names, handles, strict=True), key=lambda p: order.index(p[0]))
    ax.legend([h for _, h in pairs], [n for n, _ in pairs], loc="upper center",
              bbox_to_anchor=(0.5, -0.35 if len(bars) > 2 else -0.5), ncol=3, fontsize=9,
              frameon=False)
    fig.tight_layout()
    return fig


def touch_figure(result: Result) -> plt.Figure:
    """Resident set per thread against the depth of stack each thread wrote,
    with the published C06 point (its total / 10,000)."""
    pts = result.tables["points"]
    per = pts.rss_kib / pts.started
    fig, ax = plt.subplots()
    ax.plot(pts.touch_kib, per, "o", ms=5, alpha=0.7, label="this machine, each run (VmRSS)")
    if pts.rss_rollup_kib.notna().any():
        ax.plot(pts.touch_kib, pts.rss_rollup_kib / pts.started, "x", color="grey",
                label="same, by page walk (smaps_rollup)")
    fit = result.summary.get("rss_vs_touch_fit")
    top = float(pts.touch_kib.max())
    if fit:
        xs = np.array([0.0, top])
        ax.plot(xs, fit["rss_per_touched_kib"] * xs + fit["untouched_kib"], "-", lw=1,
                label=f"fit: {fit['rss_per_touched_kib']:.3f} KiB per KiB touched "
                      f"+ {fit['untouched_kib']:.1f} KiB, R² = {fit['r2']:.4f}")
    try:
        c06 = claims.value("C06", "per_thread_rss_kib")
        ax.plot([400], [c06], "D", color="C3", ms=8,
                label=f"C06 published (S0): {c06:,.1f} KiB per thread")
    except KeyError:
        pass
    ax.plot([0, top], [0, top], ":", color="grey", label="1 KiB resident per KiB touched")
    ax.set(xlabel="stack written by each thread (KiB)",
           ylabel="resident set growth per thread (KiB)",
           title=f"RSS follows the touched depth ({result.params['threads']:,} threads)")
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig


def stack_figure(result: Result) -> plt.Figure:
    """Per-thread VSZ and RSS for each stack size (log-log): VSZ follows the
    stack size, RSS does not."""
    table = result.tables["per_stack_size"].sort_values("stack_used_kib")
    fig, ax = plt.subplots()
    x = table.stack_used_kib
    ax.plot(x, table.vsz_kib_per_thread, "o-", label="virtual size per thread (VmSize)")
    ax.plot(x, table.rss_kib_per_thread, "s-", label="resident set per thread (VmRSS)")
    kernel = table.kernel_kib_per_thread
    spread = None
    if {"kernel_kib_per_thread_min", "kernel_kib_per_thread_max"} <= set(table.columns):
        spread = [(kernel - table.kernel_kib_per_thread_min).clip(lower=0),
                  (table.kernel_kib_per_thread_max - kernel).clip(lower=0)]
    ax.errorbar(x, kernel, yerr=spread, fmt="^-", capsize=3,
                label="kernel memory per thread (bars: min to max of runs)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(x), [f"{v:,}" for v in x])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_yscale("log")
    ax.set(xlabel="stack size of each thread (KiB, log)", ylabel="KiB per thread (log)",
           title=f"Stack size moves VSZ, not RSS ({result.params['threads']:,} threads)")
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig


def stack_table(result: Result) -> pd.DataFrame:
    """Per stack size: virtual, resident and page-table memory per thread (medians of
    the runs: they barely move), and the kernel's memory per thread with its spread,
    "median [min to max]" of the runs: its slab part is counted system-wide and moves by
    several KiB from run to run, so a bare median would read as a result it is not."""
    t = result.tables["per_stack_size"]

    def spread(row: Any) -> str:
        mid, lo, hi = (row.get(f"kernel_kib_per_thread{end}") for end in ("", "_min", "_max"))
        if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
            return findings.number(mid, "auto")
        return (f"{findings.number(mid, 'auto')} [{findings.number(lo, 'auto')} to "
                f"{findings.number(hi, 'auto')}]")

    out = pd.DataFrame({
        "stack asked (KiB)": t.stack_kib_asked.map(lambda k: "default" if k == 0
                                                   else f"{int(k):,}"),
        "stack used (KiB)": t.stack_used_kib,
        "runs": t.runs if "runs" in t else None,
        "VSZ per thread (KiB, median of runs)": t.vsz_kib_per_thread,
        "RSS per thread (KiB, median of runs)": t.rss_kib_per_thread,
        "page tables per thread (KiB, median of runs)": t.page_tables_kib_per_thread,
        "kernel per thread (KiB, median [min to max] of runs)":
            [spread(row) for _, row in t.iterrows()],
    })
    return out.dropna(axis=1, how="all").set_index("stack asked (KiB)")


def limits_frame(result: Result) -> pd.DataFrame:
    """The limits table, readable (None shown as '-')."""
    table = pd.DataFrame(result.summary["limits"])
    table["threads_allowed"] = table.threads_allowed.map(
        lambda v: "-" if v is None or v != v else f"{int(v):,}")
    table["value"] = table.value.map(
        lambda v: "unlimited" if v is None or v != v else f"{v:,}" if isinstance(v, int) else v)
    return table.set_index("limit")[["value", "unit", "threads_allowed", "applies", "note"]]


def explorer(threads: int = 1000, stack_kib: int = 0, touch_kib: int = 0) -> Any:
    """Sliders for thread count, stack size and touch depth and a Run button: each
    press measures 4 thread counts up to the chosen one (one fresh process each) and
    redraws the virtual-vs-resident curves and the per-thread stacked bar."""
    import ipywidgets as w
    from IPython.display import display

    # The explorer measures on a reader's request: only then are the kernels loaded.
    from threadcost.experiments.thread_memory.run import run

    sizes = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    n = w.IntSlider(value=threads, min=40, max=10_000, step=40, description="threads",
                    continuous_update=False)
    stack = w.SelectionSlider(options=[("default", 0)] + [(f"{s:,} KiB", s) for s in sizes],
                              value=stack_kib if stack_kib in sizes else 0,
                              description="stack", continuous_update=False)
    touch = w.IntSlider(value=touch_kib, min=0, max=1024, step=16, description="touch KiB",
                        continuous_update=False)

    def draw(threads: int, stack_kib: int, touch_kib: int) -> None:
        room = thread_memory.effective_stack_kib(stack_kib) - thread_memory.SAFETY_KIB
        if touch_kib > room:
            touch_kib = max(room - room % 4, 0)
            display(f"touch reduced to {touch_kib} KiB: the stack leaves no more room")
        counts = sorted({max(threads * k // 4, 1) for k in (1, 2, 3, 4)})
        result = run(thread_counts=counts, stack_kib=stack_kib,
                                   touch_kib=touch_kib, repeats=1)
        figures = [vs_threads_figure(result, log_virtual=True),
                   breakdown_figure(result, with_published=False)]
        plt.show()
        for fig in figures:
            plt.close(fig)

    # up to 10,000 threads per change: measure on a button press, not on every move
    return w.interactive(draw, {"manual": True, "manual_name": "Run"}, threads=n,
                         stack_kib=stack, touch_kib=touch)


def _finding(name: str, result: Result) -> str:
    """A headline finding of this thread_memory result, printed as the headline prints it."""
    return findings.span(findings.of_results(name, [result]))


def sweep_text(result: Result) -> str:
    """The sweep's headline in one paragraph (numbers from the result)."""
    fits = result.summary["per_thread"]["fit"]
    s = result.summary

    def v(name: str) -> float:
        return float(fits[name]["per_thread"])

    def f(name: str) -> str:
        return _finding(name, result)

    rollup = fits.get("rss_rollup_kib", {}).get("per_thread")
    agree = ("" if rollup is None or rollup != rollup else
             f" Counting resident pages by walking the page tables (smaps_rollup) gives "
             f"**{f('memory_thread_rss_rollup_slope_kib')}** per thread, "
             f"{f('memory_thread_rss_rollup_vs_rss_share_pct')} from VmRSS.")
    pmap = fits.get("rss_pmap_kib", {}).get("per_thread")
    if pmap is not None and pmap == pmap:
        agree += (f" Read from outside the process with `pmap -x`: "
                  f"**{f('memory_thread_rss_pmap_slope_kib')}** per "
                  f"thread ({f('memory_thread_rss_pmap_vs_rss_share_pct')}).")
    elif result.params.get("pmap"):  # asked for, and no run got a reading
        agree += (" The reading from outside the process with `pmap -x` was not run here: "
                  "pmap gave no reading (it is not installed, or could not read the "
                  "process).")
    parts = [findings.of_results(name, [result])
             for name in ("memory_thread_slope_kib", "memory_thread_rss_slope_kib")]
    total = findings.ratio(*parts)
    times = (findings.tag("memory_thread_slope_kib/memory_thread_rss_slope_kib",
                          findings.number(total[0], ".1f"),
                          runs=parts[0].run_ids + parts[1].run_ids) if total else "n/a")
    stack = findings.parameter("thread_memory_stack_kib", f"{s['stack_kib']:,} KiB")
    guard = findings.parameter("guard_kib", f"{s['guard_kib']} KiB")
    count = findings.parameter("thread_memory_counts", f"{s['max_threads_measured']:,} threads")
    return (
        f"Over {s['runs']} runs of up to {count} with "
        f"{stack} stacks, each extra thread added **{f('memory_thread_vsz_slope_kib')}** "
        f"of virtual size (the stack plus a {guard} guard page) but only "
        f"**{f('memory_thread_rss_slope_kib')}** of resident set "
        f"(R² = {fits['rss_kib']['r2']:.4f}).{agree} "
        f"The kernel spent another **{f('memory_thread_kernel_slope_kib')}** per thread that "
        f"no RSS shows: {f('memory_thread_kernel_stack_slope_kib')} of kernel stack, "
        f"{f('memory_thread_page_tables_slope_kib')} of page tables and "
        f"{f('memory_thread_slab_slope_kib')} of slab "
        f"objects. The true cost of one idle thread here is therefore about "
        f"**{f('memory_thread_slope_kib')}** (95% CI "
        f"{fits['total_kib']['ci95_low'] or 0:.1f} to "
        f"{fits['total_kib']['ci95_high'] or 0:.1f}), "
        f"{times} times what RSS "
        f"suggests. Creating these threads took a median "
        f"{f('thread_memory_create_median_us')} each: every one gets a fresh "
        f"stack mapping and all earlier ones stay alive, the setup of notebook 3's burst, "
        f"not of its create-and-join loop, whose threads reuse the stack glibc cached "
        f"from the last join and start several times faster; "
        + (f"{f('thread_memory_left_behind_recorded_threads')} were left behind after "
           "joining." if s["threads_left_behind"] else "no thread was left behind after "
           "joining."))


def touch_text(result: Result) -> str:
    """C06 against this machine, from the touch grid."""
    table = result.tables["per_touch_depth"]
    fit = result.summary.get("rss_vs_touch_fit")
    deepest = table.loc[table.touch_kib_asked.idxmax()]
    depth = int(deepest.touch_kib_asked)
    rss, rollup = float(deepest.rss_kib_per_thread), float(deepest.rss_rollup_kib_per_thread)
    def f(name: str) -> str:
        return _finding(name, result)

    slope = "" if not fit else (
        f"Each KiB written adds {f('memory_thread_touch_rss_per_touched_kib_slope')} of RSS "
        f"(R² = {fit['r2']:.4f}) on top of {f('memory_thread_touch_untouched_intercept_kib')} "
        "for an untouched thread. ")
    n = result.params["threads"]
    try:
        published = "; C06 published " + findings.published(
            "C06", f"{claims.value('C06', 'total_rss_kib') / 1024**2:.1f} GiB")
    except KeyError:
        published = ""
    gap = 100 * (rollup - rss) / rss if rss else float("nan")
    return (
        f"{slope}With {findings.parameter('touch_depths_kib', f'{depth} KiB')} written, each "
        f"of {findings.parameter('threads', f'{n:,} threads')} grew RSS by "
        f"**{f('memory_thread_deepest_touch_rss_median_kib')}** (page walk: "
        f"{f('memory_thread_deepest_touch_rss_rollup_median_kib')}, "
        f"{f('memory_thread_deepest_touch_rollup_vs_rss_share_pct')}). At that rate "
        f"{findings.parameter('c06_threads', '10,000 threads')} would hold "
        f"**{f('c06_ten_thousand_threads_rss_gib')}**{published}. "
        + (f"On this kernel VmRSS and the page walk agree within "
           f"{findings.parameter('rss_agreement', '2%')}: RSS is not "
           "undercounted here." if abs(gap) <= 2 else
           f"VmRSS {'under' if gap > 0 else 'over'}counts the page walk by {abs(gap):.1f}% "
           "on this kernel."))


def page_gap_text(touch: Result, stacks: Result, fingerprint: dict[str, Any],
                  machine_id: str, data_dir: Any = None) -> str:
    """Where an untouched idle thread's pages differ from other stored machines' by whole
    pages, and where the touch and stack grids put the difference
    (:mod:`threadcost.views.thread_page_gap`); the runs named as the findings name them
    (the stored run a result was read back from, else this notebook's)."""
    runs = findings.runs_of(results=[touch, stacks], fingerprint=fingerprint)
    ids = {run.experiment: str(run.meta["run_id"]) for run in runs.runs
           if run.experiment in (touch.experiment, stacks.experiment)}
    return thread_page_gap.gap_text(
        touch, stacks, fingerprint, machine_id,
        (ids.get(touch.experiment, "this notebook"), ids.get(stacks.experiment, "this notebook")),
        data_dir)


def keep(result: Result | None, save: bool, data_dir: Any = None,
         fingerprint: dict[str, Any] | None = None) -> None:
    """Store ``result`` when ``save`` (saying where), and say if a limit cut it
    short. None (a run that was not made) is ignored."""
    from IPython.display import Markdown, display


    if result is None:
        return
    if save:
        path = datastore.save_run(result, data_dir=data_dir, fingerprint=fingerprint)
        display(Markdown(stored_text(result.experiment, path)))
    hit = result.limit_hit
    if hit:
        display(Markdown(
            f"**A system limit cut this run short:** `{hit['limit']}` ({hit['errno_name']}) "
            f"after {hit.get('threads_started', 0):,} threads; what follows is partial."))


def limits_text(result: Result, data_dir: Any = None, saved: bool = True) -> str:
    """The binding limit in words. With default stacks, the count is the finding
    ``thread_ceiling_threads`` (what page 00 and C08 print), read from the stored runs
    once ``result`` is stored (``saved``), else from ``result`` itself."""
    b = result.summary["binding"]
    if not b:
        return "No limit caps the number of threads here."
    capped = sorted((r for r in result.summary["limits"]
                     if r["applies"] and r["threads_allowed"] is not None),
                    key=lambda r: r["threads_allowed"])
    nxt = (f" Next comes {capped[1]['limit']} at about {capped[1]['threads_allowed']:,}."
           if len(capped) > 1 else "")
    count = f"{b['threads_allowed']:,}"
    if result.params.get("stack_kib") == 0:
        q = findings.get("thread_ceiling_threads", data_dir,
                         results=None if saved else [result])
        if q.measured:
            count = findings.span(q, q.number())
    stack = findings.parameter("stack_kib", f"{result.summary['stack_kib']:,} KiB")
    return (f"With {stack} stacks, **{b['limit']}** binds "
            f"first: about **{count}** more threads in this process "
            f"({b['note']}).{nxt} This is computed from the limits, not by starting that "
            "many threads.")


def spawn_text(result: Result | None) -> str:
    if result is None:
        return ("The run that starts threads until one fails is off in this parameter set: "
                "it would take process ids from everything else on this machine.")
    s = result.summary
    stopped = s["limit_hit"]["limit"] if s["limit_hit"] else "nothing (its bound was reached)"
    return (f"Spawning until failure started **{s['started']:,}** threads with "
            f"{s['stack_kib']:,} KiB stacks; stopped by: **{stopped}**.")


def stored_text(experiment: str, path: Any) -> str:
    """Where a run was stored, relative to the data folder (no machine paths)."""
    from pathlib import Path

    run = Path(path)
    return (f"Stored as run `{run.name}` of `{experiment}` "
            f"(`data/{run.parent.name}/{run.name}/`).")
