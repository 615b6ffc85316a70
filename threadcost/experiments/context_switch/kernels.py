"""Context switch, part two: the C kernels called once (the ping-pong and its
baselines), handing plain Python values back; re-exported by
:mod:`threadcost.experiments.context_switch.run`."""

from __future__ import annotations

from typing import Any

import numpy as np

from threadcost.errors import KernelError, check_status
from threadcost.native import ffi, interruptible, lib

# The C codes of the names declared in context_switch_params.
MECHANISM_CODES = {"pipe": lib.TC_SW_PIPE, "condvar": lib.TC_SW_CONDVAR,
                   "futex": lib.TC_SW_FUTEX, "eventfd": lib.TC_SW_EVENTFD}
TASK_CODES = {"threads": lib.TC_SW_THREADS, "processes": lib.TC_SW_PROCESSES}
# The work of one hop done by one task alone (no partner, so no switch).
SELF_HOP = {"pipe": lib.TC_SWB_SELF_PIPE, "condvar": lib.TC_SWB_SELF_CONDVAR,
            "futex": lib.TC_SWB_SELF_FUTEX, "eventfd": lib.TC_SWB_SELF_EVENTFD}
BASELINES = {
    # name: (kind, operations per timed batch, batches)
    "timer": (lib.TC_SWB_TIMER, 100, 2000),
    "getcpu": (lib.TC_SWB_GETCPU, 100, 2000),
    "empty_syscall": (lib.TC_SWB_EMPTY_SYSCALL, 50, 2000),
    "lock_unlock": (lib.TC_SWB_LOCK_UNLOCK, 200, 1000),
}
STEPS = {
    lib.TC_SW_STEP_NONE: "",
    lib.TC_SW_STEP_SETUP: "creating the pipes, eventfds or shared memory",
    lib.TC_SW_STEP_SPAWN: "starting the partner (pthread_create or fork)",
    lib.TC_SW_STEP_WORKSET: "mapping a working set",
    lib.TC_SW_STEP_PINGPONG: "during the ping-pong",
    lib.TC_SW_STEP_PIN: "pinning (sched_setaffinity)",
}
# What a TC_ELIMIT at each step ran into.
LIMITS = {
    lib.TC_SW_STEP_SETUP: "file descriptors or memory while creating pipes, eventfds or shared "
                          "memory (RLIMIT_NOFILE, RLIMIT_AS)",
    lib.TC_SW_STEP_SPAWN: "threads or processes while starting the partner (RLIMIT_NPROC, the "
                          "pids cgroup, or memory for its stack: RLIMIT_AS)",
    lib.TC_SW_STEP_WORKSET: "memory while mapping a working set (RLIMIT_AS, overcommit or RAM)",
}

# ------------------------------------------------------------------ kernels

def _raise_for(kernel: str, status: int, err: int, where: int, timeout_s: float) -> None:
    if status == lib.TC_ETIMEOUT:
        raise KernelError(kernel, status, 0,
                          f"no round trip completed for {timeout_s:g} s: the partner "
                          "stopped answering (or died), so the watchdog stopped the run")
    check_status(kernel, status, err, STEPS.get(where, ""))


def baseline(kind: int, cpu: int, batches: int, batch: int, *, working_set_kib: int = 0,
             message_bytes: int = 1) -> np.ndarray:
    """Per-operation times (ns) of one baseline: ``batches`` timed batches of
    ``batch`` operations, each divided by ``batch``. Runs in a new thread pinned
    to ``cpu`` (-1: not pinned)."""
    out = ffi.new("int64_t[]", batches)
    err = ffi.new("int *")
    status = lib.tc_switch_baseline(kind, cpu, batches, batch, working_set_kib * 1024,
                                    message_bytes, out, err)
    check_status("tc_switch_baseline", status, err[0])
    if status == lib.TC_ELIMIT:
        raise KernelError("tc_switch_baseline", status, err[0], "a system limit")
    return np.frombuffer(ffi.buffer(out), dtype=np.int64).astype(float) / batch


