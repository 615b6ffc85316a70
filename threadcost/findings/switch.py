"""Findings of notebook 04: the yardsticks (64 KiB memcpy, C01's ratio) and the echo (C03).

Each pools every stored run of its experiment on the machine (each repeat row is
one independent repeat) and reports the mean over repeats with a 95% t interval,
the statistic the claims layer judges (``threadcost.measured.intervals.over_repeats``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from threadcost.findings import Value, newest, pooled, quantity
from threadcost.measured.intervals import over_repeats
from threadcost.measured.runs import Runs

NOTEBOOK_04 = "notebook 04"


def _yardsticks(runs: Runs) -> tuple[pd.DataFrame, list[Any]]:
    found = runs.matching("yardsticks")
    return runs.tables(found, "repeats"), found


def _value(values: Any, found: list[Any], **more: Any) -> Value:
    m = over_repeats(values, "")
    return Value(m.value, m.low, m.high, m.repeats, found, **more)


@quantity("memcpy_64kib_mean_ns", "ns", "mean over repeats",
          "one memcpy of 64 KiB with source and target in cache, pinned to one CPU: the "
          "mean over the yardsticks' repeats of each repeat's median batch (each batch "
          "timed whole, one clock read subtracted)", reads=pooled("yardsticks"))
def memcpy_64kib(runs: Runs) -> Value | str:
    table, found = _yardsticks(runs)
    if table.empty or "memcpy_64kib" not in set(table.yardstick):
        return f"no yardsticks run stored (the last cell of {NOTEBOOK_04})"
    rows = table[table.yardstick == "memcpy_64kib"]
    return _value(rows.ns_median, found, setup={"experiment": "yardsticks",
                                                 "yardstick": "memcpy_64kib",
                                                 "cpu": "pinned"})


# every other yardstick, each its own finding: pooled over the stored yardsticks runs'
# repeats, the mean of each repeat's median batch with a 95% t interval
YARDSTICK_WORDS = {
    "syscall": "one empty system call (getppid)",
    "pipe_write_read": "a 1-byte pipe write and read back by one thread, no switch",
    "memcpy_64kib_cold": "one memcpy of 64 KiB between buffers in no cache (C09's copy, "
                         "as S0-code made it)",
    "pipe_switch_pinned": "one switch, the yardsticks run: half a pipe ping-pong round "
                          "trip, both threads pinned to one CPU",
    "wakeup_cross_cpu": "one wake-up on another, idle CPU: half a pipe ping-pong round "
                        "trip, the threads pinned to two CPUs",
    "wakeup_cross_cpu_busy": "one wake-up on another CPU kept busy: half a pipe ping-pong "
                             "round trip, the threads pinned to two CPUs",
}


def yardstick_name(yardstick: str) -> str:
    """The finding of one yardstick (``memcpy_64kib`` keeps its older name)."""
    return ("memcpy_64kib_mean_ns" if yardstick == "memcpy_64kib"
            else f"yardstick_{yardstick}_mean_ns")


def _yardstick(runs: Runs, yardstick: str) -> Value | str:
    table, found = _yardsticks(runs)
    if table.empty or yardstick not in set(table.yardstick):
        return f"no yardsticks run with {yardstick} stored (the last cell of {NOTEBOOK_04})"
    rows = table[table.yardstick == yardstick]
    return _value(rows.ns_median, found, setup={"experiment": "yardsticks",
                                                "yardstick": yardstick})


def _yardstick_quantity(yardstick: str, words: str) -> None:
    quantity(yardstick_name(yardstick), "ns", "mean over repeats",
             f"{words}: the mean over the yardsticks' repeats of each repeat's median batch "
             "(95% t interval)",
             reads=pooled("yardsticks"))(lambda runs: _yardstick(runs, yardstick))


for _name, _words in YARDSTICK_WORDS.items():
    _yardstick_quantity(_name, _words)


@quantity("switch_over_memcpy_mean_ratio", "ratio", "mean over repeats",
          "C01: one pinned thread switch (half a pipe round trip, both threads on one "
          "CPU) / one 64 KiB memcpy, both timed in the same yardsticks repeat on the same "
          "CPU; mean of the per-repeat ratios", fmt="sig3", reads=pooled("yardsticks"))
def switch_over_memcpy(runs: Runs) -> Value | str:
    table, found = _yardsticks(runs)
    if table.empty or not {"pipe_switch_pinned", "memcpy_64kib"} <= set(table.yardstick):
        return (f"no yardsticks run with a pinned switch and a 64 KiB memcpy stored (the last "
                f"cell of {NOTEBOOK_04})")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    ratio = (wide["pipe_switch_pinned"] / wide["memcpy_64kib"]).dropna()
    return _value(ratio, found, setup={"experiment": "yardsticks", "mechanism": "pipe",
                                       "placement": "same-cpu", "tasks": "threads",
                                       "memcpy_bytes": 65536})


# --- the pipe echo (C03) ------------------------------------------------------------------

def _echo(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | str:
    found = [r for r in runs.matching("echo")
             if {"same-cpu", "unpinned"} <= set(r.meta.get("params", {}).get("placements")
                                                or [])]
    table = runs.tables(found, "repeats")
    if table.empty:
        return f"no echo run stored with the two placements, one CPU and unpinned ({NOTEBOOK_04})"
    wide = table.pivot_table(index=["run_index", "repeat"], columns="placement",
                             values="rate_per_s")
    return wide, found


ECHO_SETUP = {"experiment": "echo", "mechanism": "pipe", "tasks": "threads",
              "placements": "same-cpu vs unpinned, interleaved"}


def _echo_mean(column: Callable[[pd.DataFrame], pd.Series]) -> Callable[[Runs], Value | str]:
    """A finding of the echo runs: the mean over repeats of ``column(wide)`` (one column
    per placement, one row per repeat)."""
    def compute(runs: Runs) -> Value | str:
        got = _echo(runs)
        if isinstance(got, str):
            return got
        wide, found = got
        return _value(column(wide).dropna(), found, setup=ECHO_SETUP)
    return compute


quantity("echo_pinned_rate_mean_per_s", "iterations/s", "mean over repeats",
         "the pipe echo (a message written into one pipe and read back through a thread "
         "echoing it) with both threads pinned to one CPU: echoes per second of each run "
         "timed whole, mean over the runs", reads=pooled("echo"))(
    _echo_mean(lambda wide: wide["same-cpu"]))
quantity("echo_unpinned_rate_mean_per_s", "iterations/s", "mean over repeats",
         "the same pipe echo left to the scheduler: echoes per second of each run timed "
         "whole, mean over the runs (interleaved with the pinned runs)", reads=pooled("echo"))(
    _echo_mean(lambda wide: wide["unpinned"]))
quantity("echo_unpinned_over_pinned_mean_ratio", "ratio", "mean over repeats",
         "C03: echoes per second unpinned / pinned, paired run by run (the placements "
         "alternate), mean of the per-pair ratios", fmt="sig3", reads=pooled("echo"))(
    _echo_mean(lambda wide: wide["unpinned"] / wide["same-cpu"]))


# --- page 04's pinned pipe ping-pong: the sweep's and the rerun's round trips (each timed
# with one clock read), each its own name, and the paper's one switch from C02's pinned runs

from threadcost.findings.headline import latest  # noqa: E402  (the headline's rule)

PLACED = "context_switch_placement"


@quantity("switch_pipe_pinned_batch_median_ns", "ns", "median of runs",
          "one switch of a pipe ping-pong between two threads pinned to one CPU, the paper's "
          "one definition: half the mean round trip of a run timed whole (no clock read "
          "inside), median of C02's pinned runs (interval: their range)", fmt=",.0f",
          reads=newest(PLACED))
def switch_pipe_pinned_batch(runs: Runs) -> Value | str:
    run = latest(runs, PLACED)
    if run is None:
        return f"no pinned and unpinned repeats stored (C02's runs, {NOTEBOOK_04})"
    if run.meta["summary"].get("skipped"):
        return str(run.meta["summary"]["skipped"])
    rows = run.table("repeats")
    each = rows[(rows.mechanism == "pipe") & (rows.placement == "same-cpu")].switch_ns
    if each.empty:
        return "the stored pinned and unpinned repeats have no pinned pipe ping-pong"
    return Value(float(each.median()), float(each.min()), float(each.max()), len(each),
                 runs=[run], setup={"experiment": PLACED, "mechanism": "pipe",
                                    "placement": "same-cpu", "tasks": "threads"})

SWEEP = "the sweep (context_switch run)"
RERUN = "the rerun with its baselines (context_switch_headline run)"


def _pipe_pinned(runs: Runs) -> tuple[Any, Any] | str:
    run = latest(runs, "context_switch")
    if run is None:
        return f"no context switch run stored ({NOTEBOOK_04})"
    c = run.table("configs")
    hit = c[(c.mechanism == "pipe") & (c.placement == "same-cpu") & (c.tasks == "threads")]
    if hit.empty:
        return "the stored sweep has no pipe ping-pong between threads on one CPU"
    return run, hit.iloc[0]


def _sweep(field: str) -> Callable[[Runs], Value | str]:
    def compute(runs: Runs) -> Value | str:
        got = _pipe_pinned(runs)
        if isinstance(got, str):
            return got
        run, row = got
        return Value(float(row[field]), runs=[run],
                     setup={"experiment": "context_switch", "mechanism": "pipe",
                            "placement": "same-cpu", "tasks": "threads"})
    return compute


quantity("switch_pipe_pinned_round_trip_median_ns", "ns", "median",
         f"one round trip of a pipe ping-pong between two threads pinned to one CPU, each "
         f"timed with one clock read, {SWEEP}: median", fmt="auto", scale=1e-3, display_unit="µs",
          reads=newest("context_switch"))(
    _sweep("round_trip_p50_ns"))
quantity("switch_pipe_pinned_counted_per_round_trip_mean", "switches", "mean",
         f"the switches the kernel counted (getrusage) per round trip of the pipe ping-pong "
         f"pinned to one CPU, {SWEEP}", fmt=".2f",
          reads=newest("context_switch"))(_sweep("switches_per_round_trip"))


def _rerun(get: Callable[[dict[str, Any]], float]) -> Callable[[Runs], Value | str]:
    def compute(runs: Runs) -> Value | str:
        run = latest(runs, "context_switch_headline")
        if run is None:
            return f"no rerun of the pinned pipe ping-pong stored ({NOTEBOOK_04})"
        return Value(float(get(run.meta["summary"])), runs=[run],
                     setup={"experiment": "context_switch_headline"})
    return compute


quantity("switch_pipe_pinned_rerun_round_trip_median_ns", "ns", "median",
         f"one round trip of the pinned pipe ping-pong, each timed with one clock read, "
         f"{RERUN}: median", fmt="auto", scale=1e-3, display_unit="µs",
         reads=newest("context_switch_headline"))(
    _rerun(lambda s: s["round_trip_ns"]["p50"]))
quantity("pipe_lone_hop_rerun_median_ns", "ns", "median",
         f"one lone hop (a thread writes a byte into its own pipe and reads it back, no "
         f"partner), {RERUN}: median",
          reads=newest("context_switch_headline"))(_rerun(lambda s: s["self_hop_ns_p50"]))
quantity("switch_pipe_pinned_net_per_counted_median_ns", "ns", "median",
         f"the switch itself, per switch the kernel counted: (median round trip - two lone "
         f"hops) / the switches counted per round trip, {RERUN}",
          reads=newest("context_switch_headline"))(
    _rerun(lambda s: s["switch_net_ns_p50"]))
quantity("instrumentation_rerun_mean_ns", "ns", "mean",
         f"what the timer and the CPU notes add to one round trip, {RERUN}",
          reads=newest("context_switch_headline"))(
    _rerun(lambda s: s["instrumentation_ns_per_sample"]))
quantity("instrumentation_rerun_share_pct", "%", "share of the median round trip",
         f"the timer and CPU notes' share of the median round trip, {RERUN}", fmt=".2f",
          reads=newest("context_switch_headline"))(
    _rerun(lambda s: 100 * s["instrumentation_share"]))
