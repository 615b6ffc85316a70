"""Figures, tables and the interactive explorer of the launch experiment (C09, C10)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import claims, findings
from threadcost.findings.launch import name as finding_name
from threadcost.results import Result
from threadcost.views import tables

KIND_LABELS = {
    "thread": "thread (pthread_create)",
    "fork": "fork",
    "vfork": "vfork",
    "posix_spawn": "posix_spawn (tiny static binary)",
    "clone": "clone(CLONE_VM|CLONE_VFORK)",
    "fork_exec": "fork + exec (tiny static binary)",
}
METRIC_LABELS = {
    "lifecycle_ns": "whole short life: create + join",
    "create_ns": "create call, until it returns in the parent",
    "first_run_ns": "create called -> child's first instruction",
    "join_ns": "join / waitpid after create returned",
}


def _steady(result: Result) -> pd.DataFrame:
    samples = result.tables["samples"]
    return samples[samples.phase == "steady"]


def distribution_table(result: Result, metric: str = "lifecycle_ns") -> pd.DataFrame:
    """min, p50, p90, p99, max and mean of one metric, in microseconds, per series."""
    d = result.tables["distributions"]
    d = d[(d.metric == metric) & (d.phase == "steady")]
    out = d.set_index(["kind", "parent_touch_mib"])[["min", "p50", "p90", "p99", "max",
                                                     "mean"]] / 1000
    out["n"] = d.set_index(["kind", "parent_touch_mib"])["n"].astype(int)
    out.columns = [f"{c} (µs)" if c != "n" else c for c in out.columns]
    return out


def phases_table(result: Result) -> pd.DataFrame:
    """Per kind at the smallest parent memory: the very first launch, the other
    warm-up launches and the steady state (lifecycle, microseconds)."""
    mib = min(result.params["parent_touch_mib"])
    rows = []
    for e in result.summary["series"]:
        if e["parent_touch_mib"] != mib:
            continue
        first = e["first_launches_lifecycle_ns"]
        rows.append({"kind": e["kind"],
                     "very first launch (µs)": (e["very_first_lifecycle_ns"] or np.nan) / 1000,
                     "warm-up launches, p50 (µs)": first["p50"] / 1000,
                     "steady state, p50 (µs)": e["lifecycle_ns"]["p50"] / 1000,
                     "steady state, p99 (µs)": e["lifecycle_ns"]["p99"] / 1000})
    return pd.DataFrame(rows).set_index("kind")


def distributions_figure(result: Result, metric: str = "lifecycle_ns",
                         parent_mib: int | None = None,
                         kinds: list[str] | None = None) -> plt.Figure:
    """ECDF of one metric per kind (log time axis), at one parent memory size."""
    samples = _steady(result)
    mib = min(result.params["parent_touch_mib"]) if parent_mib is None else parent_mib
    kinds = kinds or list(result.params["kinds"])
    fig, ax = plt.subplots()
    for kind in kinds:
        sel = samples[(samples.kind == kind) & (samples.parent_touch_mib == mib)][metric]
        values = np.sort(sel.dropna().to_numpy(dtype=float)) / 1000
        values = values[values > 0]
        if values.size == 0:
            continue
        ax.step(values, np.arange(1, values.size + 1) / values.size, where="post",
                label=KIND_LABELS.get(kind, kind), lw=2)
    ax.set_xscale("log")
    ax.set(xlabel=f"time per launch (µs, log scale): {METRIC_LABELS[metric]}",
           ylabel="share of launches at or below",
           title=f"Launch time, one per launch, parent holding {mib} MiB")
    ax.legend(loc="lower right", fontsize="small")
    return fig


def histogram_figure(result: Result, metric: str = "lifecycle_ns",
                     parent_mib: int | None = None,
                     kinds: list[str] | None = None) -> plt.Figure:
    """Histograms of one metric per kind on log-spaced bins."""
    samples = _steady(result)
    mib = min(result.params["parent_touch_mib"]) if parent_mib is None else parent_mib
    kinds = kinds or list(result.params["kinds"])
    sel = samples[(samples.parent_touch_mib == mib) & samples.kind.isin(kinds)]
    values = sel[metric].dropna().to_numpy(dtype=float) / 1000
    values = values[values > 0]
    fig, ax = plt.subplots()
    if values.size:
        bins = np.logspace(np.log10(values.min()), np.log10(values.max()), 60)
        for kind in kinds:
            v = sel[sel.kind == kind][metric].dropna().to_numpy(dtype=float) / 1000
            v = v[v > 0]
            if v.size:
                ax.hist(v, bins=bins, histtype="step", lw=2, label=KIND_LABELS.get(kind, kind))
    ax.set_xscale("log")
    ax.set(xlabel=f"time per launch (µs, log scale): {METRIC_LABELS[metric]}",
           ylabel="launches per bin", title=f"Launch time histogram, parent holding {mib} MiB")
    ax.legend(loc="upper right", fontsize="small")
    return fig


def memory_figure(result: Result, metric: str = "create_ns") -> plt.Figure:
    """Median time per launch (bars: p10..p90 not kept, so p50 to p90) vs parent memory."""
    d = result.tables["distributions"]
    d = d[(d.metric == metric) & (d.phase == "steady")]
    mems = sorted(result.params["parent_touch_mib"])
    where = {m: i for i, m in enumerate(mems)}  # evenly spaced: sizes span 0 .. 64+ MiB
    fig, ax = plt.subplots()
    for kind in result.params["kinds"]:
        k = d[d.kind == kind].sort_values("parent_touch_mib")
        if k.empty:
            continue
        x = np.array([where[int(m)] for m in k.parent_touch_mib], dtype=float)
        p50 = k.p50.to_numpy(dtype=float) / 1000
        p90 = k.p90.to_numpy(dtype=float) / 1000
        ax.errorbar(x, p50, yerr=[np.zeros_like(p50), p90 - p50], marker="o", capsize=3,
                    lw=2, label=KIND_LABELS.get(kind, kind))
    ax.set_yscale("log")
    ax.set_xticks(range(len(mems)))
    ax.set_xticklabels([str(m) for m in mems])
    ax.set(xlabel="memory the parent holds, every page written (MiB; ticks evenly spaced)",
           ylabel="time per launch (µs, log scale): p50, bar to p90",
           title=f"Launch vs parent memory ({METRIC_LABELS[metric].split(',')[0]})")
    ax.legend(fontsize="small", loc="upper left")
    return fig


def burst_figure(result: Result) -> plt.Figure:
    """Left: time to create all N threads (all alive at once) vs N, with the
    fitted line. Right: mean time per create vs N, first burst vs later ones."""
    b = result.tables["burst"]
    b = b[b.created == b.n]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    first, later = b[b.repeat == 0], b[b.repeat > 0]
    left.plot(b.n, b.create_total_ns / 1e6, "o", label="create all N (each burst)")
    left.plot(b.n, b.wall_ns / 1e6, "s", mfc="none", label="create all + release + join all")
    fit = result.summary.get("burst_fit", {}).get("create_total_ns")
    if fit:
        xs = np.array([b.n.min(), b.n.max()], dtype=float)
        left.plot(xs, (fit["slope"] * xs + fit["intercept"]) / 1e6, ls="--", color="grey",
                  label=f"fit: {fit['slope'] / 1000:.1f} µs per create, R$^2$ {fit['r2']:.3f}")
    left.set_ylim(0, float(b.wall_ns.max()) / 1e6 * 1.5)
    left.set(xlabel="threads alive at once (N)", ylabel="time for the whole burst (ms)",
             title="Burst: time grows with N")
    left.legend(fontsize="small", loc="upper left")
    right.plot(first.n, first.create_mean_ns / 1000, "o-", label="first burst (fresh stacks)")
    if not later.empty:
        agg = later.groupby("n").create_mean_ns.mean()
        right.plot(agg.index, agg.to_numpy() / 1000, "s--",
                   label="later bursts (glibc may reuse cached stacks)")
    serial = _serial_thread_create(result)
    if serial is not None:
        right.axhline(serial / 1000, color="grey", ls=":",
                      label="one at a time (serial create, mean)")
    right.set_xscale("log")
    right.set(xlabel="threads alive at once (N, log)", ylabel="mean time per create (µs)",
              title="Per-thread create time")
    top = max(float(b.create_mean_ns.max()) / 1000, serial / 1000 if serial else 0.0)
    right.set_ylim(0, top * 1.6)
    right.legend(fontsize="small", loc="upper left")
    fig.tight_layout()
    return fig


def _serial_thread_create(result: Result) -> float | None:
    for e in result.summary["series"]:
        if e["kind"] == "thread" and e["parent_touch_mib"] == min(
                result.params["parent_touch_mib"]):
            return float(e["create_ns"]["mean"])
    return None


_C09_LABELS = {
    "thread_launch_ns": "thread launch, 0 MB touched",
    **{f"fork_launch_ns_{mb}mb": f"fork launch, {mb} MB touched" for mb in (0, 2, 4, 8)},
}


def _sig(x: float) -> str:
    """Three significant figures, as the table's other cells."""
    return tables.format_number(float(x))


