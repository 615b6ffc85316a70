"""Tokens in flight (notebook 09): the cost per event against the tokens in flight, one
line per model, the crossing marked (a figure), the table behind it and the page's
answer, every number read from :mod:`threadcost.findings.readiness` by name (the
explorer: :mod:`threadcost.views.readiness_chart`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import findings, vocabulary
from threadcost.findings import readiness as found
from threadcost.results import Result

LABELS = found.NAMES


def _cost(result: Result) -> pd.DataFrame:
    cost = result.tables.get("cost")
    return cost if cost is not None else pd.DataFrame()


def chart_frame(result: Result) -> pd.DataFrame:
    """The figure's data: per model, placement and K, the median cost per event and its
    range over the repeats, in µs."""
    cost = _cost(result)
    if cost.empty:
        return pd.DataFrame(columns=["model", "placement", "tokens", "median_us", "min_us",
                                     "max_us", "repeats"])
    out = cost[["model", "placement", "repeats"]].copy()
    out["tokens"] = cost.tokens_in_flight
    out["model"] = out.model.map(lambda m: LABELS.get(m, m))
    for col, src in (("median_us", "ns_per_event_p50"), ("min_us", "ns_per_event_min"),
                     ("max_us", "ns_per_event_max")):
        out[col] = cost[src] / 1000
    return out


def cost_table(result: Result) -> pd.DataFrame:
    """Every number behind the figure: per model and K, the cost per event over the
    repeats (µs) and the medians of the counts per event."""
    cost = _cost(result)
    if cost.empty:
        return pd.DataFrame()
    out = pd.DataFrame({
        "model": cost.model.map(lambda m: LABELS.get(m, m)),
        "placement": cost.placement,
        "tasks N": cost.tasks.map("{:,}".format),
        "tokens K": cost.tokens_in_flight.map("{:,}".format),
        "repeats": cost.repeats,
        "median (µs)": (cost.ns_per_event_p50 / 1000).map("{:,.2f}".format),
        "fastest..slowest (µs)": [f"{a / 1000:,.2f}..{b / 1000:,.2f}" for a, b in
                                  zip(cost.ns_per_event_min, cost.ns_per_event_max,
                                      strict=True)],
        "CPU (µs)": (cost.cpu_ns_per_event_p50 / 1000).map("{:,.2f}".format),
        "system calls": cost.syscalls_per_event.map(_count),
        "switches": cost.switches_per_event.map(_count),
        "cross-CPU": cost.cross_cpu_per_event.map(_count),
        "events per wait": cost.events_per_wait.map(lambda v: f"{v:,.1f}" if v else "none"),
    })
    return out.set_index(["model", "tokens K"])


def _count(v: float) -> str:
    """A count per event as the page prints it: three significant digits, no exponent."""
    return findings.number(float(v), "sig3") if pd.notna(v) else "not counted"


def not_run_text(result: Result) -> str:
    """One line per model this machine did not run, with the reason, and the limits met."""
    lines = [f"- **{LABELS.get(m, m)}**: not run here: {vocabulary.bare_reason(why)}"
             for m, why in (result.summary.get("not_run") or {}).items()]
    by_words: dict[str, dict[str, int]] = {}
    for lim in result.summary.get("limits") or []:
        words = str(lim["limit"]).split("; measured with")[0]
        by_words.setdefault(words, {})[LABELS.get(lim["model"], lim["model"])] = int(
            lim["tasks_ready"])
    for words, made in by_words.items():
        tasks = ", ".join(f"{n:,} for {m}" for m, n in made.items())
        lines.append(f"- a limit narrowed the run: {words}; the tasks made: {tasks} "
                     f"(of {int(result.params['tasks']):,} asked)")
    return "\n".join(lines)


def answer_text(data_dir: Any = None, machine_id: str | None = None,
                results: list[Result] | None = None) -> str:
    """The page's answer in this run's numbers, each read by name from the findings.
    ``results``: runs measured but not stored (``save = False``)."""

    def q(name: str) -> findings.Quantity:
        return findings.get(name, data_dir, machine_id, results)

    def show(got: findings.Quantity) -> str:
        return findings.span(got)

    def times(got: findings.Quantity) -> str:
        return findings.span(got, f"{got.number()} times") if got.measured else show(got)

    tasks = q("readiness_tasks_count")
    if not tasks.measured:
        return f"Not measured on this machine: {tasks.missing}."
    thread_most = q("readiness_thread_most_tokens_median_ns")
    if not thread_most.measured:
        return f"Blocking threads: {findings.span(thread_most)}."
    beats = q("readiness_loop_beats_threads_from_tokens")
    cross = q("readiness_crossing_tokens")
    most = q("readiness_threads_over_loop_most_tokens_ratio")
    one = q("readiness_threads_over_loop_one_token_ratio")
    parts = []
    if beats.measured:
        loop = LABELS[beats.extra["loop"]] if beats.extra.get("loop") else "an event loop"
        k = beats.number()
        shown = findings.span(beats, f"{k} token{'' if k == '1' else 's'}")
        parts.append(f"**An event loop beats threads from {shown} in flight** on this "
                     f"machine, and at every larger K measured ({show(tasks)}; at that K the "
                     f"fastest loop was {loop}).")
    else:
        parts.append(f"**No event loop beats threads at the most tokens in flight here**: "
                     f"{beats.missing}.")
    if cross.measured:
        above = "the event loops" if cross.extra.get("faster_above") == "loop" else "threads"
        parts.append(f"The lines cross at about {show(cross)} (the dashed mark; above it "
                     f"{above} cost less per event).")
    else:
        said = str(cross.missing)
        parts.append(f"{said[0].upper()}{said[1:]}." if said.startswith("no crossing")
                     else f"The lines cannot be compared: {said}.")
    if most.measured:
        loop = LABELS[most.extra["loop"]]
        loop_most = q(f"readiness_{found.key(most.extra['loop'])}_most_tokens_median_ns")
        parts.append(
            f"At the most tokens in flight ({most.extra['tokens']:,}, every task holding "
            f"one) a thread's event costs {times(most)} the best loop's ({loop}): "
            f"{show(thread_most)} against {show(loop_most)}. "
            f"With one token in flight it costs {times(one)} the best loop's.")
        parts.append(_why(q, most.extra["loop"]))
    peers = []
    for model in (found.GOROUTINE, found.TOKIO):
        cost = q(f"readiness_{found.key(model)}_most_tokens_median_ns")
        if cost.measured:
            sw = q(f"readiness_{found.key(model)}_switches_per_event_median")
            peers.append(f"{LABELS[model]} {show(cost)} ({show(sw)} per event)")
    if peers:
        parts.append("The peers' user-space tasks, at the most tokens in flight: "
                     + "; ".join(peers) + ". Their runtimes poll the channels themselves, "
                     "so their waits are not counted here.")
    busy = _cpus_text(q, [found.THREAD, most.extra["loop"]] if most.measured
                      else [found.THREAD])
    if busy:
        parts.append(busy)
    return "\n\n".join(parts)


def _cpus_text(q: Any, first: list[str]) -> str:
    """How many CPUs each model kept busy at the most tokens (its CPU time per event /
    its wall time per event): a cost per event is wall time, so a model that handles
    events on several CPUs at once costs less per event than the CPU it spends."""
    said = []
    for model in [*first, found.GOROUTINE, found.TOKIO]:
        ratio = q(f"readiness_{found.key(model)}_cpus_busy_most_tokens_ratio")
        cpu = q(f"readiness_{found.key(model)}_cpu_most_tokens_median_ns")
        if ratio.measured and cpu.measured:
            said.append(f"{LABELS[model]} {findings.span(ratio)} ({findings.span(cpu)} of CPU "
                        f"per event)")
    if len(said) < 2:
        return ""
    return ("**CPUs at once.** A cost per event is wall time, so a model that handles "
            "events on several CPUs at once costs less per event than the CPU time it "
            "spends. At the most tokens in flight, its CPU time per event over its wall "
            "time per event: " + "; ".join(said) + ". The epoll and io_uring loops run on "
            "one thread.")


def _why(q: Any, loop: str) -> str:
    """The elementary counts per event at the most tokens, threads against ``loop``."""
    k = found.key(loop)
    name = LABELS[loop]
    t_calls, l_calls = (q(f"readiness_{m}_syscalls_per_event_median") for m in ("thread", k))
    t_sw, l_sw = (q(f"readiness_{m}_switches_per_event_median") for m in ("thread", k))
    t_x, l_x = (q(f"readiness_{m}_cross_cpu_per_event_median") for m in ("thread", k))
    batch = q(f"readiness_{k}_events_per_wait_most_tokens_median")
    batch_one = q(f"readiness_{k}_events_per_wait_one_token_median")
    return (f"**Why, counted by the same run** (per event, at the most tokens in flight): "
            f"system calls {findings.span(t_calls)} for threads against "
            f"{findings.span(l_calls)} for {name}; context switches counted by the kernel "
            f"{findings.span(t_sw)} against {findings.span(l_sw)}; cross-CPU wake-ups "
            f"{findings.span(t_x)} against {findings.span(l_x)}. The loop's wait returns "
            f"{findings.span(batch)} per call with every task holding a token, and "
            f"{findings.span(batch_one)} with one token in flight: the amortisation an "
            f"event loop is said to win by. A thread pays a read and a write per event "
            f"and, when its channel is empty, a switch to sleep and one to wake.")


def cost_figure(result: Result, crossing: findings.Quantity | None = None) -> Any:
    """The chart as a matplotlib Figure for build/figures/ (the same data and mark):
    cost per event (µs) against tokens in flight (log), one line per model."""
    import matplotlib.pyplot as plt

    data = chart_frame(result)
    places = list(dict.fromkeys(data.placement)) or ["unpinned"]
    fig, axes = plt.subplots(1, len(places), figsize=(6.4 * len(places), 4.2), sharey=True,
                             squeeze=False)
    for ax, place in zip(axes[0], places, strict=True):
        sub = data[data.placement == place]
        for model in found.MODELS:
            rows = sub[sub.model == LABELS[model]].sort_values("tokens")
            if rows.empty:
                continue
            ax.errorbar(rows.tokens, rows.median_us,
                        yerr=[rows.median_us - rows.min_us, rows.max_us - rows.median_us],
                        marker="o", capsize=3, label=LABELS[model])
        if crossing is not None and crossing.measured:
            ax.axvline(crossing.value, color="black", linestyle="--", linewidth=1)
            ax.annotate(f"crossing: {crossing.number()} tokens", (crossing.value, 0.97),
                        xycoords=("data", "axes fraction"), xytext=(4, 0),
                        textcoords="offset points", va="top", fontsize=8)
        ax.set_xscale("log")
        ax.set(xlabel="tokens in flight K (log scale)", title=place)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("cost per event (µs, median over repeats)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Cost per readiness event against tokens in flight (bars: fastest to "
                 "slowest repeat)")
    return fig


def uring_text(result: Result, data_dir: Any = None, machine_id: str | None = None,
               results: list[Result] | None = None) -> str:
    """The io_uring section: "not run here: why", or its numbers, read by name."""
    why = (result.summary.get("not_run") or {}).get("io_uring")
    if why:
        return f"**io_uring: not run here: {why}.**"
    if "io_uring" not in (result.params.get("models") or []):
        return "io_uring was not among the models this run was asked for."

    def q(name: str) -> str:
        return findings.span(findings.get(name, data_dir, machine_id, results))

    return (f"With one token in flight an io_uring event costs "
            f"{q('readiness_io_uring_one_token_median_ns')}, with every task holding one "
            f"{q('readiness_io_uring_most_tokens_median_ns')}; at that K it makes "
            f"{q('readiness_io_uring_syscalls_per_event_median')} per event and reaps "
            f"{q('readiness_io_uring_events_per_wait_most_tokens_median')} per "
            f"`io_uring_enter`.")
