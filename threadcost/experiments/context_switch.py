"""Context-switch cost: two tasks ping-pong a token (claims C01, C02, C13, C14).

Side A passes a token to side B and waits for it to come back: one **round
trip**. The token travels through a pipe pair, a mutex + condition variable, a
futex word per side or an eventfd pair; the two sides are threads of one
process or a thread and a forked child process; they are pinned to one CPU,
to two CPUs, or left to the scheduler. Side A stamps every round trip, both
sides note the CPU they ran on, and both count their context switches with
``getrusage`` around the timed region, so the **switches per round trip** are
measured, not assumed to be 2; the time per switch is derived from that count.

:func:`run` measures one configuration and is the API other experiments call
(e.g. the user-space-task comparison takes its thread rows from here).
:func:`sweep` and :func:`working_set_sweep` run many configurations into one
result for the notebook; :func:`perf_cross_check` and :func:`timing_check` set
this kernel beside ``perf bench sched pipe`` and beside itself without
per-sample timing.
"""

from __future__ import annotations

import itertools
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from threadcost import machine, stats, sysinfo, textout, validate
from threadcost.errors import KernelError, ParameterError, check_status
from threadcost.native import ffi, interruptible, lib
from threadcost.results import Result

EXPERIMENT = "context_switch"
MECHANISMS = {"pipe": lib.TC_SW_PIPE, "condvar": lib.TC_SW_CONDVAR,
              "futex": lib.TC_SW_FUTEX, "eventfd": lib.TC_SW_EVENTFD}