def touch_cost(working_set_kib: int, cpu: int, budget_s: float = 0.2) -> np.ndarray:
    """Times (ns) of writing a warm working set of ``working_set_kib`` once."""
    probe = baseline(lib.TC_SWB_TOUCH, cpu, 3, 1, working_set_kib=working_set_kib)
    each = max(float(np.median(probe)), 1.0)
    batches = int(min(2000, max(20, budget_s * 1e9 / each)))
    return baseline(lib.TC_SWB_TOUCH, cpu, batches, 1, working_set_kib=working_set_kib)


def measure_baselines(mechanism: str, cpu: int, message_bytes: int = 1,
                      working_set_kib: int = 0, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Every baseline for one configuration, on side A's CPU: the timer, getcpu,
    an empty syscall, an uncontended lock, the mechanism's hop without a
    partner, and (with a working set) the warm touch. ``scale`` shrinks the
    number of batches (quick runs)."""
    out: dict[str, np.ndarray] = {}
    for name, (kind, batch, batches) in BASELINES.items():
        out[name] = baseline(kind, cpu, max(20, int(batches * scale)), batch)
    out["self_hop"] = baseline(SELF_HOP[mechanism], cpu, max(20, int(2000 * scale)), 10,
                               message_bytes=message_bytes)
    if working_set_kib > 0:
        out["touch"] = touch_cost(working_set_kib, cpu, budget_s=0.2 * scale)
    return out


def _pingpong(p: dict[str, Any], per_sample: bool, record_cpus: bool,
              stall_after: int) -> dict[str, Any]:
    """Run the C kernel once; plain Python values back (picklable)."""
    n = p["iterations"]
    cfg = ffi.new("tc_switch_config *")
    cfg.mechanism = MECHANISM_CODES[p["mechanism"]]
    cfg.tasks = TASK_CODES[p["tasks"]]
    cfg.cpu_a, cfg.cpu_b = p["cpu_a"], p["cpu_b"]
    cfg.iterations = n
    cfg.warmup = p["warmup"]
    cfg.working_set_bytes = p["working_set_kib"] * 1024
    cfg.message_bytes = p["message_bytes"]
    cfg.per_sample = int(per_sample)
    cfg.record_cpus = int(record_cpus)
    cfg.timeout_ms = max(1, round(p["timeout_s"] * 1000))
    cfg.test_stall_after = stall_after
    samples = ffi.new("int64_t[]", n) if per_sample else ffi.NULL
    cpu_a = ffi.new("int32_t[]", n) if record_cpus else ffi.NULL
    cpu_b = ffi.new("int32_t[]", n) if record_cpus else ffi.NULL
    out = ffi.new("tc_switch_result *")
    status = interruptible(lib.tc_switch_pingpong, cfg, samples, cpu_a, cpu_b, out)
    _raise_for("tc_switch_pingpong", status, out.err, out.where, p["timeout_s"])
    done = int(out.completed)

    def take(arr: Any, dtype: Any) -> np.ndarray:
        if arr == ffi.NULL:
            return np.zeros(0, dtype=dtype)
        return np.frombuffer(ffi.buffer(arr), dtype=dtype)[:done].copy()

    def side(s: Any) -> dict[str, int]:
        return {"voluntary": int(s.voluntary), "involuntary": int(s.involuntary),
                "user_ns": int(s.user_ns), "sys_ns": int(s.sys_ns),
                "cpu_after_pin": int(s.cpu_after_pin), "pin_err": int(s.pin_err)}

    return {"status": int(status), "err": int(out.err), "where": int(out.where),
            "completed": done, "total_ns": int(out.total_ns),
            "a": side(out.a), "b": side(out.b), "child_killed": int(out.child_killed),
            "samples": take(samples, np.int64), "cpu_a": take(cpu_a, np.int32),
            "cpu_b": take(cpu_b, np.int32)}

