"""Context switches: notebook 04's findings and what the claims read of them (C01-C04).

Findings: the yardsticks (an empty system call, a 64 KiB memcpy ...: the median over
repeats, ``threadcost.measured.intervals.median_over_repeats``), C01's ratio and the echo
(C03), each pooling every stored run of its experiment on the machine (each repeat row is
one independent repeat), the last two with the mean over repeats and a 95% t interval
(``threadcost.measured.intervals.over_repeats``); the pinned pipe ping-pong of the sweep
and of the rerun; what one run's summary gives (the unpinned ping-pong's split by CPU,
the perf and timing cross-checks, the ping-pong across two CPUs).

Selectors (stored runs -> Measurement | Missing) of switches and echo rates: yardsticks,
pipe echo, context switch, Go channel ping-pong, pinned vs unpinned pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from threadcost import findings, vocabulary
from threadcost.findings import Value, newest, pooled, quantity
from threadcost.findings.headline import latest
from threadcost.findings.selectors import Select, holds_all, no_run
from threadcost.findings.summary import from_summary
from threadcost.measured.intervals import (
    MEDIAN_OVER_REPEATS,
    log_ratio,
    median_over_repeats,
    over_repeats,
    quotient,
)
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids
from threadcost.textout import number

NOTEBOOK_04 = "notebook 04"


def yardstick_repeats(runs: Runs) -> tuple[pd.DataFrame, list[Any]]:
    """Every stored yardsticks run's repeats, and the runs."""
    found = runs.matching("yardsticks")
    return runs.tables(found, "repeats"), found


def _value(values: Any, found: list[Any], **more: Any) -> Value:
    m = over_repeats(values, "")
    return Value(m.value, m.low, m.high, m.repeats, found, **more)