# S0-code's statistic, the mean of its launches, over the launch run's one series (pinned
# to one CPU): context beside C09, not its verdict (one series is one repeat; the verdicts
# read the launch growth run's per-repeat medians, a labelled substitute)
MEAN_COLUMN = "this machine: mean of one pinned series, context (µs)"


def c09_table(result: Result) -> pd.DataFrame:
    """C09's published launch times beside this run's (microseconds).

    This machine: the mean create-call time of the launch run's one series, pinned to one
    CPU (S0-code's statistic: it averaged its unpinned launches), shown as context: the
    verdicts read the launch growth run's repeats instead, with the 95% interval of that
    mean (a mean of a heavy-tailed sample can lie outside its
    p5..p95, so the spread of the samples is not its interval). C09's 64 KiB memcpy is
    not here: S0-code copied in no cache, which notebook 4's yardsticks measure (the
    finding ``memcpy_64kib_nocache``, judged there), not this run's copy in cache.
    """
    pub = claims.values_for("C09").set_index("quantity")
    samples = result.tables.get("samples")
    rows = []

    def add(quantity: str, values: Any) -> None:
        arr = np.asarray(values, dtype=float)
        value = pub.loc[quantity, "value"]
        label = _C09_LABELS.get(quantity, quantity)
        if arr.size == 0:
            rows.append({"quantity": label, "published (µs)": value / 1000,
                         MEAN_COLUMN: np.nan,
                         "95% interval of the mean (µs)": "not run here",
                         "ratio (here / published)": np.nan})
            return
        mean = arr.mean()
        half = 1.96 * arr.std(ddof=1) / np.sqrt(arr.size) if arr.size > 1 else 0.0
        rows.append({"quantity": label, "published (µs)": value / 1000,
                     MEAN_COLUMN: mean / 1000,
                     "95% interval of the mean (µs)":
                         f"{_sig((mean - half) / 1000)} to {_sig((mean + half) / 1000)}",
                     "ratio (here / published)": mean / value})

    def steady(kind: str, mib: int) -> Any:
        if samples is None or samples.empty:
            return []
        hit = samples[(samples.kind == kind) & (samples.parent_touch_mib == mib)
                      & (samples.phase == "steady")]
        return hit.create_ns.to_numpy()

    add("thread_launch_ns", steady("thread", 0))
    for mb in (0, 2, 4, 8):
        add(f"fork_launch_ns_{mb}mb", steady("fork", mb))
    return pd.DataFrame(rows).set_index("quantity")


