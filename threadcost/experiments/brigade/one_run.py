"""The brigade, part two: one run of one kind at one N on one transport (a C brigade in a
fresh child process, or the Go peer's goroutine brigade), as a plain dict of what it measured;
re-exported by :mod:`threadcost.experiments.brigade.run`."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from threadcost.errors import KernelError, check_status
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.native import ffi, interruptible, lib, proc_status_dict
from threadcost.runsafety.isolate import run_isolated

# The C codes of the kinds declared in brigade_params, and what a limit code ran into.
C_KINDS = {"thread": lib.TC_BR_THREAD, "epoll": lib.TC_BR_EPOLL,
           "one-thread": lib.TC_BR_ONE_THREAD}
C_TRANSPORTS = {"pipe": lib.TC_BR_PIPE, "socketpair": lib.TC_BR_SOCKETPAIR}
LIMITS = {
    lib.TC_BR_LIMIT_FDS: "open files (RLIMIT_NOFILE or fs.file-max): a task needs 2 fds",
    lib.TC_BR_LIMIT_THREADS: "thread creation refused (pthread_create EAGAIN: cgroup pids.max, "
                             "kernel.threads-max or kernel.pid_max)",
    lib.TC_BR_LIMIT_MEMORY: "memory (ENOMEM: a thread stack, a pipe or kernel memory)",
}
GO_LIMITS = {"fds": LIMITS[lib.TC_BR_LIMIT_FDS], "memory": LIMITS[lib.TC_BR_LIMIT_MEMORY]}

# ------------------------------------------------------------------ one run


def _as_array(buf: Any, n: int) -> np.ndarray:
    return np.frombuffer(ffi.buffer(buf, n * 8), dtype=np.int64).copy()


def _count(path: str) -> int:
    try:
        return len(os.listdir(path))
    except OSError:
        return -1


def _threads_settled(baseline: int, within_s: float = 1.0) -> int:
    """This process's thread count once joined threads have left /proc/self/task.

    A joined thread can stay listed for a moment after pthread_join returns, so
    the count is read again (for up to ``within_s``) until it is back at
    ``baseline``; a thread really left behind still shows after that.
    """
    deadline = time.monotonic() + within_s
    count = _count("/proc/self/task")
    while count > baseline and time.monotonic() < deadline:
        time.sleep(0.001)
        count = _count("/proc/self/task")
    return count


def _kernel_kib(m: Any) -> int:
    return int(m.kernel_stack_kib) + int(m.page_tables_kib) + int(m.sunreclaim_kib)


def _c_child(kind: int, tasks: int, cpu: int, iterations: int, warmup: int, stack_kib: int,
             timeout_ms: int, stall_after: int = -1, raise_hard: int = 1,
             transport: int = 0) -> dict[str, Any]:
    """Child side: one C brigade; the process's threads and fds before, at the
    brigade's height and after it returned."""
    threads_before, fds_before = _count("/proc/self/task"), _count("/proc/self/fd") - 1
    cfg = ffi.new("tc_brigade_config *")
    cfg.kind, cfg.tasks, cfg.cpu = kind, tasks, cpu
    cfg.iterations, cfg.warmup, cfg.stack_kib = iterations, warmup, stack_kib
    cfg.raise_hard_nofile, cfg.timeout_ms = raise_hard, timeout_ms
    cfg.test_stall_after = stall_after
    cfg.transport = transport
    trips = ffi.new("int64_t[]", iterations)
    out = ffi.new("tc_brigade_result *")
    status = interruptible(lib.tc_brigade_run, cfg, trips, out)
    if status != lib.TC_ETIMEOUT:
        check_status("tc_brigade_run", status, out.err, f"step {out.where}")
    done = int(out.completed)
    return {
        "status": int(status), "err": int(out.err), "limit": int(out.limit),
        "timed_out": int(out.timed_out), "completed": done,
        "trip_ns": _as_array(trips, done) if status == lib.TC_OK else np.zeros(0, np.int64),
        "tasks_ready": int(out.tasks_ready), "bytes_sent": int(out.bytes_sent),
        "bytes_arrived": int(out.bytes_arrived), "bytes_wrong": int(out.bytes_wrong),
        "total_ns": int(out.total_ns), "timer_overhead_ns": int(out.timer_overhead_ns),
        "nofile_soft": int(out.nofile_soft), "nofile_hard": int(out.nofile_hard),
        "before": proc_status_dict(out.before), "ready": proc_status_dict(out.ready),
        "kernel_before_kib": _kernel_kib(out.mem_before),
        "kernel_ready_kib": _kernel_kib(out.mem_ready),
        "voluntary": int(out.voluntary), "involuntary": int(out.involuntary),
        "cpu_after_pin": int(out.cpu_after_pin),
        "threads_before": threads_before, "threads_after": _threads_settled(threads_before),
        "fds_before": fds_before, "fds_ready": int(out.fds_ready) - int(out.fds_before)
        + fds_before, "fds_after": _count("/proc/self/fd") - 1,
    }