# every yardstick (a fixed piece of work that explains other numbers), each its own
# finding: pooled over the stored yardsticks runs' repeats, the median over repeats of
# each repeat's median batch with the median's distribution-free 95% interval, so one
# disturbed repeat moves neither the value a why cites nor its interval
YARDSTICK_STATISTIC = MEDIAN_OVER_REPEATS
YARDSTICK_WORDS = {
    "syscall": "one empty system call (getppid)",
    "pipe_write_read": "a 1-byte pipe write and read back by one thread, no switch",
    "memcpy_64kib": "one memcpy of 64 KiB with source and target in cache, pinned to one "
                    "CPU",
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
    """The finding of one yardstick: ``yardstick_<name>_median_ns``."""
    return f"yardstick_{yardstick}_median_ns"


def _yardstick(runs: Runs, yardstick: str) -> Value | str:
    table, found = yardstick_repeats(runs)
    if table.empty or yardstick not in set(table.yardstick):
        return f"no yardsticks run with {yardstick} stored (the last cell of {NOTEBOOK_04})"
    m = median_over_repeats(table[table.yardstick == yardstick].ns_median, "")
    return Value(m.value, m.low, m.high, m.repeats, found,
                 setup={"experiment": "yardsticks", "yardstick": yardstick})


def _yardstick_quantity(yardstick: str, words: str) -> None:
    quantity(yardstick_name(yardstick), "ns", YARDSTICK_STATISTIC,
             f"{words}: the median over the yardsticks' repeats of each repeat's median "
             "batch (each batch timed whole, one clock read subtracted; the median's "
             "distribution-free 95% interval)",
             reads=pooled("yardsticks"))(lambda runs: _yardstick(runs, yardstick))


for _name, _words in YARDSTICK_WORDS.items():
    _yardstick_quantity(_name, _words)


@quantity("switch_over_memcpy_mean_ratio", "ratio", "mean over repeats",
          "C01: one pinned thread switch (half a pipe round trip, both threads on one "
          "CPU) / one 64 KiB memcpy, both timed in the same yardsticks repeat on the same "
          "CPU; mean of the per-repeat ratios", fmt="sig3", reads=pooled("yardsticks"))
def switch_over_memcpy(runs: Runs) -> Value | str:
    table, found = yardstick_repeats(runs)
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
    found = runs.matching("echo", placements=holds_all("same-cpu", "unpinned"))
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


# --- what one run's summary gives: the unpinned ping-pong's split by CPU, the cross-checks

UNPINNED = {"mechanism": "pipe", "placement": "unpinned", "tasks": "threads"}
CROSS = {"mechanism": "pipe", "placement": "cross-cpu", "tasks": "threads"}
US = dict(fmt="auto", scale=1e-3, display_unit="µs")

from_summary("switch_pipe_unpinned_same_cpu_share_pct", "context_switch_config",
             ["same_cpu_share"], "%", "share of round trips", "the pipe ping-pong between "
             "two unpinned threads: the share of its round trips with both threads on one "
             "CPU", factor=100, params=UNPINNED, fmt=".1f")
from_summary("switch_pipe_unpinned_same_cpu_round_trip_median_ns", "context_switch_config",
             ["round_trip_ns_same_cpu", "p50"], "ns", "median", "the unpinned pipe "
             "ping-pong's round trips with both threads on one CPU: median", params=UNPINNED,
             **US)
from_summary("switch_pipe_unpinned_two_cpus_round_trip_median_ns", "context_switch_config",
             ["round_trip_ns_different_cpus", "p50"], "ns", "median", "the unpinned pipe "
             "ping-pong's round trips with the threads on two CPUs: median", params=UNPINNED,
             **US)
from_summary("switch_pipe_cross_cpu_round_trip_median_ns", "context_switch_config",
             ["round_trip_ns", "p50"], "ns", "median", "one round trip of the pipe "
             "ping-pong with the threads pinned to two CPUs: median", params=CROSS, **US)
PER_ROUND = "mean per round, median over rounds"
PERF, TIMING = "context_switch_perf_check", "context_switch_timing_check"
# the perf and timing cross-checks: name -> (experiment, summary key, unit, statistic)
CHECKS = {
    "perf_bench_pipe_round_trip_mean_ns": (PERF, "perf_mean_ns", "ns", PER_ROUND),
    "perf_check_ours_round_trip_mean_ns": (PERF, "ours_mean_ns", "ns", PER_ROUND),
    "perf_check_ours_over_perf_ratio": (PERF, "ratio_ours_over_perf", "ratio", "ratio of medians"),
    "timing_check_stamped_round_trip_mean_ns": (TIMING, "per_sample_mean_ns", "ns", PER_ROUND),
    "timing_check_whole_round_trip_mean_ns": (TIMING, "whole_run_mean_ns", "ns", PER_ROUND),
    "timing_check_stamped_over_whole_ratio": (TIMING, "ratio", "ratio", "ratio of medians"),
}
CHECK_WORDS = {
    "perf_bench_pipe_round_trip_mean_ns": "perf bench sched pipe -T, pinned to one CPU: one "
    "round trip (an op), the mean per round, median over rounds",
    "perf_check_ours_round_trip_mean_ns": "this study's pipe ping-pong timed whole, "
    "alternating with perf bench: one round trip, the median over rounds of each round's mean",
    "perf_check_ours_over_perf_ratio": "this study's round trip / perf bench's, alternating "
    "rounds",
    "timing_check_stamped_round_trip_mean_ns": "the pinned pipe ping-pong with a clock stamp "
    "per round trip: the median over rounds of each round's mean round trip",
    "timing_check_whole_round_trip_mean_ns": "the same ping-pong timed only as a whole, "
    "alternating: the median over rounds of each round's mean round trip",
    "timing_check_stamped_over_whole_ratio": "the stamped round trip / the round trip timed "
    "whole, alternating rounds",
}
for _name, (_experiment, _key, _unit, _statistic) in CHECKS.items():
    from_summary(_name, _experiment, [_key], _unit, _statistic, CHECK_WORDS[_name],
                 fmt=".3f" if _unit == "ratio" else ",.0f")


# --- the working set: the round trip beyond touching it, at the largest size measured ------

def _largest_working_set(tasks: str) -> Callable[[Runs], Value | str]:
    def compute(runs: Runs) -> Value | str:
        run = latest(runs, "context_switch_working_set")
        if run is None:
            return "no context_switch_working_set run stored (notebook 04)"
        pts = run.table("points")
        big = pts[(pts.working_set_kib == pts.working_set_kib.max()) & (pts.tasks == tasks)]
        if big.empty:
            return f"the stored working-set run has no {tasks}"
        row = big.iloc[0]
        return Value(float(row.round_trip_minus_touch_p50_ns), runs=[run],
                     setup={"experiment": "context_switch_working_set",
                            "working_set_kib": int(row.working_set_kib), "tasks": tasks})
    return compute


for _tasks in ("threads", "processes"):
    quantity(f"switch_working_set_largest_{_tasks}_extra_median_ns", "ns", "median",
             f"the pinned pipe ping-pong between two {_tasks}, each side writing the largest "
             "working set measured per hop: the median round trip minus the median time of "
             "touching that working set alone", fmt=",.0f", scale=1e-3, display_unit="µs",
             reads=newest("context_switch_working_set"))(
        _largest_working_set(_tasks))


# --- selectors of the claims (C01-C04) ------------------------------------------------

# --- yardsticks (C01, and the normalisation of absolute numbers) -----------------------

def yardstick(name: str) -> Any:
    """A selector: one yardstick (ns per operation), read from its finding
    (``yardstick_<name>_median_ns``: the median over repeats of each repeat's median batch),
    so a why, a table and a page print one value of it, by one definition."""
    def select(runs: Runs) -> Measurement | Missing:
        table, _ = yardstick_repeats(runs)
        if table.empty or name not in set(table.yardstick):
            return no_run("yardsticks", f"the {name} yardstick",
                            "the last cell of notebook 04")
        return findings.measurement(
            yardstick_name(name), runs,
            setup={"experiment": "yardsticks", "yardstick": name, "cpu": "pinned"},
            how=f"{YARDSTICK_STATISTIC} of each repeat's median batch; each batch timed "
                "whole, one clock read subtracted")
    return select



# --- pipe echo (C02 stand-in, C03) ------------------------------------------------------

def c03_unpinned_over_pinned_rate(runs: Runs) -> Measurement | Missing:
    """echo/repeats: rate unpinned / rate same-cpu, paired by repeat."""

    return findings.measurement("echo_unpinned_over_pinned_mean_ratio", runs,
                                how="per repeat: echoes per second unpinned / pinned")


# --- context switch, one run per configuration (context for C01/C02) ----------------------

# --- Go channel ping-pong (C04) -----------------------------------------------------------

def peers_skipped(runs: Runs) -> Missing:
    reasons = [r.meta["summary"].get("skipped") for r in runs.matching("peers")]
    reason = next((r for r in reasons if r), None)
    return (Missing(f"the Go peers did not run: {vocabulary.bare_reason(reason)}") if reason else
            no_run("peers", "the channel ping-pong in both modes",
                     "notebook 05; needs the Go toolchain"))


def c04_gomaxprocs1_gain(runs: Runs) -> Measurement | Missing:
    """peers summary: batch rate (no clock reads) GOMAXPROCS=1 pinned / default - 1, per run."""
    found = [r for r in runs.matching("peers")
             if "round_trips_per_s" in r.meta["summary"].get("channel_pingpong", {})]
    if not found:
        return peers_skipped(runs)
    gain = [r.meta["summary"]["channel_pingpong"]["round_trips_per_s"]
            / r.meta["summary"]["channel_pingpong_default"]["round_trips_per_s"] - 1
            for r in found]
    return over_repeats(gain, "fraction", run_id=run_ids(found),
                        setup={"experiment": "peers", "modes": "default vs GOMAXPROCS=1 "
                               "pinned to one CPU", "channel": "unbuffered"},
                        how="per run: round trips per second over a batch without clock reads, "
                            "GOMAXPROCS=1 pinned / default, minus 1")


def memcpy_ns(runs: Runs) -> Measurement | Missing:

    return yardstick("memcpy_64kib")(runs)


# --- pinned vs unpinned ping-pong, repeated (C02) -------------------------------------------

def placement_skipped(found: list[Any]) -> Missing | None:
    """Why the stored pinned/unpinned pairs did not run (one usable CPU), or None."""
    reason = next((r.meta["summary"]["skipped"] for r in found
                   if r.meta["summary"].get("skipped")), None)
    return Missing(f"pinned against unpinned {reason}") if reason else None


# --- goroutine pinning pairs (C04) -----------------------------------------------------------

def pinning_pairs(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    every = runs.matching("goroutine_pinning")
    found = [r for r in every if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, "runs")
    if table.empty:
        reason = next((r.meta["summary"]["skipped"] for r in every
                       if r.meta["summary"].get("skipped")), None)
        return (Missing(f"the pinned/default pairs did not run: {vocabulary.bare_reason(reason)}")
            if reason else
                no_run("goroutine_pinning", "pinned/default pairs", "notebook 05"))
    return table, found


def c04_pinning_gain(runs: Runs) -> Measurement | Missing:
    """goroutine_pinning/runs: batch rate GOMAXPROCS=1 pinned / default - 1, per pair
    (the table ``gain``'s "batch" basis, pooled over stored runs)."""
    got = pinning_pairs(runs)
    if isinstance(got, Missing):
        return c04_gomaxprocs1_gain(runs)  # older data: one peers run per pair
    table, found = got
    wide = table.pivot_table(index=["run_index", "repeat"], columns="mode",
                             values="round_trips_per_s")
    gain = (wide["gomaxprocs1_pinned"] / wide["default"] - 1).dropna()
    iters = sorted({r.meta["params"].get("iterations") for r in found})
    return over_repeats(gain, "fraction", run_id=run_ids(found),
                        setup={"experiment": "goroutine_pinning", "channel": "unbuffered",
                               "modes": "default vs GOMAXPROCS=1 pinned, alternating",
                               "iterations": iters[0] if len(iters) == 1 else iters},
                        how="per pair: round trips per second over a batch without clock "
                            "reads, pinned / default, minus 1")


def goroutine_switch_pinned_ns(runs: Runs) -> Measurement | Missing:
    got = pinning_pairs(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[table["mode"] == "gomaxprocs1_pinned"]
    return over_repeats(rows.switch_ns_batch, "ns", run_id=run_ids(found),
                        setup={"experiment": "goroutine_pinning",
                               "mode": "GOMAXPROCS=1 pinned"},
                        how="per run: a batch of channel round trips timed whole / 2")


def _placement(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("context_switch_placement", tasks="threads",
                          placements=holds_all("same-cpu", "unpinned"))
    table = runs.tables(found, "repeats")
    if table.empty:
        return placement_skipped(found) or no_run(
            "context_switch_placement", "threads pinned and unpinned", "notebook 04")
    return table, found


def switch_ns(mechanism: str, placement: str) -> Select:
    """One switch (half a round trip of a ping-pong timed whole), one mechanism and
    placement, over the repeats of context_switch_placement."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _placement(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[(table.mechanism == mechanism) & (table.placement == placement)]
        if rows.empty:
            return Missing(f"no {mechanism} ping-pong {placement} is stored")
        return over_repeats(rows.switch_ns, "ns", run_id=run_ids(found),
                            setup={"experiment": "context_switch_placement",
                                   "mechanism": mechanism, "placement": placement,
                                   "tasks": "threads"},
                            how="per repeat: half the mean round trip of a ping-pong timed "
                                "whole (S0's per switch)")
    return select


def switch_ratio(mechanism: str) -> Select:
    """Unpinned / pinned switch of one mechanism, paired by repeat."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _placement(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table.mechanism == mechanism]
        wide = rows.pivot_table(index=["run_index", "repeat"], columns="placement",
                                values="switch_ns")
        if "unpinned" not in wide or "same-cpu" not in wide:
            return Missing(f"no {mechanism} pair pinned and unpinned is stored")
        return log_ratio((wide["unpinned"] / wide["same-cpu"]).dropna(),
                         run_id=run_ids(found),
                         setup={"experiment": "context_switch_placement",
                                "mechanism": mechanism,
                                "placements": "same-cpu vs unpinned, interleaved"},
                         how="per repeat: one switch unpinned / pinned, this mechanism only")
    return select


def _cache_states(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "memcpy_64kib", "memcpy_64kib_cold"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the 64 KiB memcpy in cache and in no cache",
                        "the last cell of notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    return wide, found


COMPUTED_BETWEEN = ("(computed here: the geometric mean of the copy in cache and in no "
                    "cache, each measured; the interval spans both)")


def _either(warm: Measurement, cold: Measurement, unit: str, **info: Any) -> Measurement:
    """One reading spanning two cache states: the value between them (their geometric
    mean: computed, and its ``where`` says so, never shown as a measurement), the interval
    from the lower end of the one to the upper end of the other (both measured)."""
    lows = [m.low if m.low is not None else m.value for m in (warm, cold)]
    highs = [m.high if m.high is not None else m.value for m in (warm, cold)]
    return Measurement(float(np.sqrt(warm.value * cold.value)), unit, min(lows), max(highs),
                       repeats=min(warm.repeats, cold.repeats),
                       spans=(f"the copy's cache state: {number(warm.value)} in cache, "
                              f"{number(cold.value)} in no cache"), where=COMPUTED_BETWEEN,
                       **info)


NO_CACHE_STATE = ("S0 gives no cache state for its 64 KiB copy (its 3 µs is a bar typed in "
                  "S0-code's plot script), so the interval spans the copy in cache and in "
                  "no cache")


def memcpy_either(runs: Runs) -> Measurement | Missing:
    """A 64 KiB memcpy in cache and in no cache, as one reading whose interval spans both."""
    got = _cache_states(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    warm = over_repeats(wide["memcpy_64kib"].dropna(), "ns")
    cold = over_repeats(wide["memcpy_64kib_cold"].dropna(), "ns")
    return _either(warm, cold, "ns", run_id=run_ids(found),
                   setup={"experiment": "yardsticks", "memcpy": "64 KiB, in cache and in "
                          "no cache", "cpu": "pinned"},
                   how=f"per repeat, the median batch: in cache {warm.value:,.0f} ns, in no "
                       f"cache {cold.value:,.0f} ns; {NO_CACHE_STATE}")


def switch_over_memcpy_either(runs: Runs) -> Measurement | Missing:
    """Pinned pipe switch / 64 KiB memcpy, paired by repeat, for both cache states."""
    got = _cache_states(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    warm = over_repeats((wide["pipe_switch_pinned"] / wide["memcpy_64kib"]).dropna(), "ratio")
    cold = over_repeats((wide["pipe_switch_pinned"] / wide["memcpy_64kib_cold"]).dropna(),
                        "ratio")
    return _either(warm, cold, "ratio", run_id=run_ids(found),
                   setup={"experiment": "yardsticks", "mechanism": "pipe",
                          "placement": "same-cpu", "memcpy": "64 KiB, in cache and in no "
                          "cache"},
                   how=f"per repeat: one pinned switch / one 64 KiB memcpy, same repeat: "
                       f"{warm.value:.2f} against the copy in cache, {cold.value:.2f} in no "
                       f"cache; {NO_CACHE_STATE}")


def switch_in_syscalls(runs: Runs) -> Measurement | Missing:
    """A pinned pipe switch in empty system calls, paired by repeat (yardsticks)."""
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "syscall"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the empty system call", "the last cell of notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    return over_repeats((wide["pipe_switch_pinned"] / wide["syscall"]).dropna(),
                        "empty system calls", run_id=run_ids(found),
                        setup={"experiment": "yardsticks"},
                        how="per repeat: half a pinned pipe round trip / one empty system "
                            "call (getppid), same repeat")


def in_units(select: Select, yard_name: str, unit: str) -> Select:
    """A time read in multiples of a yardstick of the same machine (the property a
    verdict turns on, in its own units): the reading / the yardstick's mean, with the
    conservative interval of the two."""

    def select_in_units(runs: Runs) -> Measurement | Missing:
        top, bottom = select(runs), yardstick(yard_name)(runs)
        if isinstance(top, Missing):
            return top
        if isinstance(bottom, Missing):
            return bottom
        return quotient(top, bottom, unit, run_id=f"{top.run_id}; {bottom.run_id}",
                        setup={**top.setup, "yardstick": yard_name},
                        how=f"{top.how or 'the reading'} / the {yard_name} yardstick's mean "
                            "(another run of the same machine); conservative interval")
    return select_in_units


def echo_rate(placement: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        found = runs.matching("echo", placements=holds_all(placement))
        table = runs.tables(found, "repeats")
        if table.empty:
            return no_run("echo", f"placement {vocabulary.words(placement)}", "notebook 04")
        rows = table[table.placement == placement]
        return over_repeats(rows.rate_per_s, "iterations/s", run_id=run_ids(found),
                            setup={"experiment": "echo", "placement": placement,
                                   "message_bytes": found[0].meta["params"].get(
                                       "message_bytes")},
                            how="per repeat: echoes per second (two switches each)")
    return select


def goroutine(mode: str, column: str, unit: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        got = pinning_pairs(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table["mode"] == mode]
        return over_repeats(rows[column], unit, run_id=run_ids(found),
                            setup={"experiment": "goroutine_pinning", "mode": mode,
                                   "channel": "unbuffered"},
                            how=f"per run: {column.replace('_', ' ')}, a batch of channel "
                                "round trips timed whole (one iteration = one round trip)")
    return select