def c09_figure(result: Result) -> plt.Figure:
    """C09's published launch times beside this machine's, as bars (log scale)."""
    t = c09_table(result)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    x = np.arange(len(t))
    ax.bar(x - 0.2, t["published (µs)"], width=0.4, label="published (C09, S0-code)")
    ax.bar(x + 0.2, t[MEAN_COLUMN], width=0.4, label="this machine")
    ax.set_xticks(x)
    labels = [q.replace(" launch,", ",").replace(" touched", "") for q in t.index]
    ax.set_xticklabels(labels, rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set(ylabel="time per launch (µs, log scale)",
           title="C09: create-call time, published vs this machine")
    ax.legend(fontsize="small", loc="upper left")
    return fig


def explorer(result: Result) -> Any:
    """Pick kinds, parent memory, metric and plot type; the figure redraws from the
    measured samples (no rerun)."""
    import ipywidgets as w

    kinds = w.SelectMultiple(options=list(result.params["kinds"]),
                             value=tuple(result.params["kinds"]), description="kinds",
                             rows=min(5, len(result.params["kinds"])))
    mib = w.Dropdown(options=list(result.params["parent_touch_mib"]),
                     description="parent MiB")
    metric = w.Dropdown(options=[(METRIC_LABELS[m], m) for m in METRIC_LABELS],
                        value="lifecycle_ns", description="time")
    plot = w.ToggleButtons(options=["ECDF", "histogram"], description="plot")

    def draw(kinds: tuple[str, ...], mib: int, metric: str, plot: str) -> None:
        chosen = list(kinds) or list(result.params["kinds"])
        maker = distributions_figure if plot == "ECDF" else histogram_figure
        fig = maker(result, metric=metric, parent_mib=mib, kinds=chosen)
        plt.show()
        plt.close(fig)

    return w.interactive(draw, kinds=kinds, mib=mib, metric=metric, plot=plot)


# ---------------------------------------------------------------- prose from the data
# Every sentence that quotes a number is built here from the result it describes.

def _us(ns: float | None, digits: int | None = None) -> str:
    """Microseconds as the tables print them (three significant figures), or with
    ``digits`` decimals."""
    if ns is None or ns != ns:
        return "n/a"
    if digits is None:
        return f"{tables.format_number(ns / 1000)} µs"
    return f"{ns / 1000:,.{digits}f} µs"


def _show(name: str, result: Result) -> str:
    """The finding ``name`` of this run (stored or not), marked with its name."""
    return findings.span(findings.of_results(name, [result]))


def _times(a: str, b: str, result: Result, fmt: str = ".1f") -> str:
    """"4.0x": finding ``a`` over finding ``b`` of this run, marked with both names."""
    got = findings.ratio(findings.of_results(a, [result]), findings.of_results(b, [result]),
                         fmt=fmt)
    return got[1] if got else "n/a"


def _series(result: Result, kind: str, mib: int | None = None) -> dict[str, Any] | None:
    mib = min(result.params["parent_touch_mib"]) if mib is None else mib
    for e in result.summary["series"]:
        if e["kind"] == kind and e["parent_touch_mib"] == mib:
            return e
    return None


def checks_text(result: Result) -> str:
    s = result.summary
    lines = [f"- The clock costs **{_show('launch_clock_read_median_ns', result)}** per read "
             "(median of 100,001 back-to-back reads, this run)."]
    share = s.get("timer_overhead_share_of_median")
    if share is not None:
        lines.append(f"- Two reads bracket each timed interval: "
                     f"{_show('launch_clock_share_of_thread_median_share_pct', result)} of the "
                     "median thread lifecycle.")
    b = s.get("baseline")
    if b and b.get("series_mean_lifecycle_ns"):
        ratio = b["ratio_series_to_baseline"]
        agree = "within a fifth" if abs(ratio - 1) <= 0.2 else "not within a fifth"
        count = findings.parameter("launch_baseline", f"{b['iterations']:,} threads")
        lines.append(
            f"- Plain create+join loop ({count}, default attributes, in "
            f"{b.get('where', 'a child process')}): "
            f"**{_show('launch_plain_loop_thread_mean_ns', result)}** per thread on "
            f"average; the per-launch series averaged "
            f"**{_show('launch_thread_lifecycle_mean_ns', result)}**, a ratio of {ratio:.2f} "
            f"({agree}). "
            "Means are pulled by the rare slow launches of a busy machine; medians are in "
            "the tables below.")
    return "\n".join(lines)


def kinds_text(result: Result) -> str:
    thread = _series(result, "thread")
    if thread is None:
        return "No thread series in this run."

    t = finding_name("thread", "lifecycle_ns")
    parts = [f"A thread's whole short life took **{_show(t, result)}** at the median (create "
             f"call {_show(finding_name('thread', 'create_ns'), result)}, first instruction after "
             f"{_show(finding_name('thread', 'first_run_ns'), result)})."]
    for kind in result.params["kinds"]:
        e = _series(result, kind)
        if kind == "thread" or e is None:
            continue
        v = finding_name(kind, "lifecycle_ns")
        parts.append(f"{KIND_LABELS[kind]}: {_show(v, result)}, {_times(v, t, result)} the "
                     "thread.")
    return " ".join(parts)


def first_launch_text(result: Result) -> str:
    thread = _series(result, "thread")
    if thread is None or thread["very_first_lifecycle_ns"] is None:
        return "No warm-up launches were kept (launch_warmup = 0)."
    first, steady = "launch_thread_very_first_recorded_ns", "launch_thread_median_ns"
    return (f"The very first thread of its process took {_show(first, result)}, "
            f"{_times(first, steady, result)} the steady median of {_show(steady, result)}: "
            "the first launch "
            "maps a fresh stack (and warms caches and the kernel's paths); later ones reuse "
            "the cached stack. One launch is one sample, so this is an indication, not a "
            "distribution.")


def memory_fit_table(result: Result) -> pd.DataFrame:
    """Per kind: create time against parent memory, least squares over every sample."""
    rows = []
    for kind, fit in result.summary.get("memory_fit", {}).items():
        rows.append({"kind": kind, "slope (ns per MiB)": fit["slope"],
                     "95% CI low (ns per MiB)": fit["slope_ci95_low"],
                     "95% CI high (ns per MiB)": fit["slope_ci95_high"],
                     "intercept (µs)": fit["intercept"] / 1000, "R²": round(fit["r2"], 3),
                     "samples": fit["n"]})
    return pd.DataFrame(rows).set_index("kind") if rows else pd.DataFrame()


def memory_text(result: Result) -> str:
    fits = result.summary.get("memory_fit", {})
    if "fork" not in fits:
        return "Fork was not measured at two or more parent memory sizes in this run."
    f = fits["fork"]
    text = (f"Each MiB the parent holds adds **{_show('launch_fork_create_slope_ns', result)}** "
            f"(95% CI "
            f"{f['slope_ci95_low'] / 1000:.2f} to {f['slope_ci95_high'] / 1000:.2f}) to the "
            f"fork call (R² {f['r2']:.2f} over {f['n']:,} launches")
    text += ("; a low R² means launch noise is large next to the trend)." if f["r2"] < 0.8
             else ").")
    if "thread" in fits:
        t = fits["thread"]
        text += (f" For a thread the slope is {_show('launch_thread_create_slope_ns', result)} "
                 f"per MiB (95% CI "
                 f"{t['slope_ci95_low']:.1f} to {t['slope_ci95_high']:.1f}): flat.")
    return text


def python_parent_text(result: Result, python_run: Result) -> str:
    here = _series(result, "fork", 0) or _series(result, "fork")
    py = python_run.summary["series"][0]
    both = [result, python_run]

    def show(name: str) -> str:
        return findings.span(findings.of_results(name, both))

    parts = [f"Forked from a Python process (resident "
             f"{show('launch_python_parent_rss_recorded_mib')}), the fork call took "
             f"**{show('launch_fork_from_python_create_median_ns')}** at the median "
             f"({py['n']:,} launches)"]
    if here:
        extra = findings.parameter("launch_parent_touch_mib", f"{here['parent_touch_mib']} MiB")
        got = findings.ratio(findings.of_results("launch_fork_from_python_create_median_ns",
                                                 both),
                             findings.of_results("launch_fork_create_median_ns", both), fmt=".0f")
        parts.append(f", against {show('launch_fork_create_median_ns')} from the small driver "
                     f"(resident {show('launch_driver_rss_recorded_mib')}, {extra} extra), "
                     f"{got[1] if got else 'n/a'} as long")
    return "".join(parts) + ". Fork from a large process measures that process."


def burst_table(result: Result) -> pd.DataFrame:
    b = result.tables["burst"].copy()
    out = pd.DataFrame({
        "N": b.n, "burst": b.repeat + 1, "created": b.created,
        "create p50 (µs)": b.create_p50_ns / 1000, "create p99 (µs)": b.create_p99_ns / 1000,
        "create all (ms)": b.create_total_ns / 1e6, "join all (ms)": b.join_total_ns / 1e6,
        "user (ms)": b.user_us / 1000, "sys (ms)": b.sys_us / 1000,
        "threads alive": b.threads_alive, "VSZ growth (MiB)": b.vsz_delta_kib / 1024,
        "RSS growth (MiB)": b.rss_delta_kib / 1024})
    return out.set_index(["N", "burst"])


def burst_text(result: Result) -> str:
    fit = result.summary.get("burst_fit", {})
    if "create_total_ns" not in fit:
        return "Too few complete bursts for a fitted slope."
    c, w = fit["create_total_ns"], fit.get("wall_ns")
    text = (f"Creating N threads that stay alive costs "
            f"**{_show('launch_burst_create_slope_ns', result)} per "
            f"thread** (slope; 95% CI {c['slope_ci95_low'] / 1000:.1f} to "
            f"{c['slope_ci95_high'] / 1000:.1f}, R² {c['r2']:.3f}, {c['n']} bursts)")
    if w:
        text += (f"; with the release and the joins, "
                 f"**{_show('launch_burst_wall_slope_ns', result)} per "
                 f"thread** (95% CI {w['slope_ci95_low'] / 1000:.1f} to "
                 f"{w['slope_ci95_high'] / 1000:.1f})")
    serial = _serial_thread_create(result)
    if serial:
        text += (f". One at a time, with each thread joined before the next, a create took "
                 f"{_show('launch_serial_thread_create_mean_ns', result)} on average. Both "
                 "make a kernel task per thread; in a burst every thread is still alive "
                 "when the next is created, so no create can reuse the stack of a joined "
                 "thread, as a one-at-a-time create can, and the process's memory map "
                 "grows with each. How much of the difference each accounts for is not "
                 "measured here")
    return text + "."


C10_ROWS = (("user (s)", "user_s", 1.0, "c10_million_threads_user_s"),
            ("sys (s)", "sys_s", 1.0, "c10_million_threads_sys_s"),
            ("max RSS (MiB)", "max_rss_kib", 1 / 1024, "c10_million_threads_rss_mib"))


def c10_table(result: Result | None = None, data_dir: Any = None) -> pd.DataFrame:
    """This machine's one million threads beside C10 (threads) and C11 (goroutines).

    This machine's column is the C10 findings (``c10_million_threads_*``): notebook 02's
    largest count of 2 MiB-stack threads sleeping one second, scaled linearly to
    1,000,000 (computed, not measured), the numbers the claims read. ``result`` (this
    notebook's launch run) is not needed: its bursts of empty threads are not C10's setup.
    """
    pub10 = claims.values_for("C10").set_index("quantity")["value"]
    pub11 = claims.values_for("C11").set_index("quantity")["value"]

    def published(values: pd.Series, key: str, factor: float) -> str:
        v = values.get(key)
        return "-" if v is None or pd.isna(v) else findings.number(float(v) * factor, "auto")

    found = {name: findings.get(name, data_dir) for *_, name in C10_ROWS}
    first = found[C10_ROWS[0][3]]
    out = []
    for label, key, factor, name in C10_ROWS:
        q = found[name]
        out.append({"quantity": label,
                    "this machine: C threads with 2 MiB stacks, scaled to 1,000,000 (computed)":
                        findings.span(q, q.number()) if q.measured else "not measured",
                    "C10: 1,000,000 Rust threads (S1)": published(pub10, key, factor),
                    "C11: 1,000,000 goroutines (S1)": published(pub11, key, factor)})
    table = pd.DataFrame(out).set_index("quantity")
    table.attrs["note"] = (str(first.extra.get("label", "computed by scaling"))
                           if first.measured else f"not measured: {first.missing}")
    return table


def conclusion_text(result: Result, data_dir: Any = None) -> str:
    thread = _series(result, "thread")
    fork = _series(result, "fork")
    if thread is None:
        return "No thread series in this run."
    text = (f"On this machine a thread's create call took "
            f"{_show('launch_thread_create_median_ns', result)} "
            f"and its whole empty life {_show('launch_thread_median_ns', result)} (medians), "
            "flat in the parent's memory")
    if fork is not None:
        text += (f"; a fork from a small parent took "
                 f"{_show('launch_fork_create_median_ns', result)} for the "
                 f"call and {_show('launch_process_median_ns', result)} for the whole life")
        fit = result.summary.get("memory_fit", {}).get("fork")
        if fit:
            text += (f", plus {_show('launch_fork_create_slope_ns', result)} per MiB the "
                     "parent holds")
    # For scale, the 64 KiB memcpy is one of notebook 04's yardsticks: it is printed
    # there, once, because this page is drawn before that notebook has measured it.
    size = findings.parameter("memcpy_yardstick", "64 KiB")
    return text + (f". For scale, notebook 4 times a {size} memcpy among its yardsticks. "
                   "vfork, clone(CLONE_VM) and posix_spawn avoid copying the page tables; "
                   "posix_spawn pays for an execve instead. The next notebook measures "
                   "switching between threads that already exist.")


def growth_table(growth: Result) -> pd.DataFrame:
    """C09's repeats: per kind, the median create time at each parent size (µs, median
    over the repeats) and the median over repeats of the ratio 8 MiB / 0 MiB."""
    frame = growth.tables["repeats"]
    sizes = sorted(set(frame.parent_touch_mib))
    rows = []
    for kind, grp in frame.groupby("kind", sort=False):
        wide = grp.pivot(index="repeat", columns="parent_touch_mib", values="create_ns_p50")
        row: dict[str, Any] = {"kind": kind, "repeats": len(wide)}
        for mib in sizes:
            row[f"create at {mib} MiB (µs)"] = tables.format_number(wide[mib].median() / 1000)
        if len(sizes) >= 2:
            ratio = (wide[sizes[-1]] / wide[sizes[0]]).median()
            row[f"{sizes[-1]} MiB / {sizes[0]} MiB"] = f"{ratio:.2f}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("kind")
