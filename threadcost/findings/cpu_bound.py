"""Findings of notebook 04's CPU-bound runs (S3's experiment, C13 and C14): how much CPU
one run took, and what the calibration that sized the runs measured, each from the
newest cpu_bound run (a notebook passes its unsaved result through
``findings.of_results``)."""

from __future__ import annotations

from typing import Any

from threadcost.findings.summary import from_run

WORKING_SETS = {"none": "without a working set", "own": "with each task's working set"}
# the calibration's cost per unit of each loop: working set -> (summary key, unit of work)
CALIBRATED_COST = {"none": ("ns_per_division", "one trial division"),
                   "own": ("ns_per_write", "writing one 64-bit integer of the working set")}


def run_cpu_name(working_set: str) -> str:
    return f"cpu_bound_{working_set}_run_cpu_median_s"


def cost_name(working_set: str) -> str:
    return f"cpu_bound_{working_set}_calibration_slope_ns"


def _run_cpu(working_set: str) -> Any:
    def read(run: Any) -> float | None:
        try:
            runs = run.table("runs")
        except (KeyError, OSError, ValueError):
            return None
        if runs is None or "cpu_s" not in runs or "working_set" not in runs:
            return None
        cpu = runs[runs.working_set == working_set].cpu_s.dropna()
        return float(cpu.median()) if cpu.size else None
    return read


def _cost(working_set: str) -> Any:
    key = CALIBRATED_COST[working_set][0]

    def read(run: Any) -> float | None:
        sizing = (run.meta.get("summary") or {}).get("sizing") or {}
        value = (sizing.get(working_set) or {}).get(key)
        return None if value is None else float(value)
    return read


for _ws, _words in WORKING_SETS.items():
    from_run(run_cpu_name(_ws), "cpu_bound", _run_cpu(_ws), "s", "median over its runs",
             f"the CPU time (user + system, all five tasks) of one run {_words}, median "
             "over the run's threads and processes repeats", fmt=".2f")
    from_run(cost_name(_ws), "cpu_bound", _cost(_ws), "ns",
             "slope of CPU time over work in the calibration's probes",
             f"the CPU cost of {CALIBRATED_COST[_ws][1]}, fitted from the calibration's "
             "probes (before the timed runs), from which each loop was sized", fmt=".2f",
             lacking="was not calibrated (a fixed size)")
