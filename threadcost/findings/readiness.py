"""Tokens in flight (notebook 09): from how many tokens in flight an event loop beats
threads, by how much at the most tokens, and why, in counts per event measured by the
same run.

Every finding reads the newest stored ``readiness`` run, its ``cost`` table (per model,
placement and K: the median over the repeats of the cost per event, and the medians of
the counts per event), at one placement: unpinned when the run has it, else the first it
ran. "The best loop" at a K is the event loop (epoll level- or edge-triggered, io_uring)
with the lowest median cost per event there.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from threadcost import vocabulary
from threadcost.findings import Value, newest, quantity
from threadcost.findings.headline import latest
from threadcost.measured.runs import Runs

EXPERIMENT = "readiness"
THREAD = "thread"
LOOPS = ("epoll-lt", "epoll-et", "io_uring")
# the peers' user-space tasks: neither a thread per task nor one loop
GOROUTINE, TOKIO = "goroutine", "tokio-task"
MODELS = (THREAD, *LOOPS, GOROUTINE, TOKIO)
NAMES = {THREAD: "blocking threads", "epoll-lt": "epoll, level-triggered",
         "epoll-et": "epoll, edge-triggered", "io_uring": "io_uring",
         GOROUTINE: "goroutines (Go's poller)", TOKIO: "Tokio tasks (multi-thread runtime)"}
SHOWN = dict(fmt="auto", scale=1e-3, display_unit="µs")  # ns stored, µs printed
READS = newest(EXPERIMENT)
NOTEBOOK = "notebook 09"


def key(model: str) -> str:
    """The part of a finding's name that names ``model`` (epoll-lt -> epoll_lt)."""
    return model.replace("-", "_")


def _table(runs: Runs) -> tuple[Any, pd.DataFrame, str] | str:
    """(run, its cost table at the placement read, that placement), or what is missing."""
    run = latest(runs, EXPERIMENT)
    if run is None:
        return f"no tokens-in-flight run stored ({NOTEBOOK})"
    cost = run.table("cost")
    if cost.empty:
        why = (run.meta.get("summary") or {}).get("not_run") or {}
        return "; ".join(f"{m}: {w}" for m, w in why.items()) or "the run measured nothing"
    places = list(dict.fromkeys(cost.placement))
    place = "unpinned" if "unpinned" in places else places[0]
    return run, cost[cost.placement == place], place


def _setup(run: Any, cost: pd.DataFrame, place: str) -> dict[str, Any]:
    p = run.meta.get("params") or {}
    return {"experiment": EXPERIMENT, "tasks": int(cost.tasks.min()), "placement": place,
            "channel": p.get("channel"), "repeats": p.get("repeats")}


def _wide(cost: pd.DataFrame, column: str = "ns_per_event_p50") -> pd.DataFrame:
    """K in rows, models in columns."""
    return cost.pivot_table(index="tokens", columns="model", values=column)


def _best_loop(wide: pd.DataFrame) -> pd.Series | None:
    """Per K, the model of the event loop with the lowest median cost (None: no loop)."""
    loops = [m for m in LOOPS if m in wide.columns]
    if not loops or THREAD not in wide.columns:
        return None
    return wide[loops].idxmin(axis=1)


def _both(runs: Runs) -> tuple[Any, pd.DataFrame, str, pd.DataFrame, pd.Series] | str:
    got = _table(runs)
    if isinstance(got, str):
        return got
    run, cost, place = got
    wide = _wide(cost)
    best = _best_loop(wide)
    if best is None:
        return "the stored run has no thread rows and event-loop rows to compare"
    wide = wide.dropna(subset=[THREAD])
    return run, cost, place, wide, best.loc[wide.index]


def _gap(wide: pd.DataFrame, best: pd.Series) -> pd.Series:
    """Per K: log(threads' median / the best loop's): > 0 where the loop is faster."""
    loop = pd.Series([wide.at[k, m] for k, m in best.items()], index=wide.index)
    return (wide[THREAD] / loop).map(math.log)


@quantity("readiness_loop_beats_threads_from_tokens", "tokens", "computed from medians",
          "the fewest tokens in flight K from which the best event loop's median cost per "
          "event is below the blocking threads' at that K and at every larger K measured",
          fmt=",.0f", reads=READS)
