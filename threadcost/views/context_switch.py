"""Figures, tables and the explorer of the context-switch and echo experiments."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import claims, findings, textout, vocabulary
from threadcost.errors import ParameterError
from threadcost.experiments.context_switch import checks as cs
from threadcost.results import Result
from threadcost.views.more_sources import reading_text

US = 1e-3  # ns -> µs
TASK_STYLE = {"threads": "-", "processes": "--"}
MECH_ORDER = list(cs.MECHANISMS)


def _colors() -> dict[str, Any]:
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {m: cycle[i % len(cycle)] for i, m in enumerate(MECH_ORDER)}


def distributions_figure(sweep_result: Result) -> plt.Figure:
    """ECDF of the round trip per mechanism (colour) and task kind (line style),
    one panel per placement, log time axis."""
    q = sweep_result.tables["quantiles"]
    places = [p for p in cs.PLACEMENTS if p in set(q.placement)]
    fig, axes = plt.subplots(1, len(places), figsize=(4.2 * len(places), 4.2), sharey=True,
                             squeeze=False)
    colors = _colors()
    body = q[(q["quantile"] >= 0.001) & (q["quantile"] <= 0.99)]
    x_lo, x_hi = body.round_trip_ns.min() * US * 0.8, body.round_trip_ns.max() * US * 2
    for ax, place in zip(axes[0], places, strict=True):
        sub = q[q.placement == place]
        for (mech, kind), g in sub.groupby(["mechanism", "tasks"], sort=False):
            ax.plot(g.round_trip_ns * US, g["quantile"], color=colors[mech],
                    ls=TASK_STYLE[kind], lw=1.6, label=f"{mech}, {kind}")
        ax.set_xscale("log")
        ax.set(title=vocabulary.words(place), xlabel="round trip (µs, log scale)")
        ax.set_xlim(x_lo, x_hi)
        ax.set_ylim(0, 1.0)
    axes[0][0].set_ylabel("share of round trips at or below")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, frameon=False,
               bbox_to_anchor=(0.5, -0.12))
    fig.suptitle("Round trip (two hops) per mechanism and placement\n(time axis cut at twice "
                 "the largest p99; the tails are in the table)", fontweight="bold")
    fig.tight_layout()
    return fig


def percentiles_table(sweep_result: Result) -> pd.DataFrame:
    """Per configuration: round trip percentiles, measured switches per round trip,
    per-switch median, in µs."""
    c = sweep_result.tables["configs"]
    out = pd.DataFrame({
        "placement": c.placement.map(vocabulary.words), "mechanism": c.mechanism,
        "tasks": c.tasks,
        "round trip p50 (µs)": c.round_trip_p50_ns * US,
        "p90 (µs)": c.round_trip_p90_ns * US, "p99 (µs)": c.round_trip_p99_ns * US,
        "max (µs)": c.round_trip_max_ns * US,
        "switches / round trip": c.switches_per_round_trip,
        "per counted switch p50 (µs)": c.switch_p50_ns * US,
        "CPUs seen": c.cpus_seen,
    })
    return out.set_index(["placement", "mechanism", "tasks"])


def skipped_text(sweep_result: Result) -> str:
    """One line per placement the machine could not provide, with the reason."""
    by_place: dict[str, str] = {}
    for row in sweep_result.summary["skipped"]:
        by_place.setdefault(row["placement"], row["reason"])
    return "\n".join(f"- *Not run here*: {vocabulary.words(place)} (every mechanism and task "
                     f"kind): {textout.md_text(textout.groups_in_words(reason))}."
                     for place, reason in by_place.items())


def pair_text(sweep_result: Result) -> str:
    """Which two CPUs "another CPU" used and how they relate (runs stored before the
    pair was recorded: empty)."""
    pair = sweep_result.summary.get("cross_cpu_pair")
    if not pair or "cross-cpu" not in sweep_result.params.get("placements", []):
        return ""
    return f"Another CPU: the two sides ran on {textout.md_text(pair)}."


def switch_count_text(sweep_result: Result, tolerance: float = 0.1) -> str:
    """Markdown naming the configurations whose measured switches per round trip
    differ from 2 by more than ``tolerance`` (generated from the data)."""
    c = sweep_result.tables["configs"]
    odd = c[(c.switches_per_round_trip - 2).abs() > tolerance]
    if odd.empty:
        return (f"Every configuration counted two switches per round trip (within "
                f"{tolerance:g}), so the time per counted switch is the paper's switch, half "
                "a round trip, throughout.")
    items = "; ".join(f"{r.mechanism} ({r.tasks}, {vocabulary.words(r.placement)}) "
                      f"**{r.switches_per_round_trip:.2f}**" for r in odd.itertuples())
    return (f"Configurations that did not count two switches per round trip (by more than "
            f"{tolerance:g}): {items}. Their times per counted switch (in the tables) divide "
            "the round trip by the count measured; the paper's switch stays half a round "
            "trip.")


def baselines_table(sweep_result: Result) -> pd.DataFrame:
    """Baselines per placement (ns per operation)."""
    b = sweep_result.tables["baselines"]
    if b.empty:
        return b
    out = b[["placement", "baseline", "min", "p50", "p90", "p99", "max"]].copy()
    out["baseline"] = out["baseline"].map(baseline_name)
    out["placement"] = out["placement"].map(vocabulary.words)
    return out.set_index(["placement", "baseline"])


_BASELINE_NAMES = {"timer": "one clock read (the timer)",
                   "getcpu": "getcpu (vDSO)",
                   "empty_syscall": "empty system call",
                   "lock_unlock": "mutex lock + unlock, uncontended"}


def baseline_name(name: str) -> str:
    """A stored baseline's name in words: ``self_hop_pipe`` is "lone hop: pipe"."""
    if name.startswith("self_hop_"):
        return f"lone hop: {name.removeprefix('self_hop_')}"
    return _BASELINE_NAMES.get(name, name.replace("_", " "))


