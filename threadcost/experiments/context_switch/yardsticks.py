"""Yardsticks: an empty system call, a lone pipe write+read, a 64 KiB memcpy (cached
and uncached) and a wake-up on the same CPU, on another CPU and on another, busy CPU.

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

Three rows per repeat say what the machine adds when a switch crosses CPUs:
``pipe_switch_pinned`` is also the **same-CPU wake-up** (one hand-off = half a
round trip); ``wakeup_cross_cpu`` is the same ping-pong with the two threads on
two CPUs, the partner CPU idle between hand-offs; ``wakeup_cross_cpu_busy`` is
that again with the partner CPU kept busy by a spinning process at the lowest
priority (SCHED_IDLE: any woken thread preempts it at once), so the CPU never
idles. The difference of the last two is what idling and waking a CPU (on a
virtual machine: a virtual CPU, through the hypervisor) adds to a wake-up.

``memcpy_64kib_cold`` copies 64 KiB between buffers in no cache: each copy takes
the next 64 KiB of two pools, each twice the size of the last-level cache (at
least 64 MiB), so no copy finds its data cached, as when a program copies
fresh data (S0-code's 3 us for 64 KiB is about 6 bytes per cycle on its
3.5 GHz CPU: not a cached copy).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import KernelError, ParameterError
from threadcost.experiments.context_switch import run as cs
from threadcost.experiments.parameters import declared
from threadcost.host import cpus
from threadcost.native import ffi, lib
from threadcost.results import Result
from threadcost.settings import validate

EXPERIMENT = "yardsticks"
# name -> (kernel constant, operations per batch by default, what one operation is)
YARDSTICKS: dict[str, tuple[int, int, str]] = {
    "syscall": (lib.TC_YARD_SYSCALL, 2_000, "one empty system call (getppid)"),
    "pipe_write_read": (lib.TC_YARD_PIPE, 1_000,
                        "write 1 byte to a pipe and read it back, one thread, no switch"),
    "memcpy_64kib": (lib.TC_YARD_MEMCPY, 200, "memcpy of 64 KiB, source and target in cache"),
}

SWITCH = "pipe_switch_pinned"
# per repeat (times ``scale``), after a tenth as warm-up: notebook 04's declared round
# trips per configuration (its switch_iterations scales this yardstick too)
SWITCH_ROUND_TRIPS = declared("switch_iterations").default
# Notebook 04 repeats the yardsticks as often as the echo: that parameter's default and range.
REPEATS = declared("switch_echo_repeats")
COLD = "memcpy_64kib_cold"
COLD_OPS = 200  # 64 KiB copies per batch (times ``scale``)
CROSS, CROSS_BUSY = "wakeup_cross_cpu", "wakeup_cross_cpu_busy"
MIN_COLD_POOL = 64 << 20
MAX_COLD_POOL = 2 << 30
WHAT = {COLD: "memcpy of 64 KiB between buffers in no cache (pools twice the last-level "
              "cache)",
        CROSS: "one wake-up across CPUs: half a pipe ping-pong round trip, the threads "
               "pinned to two CPUs, the partner CPU idle between hand-offs",
        CROSS_BUSY: "one wake-up across CPUs with the partner CPU kept busy (a SCHED_IDLE "
                    "spinner): half a round trip"}


def check_params(repeats: Any = REPEATS.default, batches: Any = 21, scale: Any = 1.0,
                 cpu: Any = None) -> dict[str, Any]:
    """Validate the parameters of :func:`run` (raises ParameterError)."""
    chosen = validate.cpus("cpu", cpu)
    if chosen is not None and len(chosen) != 1:
        raise ParameterError("cpu", cpu, "give one CPU (or None for the first allowed CPU)")
    return {"repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
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


def run(repeats: Any = REPEATS.default, batches: Any = 21, scale: Any = 1.0,
        cpu: Any = None) -> Result:
    """Time the yardsticks ``repeats`` times each, interleaved, pinned to one CPU.

    ``scale`` multiplies the operations per batch (0.1 for a quick look).
    ``cpu``: the CPU to pin to (default: the first CPU this process may use).
    """
    p = check_params(repeats, batches, scale, cpu)
    mask = os.sched_getaffinity(0)
    target = p["cpu"] if p["cpu"] is not None else cpus.first()
    two = cpus.partner(target)  # another core where the mask has one
    partner = two.b if two is not None else None
    pool = cold_pool_bytes(target)
    rows = []
    os.sched_setaffinity(0, {target})
    cold = ffi.NULL
    try:
        cold = _cold_pool(pool)  # written once, on the CPU that copies; every repeat walks on
        for rep in range(p["repeats"]):
            rows.append(_switch_row(rep, target, p["scale"]))
            if partner is not None:
                rows.append(_switch_row(rep, target, p["scale"], partner, CROSS))
                rows.append(_busy_row(rep, target, p["scale"], partner))
            rows.append(_cold_row(rep, target, p["scale"], p["batches"], cold))
            for name, (kind, ops, _) in YARDSTICKS.items():
                n = max(1, round(ops * p["scale"]))
                per_op, timer = _measure(kind, n, p["batches"])
                rows.append({"repeat": rep, "yardstick": name, "cpu": target,
                             "ops_per_batch": n, "batches": p["batches"],
                             "ns_median": float(np.median(per_op)),
                             "ns_min": float(per_op.min()), "ns_max": float(per_op.max()),
                             "timer_overhead_ns": timer})
    finally:
        lib.tc_cold_pool_free(cold)
        os.sched_setaffinity(0, mask)
    frame = pd.DataFrame(rows)
    what = {**{name: item[2] for name, item in YARDSTICKS.items()},
            SWITCH: "one thread-to-thread switch (a same-CPU wake-up): half a pipe "
                    "ping-pong round trip, both threads pinned to one CPU", **WHAT}
    summary: dict[str, Any] = {
        name: {**stats.distribution(frame[frame.yardstick == name].ns_median), "what": words}
        for name, words in what.items() if name in set(frame.yardstick)}
    notes = {"cold_pool_bytes": pool, "last_level_cache_bytes": last_level_cache_bytes(target),
             "partner_cpu": partner, "partner_relation": two.relation if two else None}
    if partner is None:
        notes["not_run"] = cpus.two_cpus_reason()  # why the cross-CPU wake-ups did not run
    return Result(EXPERIMENT, {**p, "cpu": target}, {"yardsticks": summary, **notes},
                  {"repeats": frame})


def last_level_cache_bytes(cpu: int | None = None) -> int:
    """The largest cache of ``cpu`` (default: the first CPU this process may use),
    0 when the kernel does not say."""
    return cpus.last_level_cache_bytes(cpu)


def cold_pool_bytes(cpu: int | None = None) -> int:
    """Twice the last-level cache, at least 64 MiB, at most 2 GiB, in 64 KiB steps."""
    size = min(max(2 * last_level_cache_bytes(cpu), MIN_COLD_POOL), MAX_COLD_POOL)
    return size - size % 65536


def _cold_pool(pool_bytes: int) -> Any:
    """The two pools of the cold copies, ``pool_bytes`` each, every page written: made
    once per run (at twice a 300 MiB last-level cache, writing them took about a second,
    once per repeat before), each repeat's copies going on where the last one's stopped."""
    handle = ffi.new("tc_cold_pool **")
    status = lib.tc_cold_pool_new(pool_bytes, handle)
    if status != lib.TC_OK:
        raise KernelError("tc_cold_pool_new", status, 0)
    return handle[0]


def _cold_row(rep: int, target: int, scale: float, batches: int, pool: Any) -> dict[str, Any]:
    n = max(1, round(COLD_OPS * scale))
    samples = ffi.new("double[]", batches)
    out = ffi.new("tc_yardstick_result *")
    status = lib.tc_yardstick_memcpy_cold(pool, n, batches, samples, out)
    if status != lib.TC_OK:
        raise KernelError("tc_yardstick_memcpy_cold", status, int(out.err))
    per_op = np.frombuffer(ffi.buffer(samples, 8 * batches), dtype=float).copy()
    return {"repeat": rep, "yardstick": COLD, "cpu": target, "ops_per_batch": n,
            "batches": batches, "ns_median": float(np.median(per_op)),
            "ns_min": float(per_op.min()), "ns_max": float(per_op.max()),
            "timer_overhead_ns": int(out.timer_overhead_ns)}


SPIN = ("import os, sys\n"
        "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
        "os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
        "sys.stdout.write('spinning\\n'); sys.stdout.flush()\n"
        "while True:\n    pass\n")


def _busy_row(rep: int, target: int, scale: float, partner: int) -> dict[str, Any]:
    """The cross-CPU wake-up with a lowest-priority spinner keeping ``partner`` busy."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN, str(partner)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        assert spinner.stdout is not None
        spinner.stdout.readline()  # it is pinned, idle-class and about to spin
        time.sleep(0.02)
        return _switch_row(rep, target, scale, partner, CROSS_BUSY)
    finally:
        spinner.kill()
        spinner.wait(timeout=10)


def _switch_row(rep: int, target: int, scale: float, partner: int | None = None,
                name: str = SWITCH) -> dict[str, Any]:
    """One pipe ping-pong, timed as a whole: ns per switch (half a round trip); the two
    threads on ``target`` (or on ``target`` and ``partner``)."""
    n = max(100, round(SWITCH_ROUND_TRIPS * scale))
    # validated as same-cpu (this process is pinned to ``target`` here); the CPUs are set
    q = cs.check_params("pipe", "same-cpu", "threads", n, max(10, n // 10), 0, 1, 10.0)
    q = {**q, "cpu_a": target, "cpu_b": target if partner is None else partner}
    raw = cs._pingpong(q, per_sample=False, record_cpus=False, stall_after=-1)
    per_switch = raw["total_ns"] / max(raw["completed"], 1) / 2
    return {"repeat": rep, "yardstick": name, "cpu": target, "ops_per_batch": raw["completed"],
            "batches": 1, "ns_median": per_switch, "ns_min": per_switch,
            "ns_max": per_switch, "timer_overhead_ns": 0}