def loop_beats_threads_from(runs: Runs) -> Value | str:
    got = _both(runs)
    if isinstance(got, str):
        return got
    run, cost, place, wide, best = got
    gap = _gap(wide, best)
    ahead = gap > 0
    if not ahead.iloc[-1]:
        return (f"threads are as fast as the best event loop or faster at the most tokens "
                f"measured ({int(gap.index[-1]):,})")
    k = int(gap.index[-1])
    for tokens in reversed(gap.index):
        if not ahead.loc[tokens]:
            break
        k = int(tokens)
    return Value(float(k), n=int(cost.repeats.min()), runs=[run],
                 setup=_setup(run, cost, place), extra={"loop": best.loc[k]})


@quantity("readiness_crossing_tokens", "tokens", "computed from medians",
          "the tokens in flight K where the blocking threads' median cost per event and the "
          "best event loop's meet: the last change of sign of log(threads / loop) between "
          "two measured K, interpolated on log K (the figure's mark)", fmt=",.0f",
          reads=READS)
def crossing(runs: Runs) -> Value | str:
    got = _both(runs)
    if isinstance(got, str):
        return got
    run, cost, place, wide, best = got
    gap = _gap(wide, best)
    ks = [int(k) for k in gap.index]
    for i in range(len(ks) - 1, 0, -1):
        a, b = gap.iloc[i - 1], gap.iloc[i]
        if (a > 0) != (b > 0):
            la, lb = math.log(ks[i - 1]), math.log(ks[i])
            at = la + (lb - la) * (0 - a) / (b - a) if b != a else la
            return Value(math.exp(at), float(ks[i - 1]), float(ks[i]),
                         int(cost.repeats.min()), runs=[run], setup=_setup(run, cost, place),
                         extra={"faster_above": "loop" if b > 0 else THREAD})
    who = "the best event loop" if gap.iloc[0] > 0 else "blocking threads"
    return (f"no crossing between {ks[0]:,} and {ks[-1]:,} tokens in flight: {who} cost "
            f"less per event at every K measured")


def _ratio_at(which: int) -> Any:
    def compute(runs: Runs) -> Value | str:
        got = _both(runs)
        if isinstance(got, str):
            return got
        run, cost, place, wide, best = got
        k = wide.index[which]
        loop = best.loc[k]
        return Value(float(wide.at[k, THREAD] / wide.at[k, loop]),
                     n=int(cost.repeats.min()), runs=[run],
                     setup={**_setup(run, cost, place), "tokens": int(k)},
                     extra={"loop": loop, "tokens": int(cost[cost.tokens == k]
                                                        .tokens_in_flight.min())})
    return compute


quantity("readiness_threads_over_loop_most_tokens_ratio", "ratio", "ratio of medians",
         "at the most tokens in flight measured (all N tasks holding one), the blocking "
         "threads' median cost per event / the best event loop's", fmt="auto",
         reads=READS)(_ratio_at(-1))
quantity("readiness_threads_over_loop_one_token_ratio", "ratio", "ratio of medians",
         "at the fewest tokens in flight measured, the blocking threads' median cost per "
         "event / the best event loop's", fmt="auto", reads=READS)(_ratio_at(0))


@quantity("readiness_tasks_count", "tasks", "recorded (the fewest any model ran)",
          "the tasks N the run measured (a limit on fds or threads narrows the N asked for)",
          fmt=",.0f", reads=READS)
def tasks_count(runs: Runs) -> Value | str:
    got = _table(runs)
    if isinstance(got, str):
        return got
    run, cost, place = got
    return Value(float(cost.tasks.min()), runs=[run], setup=_setup(run, cost, place))


def _row_of(runs: Runs, model: str, which: int) -> tuple[Any, pd.DataFrame, str, Any] | str:
    """(run, its cost table, placement, ``model``'s row at the ``which``-th K), or what is
    missing."""
    got = _table(runs)
    if isinstance(got, str):
        return got
    run, cost, place = got
    rows = cost[cost.model == model].sort_values("tokens")
    if rows.empty:
        why = ((run.meta.get("summary") or {}).get("not_run") or {}).get(model)
        return (f"not run here: {vocabulary.bare_reason(why)}" if why
                else f"the stored run has no {model} rows")
    return run, cost, place, rows.iloc[which]


