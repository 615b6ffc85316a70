"""Yardsticks: an empty system call, a lone pipe write+read and a 64 KiB memcpy.

None of them involves a second thread. They measure how fast this machine is at
the pieces a context switch or a launch is built from, so that a number
published on another machine can be compared on a measured scale ("this
machine copies memory 1.3x faster than theirs but switches 2x slower") instead
of a guess ("slower because it is a virtual machine").

Each **repeat** times every yardstick once, in turn (A B C A B C ...), on one
CPU; a repeat's value is the median over ``batches`` batches of ``ops``
operations, each batch timed as a whole with one clock read subtracted.
The table ``repeats`` has one row per (repeat, yardstick).

Each repeat also times, in the same interleaved order, what the yardsticks are
for: ``pipe_switch_pinned``, one thread-to-thread context switch (half a pipe
ping-pong round trip between two threads pinned to the same CPU, the whole run
timed at once). Claim C01's practical point, "a switch is cheaper than copying
64 KiB", is read from these rows, measured in the same run.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats, validate
from threadcost.errors import KernelError
from threadcost.experiments import context_switch as cs
from threadcost.native import ffi, lib
from threadcost.results import Result

EXPERIMENT = "yardsticks"
# name -> (kernel constant, operations per batch by default, what one operation is)
YARDSTICKS: dict[str, tuple[int, int, str]] = {
    "syscall": (lib.TC_YARD_SYSCALL, 2_000, "one empty system call (getppid)"),
    "pipe_write_read": (lib.TC_YARD_PIPE, 1_000,
                        "write 1 byte to a pipe and read it back, one thread, no switch"),
    "memcpy_64kib": (lib.TC_YARD_MEMCPY, 200, "memcpy of 64 KiB, source and target in cache"),
}

SWITCH = "pipe_switch_pinned"
SWITCH_ROUND_TRIPS = 20_000  # per repeat (times ``scale``), after a tenth as warm-up


def check_params(repeats: Any = 5, batches: Any = 21, scale: Any = 1.0,
                 cpu: Any = None) -> dict[str, Any]:
    """Validate the parameters of :func:`run` (raises ParameterError)."""
    chosen = validate.cpus("cpu", cpu)
    if chosen is not None and len(chosen) != 1:
        from threadcost.errors import ParameterError

        raise ParameterError("cpu", cpu, "give one CPU (or None for the first allowed CPU)")
    return {"repeats": validate.integer("repeats", repeats, minimum=1, maximum=1000),
            "batches": validate.integer("batches", batches, minimum=1, maximum=10_000),
            "scale": validate.number("scale", scale, minimum=0.01, maximum=100.0),
            "cpu": chosen[0] if chosen else None}


def _measure(kind: int, ops: int, batches: int) -> tuple[np.ndarray, int]:
    samples = ffi.new("double[]", batches)
    out = ffi.new("tc_yardstick_result *")
    status = lib.tc_yardstick_run(kind, ops, batches, samples, out)
    if status != lib.TC_OK:
        raise KernelError("tc_yardstick_run", status, int(out.err))
    return np.frombuffer(ffi.buffer(samples, 8 * batches), dtype=float).copy(), int(
        out.timer_overhead_ns)


def run(repeats: Any = 5, batches: Any = 21, scale: Any = 1.0, cpu: Any = None) -> Result:
    """Time the yardsticks ``repeats`` times each, interleaved, pinned to one CPU.

    ``scale`` multiplies the operations per batch (0.1 for a quick look).
    ``cpu``: the CPU to pin to (default: the first CPU this process may use).
    """
    p = check_params(repeats, batches, scale, cpu)
    mask = os.sched_getaffinity(0)
    target = p["cpu"] if p["cpu"] is not None else min(mask)
    rows = []
    os.sched_setaffinity(0, {target})
    try:
        for rep in range(p["repeats"]):
            rows.append(_switch_row(rep, target, p["scale"]))
            for name, (kind, ops, _) in YARDSTICKS.items():
                n = max(1, round(ops * p["scale"]))
                per_op, timer = _measure(kind, n, p["batches"])
                rows.append({"repeat": rep, "yardstick": name, "cpu": target,
                             "ops_per_batch": n, "batches": p["batches"],
                             "ns_median": float(np.median(per_op)),
                             "ns_min": float(per_op.min()), "ns_max": float(per_op.max()),
                             "timer_overhead_ns": timer})
    finally:
        os.sched_setaffinity(0, mask)
    frame = pd.DataFrame(rows)
    what = {**{name: item[2] for name, item in YARDSTICKS.items()},
            SWITCH: "one thread-to-thread switch: half a pipe ping-pong round trip, "
                    "both threads pinned to one CPU"}
    summary = {name: {**stats.distribution(frame[frame.yardstick == name].ns_median),
                      "what": words} for name, words in what.items()}
    return Result(EXPERIMENT, {**p, "cpu": target}, {"yardsticks": summary},
                  {"repeats": frame})


def _switch_row(rep: int, target: int, scale: float) -> dict[str, Any]:
    """One pinned pipe ping-pong, timed as a whole: ns per switch (half a round trip)."""
    n = max(100, round(SWITCH_ROUND_TRIPS * scale))
    q = cs.check_params("pipe", "same-cpu", "threads", n, max(10, n // 10), 0, 1, 10.0)
    q = {**q, "cpu_a": target, "cpu_b": target}
    raw = cs._pingpong(q, per_sample=False, record_cpus=False, stall_after=-1)
    per_switch = raw["total_ns"] / max(raw["completed"], 1) / 2
    return {"repeat": rep, "yardstick": SWITCH, "cpu": target, "ops_per_batch": raw["completed"],
            "batches": 1, "ns_median": per_switch, "ns_min": per_switch,
            "ns_max": per_switch, "timer_overhead_ns": 0}