PLACEMENTS = ("same-cpu", "cross-cpu", "smt-siblings", "unpinned")
TASKS = {"threads": lib.TC_SW_THREADS, "processes": lib.TC_SW_PROCESSES}
MAX_ITERATIONS = 10_000_000
MAX_MESSAGE = 4096
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
BASELINE_TEXT = {
    "timer": "one clock_gettime(CLOCK_MONOTONIC) through the vDSO",
    "getcpu": "one sched_getcpu()",
    "empty_syscall": "one empty system call (getppid)",
    "lock_unlock": "an uncontended pthread mutex lock + unlock",
    "self_hop": "one hop's calls made by one task alone (no partner, no switch)",
    "touch": "writing the working set once with warm caches (one word per 64-byte line)",
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
# C01/C02 were published for pipe and condvar ping-pong between two threads.
CLAIM_MECHANISMS = ("pipe", "condvar")


# --------------------------------------------------------------- parameters

def choose_cpus(placement: str, mask: Sequence[int] | None = None,
                siblings: Sequence[Sequence[int]] | None = None) -> tuple[int, int]:
    """The CPUs of sides A and B for a placement (-1: not pinned).

    same-cpu: both on the last CPU of the affinity mask. cross-cpu: two CPUs
    of different cores when the machine has SMT, else any two. smt-siblings:
    two hardware threads of one core. Raises ParameterError when this process
    may not run on enough CPUs for the placement.
    """
    cpus = list(mask if mask is not None else sysinfo.affinity())
    groups = [list(g) for g in (siblings if siblings is not None
                                else machine.smt_siblings())]
    if placement == "unpinned":
        return -1, -1
    if placement == "same-cpu":
        return cpus[-1], cpus[-1]
    if placement == "cross-cpu":
        if len(cpus) < 2:
            raise ParameterError("placement", placement,
                                 f"needs 2 CPUs in this process's affinity mask, which "
                                 f"holds only {cpus}")
        first = cpus[0]
        same_core = next((set(g) for g in groups if first in g), {first})
        other = next((c for c in cpus[1:] if c not in same_core), cpus[1])
        return first, other
    if placement == "smt-siblings":
        for group in groups:
            usable = [c for c in group if c in cpus]
            if len(usable) >= 2:
                return usable[0], usable[1]
        raise ParameterError("placement", placement,
                             "needs two SMT siblings (hardware threads of one core) in "
                             f"this process's affinity mask; this machine's cores are "
                             f"{textout.cpu_groups(groups)}")
    raise ParameterError("placement", placement, "must be one of " + ", ".join(PLACEMENTS))


def check_params(mechanism: Any = "pipe", placement: Any = "same-cpu",
                 tasks: Any = "threads", iterations: Any = 20_000, warmup: Any = 2_000,
                 working_set_kib: Any = 0, message_bytes: Any = 1,
                 timeout_s: Any = 10.0) -> dict[str, Any]:
    """Validate and normalise the parameters of :func:`run` (raises ParameterError)."""
    mech = validate.choice("mechanism", mechanism, MECHANISMS)
    place = validate.choice("placement", placement, PLACEMENTS)
    kind = validate.choice("tasks", tasks, TASKS)
    n = validate.integer("iterations", iterations, minimum=1, maximum=MAX_ITERATIONS)
    warm = validate.integer("warmup", warmup, minimum=0, maximum=MAX_ITERATIONS)
    ws = validate.integer("working_set_kib", working_set_kib, minimum=0, maximum=1 << 40)
    msg = validate.integer("message_bytes", message_bytes, minimum=1, maximum=MAX_MESSAGE)
    if msg != 1 and mech != "pipe":
        raise ParameterError("message_bytes", message_bytes,
                             "only the pipe mechanism carries a message; must be 1 for "
                             f"{mech}")
    timeout = validate.number("timeout_s", timeout_s, minimum=0.01, maximum=3600.0)
    # both sides' working sets, plus 16 bytes of samples and CPUs per round trip
    validate.memory_fits("working_set_kib", working_set_kib, 2 * ws + (16 * n) // 1024)
    cpu_a, cpu_b = choose_cpus(place)
    return {"mechanism": mech, "placement": place, "tasks": kind, "iterations": n,
            "warmup": warm, "working_set_kib": ws, "message_bytes": msg,
            "timeout_s": timeout, "cpu_a": cpu_a, "cpu_b": cpu_b}


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
    cfg.mechanism = MECHANISMS[p["mechanism"]]
    cfg.tasks = TASKS[p["tasks"]]
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


# --------------------------------------------------------------------- run

def run(mechanism: Any = "pipe", placement: Any = "same-cpu", tasks: Any = "threads",
        iterations: Any = 20_000, warmup: Any = 2_000, working_set_kib: Any = 0,
        message_bytes: Any = 1, *, per_sample: bool = True, record_cpus: bool = True,
        baselines: bool = True, baseline_scale: float = 1.0, timeout_s: Any = 10.0,
        isolated: bool = False, test_stall_after: int | None = None) -> Result:
    """Ping-pong a token ``iterations`` times between two tasks and time each round trip.

    Parameters (all validated before any C runs):

    - ``mechanism``: ``pipe`` (1-byte writes, or ``message_bytes``), ``condvar``
      (mutex + condition variable), ``futex`` (a futex word per side, PRIVATE
      for threads), ``eventfd``.
    - ``placement``: ``same-cpu`` (both pinned to one CPU), ``cross-cpu`` (two
      CPUs), ``smt-siblings`` (two hardware threads of one core, where the
      machine has SMT), ``unpinned`` (the scheduler decides). Pinning is done
      inside the kernel with sched_setaffinity and checked with sched_getcpu.
    - ``tasks``: ``threads`` (two threads of this process) or ``processes``
      (a thread of this process and a forked child; process-shared futex,
      mutex and condvar).
    - ``iterations`` timed round trips after ``warmup`` untimed ones.
    - ``working_set_kib``: each side writes this much of its own memory on every
      hop (one word per 64-byte line), the cache/TLB footprint of a real task.
    - ``per_sample``: a timestamp per round trip (else only the total);
      ``record_cpus``: both sides note their CPU on every round trip.
    - ``baselines``: also measure the timer, getcpu, an empty syscall, an
      uncontended lock, the hop without a partner and the warm touch, on side A's CPU;
      ``baseline_scale`` (0.001 .. 100) scales how many batches each baseline times.
    - ``timeout_s``: the watchdog ends the run with a KernelError when no round
      trip completes for this long (a partner that stopped answering).
    - ``isolated``: run in a child process (threadcost.isolate) instead of here.
    - ``test_stall_after``: tests only: B stops answering after this many round trips.

    The summary holds ``round_trip_ns`` and ``switch_ns`` distributions
    (min, p50, p90, p99, p999, max, mean, n), ``switches_per_round_trip`` as
    measured, ``cpus_seen``, the baselines and the claim rows.
    """
    p = check_params(mechanism, placement, tasks, iterations, warmup, working_set_kib,
                     message_bytes, timeout_s)
    scale = validate.number("baseline_scale", baseline_scale, minimum=0.001, maximum=100.0)
    stall = -1 if test_stall_after is None else validate.integer(
        "test_stall_after", test_stall_after, minimum=0)
    kwargs = {"p": p, "per_sample": bool(per_sample), "record_cpus": bool(record_cpus),
              "stall_after": stall}
    if isolated:
        from threadcost.isolate import run_isolated

        raw = run_isolated(_pingpong, kwargs, timeout=p["timeout_s"] * 3 + 60
                           + p["iterations"] * 1e-4)
    else:
        raw = _pingpong(**kwargs)
    base = (measure_baselines(p["mechanism"], p["cpu_a"], p["message_bytes"],
                              p["working_set_kib"], scale) if baselines else {})
    return assemble(p, raw, base, per_sample=bool(per_sample),
                    record_cpus=bool(record_cpus))


def assemble(p: dict[str, Any], raw: dict[str, Any], base: dict[str, np.ndarray], *,
             per_sample: bool, record_cpus: bool) -> Result:
    """Build the Result of one configuration from the kernel's raw output."""
    done = raw["completed"]
    rt = raw["samples"].astype(float)
    a, b = raw["a"], raw["b"]
    switches = a["voluntary"] + a["involuntary"] + b["voluntary"] + b["involuntary"]
    spr = switches / done if done else float("nan")
    per_switch_ok = done > 0 and spr >= 0.5
    cpus_a = sorted({int(c) for c in raw["cpu_a"]})
    cpus_b = sorted({int(c) for c in raw["cpu_b"]})
    if not record_cpus:
        cpus_a = [a["cpu_after_pin"]] if a["cpu_after_pin"] >= 0 else []
        cpus_b = [b["cpu_after_pin"]] if b["cpu_after_pin"] >= 0 else []
    rt_dist = stats.distribution(rt) if per_sample else stats.distribution([])
    whole_mean = raw["total_ns"] / done if done else float("nan")
    summary: dict[str, Any] = {
        "round_trip_ns": rt_dist,
        "switch_ns": stats.distribution(rt / spr) if per_sample and per_switch_ok
        else stats.distribution([]),
        "switches_per_round_trip": spr,
        "switches": {"a_voluntary": a["voluntary"], "a_involuntary": a["involuntary"],
                     "b_voluntary": b["voluntary"], "b_involuntary": b["involuntary"],
                     "total": switches},
        "cpu_time_ns": {"a_user": a["user_ns"], "a_sys": a["sys_ns"],
                        "b_user": b["user_ns"], "b_sys": b["sys_ns"]},
        "sys_ns_per_round_trip": (a["sys_ns"] + b["sys_ns"]) / done if done else None,
        "cpus_requested": [p["cpu_a"], p["cpu_b"]],
        "cpus_seen": sorted(set(cpus_a) | set(cpus_b)),
        "cpus_seen_a": cpus_a,
        "cpus_seen_b": cpus_b,
        "pinning_verified": _pinning_verified(p, cpus_a, cpus_b),
        "completed": done,
        "total_ns": raw["total_ns"],
        "whole_run_mean_ns": whole_mean,
        "transparent_hugepages": _thp_mode(),
    }
    if record_cpus and done:
        together = raw["cpu_a"] == raw["cpu_b"]
        summary["same_cpu_share"] = float(np.mean(together))
        if per_sample:
            summary["round_trip_ns_same_cpu"] = stats.distribution(rt[together])
            summary["round_trip_ns_different_cpus"] = stats.distribution(rt[~together])
    if per_sample and per_switch_ok:
        lo, hi = median_ci95(rt / spr)
        summary["switch_ns_p50_ci95"] = [lo, hi]
    summary["baselines"] = {name: stats.distribution(v) for name, v in base.items()}
    summary.update(_derived(p, summary, base, record_cpus))
    tables: dict[str, pd.DataFrame] = {}
    if per_sample:
        frame = {"round_trip_ns": raw["samples"]}
        if record_cpus:
            frame.update(cpu_a=raw["cpu_a"], cpu_b=raw["cpu_b"])
        tables["samples"] = pd.DataFrame(frame)
    if base:
        tables["baselines"] = pd.DataFrame(
            [{"baseline": name, "ns_per_op": float(x)} for name, v in base.items()
             for x in v])
    params = {**p, "per_sample": per_sample, "record_cpus": record_cpus}
    limit_hit = None
    if raw["status"] == lib.TC_ELIMIT:
        from threadcost.experiments.limits import name_from_errno

        limit_hit = {"limit": f"{name_from_errno(int(raw['err']), 'tasks')}: "
                              f"{LIMITS.get(raw['where'], 'a system limit')}",
                     "errno": raw["err"]}
    return Result(EXPERIMENT, params, summary, tables, limit_hit)


def median_ci95(samples: np.ndarray) -> tuple[float, float]:
    """A distribution-free 95% interval of the median: the order statistics at
    n/2 -+ 1.96 sqrt(n)/2 (normal approximation of the binomial)."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    if n == 0:
        return float("nan"), float("nan")
    half = 1.96 * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half))
    return float(x[lo]), float(x[hi])


def _pinning_verified(p: dict[str, Any], cpus_a: list[int], cpus_b: list[int]) -> bool | None:
    if p["cpu_a"] < 0:
        return None
    return cpus_a == [p["cpu_a"]] and cpus_b == [p["cpu_b"]]


def _thp_mode() -> str | None:
    text = sysinfo.read_text("/sys/kernel/mm/transparent_hugepage/enabled")
    if not text:
        return None
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else text


def _derived(p: dict[str, Any], s: dict[str, Any], base: dict[str, np.ndarray],
             record_cpus: bool) -> dict[str, Any]:
    """Baseline-relative numbers: instrumentation share, net switch, net of touching."""
    out: dict[str, Any] = {}
    p50 = s["round_trip_ns"]["p50"]
    if "timer" in base and math.isfinite(p50) and p50 > 0:
        timer = float(np.median(base["timer"]))
        getcpu = float(np.median(base["getcpu"])) if record_cpus else 0.0
        cost = timer + 2 * getcpu  # A stamps and notes its CPU; B notes its CPU
        out["instrumentation_ns_per_sample"] = cost
        out["instrumentation_share"] = cost / p50
    touch = float(np.median(base["touch"])) if "touch" in base else 0.0
    if p["working_set_kib"] > 0 and "touch" in base:
        out["touch_ns_p50"] = touch
        out["round_trip_minus_touch_ns"] = {
            k: s["round_trip_ns"][k] - 2 * touch for k in ("min", "p50", "p90", "p99", "max",
                                                           "mean")}
    spr = s["switches_per_round_trip"]
    if "self_hop" in base and math.isfinite(p50) and spr >= 0.5:
        hop = float(np.median(base["self_hop"]))
        out["self_hop_ns_p50"] = hop
        # what the two switches cost beyond the calls a hop makes anyway
        out["switch_net_ns_p50"] = (p50 - 2 * hop - 2 * touch) / spr
    return out


def targets(headline: Result, perf: Result | None = None,
            timing: Result | None = None) -> pd.DataFrame:
    """The issue's benchmark targets, measured: each with its value and whether it was met.

    ``headline`` is a same-cpu pipe run of threads with baselines.
    """
    s = headline.summary
    rows = []
    share = s.get("instrumentation_share")
    if share is not None:
        rows.append({"target": "timer (and CPU notes) per sample <= 2% of a same-cpu round trip",
                     "measured": f"{share:.2%}", "met": share <= 0.02})
    rate = s["completed"] / (s["total_ns"] / 1e9) if s["total_ns"] else float("nan")
    rows.append({"target": "100,000 same-cpu round trips with per-sample timing in < 2 s",
                 "measured": f"{100_000 / rate:.2f} s at this run's rate",
                 "met": 100_000 / rate < 2.0})
    if perf is not None and perf.summary.get("perf_available"):
        r = perf.summary["ratio_ours_over_perf"]
        rows.append({"target": "pipe round trip within +-15% of perf bench sched pipe -T",
                     "measured": f"ratio {r:.3f}", "met": abs(r - 1) <= 0.15})
    elif perf is not None:
        rows.append({"target": "pipe round trip within +-15% of perf bench sched pipe -T",
                     "measured": f"not run: {perf.summary.get('reason')}", "met": None})
    if timing is not None:
        r = timing.summary["ratio"]
        rows.append({"target": "per-sample mean and whole-run mean agree within 5%",
                     "measured": f"ratio {r:.3f}", "met": abs(r - 1) <= 0.05})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- studies

def _config_row(r: Result) -> dict[str, Any]:
    p, s = r.params, r.summary
    row = {k: p[k] for k in ("mechanism", "placement", "tasks", "working_set_kib",
                             "iterations", "cpu_a", "cpu_b")}
    for key in ("min", "p50", "p90", "p99", "p999", "max", "mean"):
        row[f"round_trip_{key}_ns"] = s["round_trip_ns"][key]
        row[f"switch_{key}_ns"] = s["switch_ns"][key]
    row.update(switches_per_round_trip=s["switches_per_round_trip"],
               whole_run_mean_ns=s["whole_run_mean_ns"],
               sys_ns_per_round_trip=s["sys_ns_per_round_trip"],
               cpus_seen=" ".join(map(str, s["cpus_seen"])),
               same_cpu_share=s.get("same_cpu_share"),
               voluntary=s["switches"]["a_voluntary"] + s["switches"]["b_voluntary"],
               involuntary=s["switches"]["a_involuntary"] + s["switches"]["b_involuntary"])
    return row


QUANTILES = np.unique(np.concatenate([np.linspace(0, 0.99, 199),
                                      np.linspace(0.99, 1.0, 51)]))


def quantile_table(r: Result, keys: Iterable[str] = ("mechanism", "placement", "tasks",
                                                     "working_set_kib")) -> pd.DataFrame:
    """250 quantiles of the round trip (denser in the top 1%): enough to redraw an ECDF."""
    samples = r.tables["samples"]["round_trip_ns"].to_numpy(dtype=float)
    frame = pd.DataFrame({"quantile": QUANTILES,
                          "round_trip_ns": np.quantile(samples, QUANTILES)})
    for key in keys:
        frame.insert(0, key, r.params[key])
    return frame


def plan(mechanisms: Sequence[str], placements: Sequence[str],
         tasks: Sequence[str]) -> tuple[list[tuple[str, str, str]], list[dict[str, str]]]:
    """The configurations a sweep will run, and those it cannot run here (with why)."""
    todo, skipped = [], []
    for place in placements:
        validate.choice("placements", place, PLACEMENTS)
    for mech in mechanisms:
        validate.choice("mechanisms", mech, MECHANISMS)
    for kind in tasks:
        validate.choice("tasks", kind, TASKS)
    for place, mech, kind in itertools.product(placements, mechanisms, tasks):
        try:
            choose_cpus(place)
        except ParameterError as exc:
            skipped.append({"mechanism": mech, "placement": place, "tasks": kind,
                            "reason": exc.allowed})
            continue
        todo.append((mech, place, kind))
    return todo, skipped


def sweep(mechanisms: Sequence[str] = tuple(MECHANISMS), placements: Sequence[str] = (
          "same-cpu", "cross-cpu", "unpinned"), tasks: Sequence[str] = tuple(TASKS),
          iterations: int = 20_000, warmup: int = 2_000, *, baseline_scale: float = 1.0,
          progress: bool = True) -> tuple[Result, dict[tuple[str, str, str], Result]]:
    """Every mechanism x placement x task kind: one combined Result and the per-config ones.

    The combined result's tables: ``configs`` (one row per configuration),
    ``quantiles`` (to redraw each distribution), ``baselines`` (per pinned CPU),
    ``skipped`` (placements this machine cannot run, with the reason). Its
    summary holds the claim rows of every configuration.
    """
    from threadcost.progress import bar as tqdm

    todo, skipped = plan(mechanisms, placements, tasks)
    validate.integer("iterations", iterations, minimum=1, maximum=MAX_ITERATIONS)
    results: dict[tuple[str, str, str], Result] = {}
    for mech, place, kind in tqdm(todo, desc="ping-pong", disable=not progress):
        results[(mech, place, kind)] = run(mech, place, kind, iterations, warmup,
                                           baselines=False)
    base_rows = []
    for place in dict.fromkeys(pl for _, pl, _ in todo):
        cpu = choose_cpus(place)[0]
        measured = {name: baseline(kind, cpu, max(20, int(batches * baseline_scale)), batch)
                    for name, (kind, batch, batches) in BASELINES.items()}
        for mech in mechanisms:  # the hop alone, per mechanism
            measured[f"self_hop_{mech}"] = baseline(
                SELF_HOP[mech], cpu, max(20, int(2000 * baseline_scale)), 10)
        base_rows += [{"placement": place, "cpu": cpu, "baseline": name,
                       **stats.distribution(values)} for name, values in measured.items()]
    configs = pd.DataFrame([_config_row(r) for r in results.values()])
    quantiles = pd.concat([quantile_table(r) for r in results.values()], ignore_index=True) \
        if results else pd.DataFrame()
    summary = {
        "configs": configs.to_dict("records"),
        "skipped": skipped,
        "baselines": base_rows,
        "transparent_hugepages": _thp_mode(),
    }
    params = {"mechanisms": list(mechanisms), "placements": list(placements),
              "tasks": list(tasks), "iterations": iterations, "warmup": warmup}
    tables = {"configs": configs, "quantiles": quantiles,
              "baselines": pd.DataFrame(base_rows),
              "skipped": pd.DataFrame(skipped, columns=["mechanism", "placement", "tasks",
                                                        "reason"])}
    return Result(EXPERIMENT, params, summary, tables), results


def working_set_sweep(working_sets_kib: Sequence[int], tasks: Sequence[str] = tuple(TASKS),
                      mechanism: str = "pipe", placement: str = "same-cpu",
                      iterations: int = 5_000, seconds_per_point: float = 1.0, *,
                      progress: bool = True) -> Result:
    """Round trip vs each side's working set, threads vs processes (C13, C14).

    For each working set W, the warm cost of touching W once is measured
    alone; each point's iterations are cut so a point takes about
    ``seconds_per_point``. ``round_trip_minus_touch`` removes the two touches a
    round trip makes, leaving the switches plus what the switch did to the caches.
    """
    from threadcost.progress import bar as tqdm

    sizes = validate.integer_list("working_sets_kib", working_sets_kib, minimum=0,
                                  maximum=1 << 40, max_items=64)
    validate.memory_fits("working_sets_kib", working_sets_kib, 2 * max(sizes))
    seconds = validate.number("seconds_per_point", seconds_per_point, minimum=0.01,
                              maximum=3600)
    n_max = validate.integer("iterations", iterations, minimum=1, maximum=MAX_ITERATIONS)
    cpu = choose_cpus(placement)[0]
    rows, qtables = [], []
    for w in tqdm(sizes, desc="working sets", disable=not progress):
        touch = touch_cost(w, cpu, budget_s=min(0.2, seconds / 4)) if w else np.zeros(1)
        t_touch = float(np.median(touch))
        for kind in tasks:
            probe = run(mechanism, placement, kind, 50, 10, w, baselines=False)
            est = probe.summary["round_trip_ns"]["p50"]
            n = int(min(n_max, max(30, seconds * 1e9 / max(est, 1.0))))
            r = run(mechanism, placement, kind, n, max(20, n // 10), w, baselines=False)
            s = r.summary
            row = _config_row(r)
            row.update(touch_p50_ns=t_touch,
                       round_trip_minus_touch_p50_ns=s["round_trip_ns"]["p50"] - 2 * t_touch,
                       round_trip_minus_touch_mean_ns=s["round_trip_ns"]["mean"] - 2 * t_touch,
                       user_ns_per_round_trip=(s["cpu_time_ns"]["a_user"]
                                               + s["cpu_time_ns"]["b_user"]) / s["completed"])
            rows.append(row)
            qtables.append(quantile_table(r))
    frame = pd.DataFrame(rows)
    summary = {"points": frame.to_dict("records"),
               "transparent_hugepages": _thp_mode()}
    params = {"working_sets_kib": sizes, "tasks": list(tasks), "mechanism": mechanism,
              "placement": placement, "iterations": n_max,
              "seconds_per_point": seconds}
    return Result("context_switch_working_set", params, summary,
                  {"points": frame, "quantiles": pd.concat(qtables, ignore_index=True)})


# ------------------------------------------------------------- cross-checks

_PIN_AND_EXEC = ("import os, sys; cpu = int(sys.argv[1]); "
                 "cpu >= 0 and os.sched_setaffinity(0, {cpu}); "
                 "os.execvp(sys.argv[2], sys.argv[2:])")


def perf_bench_pipe(loops: int, cpu: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """``perf bench sched pipe -T -l loops``, pinned to ``cpu`` (-1: not pinned).

    Returns ``{"ok": True, "round_trip_ns": ...}`` or ``{"ok": False, "reason": ...}``;
    never raises for a missing or failing perf.
    """
    perf = shutil.which("perf")
    if perf is None:
        return {"ok": False, "reason": "perf is not installed"}
    argv = [sys.executable, "-c", _PIN_AND_EXEC, str(cpu), perf, "bench", "sched", "pipe",
            "-T", "-l", str(int(loops))]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"ok": False, "reason": f"perf bench failed: {exc}"}
    text = proc.stdout + proc.stderr
    total = re.search(r"Total time:\s*([0-9.]+)\s*\[sec\]", text)
    if proc.returncode != 0 or total is None:
        last = text.strip().splitlines()[-1] if text.strip() else "no output"
        return {"ok": False, "reason": f"perf bench exited {proc.returncode}: {last}"}
    return {"ok": True, "round_trip_ns": float(total.group(1)) * 1e9 / loops,
            "command": " ".join(argv[3:])}


def perf_cross_check(rounds: int = 5, iterations: int = 20_000,
                     placement: str = "same-cpu") -> Result:
    """This kernel's pipe round trip (threads) beside ``perf bench sched pipe -T``,
    measured alternately with the same placement; the ratio of their mean round
    trips (each tool's median over the rounds, so one disturbed round does not decide).

    perf's "usecs/op" is one loop, in which each thread writes and reads once:
    one round trip, like ours. Our side is timed without per-sample stamps
    (whole-run mean) to match perf, and with them, to show the stamps' cost.
    """
    n_rounds = validate.integer("rounds", rounds, minimum=1, maximum=100)
    n = validate.integer("iterations", iterations, minimum=100, maximum=MAX_ITERATIONS)
    cpu = choose_cpus(validate.choice("placement", placement, PLACEMENTS))[0]
    rows: list[dict[str, Any]] = []
    reason = None
    for i in range(n_rounds):
        perf = perf_bench_pipe(n, cpu)
        if not perf["ok"]:
            reason = perf["reason"]
            break
        ours = run("pipe", placement, "threads", n, n // 10, per_sample=False,
                   record_cpus=False, baselines=False)
        rows.append({"round": i, "tool": "perf bench sched pipe -T",
                     "round_trip_ns": perf["round_trip_ns"]})
        rows.append({"round": i, "tool": "threadcost (whole-run mean)",
                     "round_trip_ns": ours.summary["whole_run_mean_ns"]})
    frame = pd.DataFrame(rows, columns=["round", "tool", "round_trip_ns"])
    summary: dict[str, Any] = {"perf_available": reason is None, "reason": reason,
                               "placement": placement, "cpu": cpu}
    if reason is None:
        means = frame.groupby("tool").round_trip_ns.median()  # robust to a disturbed round
        summary["perf_mean_ns"] = float(means["perf bench sched pipe -T"])
        summary["ours_mean_ns"] = float(means["threadcost (whole-run mean)"])
        summary["ratio_ours_over_perf"] = summary["ours_mean_ns"] / summary["perf_mean_ns"]
    params = {"rounds": n_rounds, "iterations": n, "placement": placement}
    return Result("context_switch_perf_check", params, summary, {"rounds": frame})


def timing_check(rounds: int = 3, iterations: int = 20_000, mechanism: str = "pipe",
                 placement: str = "same-cpu") -> Result:
    """The same configuration with per-sample stamps (and CPU notes) and without,
    alternately: do per-sample timing and the whole-run mean agree?"""
    n_rounds = validate.integer("rounds", rounds, minimum=1, maximum=100)
    rows = []
    for i in range(n_rounds):
        for per_sample in (True, False):
            r = run(mechanism, placement, "threads", iterations, max(1, iterations // 10),
                    per_sample=per_sample, record_cpus=per_sample, baselines=False)
            s = r.summary
            rows.append({"round": i, "per_sample": per_sample,
                         "mean_ns": s["round_trip_ns"]["mean"] if per_sample
                         else s["whole_run_mean_ns"],
                         "whole_run_mean_ns": s["whole_run_mean_ns"]})
    frame = pd.DataFrame(rows)
    stamped = frame[frame.per_sample].mean_ns.median()  # median over rounds of each mean
    bare = frame[~frame.per_sample].mean_ns.median()
    summary = {"per_sample_mean_ns": float(stamped), "whole_run_mean_ns": float(bare),
               "ratio": float(stamped / bare)}
    params = {"rounds": n_rounds, "iterations": iterations, "mechanism": mechanism,
              "placement": placement}
    return Result("context_switch_timing_check", params, summary, {"rounds": frame})


# ------------------------------------------------- pinned vs unpinned, repeated (C02)

PLACEMENT_EXPERIMENT = "context_switch_placement"


def placement_repeats(mechanisms: Sequence[str] = CLAIM_MECHANISMS, repeats: int = 5,
                      iterations: int = 20_000, warmup: int = 2_000) -> Result:
    """S0's ping-pong between two threads, pinned to one CPU vs unpinned, as
    ``repeats`` independent runs of each, interleaved (the order of the two
    placements flips every repeat; each run is a fresh pair of threads).

    Each run is timed as a whole (no clock read per round trip), like S0's;
    ``switch_ns`` is half the mean round trip, S0's definition of one switch.
    The table ``repeats`` has one row per (repeat, mechanism, placement).
    """
    mechs = validate.choice_list("mechanisms", mechanisms, MECHANISMS)
    n_rep = validate.integer("repeats", repeats, minimum=1, maximum=1000)
    n = validate.integer("iterations", iterations, minimum=100, maximum=MAX_ITERATIONS)
    warm = validate.integer("warmup", warmup, minimum=0, maximum=MAX_ITERATIONS)
    rows: list[dict[str, Any]] = []
    order = 0
    for rep in range(n_rep):
        places = ("same-cpu", "unpinned") if rep % 2 == 0 else ("unpinned", "same-cpu")
        for mech in mechs:
            for place in places:
                r = run(mech, place, "threads", n, warm, per_sample=False,
                        record_cpus=False, baselines=False)
                rt = float(r.summary["whole_run_mean_ns"])
                rows.append({"repeat": rep, "order": order, "mechanism": mech,
                             "placement": place, "iterations": n, "round_trip_ns": rt,
                             "switch_ns": rt / 2})
                order += 1
    frame = pd.DataFrame(rows)
    ratios = {}
    for mech, grp in frame.groupby("mechanism", sort=False):
        wide = grp.pivot(index="repeat", columns="placement", values="round_trip_ns")
        ratios[str(mech)] = float((wide["unpinned"] / wide["same-cpu"]).median())
    summary = {"unpinned_over_pinned_median": ratios,
               "switch_ns_median": {f"{m} {pl}": float(g.switch_ns.median())
                                    for (m, pl), g in frame.groupby(["mechanism",
                                                                     "placement"])}}
    params = {"mechanisms": list(mechs), "placements": ["same-cpu", "unpinned"],
              "tasks": "threads", "repeats": n_rep, "iterations": n, "warmup": warm}
    return Result(PLACEMENT_EXPERIMENT, params, summary, {"repeats": frame})