def _run_c(kind: str, tasks: int, cpu: int | None, p: dict[str, Any],
           stall_after: int = -1) -> dict[str, Any]:
    hops = (p["iterations"] + p["warmup"]) * (tasks + 1)
    deadline = 60.0 + tasks * 1e-3 + hops * 50e-6 + p["timeout_s"]
    raw = run_isolated(_c_child, {
        "kind": C_KINDS[kind], "tasks": tasks, "cpu": -1 if cpu is None else cpu,
        "iterations": p["iterations"], "warmup": p["warmup"], "stack_kib": p["stack_kib"],
        "timeout_ms": int(p["timeout_s"] * 1000), "stall_after": stall_after,
        "raise_hard": 0 if p["max_fds"] else 1,
        "transport": C_TRANSPORTS[p.get("transport", "pipe")]},
        timeout=deadline, rlimits=_fd_rlimits(p["max_fds"]))
    if raw["status"] == lib.TC_ETIMEOUT:
        raise KernelError("tc_brigade_run", lib.TC_ETIMEOUT, 0,
                          f"{kind} brigade of {tasks:,} tasks: no trip completed for "
                          f"{p['timeout_s']:g} s after {raw['bytes_sent']:,} trips")
    limit = None
    if raw["status"] == lib.TC_ELIMIT:
        limit = LIMITS.get(raw["limit"], "a system limit")
    return {
        "limit": limit, "errno": raw["err"], "trip_ns": raw["trip_ns"],
        "timer_overhead_ns": raw["timer_overhead_ns"], "tasks_ready": raw["tasks_ready"],
        "bytes_sent": raw["bytes_sent"], "bytes_arrived": raw["bytes_arrived"],
        "bytes_wrong": raw["bytes_wrong"],
        "rss_before_kib": raw["before"]["rss_kib"], "rss_ready_kib": raw["ready"]["rss_kib"],
        "kernel_before_kib": raw["kernel_before_kib"],
        "kernel_ready_kib": raw["kernel_ready_kib"],
        "tasks_before": raw["threads_before"], "tasks_height": raw["ready"]["threads"],
        "tasks_after": raw["threads_after"],
        "fds_before": raw["fds_before"], "fds_ready": raw["fds_ready"],
        "fds_after": raw["fds_after"], "voluntary": raw["voluntary"],
        "involuntary": raw["involuntary"], "nofile_soft": raw["nofile_soft"],
    }


def _fd_rlimits(max_fds: int | None) -> dict[int, tuple[int, int]] | None:
    import resource

    return {resource.RLIMIT_NOFILE: (max_fds, max_fds)} if max_fds else None


def _run_go(tasks: int, cpu: int | None, p: dict[str, Any],
            stall_after: int = -1) -> dict[str, Any]:
    args = ["brigade", "-tasks", str(tasks), "-iterations", str(p["iterations"]),
            "-warmup", str(p["warmup"]), "-timeout-ms", str(int(p["timeout_s"] * 1000)),
            "-stall-after", str(stall_after), "-transport", p.get("transport", "pipe")]
    if cpu is not None:
        args += ["-cpu", str(cpu)]
    if p["max_fds"]:
        args += ["-max-fds", str(p["max_fds"])]
    hops = (p["iterations"] + p["warmup"]) * (tasks + 1)
    data = peers.run_program(args, timeout=60.0 + tasks * 1e-3 + hops * 50e-6 + p["timeout_s"])
    if data.get("timed_out"):
        raise KernelError("tcpeers brigade", lib.TC_ETIMEOUT, 0,
                          f"goroutine brigade of {tasks:,} tasks: no trip completed for "
                          f"{p['timeout_s']:g} s")
    limit = GO_LIMITS.get(data["limit"]) if data.get("limit") else None
    rss_ready = data.get("rss_ready_kib")
    kern_before, kern_ready = data.get("kernel_before_kib"), data.get("kernel_ready_kib")
    if kern_before is None or kern_ready is None or min(kern_before, kern_ready) < 0:
        kern_before = kern_ready = None
    return {
        "limit": limit, "errno": int(data.get("errno") or 0),
        "trip_ns": np.asarray(data.get("samples_ns", []), dtype=np.int64),
        "timer_overhead_ns": int(data["timer_overhead_ns"]),
        "tasks_ready": int(data.get("tasks_ready", 0)),
        "bytes_sent": int(data.get("bytes_sent", 0)),
        "bytes_arrived": int(data.get("bytes_arrived", 0)),
        "bytes_wrong": int(data.get("bytes_wrong", 0)),
        "rss_before_kib": int(data["rss_before_kib"]),
        "rss_ready_kib": int(rss_ready) if rss_ready is not None else None,
        "kernel_before_kib": kern_before, "kernel_ready_kib": kern_ready,
        "tasks_before": int(data["goroutines_before"]),
        "tasks_height": int(data.get("goroutines_ready", 0)),
        "tasks_after": int(data.get("goroutines_after", data["goroutines_before"])),
        "fds_before": int(data["fds_before"]), "fds_ready": int(data.get("fds_ready", -1)),
        "fds_after": int(data["fds_after"]), "voluntary": None, "involuntary": None,
        "nofile_soft": int(data.get("nofile_soft", -1)),
    }


def run_one(kind: str, tasks: int, placement: str, p: dict[str, Any],
            stall_after: int = -1) -> dict[str, Any]:
    """One brigade run (parameters validated by the caller); a plain dict."""
    cpu = p["cpu"] if placement == "same-cpu" else None
    if kind == "goroutine":
        return _run_go(tasks, cpu, p, stall_after)
    return _run_c(kind, tasks, cpu, p, stall_after)

