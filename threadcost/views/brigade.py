"""Figures, tables and generated prose of notebook 07 (the I/O bucket brigade)."""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from threadcost import findings, vocabulary
from threadcost.claims import published
from threadcost.experiments.brigade.checks import BASELINE
from threadcost.findings.brigade import (
    PLACES,
    S5_TASKS,
    net_name,
    net_per_hop,
    peer_name,
    trend_name,
)
from threadcost.findings.brigade_pinning import (
    CPU_PARTS,
    CROSS_ACCOUNTED,
    CROSS_SHARE,
    UNPINNING_ADDED,
    cpu_part_name,
    cross_cpu_name,
)
from threadcost.results import Result
from threadcost.store import datastore

LABELS = {"thread": "threads (blocking read)", "epoll": "epoll loop, one thread",
          "one-thread": "one thread, no switch (baseline)",
          "goroutine": "goroutines (Go poller)"}
STYLE = {"thread": ("#0072B2", "o", "-"), "epoll": ("#009E73", "s", "-"),
         "goroutine": ("#D55E00", "^", "-"), "one-thread": ("#555555", "", "--")}
SHORT = {"thread": "threads", "epoll": "epoll loop", "one-thread": "one thread (baseline)",
         "goroutine": "goroutines"}
PLACEMENT_TITLES = {"same-cpu": "every task on one CPU", "unpinned": "unpinned"}
PLACEMENT_HEADS = {"same-cpu": "Every task on one CPU", "unpinned": "Unpinned"}


def _net_of(result: Result, r: dict[str, Any]) -> float:
    """The findings' one definition of the net per hop (mean over repeats of the repeat's
    median hop minus the one-thread median hop; C18 reads it at 500 tasks)."""
    repeats = result.tables.get("runs")
    if r["kind"] == BASELINE:
        return 0.0
    got = net_per_hop(repeats, r["kind"], r["tasks"], r["placement"]) \
        if repeats is not None and len(repeats) else None
    return got[0] if got is not None else np.nan


def _frame(result: Result) -> pd.DataFrame:
    rows = []
    for r in result.summary["results"]:
        d = r.get("per_hop_ns")
        if not d:
            continue
        rows.append({"kind": r["kind"], "tasks": r["tasks"], "placement": r["placement"],
                     **{k: d[k] for k in ("min", "p50", "p99", "max", "mean")},
                     "net": _net_of(result, r)})
    return pd.DataFrame(rows, columns=["kind", "tasks", "placement", "min", "p50", "p99",
                                       "max", "mean", "net"])


