"""Pipe echo rate (claim C03): a short message out on one pipe, echoed back on another.

The main side writes ``message_bytes`` into one pipe; a second thread reads
them and writes them back into another pipe; the main side reads them. One
such exchange is one **iteration**. Runs are timed as a whole (no per-iteration
stamps, like the original benchmark), repeated, and reported as iterations per
second, per placement: pinned to one CPU, on two CPUs, or unpinned.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.experiments.context_switch import run as cs
from threadcost.experiments.parameters import declared
from threadcost.results import Result
from threadcost.settings import validate

EXPERIMENT = "echo"
DEFAULT_PLACEMENTS = ("same-cpu", "unpinned")
ITERATIONS = declared("switch_echo_iterations")
MESSAGE_BYTES = declared("switch_echo_message_bytes")
REPEATS = declared("switch_echo_repeats")


def check_params(placements: Any = DEFAULT_PLACEMENTS, iterations: Any = ITERATIONS.default,
                 message_bytes: Any = MESSAGE_BYTES.default, repeats: Any = REPEATS.default,
                 warmup: Any = cs.WARMUP.default, timeout_s: Any = 10.0) -> dict[str, Any]:
    """Validate and normalise the parameters of :func:`run` (raises ParameterError);
    defaults and ranges are the notebook parameters' (threadcost.experiments.parameters)."""
    chosen = validate.choice_list("placements", placements, cs.PLACEMENTS)
    validate.integer("iterations", iterations, **ITERATIONS.bounds)
    validate.integer("message_bytes", message_bytes, **MESSAGE_BYTES.bounds)
    checked = [cs.check_params("pipe", x, "threads", iterations, warmup, 0, message_bytes,
                               timeout_s) for x in chosen]
    return {"placements": chosen,
            "iterations": checked[0]["iterations"], "warmup": checked[0]["warmup"],
            "message_bytes": checked[0]["message_bytes"],
            "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
            "timeout_s": checked[0]["timeout_s"]}


def run(placements: Any = DEFAULT_PLACEMENTS, iterations: Any = ITERATIONS.default,
        message_bytes: Any = MESSAGE_BYTES.default, repeats: Any = REPEATS.default,
        warmup: Any = cs.WARMUP.default, timeout_s: Any = 10.0) -> Result:
    """Echo ``iterations`` messages of ``message_bytes`` through two pipes and a
    second thread, ``repeats`` times per placement (placements alternate).

    Returns ``rate_per_s`` per placement as a distribution over the repeats,
    each repeat being iterations / wall time of the whole timed run.
    """
    p = check_params(placements, iterations, message_bytes, repeats, warmup, timeout_s)
    rows = []
    for rep in range(p["repeats"]):
        for place in p["placements"]:
            q = cs.check_params("pipe", place, "threads", p["iterations"], p["warmup"], 0,
                                p["message_bytes"], p["timeout_s"])
            raw = cs._pingpong(q, per_sample=False, record_cpus=False, stall_after=-1)
            secs = raw["total_ns"] / 1e9
            a, b = raw["a"], raw["b"]
            switches = a["voluntary"] + a["involuntary"] + b["voluntary"] + b["involuntary"]
            rows.append({"repeat": rep, "placement": place, "cpu_a": q["cpu_a"],
                         "cpu_b": q["cpu_b"], "iterations": raw["completed"],
                         "seconds": secs,
                         "rate_per_s": raw["completed"] / secs if secs > 0 else float("nan"),
                         "switches_per_iteration": switches / max(raw["completed"], 1)})
    frame = pd.DataFrame(rows)
    per_place: dict[str, Any] = {}
    for place in p["placements"]:
        sub = frame[frame.placement == place]
        per_place[place] = {
            "rate_per_s": stats.distribution(sub.rate_per_s),
            "ns_per_iteration_median": float(1e9 / np.median(sub.rate_per_s)),
            "switches_per_iteration": float(sub.switches_per_iteration.mean()),
        }
    summary: dict[str, Any] = {"placements": per_place}
    if "same-cpu" in per_place and "unpinned" in per_place:
        summary["unpinned_over_pinned"] = (per_place["unpinned"]["rate_per_s"]["p50"]
                                           / per_place["same-cpu"]["rate_per_s"]["p50"])
    return Result(EXPERIMENT, p, summary, {"repeats": frame})