def unpinned_split_figure(result: Result) -> plt.Figure:
    """Histogram (log bins) of an unpinned run's round trips, split by whether
    both sides ran on the same CPU for that round trip: the source of bimodality."""
    s = result.tables["samples"]
    together = s.cpu_a == s.cpu_b
    rt = s.round_trip_ns.to_numpy(dtype=float) * US
    lo, hi = max(rt.min(), 1e-3), rt.max()
    bins = np.geomspace(lo, hi * 1.001, 80)
    fig, ax = plt.subplots()
    for mask, label in ((together, "both sides on the same CPU"),
                        (~together, "sides on different CPUs")):
        if mask.any():
            ax.hist(rt[mask.to_numpy()], bins=bins, alpha=0.65,
                    label=f"{label} ({mask.mean():.1%})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    p = result.params
    ax.set(xlabel="round trip (µs, log scale)", ylabel="round trips (log scale)",
           title=f"Unpinned {p['mechanism']} ping-pong ({p['tasks']}): where each round "
                 "trip ran")
    ax.legend(loc="upper right")
    return fig


def working_set_figure(ws_result: Result) -> plt.Figure:
    """Left: round trip minus the two warm touches vs working set per side.
    Right: system CPU time per round trip (both sides). Threads vs processes."""
    pts = ws_result.tables["points"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (kind, g) in enumerate(pts.groupby("tasks", sort=False)):
        g = g.sort_values("working_set_kib")
        x = g.working_set_kib.clip(lower=1)
        color = cycle[i % len(cycle)]
        left.plot(x, g.round_trip_minus_touch_p50_ns * US, marker="o", ls=TASK_STYLE[kind],
                  color=color, label=f"{kind}: round trip - 2 x touch (p50)")
        left.plot(x, g.round_trip_p50_ns * US, marker=".", ls=":", alpha=0.6, color=color,
                  label=f"{kind}: round trip as measured (p50)")
        right.plot(x, g.sys_ns_per_round_trip * US, marker="o", ls=TASK_STYLE[kind],
                   color=color, label=kind)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("working set written per side per hop (KiB, log; 0 drawn at 1)")
    left.set_yscale("log")
    left.set(ylabel="µs per round trip (log scale)",
             title="Cost beyond touching the working set")
    right.set(ylabel="system CPU µs per round trip (both sides)",
              title="Kernel time (getrusage)")
    left.legend(fontsize=8, loc="upper left")
    right.legend(loc="upper left")
    fig.tight_layout()
    return fig


def working_set_table(ws_result: Result) -> pd.DataFrame:
    pts = ws_result.tables["points"]
    out = pd.DataFrame({
        "working set (KiB)": pts.working_set_kib, "tasks": pts.tasks,
        "round trips": pts.iterations,
        "round trip p50 (µs)": pts.round_trip_p50_ns * US,
        "touch once p50 (µs)": pts.touch_p50_ns * US,
        "round trip - 2 touches (µs)": pts.round_trip_minus_touch_p50_ns * US,
        "switches / round trip": pts.switches_per_round_trip,
        "sys µs / round trip": pts.sys_ns_per_round_trip * US,
        "user µs / round trip": pts.user_ns_per_round_trip * US,
    })
    return out.set_index(["working set (KiB)", "tasks"])


def echo_figure(echo_result: Result) -> plt.Figure:
    """Echo iterations per second per placement (mean of the runs, the statistic of the
    findings ``echo_*_rate_mean_per_s``; whiskers: slowest and fastest run) with C03's
    published rates as lines."""
    rows = echo_result.tables["repeats"]
    names = list(echo_result.summary["placements"])
    per = rows.groupby("placement").rate_per_s
    mean, low, high = per.mean(), per.min(), per.max()
    mid = np.array([mean[n] for n in names])
    lo = mid - np.array([low[n] for n in names])
    hi = np.array([high[n] for n in names]) - mid
    fig, ax = plt.subplots()
    ax.bar([vocabulary.words(n) for n in names], mid / 1e3, yerr=[lo / 1e3, hi / 1e3],
           capsize=6, color="#4c72b0", label="this machine (mean of runs)")
    pub = claims.values_for("C03").set_index("quantity")["value"]
    ax.axhline(pub["echo_pinned_per_s"] / 1e3, color="#dd8452", ls="--",
               label="C03 published: pinned")
    ax.axhline(pub["echo_unpinned_per_s"] / 1e3, color="#55a868", ls=":",
               label="C03 published: unpinned")
    ax.set(ylabel="thousand echoes per second", xlabel="placement of the two threads",
           title="Pipe echo rate (one echo = two hops, two switches)")
    ax.legend(loc="center right", fontsize=9)
    return fig


def echo_text(echo_result: Result, data_dir: Any = None, saved: bool = True) -> str:
    """The echo rates and C03's ratio: the findings (mean over repeats), read from the
    stored runs once ``echo_result`` is stored (``saved``), else from ``echo_result``
    itself. Pooled over several stored runs, each number says so, and this run's own
    rates (what the figure draws) follow under their own names."""
    results = None if saved else [echo_result]

    def show(name: str) -> str:
        return findings.markdown(name, data_dir, results=results, bold=True)

    pinned = findings.get("echo_pinned_rate_mean_per_s", data_dir, results=results)
    text = (f"Pinned to one CPU the echo ran at {show('echo_pinned_rate_mean_per_s')} "
            f"(mean of {pinned.n} repeat{'s' if pinned.n != 1 else ''}), unpinned at "
            f"{show('echo_unpinned_rate_mean_per_s')}: unpinned / pinned = "
            f"{show('echo_unpinned_over_pinned_mean_ratio')} (S0 saw about 0.5).")
    if pinned.pooled:  # the figure draws this run: its own numbers too, by their own names
        own = [findings.of_this_run(name, [echo_result]) for name in
               ("echo_pinned_rate_mean_per_s", "echo_unpinned_rate_mean_per_s")]
        text += (f" This run alone, as the figure draws it: {findings.show(own[0])} pinned "
                 f"and {findings.show(own[1])} unpinned.")
    return text


def explorer(results: dict[tuple[str, str, str], Result] | None = None,
             iterations: int = 5000) -> Any:
    """Choose mechanism, placement and task kind: the round-trip ECDF and the
    percentiles redraw. Configurations measured by the notebook are shown as
    measured; any other is measured now with ``iterations`` round trips."""
    import ipywidgets as w
    from IPython.display import Markdown, display

    # The explorer measures on a reader's request: only then are the kernels loaded.
    from threadcost.experiments.context_switch.run import run

    cache = dict(results or {})
    usable, missing = [], []
    for p in cs.PLACEMENTS:  # only the placements this machine can provide are offered
        try:
            cs.choose_cpus(p)
            usable.append(p)
        except ParameterError as exc:
            missing.append(f"{vocabulary.words(p)} ({exc.allowed})")
    mech = w.Dropdown(options=MECH_ORDER, value="pipe", description="mechanism")
    place = w.Dropdown(options=[(vocabulary.words(p), p) for p in usable],
                       value=usable[0], description="placement")
    kind = w.ToggleButtons(options=list(cs.TASKS), value="threads", description="tasks")
    if missing:
        display(Markdown("Not offered on this machine: " + "; ".join(missing) + "."))

    def draw(mechanism: str, placement: str, tasks: str) -> None:
        key = (mechanism, placement, tasks)
        try:
            if key not in cache:
                cache[key] = run(mechanism, placement, tasks, iterations,
                                    iterations // 10, baselines=False)
        except ValueError as exc:  # ParameterError: a placement this machine lacks
            display(Markdown(textout.md_text(str(exc))))
            return
        r = cache[key]
        rt = np.sort(r.tables["samples"].round_trip_ns.to_numpy(dtype=float)) * US
        fig, ax = plt.subplots(figsize=(6.5, 3.6))
        ax.plot(rt, np.arange(1, rt.size + 1) / rt.size, lw=1.8)
        ax.set_xscale("log")
        ax.set(xlabel="round trip (µs, log scale)", ylabel="share at or below",
               title=f"{mechanism}, {placement}, {tasks}: {rt.size:,} round trips")
        plt.show()
        plt.close(fig)
        s = r.summary
        rows = {name: {k: s[name][k] * US for k in ("min", "p50", "p90", "p99", "p999",
                                                     "max")}
                for name in ("round_trip_ns", "switch_ns") if s[name]["n"]}
        table = pd.DataFrame(rows).T.round(2)
        table.index = ["round trip (µs)", "per counted switch (µs)"][:len(table)]
        display(table)
        display(Markdown(f"Switches per round trip (measured): "
                         f"{s['switches_per_round_trip']:.2f}; CPUs seen: "
                         f"{textout.md_text(', '.join(str(c) for c in s['cpus_seen']))}"))

    return w.interactive(draw, mechanism=mech, placement=place, tasks=kind)


def placement_table(placed: Result, machine_id: str | None = None,
                    data_dir: Any = None) -> pd.DataFrame:
    """C02's repeated pairs, per mechanism: one switch pinned and unpinned (ns, half a
    round trip) and unpinned / pinned, each as the verdicts below read it (C01's and
    C02's readings: the mean over repeats, the ratio's geometric mean over the pairs,
    with 95% intervals), each value marked with its reading's name: the table and the
    verdicts print one value per quantity."""
    frame = placed.tables["repeats"]
    rows = []
    for mech in dict.fromkeys(frame.mechanism):
        cells: dict[str, Any] = {"mechanism": mech,
                                 "pairs": int(frame[frame.mechanism == mech].repeat.nunique())}
        for column, words in (
                ("pinned: one switch (ns, mean over repeats [95% interval])",
                 f"One {mech} switch, both threads pinned"),
                ("unpinned: one switch (ns, mean over repeats [95% interval])",
                 f"One {mech} switch, unpinned"),
                ("unpinned / pinned (geometric mean of pairs [95% interval])",
                 f"{mech.capitalize()}: unpinned switch / pinned switch")):
            try:
                claim_id = claims.claim_reading(words)
                got = claims.measure(claim_id, words, machine_id, data_dir, [placed])
            except KeyError:  # a mechanism no claim judges
                claim_id, got = "", None
            cells[column] = (reading_text(got, name=claims.reading_name(claim_id, words),
                                          interval="")
                             if getattr(got, "value", None) is not None else "—")
        rows.append(cells)
    return pd.DataFrame(rows).set_index("mechanism")


def perf_rounds_table(perf: Result) -> pd.DataFrame:
    """The perf cross-check, one row per round: each tool's mean round trip of that round,
    in ns (the unit in each column's name; the stored table's round_trip_ns)."""
    frame = perf.tables["rounds"]
    wide = frame.pivot(index="round", columns="tool", values="round_trip_ns").round(0)
    wide.columns = [f"{str(tool).replace(' (whole-run mean)', ', the run timed whole')}: "
                    "mean round trip (ns)" for tool in wide.columns]
    wide.index = pd.Index([int(r) + 1 for r in wide.index], name="round")
    return wide
