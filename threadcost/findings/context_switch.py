"""Findings of notebook 04 read from one run's summary: the unpinned pipe ping-pong's
split by CPU, the perf and timing cross-checks, the ping-pong across two CPUs."""

from __future__ import annotations

from collections.abc import Callable

from threadcost.findings import Value, newest, quantity
from threadcost.findings.headline import latest
from threadcost.findings.summary import from_summary
from threadcost.measured.runs import Runs

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