def _plain(value: float, _pos: Any = None) -> str:
    """Tick labels as plain numbers (1,000 and 0.2, never 1e3)."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def per_hop_figure(result: Result) -> plt.Figure:
    """Per-hop p50 vs N, both axes logarithmic, one panel per placement; bars
    span min..p99 over every timed trip."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    frame = _frame(result)
    placements = [p for p in result.params["placement"] if p in set(frame.placement)] or \
        list(result.params["placement"])
    fig, axes = plt.subplots(1, len(placements), figsize=(6.2 * len(placements), 4.4),
                             sharey=True, squeeze=False)
    for ax, placement in zip(axes[0], placements, strict=True):
        sub = frame[frame.placement == placement]
        kinds = list(result.params["kinds"])
        for i, kind in enumerate(kinds):
            k = sub[sub.kind == kind].sort_values("tasks")
            if k.empty:
                continue
            color, marker, line = STYLE.get(kind, ("#000000", "o", "-"))
            dodge = 1.07 ** (i - (len(kinds) - 1) / 2)  # keeps the bars apart on a log axis
            ax.errorbar(k.tasks * dodge, k.p50 / 1000, yerr=[(k.p50 - k["min"]) / 1000,
                                                     (k.p99 - k.p50) / 1000],
                        color=color, marker=marker or None, linestyle=line, capsize=3,
                        linewidth=2 if kind != BASELINE else 1.5, label=LABELS.get(kind, kind))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(_plain))
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(_plain))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("tasks in the brigade, N (log scale)")
        ax.set_title(PLACEMENT_TITLES.get(placement, placement))
    axes[0][0].set_ylabel("time per hop, µs, log scale\n(p50; bar: min to p99)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4),
               fontsize="small", bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("A byte passed along N tasks by pipes: time per hop")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def memory_figure(result: Result) -> plt.Figure:
    """Memory per task by kind: resident (RSS) and, for the C kinds, kernel side."""
    mem = pd.DataFrame(result.summary["memory"])
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    if mem.empty:
        ax.text(0.5, 0.5, "too few brigade sizes for a slope (needs 2 or more)",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    placement = "same-cpu" if "same-cpu" in set(mem.placement) else mem.placement.iloc[0]
    mem = mem[mem.placement == placement].set_index("kind")
    kinds = [k for k in result.params["kinds"] if k in mem.index]
    x = np.arange(len(kinds))
    rss = [_num(mem.loc[k, "rss_per_task_kib"]) for k in kinds]
    kern = [_num(mem.loc[k, "kernel_per_task_kib"]) for k in kinds]
    bars = [ax.bar(x - 0.2, rss, width=0.4, color="#0072B2", yerr=_ci_err(mem, kinds, "rss"),
                   capsize=3, label="resident (RSS) per task"),
            ax.bar(x + 0.2, kern, width=0.4, color="#E69F00",
                   yerr=_ci_err(mem, kinds, "kernel"), capsize=3,
                   label="kernel side per task (kernel stacks, page tables, slab)")]
    for b in bars:
        ax.bar_label(b, labels=["" if math.isnan(v.get_height()) else
                                f"{v.get_height():,.1f}" for v in b],
                     padding=2, fontsize="x-small")
    for i in range(len(kinds)):
        if math.isnan(kern[i]):
            ax.text(x[i] + 0.2, 0.1, "not\nmeasured", ha="center", va="bottom",
                    fontsize="x-small")
    ax.set_xticks(x, [SHORT.get(k, k).replace(" (", "\n(") for k in kinds])
    ax.set_ylabel("KiB per task (slope over N)")
    ax.set_title(f"Memory per task in the brigade ({PLACEMENT_TITLES.get(placement, placement)})")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def _ci_err(mem: pd.DataFrame, kinds: list[str], what: str) -> np.ndarray:
    """Asymmetric error bars from a slope's 95% CI (0 where there is none)."""
    out = np.zeros((2, len(kinds)))
    for i, k in enumerate(kinds):
        mid = _num(mem.loc[k, f"{what}_per_task_kib"])
        lo, hi = _num(mem.loc[k, f"{what}_ci95_low"]), _num(mem.loc[k, f"{what}_ci95_high"])
        if not any(math.isnan(v) for v in (mid, lo, hi)):
            out[:, i] = [max(mid - lo, 0.0), max(hi - mid, 0.0)]
    return out


def _num(v: Any) -> float:
    return float("nan") if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _styled(frame: pd.DataFrame, formats: dict[str, str]) -> Styler:
    return frame.style.hide(axis="index").format(formats, na_rep="-")


def per_hop_table(result: Result) -> Styler:
    """One row per kind, N and placement; every time in ns per hop."""
    rows = []
    for r in result.summary["results"]:
        d = r.get("per_hop_ns") or {}
        note = r.get("not_run") or (r.get("limit_hit") or {}).get("limit", "")
        rows.append({"kind": LABELS.get(r["kind"], r["kind"]), "tasks (N)": r["tasks"],
                     "placement": vocabulary.words(r["placement"]),
                     "min (ns/hop)": d.get("min"), "p50 (ns/hop)": d.get("p50"),
                     "p99 (ns/hop)": d.get("p99"), "max (ns/hop)": d.get("max"),
                     "mean (ns/hop)": d.get("mean"),
                     "net of baseline, mean of repeats (ns/hop)":
                         _net_of(result, r) if d else None,
                     "note": note})
    frame = pd.DataFrame(rows)
    if not frame.empty and not frame["note"].astype(bool).any():
        frame = frame.drop(columns=["note"])  # no run was cut short or skipped
    num = {c: "{:,.0f}" for c in frame.columns if "ns/hop" in c}
    num["tasks (N)"] = "{:,}"
    return _styled(frame, num)


def memory_table(result: Result) -> Styler:
    rows = []
    for m in result.summary["memory"]:
        rows.append({"kind": LABELS.get(m["kind"], m["kind"]),
                     "placement": vocabulary.words(m["placement"]),
                     "runs": m["runs"], "largest N": m["max_tasks"],
                     "RSS per task (KiB)": m["rss_per_task_kib"],
                     "RSS 95% CI (KiB)": _ci(m["rss_ci95_low"], m["rss_ci95_high"]),
                     "RSS fit R²": m["rss_r2"],
                     "kernel per task (KiB)": m["kernel_per_task_kib"],
                     "kernel 95% CI (KiB)": _ci(m["kernel_ci95_low"], m["kernel_ci95_high"]),
                     "kernel fit R²": m["kernel_r2"]})
    frame = pd.DataFrame(rows, columns=["kind", "placement", "runs", "largest N",
                                        "RSS per task (KiB)", "RSS 95% CI (KiB)", "RSS fit R²",
                                        "kernel per task (KiB)", "kernel 95% CI (KiB)",
                                        "kernel fit R²"])
    return _styled(frame, {"RSS per task (KiB)": "{:,.2f}", "kernel per task (KiB)": "{:,.2f}",
                           "RSS fit R²": "{:.3f}", "kernel fit R²": "{:.3f}",
                           "largest N": "{:,}"})


def _ci(lo: Any, hi: Any) -> str:
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "-"
    return f"{lo:,.2f} to {hi:,.2f}"


def _net(frame: pd.DataFrame, kind: str, placement: str) -> pd.Series:
    sub = frame[(frame.kind == kind) & (frame.placement == placement)]
    return sub.set_index("tasks").net.dropna()


def answer_text(result: Result) -> str:
    """The two questions, answered from this run's numbers (each a named finding:
    ``threadcost.findings.brigade``, read from this run)."""
    def q(name: str) -> findings.Quantity:
        return findings.of_results(name, [result])

    def times(kind: str, tag: str) -> str:
        lo, hi = (q(f"brigade_thread_over_{kind}_net_hop_{tag}_{s}_over_n_ratio")
                  for s in ("min", "max"))
        shown = [findings.span(x, x.number() + "x") for x in (lo, hi)]
        return shown[0] if lo.number() == hi.number() else f"{shown[0]} to {shown[1]}"

    def spread(kind: str, tag: str) -> str:
        lo, hi = (q(f"brigade_{kind}_net_hop_{tag}_{s}_over_n_mean_ns") for s in ("min", "max"))
        return f"{findings.span(lo, lo.number())} to {findings.span(hi)}"

    frame = _frame(result)
    if frame.empty:
        return "No brigade completed in this run, so there is nothing to answer from."
    kinds = set(frame.kind)
    parts: list[str] = []
    if "thread" not in kinds or BASELINE not in kinds:
        return ("The answer needs the threads and the one-thread baseline; this run "
                "measured " + ", ".join(SHORT.get(k, k) for k in sorted(kinds)) + ".")
    for placement in result.params["placement"]:
        thread = _net(frame, "thread", placement)
        if thread.empty or placement not in PLACES:
            continue
        tag = PLACES[placement][0]
        where = PLACEMENT_HEADS.get(placement, placement)
        sentences = []
        spans: list[pd.Index] = []
        for kind in ("goroutine", "epoll"):
            other = _net(frame, kind, placement)
            common = thread.index.intersection(other.index)
            if common.empty:
                continue
            ratios = (thread[common] / other[common].clip(lower=1.0)).astype(float)
            lo, hi = float(ratios.min()), float(ratios.max())
            label, verb_s = (("goroutines", "keep") if kind == "goroutine"
                             else ("the epoll loop", "keeps"))
            verb = (f"{verb_s} the advantage" if lo > 1.25 else
                    "loses it" if hi < 1.25 and kind == "epoll" else
                    "lose it" if hi < 1.25 else f"{verb_s} it only in part")
            spans.append(common)
            sentences.append(
                f"{label} {spread(kind, tag)}, so a thread hop costs {times(kind, tag)} as "
                f"much: {label} {verb}")
        if sentences:
            every = spans[0].union(spans[-1])
            parts.append(
                f"**{where}** (net cost per hop, N = {int(every.min()):,} to "
                f"{int(every.max()):,}): threads {spread('thread', tag)}; "
                + "; ".join(sentences) + ".")
    trend = []
    placement = "same-cpu" if "same-cpu" in set(frame.placement) else frame.placement.iloc[0]
    for kind in result.params["kinds"]:
        sub = frame[(frame.kind == kind) & (frame.placement == placement)].sort_values("tasks")
        if len(sub) < 2 or placement not in PLACES:
            continue
        a, b = sub.iloc[0], sub.iloc[-1]
        first, last, change = (q(trend_name(kind, placement, w))
                               for w in ("smallest", "largest", "change"))
        trend.append(f"{LABELS.get(kind, kind)} {findings.span(first)} at N = "
                     f"{int(a.tasks):,} to {findings.span(last)} at N = {int(b.tasks):,} "
                     f"({findings.span(change)})")
    if trend:
        parts.append(f"**How it changes with N** ({PLACEMENT_TITLES.get(placement, placement)},"
                     " p50 per hop): " + "; ".join(trend) + ". Every task's stack, pipe and "
                     "kernel bookkeeping are touched once per trip, so a longer brigade touches "
                     "more memory between two visits to the same task; a cost that grows with N "
                     "is consistent with that (cache misses were not counted here).")
    limits = result.summary.get("limits") or []
    for lim in limits:
        parts.append(f"The {SHORT.get(lim['kind'], lim['kind'])} kind "
                     f"({vocabulary.words(lim['placement'])}) stopped at N = "
                     f"{lim['tasks']:,}: {lim['limit']} ({lim['tasks_ready']:,} tasks were "
                     f"set up; RLIMIT_NOFILE soft limit {lim['nofile_soft']:,}).")
    for kind, why in (result.summary.get("not_run") or {}).items():
        parts.append(f"The {SHORT.get(kind, kind)} kind was not run: "
                     f"{vocabulary.bare_reason(why)}.")
    return "\n\n".join(parts)


def _pinning_text(q: Any) -> str:
    """S5's "I don't know why" (its pinned thread brigade beat the unpinned one), in this
    run's numbers: what unpinning adds, the wake-ups across CPUs the run counted and what
    they account for, and where a pinned hop's time goes."""
    added, accounted = q(UNPINNING_ADDED), q(CROSS_ACCOUNTED)
    cross = [q(cross_cpu_name(p)) for p in ("unpinned", "same-cpu")]
    if not added.measured or not cross[0].measured:
        return (f"**Pinned against unpinned** (S5: \"I don't know why\"): "
                f"{findings.span(cross[0] if added.measured else added)}.")
    text = (f"**Pinned against unpinned** (S5's pinned thread brigade beat its unpinned one, "
            f"and S5 wrote \"I don't know why\"): here the unpinned Rust threads take "
            f"{findings.span(added)} per task per trip more than the pinned ones (negative: "
            f"less; mean over repeats); {findings.span(cross[0])} of the unpinned hops and "
            f"{findings.span(cross[1])} of the pinned ones woke a thread on another CPU than "
            "the one that wrote to it (counted by the run, each thread reading its CPU as its "
            "read returns)")
    if accounted.measured:
        share = q(CROSS_SHARE)
        text += (f"; at the extra cost of a wake-up across CPUs (notebook 4's yardsticks) they "
                 f"come to {findings.span(accounted)} per task per trip"
                 + (f", {findings.span(share)} of what unpinning adds" if share.measured
                    else ""))
    cpu = {part: q(cpu_part_name(part)) for part in CPU_PARTS}
    if all(c.measured for c in cpu.values()):
        text += (". Where a pinned hop's time goes (per task per trip, the timed trips' CPU "
                 f"time): {findings.span(cpu['user'])} in user code, "
                 f"{findings.span(cpu['system'])} in the kernel and "
                 f"{findings.span(cpu['off_cpu'])} off the CPU (the CPU ran other work, or "
                 "idled)")
    return text + "."


def conclusion_text(data_dir: Any = None, machine_id: str | None = None,
                    results: list[Result] | None = None) -> str:
    """What the page found, in this run's numbers: the findings of notebook 07 (net per hop
    at S5's 500 tasks; S5's own runtimes on the Rust peer), each read by name, and S5's
    published numbers (``data/published``, the claims' records) labelled published.
    ``results``: runs measured but not stored (``save = False``)."""
    def q(name: str) -> findings.Quantity:
        return findings.get(name, data_dir, machine_id, results)

    def show(got: findings.Quantity) -> str:
        return findings.span(got) + (f" {got.interval_text()}" if got.interval_text() else "")

    parts = []
    for placement, head in (("unpinned", "Driven by I/O readiness, unpinned"),
                            ("same-cpu", "Every task on one CPU")):
        thread, go, epoll = (q(net_name(k, placement)) for k in ("thread", "goroutine", "epoll"))
        if not thread.measured:
            parts.append(f"**{head}**: the thread brigade at {S5_TASKS} tasks was "
                         f"{findings.span(thread)}.")
            continue
        others = [(w, o) for w, o in (("a goroutine's", go), ("the epoll loop's", epoll))]
        said = "; ".join(f"{w} {show(o)}" for w, o in others)
        shown = [o for _, o in others if o.measured and o.high is not None]
        if shown and thread.low is not None and all(thread.low > o.high for o in shown):
            verdict = ("user-space tasks keep their advantage: the thread's interval lies "
                       "above theirs")
        elif shown and thread.high is not None and all(thread.high < o.low for o in shown
                                                         if o.low is not None):
            verdict = "the threads are the cheaper here"
        else:
            verdict = "the intervals overlap: no advantage either way is shown"
        parts.append(f"**{head}** ({S5_TASKS} tasks, net time per hop beyond the pipe calls, "
                     f"mean over repeats [95% interval]): a thread hop costs {show(thread)}; "
                     f"{said}: {verdict}.")
    rust = [q(peer_name("rust-thread", p)) for p in ("unpinned", "same-cpu")]
    # S5's Tokio: the default multi-thread runtime; a run stored before it: current_thread
    tokio = [q(peer_name("tokio-task-mt", p)) for p in ("unpinned", "same-cpu")]
    runtime = "Tokio's default multi-thread runtime, S5's"
    if not tokio[0].measured:
        tokio = [q(peer_name("tokio-task", p)) for p in ("unpinned", "same-cpu")]
        runtime = "Tokio's current_thread runtime; S5 ran the default multi-thread one"
    if rust[0].measured or tokio[0].measured:
        parts.append(f"**S5's own runtimes** (the Rust peer, {S5_TASKS} tasks, S5's net time "
                     f"per task per trip: a trip's mean time / {S5_TASKS} minus the one-thread "
                     "brigade's, mean over repeats [95% interval], as C18 and C20 judge it; on "
                     "S5's Unix socket pairs when stored, else pipes): Rust threads "
                     f"{show(rust[0])} unpinned and {show(rust[1])} on one CPU; Tokio tasks "
                     f"({runtime}) {show(tokio[0])} unpinned and {show(tokio[1])} on one CPU.")
    else:
        parts.append(f"**S5's own runtimes** were {findings.span(rust[0])}.")
    parts.append(_pinning_text(q))

    def pub(claim: str, quantity: str) -> str:
        return findings.published(claim, f"{published.value(claim, quantity) / 1000:g} µs")

    parts.append("**Published** (S5, not measured here: a 2020 laptop, Unix socket pairs): "
                 f"about {pub('C18', 'thread_switch_ns')} per switch between kernel threads "
                 f"and {pub('C19', 'async_switch_ns')} between async tasks when the switch is "
                 "not driven by I/O, both converging to about "
                 f"{pub('C20', 'io_driven_switch_ns')} when it is. The verdicts on C18-C23 "
                 "above read this page's runs.")
    return "\n\n".join(parts)


def reference_table(check: dict[str, Any]) -> Styler:
    if check.get("skipped"):  # the cross-check could not run here: one row says why
        return _styled(pd.DataFrame({"reference check": ["not run here"],
                                     "why": [_why(check["skipped"])]}), {})
    med = check["median_per_hop_ns"]
    rows = [{"kind": LABELS.get(kind, kind),
             "reference program (ns/hop)": med[f"reference/{kind}"],
             "threadcost kernel (ns/hop)": med[f"threadcost/{kind}"],
             "kernel / reference": check["ratio"][kind]} for kind in ("thread", "one-thread")]
    return _styled(pd.DataFrame(rows), {"reference program (ns/hop)": "{:,.0f}",
                                        "threadcost kernel (ns/hop)": "{:,.0f}",
                                        "kernel / reference": "{:.2f}"})


def _why(skipped: str) -> str:
    return vocabulary.bare_reason(skipped)


def reference_text(check: dict[str, Any], low: float = 0.67, high: float = 1.5) -> str:
    if check.get("skipped"):
        return (f"The reference check was not run here: {_why(check['skipped'])}. The "
                "brigade's own numbers above stand without it.")
    ok = all(low <= r <= high for r in check["ratio"].values())
    ratios = ", ".join(f"{SHORT.get(k, k)} {v:.2f}" for k, v in check["ratio"].items())
    return (f"Medians of {check['rounds']} alternating rounds, {check['tasks']:,} tasks pinned "
            f"to CPU {check['cpu']}, {check['iterations']:,} trips each (median trip / hops). "
            f"Kernel / reference: {ratios}: "
            + ("both inside" if ok else "**not** both inside")
            + f" [{low}, {high}].")


def save_run(result: Result, save: bool, data_dir: Any, fingerprint: dict[str, Any]) -> str:
    """Store the run (when ``save``) and say so without printing a machine path."""
    if not save:
        return "Not stored (save = False)."
    path = datastore.save_run(result, data_dir=data_dir, fingerprint=fingerprint)
    return f"Stored as experiment `{result.experiment}`, run `{path.name}`."