def _per_model(model: str, column: str, which: int) -> Any:
    def compute(runs: Runs) -> Value | str:
        got = _row_of(runs, model, which)
        if isinstance(got, str):
            return got
        run, cost, place, row = got
        low = high = None
        if column == "ns_per_event_p50":
            low, high = float(row.ns_per_event_min), float(row.ns_per_event_max)
        return Value(float(row[column]), low, high, int(row.repeats), runs=[run],
                     setup={**_setup(run, cost, place), "model": model,
                            "tokens": int(row.tokens)})
    return compute


AT = {-1: ("most_tokens", "at the most tokens in flight measured"),
      0: ("one_token", "at the fewest tokens in flight measured")}
COUNTS = {  # column -> (its part of the name, its unit, its words)
    "syscalls_per_event": (
        "syscalls", "calls", "system calls per event (reads, reads that found nothing, "
        "writes and waits; io_uring: io_uring_enter calls)"),
    "switches_per_event": (
        "switches", "switches", "context switches per event, counted by the kernel "
        "(getrusage: voluntary + involuntary, the whole process)"),
    "cross_cpu_per_event": (
        "cross_cpu", "wake-ups", "events whose token was written on another CPU than the "
        "one reading it (sched_getcpu at both ends), per event"),
}


def _cpus_busy(model: str) -> Any:
    """CPU time per event / wall time per event at the most tokens (medians)."""
    def compute(runs: Runs) -> Value | str:
        got = _row_of(runs, model, -1)
        if isinstance(got, str):
            return got
        run, cost, place, row = got
        if not row.ns_per_event_p50 > 0:
            return f"no {model} event took any time at the most tokens in flight"
        return Value(float(row.cpu_ns_per_event_p50 / row.ns_per_event_p50),
                     n=int(row.repeats), runs=[run],
                     setup={**_setup(run, cost, place), "model": model,
                            "tokens": int(row.tokens)})
    return compute


for _model in MODELS:
    for _which, (_tag, _words) in AT.items():
        quantity(f"readiness_{key(_model)}_{_tag}_median_ns", "ns", "median of repeats",
                 f"cost per event of {NAMES[_model]}, {_words}: wall time / events, median "
                 f"over the repeats (interval: their range)", **SHOWN, reads=READS)(
            _per_model(_model, "ns_per_event_p50", _which))
    quantity(f"readiness_{key(_model)}_cpu_most_tokens_median_ns", "ns", "median of repeats",
             f"CPU time per event of {NAMES[_model]} (user + system, every thread of the "
             f"process, getrusage), at the most tokens in flight measured, median over the "
             f"repeats", **SHOWN, reads=READS)(
        _per_model(_model, "cpu_ns_per_event_p50", -1))
    quantity(f"readiness_{key(_model)}_cpus_busy_most_tokens_ratio", "CPUs",
             "ratio of medians",
             f"{NAMES[_model]}: CPU time per event / wall time per event at the most tokens "
             f"in flight measured (medians over the repeats): how many CPUs it kept busy at "
             f"once, on average", fmt=",.2f", reads=READS)(_cpus_busy(_model))
    for _column, (_short, _unit, _words) in COUNTS.items():
        quantity(f"readiness_{key(_model)}_{_short}_per_event_median", _unit,
                 "median of repeats",
                 f"{NAMES[_model]}: {_words}, at the most tokens in flight measured, median "
                 f"over the repeats", fmt="sig3", reads=READS)(
            _per_model(_model, _column, -1))
for _model in LOOPS:
    for _which, (_tag, _words) in AT.items():
        quantity(f"readiness_{key(_model)}_events_per_wait_{_tag}_median", "events",
                 "median of repeats",
                 f"{NAMES[_model]}: readiness events per wait (ready fds per epoll_wait, "
                 f"read completions per io_uring_enter), {_words}, median over the repeats",
                 fmt=",.1f", reads=READS)(_per_model(_model, "events_per_wait", _which))


