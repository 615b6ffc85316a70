"""Experiments for the sources S8, S11 and S12 (notebook 08), on the existing kernels.

- :func:`fiber_gap` (S8, Boost.Context): the fibers' hand-written switch against
  ``swapcontext``, and the ``rt_sigprocmask`` system call ``swapcontext`` makes,
  timed alone, all in one pinned child process, interleaved over repeats. Each
  switch's kernel context switches are counted with ``getrusage(RUSAGE_THREAD)``.
- :func:`go_lockosthread` (S11, golang/go#18023): the Go peer's channel ping-pong
  with and without ``runtime.LockOSThread``, runs interleaved; each run reads the
  Go process's own kernel switch counters (``getrusage(RUSAGE_SELF)``).
- :func:`thread_waves` (S12, NPTL): threads created and destroyed in waves: each
  wave starts ``wave`` threads that all stay alive until the last one exists, then
  releases and joins them (``tc_launch_burst``); a repeat is ``waves`` waves in a
  fresh child process, so no wave comes near ``kernel.pid_max``.

Per switch is half a round trip everywhere (the project's one definition).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import ParameterError, check_status
from threadcost.experiments.launch import run as launch
from threadcost.experiments.parameters import declared
from threadcost.experiments.thread_memory.limits import name_from_errno
from threadcost.experiments.user_space_tasks import fibers
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.native import ffi, lib
from threadcost.results import Result
from threadcost.runsafety import syslimits
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

FIBER_GAP = "fiber_gap"
GO_LOCKED = "go_lockosthread"
THREAD_WAVES = "thread_waves"
GAP_ITEMS = ("asm", "ucontext", "sigprocmask")
SIGMASK_OPS = 2000  # calls per timed batch of the sigprocmask yardstick
SIGMASK_BATCHES = 21
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters).
REPEATS, CPU = declared("sources_repeats"), declared("sources_cpu")
FIBER_ITERATIONS, GO_ITERATIONS = declared("sources_fiber_iterations"), declared(
    "sources_go_iterations")
TOTAL, WAVE = declared("sources_threads"), declared("sources_wave")
SPAWN_MIB, SPAWN_ITERATIONS = declared("sources_spawn_mib"), declared("sources_spawn_iterations")
MAX_WAVE = int(WAVE.maximum or 0)


# ------------------------------------------------------------------ S8: the fiber gap

def _gap_child(iterations: int, warmup: int, repeats: int, cpu: int | None,
               stack_kib: int) -> list[dict[str, Any]]:
    if cpu is not None:
        err = lib.tc_pin_self(cpu)
        if err:
            raise ParameterError("cpu", cpu, f"cannot pin to it (errno {err})")
    rows: list[dict[str, Any]] = []
    samples = ffi.new("int64_t[]", iterations)
    for rep in range(repeats):
        order = GAP_ITEMS[rep % 3:] + GAP_ITEMS[:rep % 3]  # rotate the order each repeat
        for item in order:
            if item == "sigprocmask":
                buf = ffi.new("double[]", SIGMASK_BATCHES)
                err = ffi.new("int *")
                status = lib.tc_fiber_sigmask_ns(SIGMASK_OPS, SIGMASK_BATCHES, buf, err)
                check_status("tc_fiber_sigmask_ns", status, err[0])
                per = np.frombuffer(ffi.buffer(buf, 8 * SIGMASK_BATCHES), dtype=float)
                rows.append({"repeat": rep, "what": item, "ns": float(np.median(per)),
                             "operations": SIGMASK_OPS * SIGMASK_BATCHES,
                             "voluntary": None, "involuntary": None,
                             "switches_per_round_trip": None})
                continue
            out = ffi.new("tc_fiber_pingpong_result *")
            status = lib.tc_fiber_pingpong(fibers.IMPLS[item], iterations, warmup, stack_kib,
                                           samples, out)
            check_status("tc_fiber_pingpong", status, out.err)
            counted = out.batch_voluntary >= 0
            total = int(out.batch_voluntary + out.batch_involuntary) if counted else None
            rows.append({"repeat": rep, "what": item,
                         "ns": out.batch_ns / iterations / 2, "operations": iterations,
                         "voluntary": int(out.batch_voluntary) if counted else None,
                         "involuntary": int(out.batch_involuntary) if counted else None,
                         "switches_per_round_trip": total / iterations if counted else None})
    return rows


def check_fiber_gap(repeats: Any, iterations: Any, warmup: Any, cpu: Any,
                    stack_kib: Any = 64) -> dict[str, Any]:
    """What :func:`fiber_gap` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
            "iterations": validate.integer("iterations", iterations, **FIBER_ITERATIONS.bounds),
            "warmup": validate.integer("warmup", warmup, minimum=0,
                                       maximum=fibers.MAX_ITERATIONS),
            "cpu": fibers.one_cpu("cpu", cpu, allow_none=True),
            "stack_kib": validate.integer("stack_kib", stack_kib, minimum=16, maximum=1024)}


def fiber_gap(repeats: Any = REPEATS.default, iterations: Any = FIBER_ITERATIONS.default,
              warmup: Any = FIBER_ITERATIONS.default // 10, cpu: Any = CPU.default,
              stack_kib: Any = 64) -> Result:
    """S8: per switch, asm vs swapcontext, and one empty ``rt_sigprocmask``, ``repeats``
    times in turn (the order rotating), in one child process pinned to ``cpu``.

    ``ns`` is per switch (a batch of round trips without clock reads / iterations / 2)
    for the two switches, per call for sigprocmask. The summary holds the medians,
    ``ucontext / asm`` and ``(ucontext - asm) / sigprocmask`` per repeat.
    """
    p = check_fiber_gap(repeats, iterations, warmup, cpu, stack_kib)
    timeout = 60.0 + p["repeats"] * (p["iterations"] + p["warmup"]) * 4e-6
    rows = run_isolated(_gap_child, {"iterations": p["iterations"], "warmup": p["warmup"],
                                     "repeats": p["repeats"], "cpu": p["cpu"],
                                     "stack_kib": p["stack_kib"]}, timeout=timeout)
    frame = pd.DataFrame(rows)
    wide = frame.pivot_table(index="repeat", columns="what", values="ns")
    per_repeat = pd.DataFrame({
        "repeat": wide.index,
        "ucontext_over_asm": wide["ucontext"] / wide["asm"],
        "gap_over_sigprocmask": (wide["ucontext"] - wide["asm"]) / wide["sigprocmask"],
    }).reset_index(drop=True)
    summary: dict[str, Any] = {
        "asm_native": fibers.asm_is_native(),
        "median_ns": {w: float(frame[frame.what == w].ns.median()) for w in GAP_ITEMS},
        "ucontext_over_asm": stats.distribution(per_repeat.ucontext_over_asm),
        "gap_over_sigprocmask": stats.distribution(per_repeat.gap_over_sigprocmask),
        "switches_per_round_trip": {
            w: float(frame[frame.what == w].switches_per_round_trip.astype(float).median())
            for w in ("asm", "ucontext")},
    }
    return Result(FIBER_GAP, p, summary, {"repeats": frame, "ratios": per_repeat})


# -------------------------------------------------------- S11: LockOSThread in Go

def check_go_lockosthread(repeats: Any, iterations: Any, warmup: Any,
                          gomaxprocs: Any = 1) -> dict[str, Any]:
    """What :func:`go_lockosthread` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
            "iterations": validate.integer("iterations", iterations, **GO_ITERATIONS.bounds),
            "warmup": validate.integer("warmup", warmup, minimum=0, maximum=10_000_000),
            "gomaxprocs": validate.integer("gomaxprocs", gomaxprocs, minimum=0, maximum=1024)}


def go_lockosthread(repeats: Any = REPEATS.default, iterations: Any = GO_ITERATIONS.default,
                    warmup: Any = GO_ITERATIONS.default // 10, gomaxprocs: Any = 1) -> Result:
    """S11: the channel ping-pong unlocked and locked, ``repeats`` pairs, alternating
    which goes first. ``ns_per_round_trip`` is the batch time / round trips (one op of
    the issue's benchmark is taken to be one round trip); ``switches_per_round_trip``
    is the Go process's kernel context switches over the batch / round trips.
    """
    p = check_go_lockosthread(repeats, iterations, warmup, gomaxprocs)
    reason = peers.go_absent_reason()
    if reason:  # stored with no table (as every skipped peer run is): it reads back
        return Result(GO_LOCKED, p, {"skipped": reason}, {})
    rows = []
    for rep in range(p["repeats"]):
        for locked in ((False, True) if rep % 2 == 0 else (True, False)):
            args = ["lockosthread", "-iterations", str(p["iterations"]), "-warmup",
                    str(p["warmup"]), "-gomaxprocs", str(p["gomaxprocs"]),
                    f"-locked={'true' if locked else 'false'}"]
            data = peers.run_program(args, timeout=60.0 + p["iterations"] * 2e-4)
            n = int(data["iterations"])
            switches = int(data["voluntary"]) + int(data["involuntary"])
            rows.append({"repeat": rep, "locked": bool(data["locked"]),
                         "ns_per_round_trip": int(data["batch_ns"]) / n,
                         "switch_ns": int(data["batch_ns"]) / n / 2,
                         "voluntary": int(data["voluntary"]),
                         "involuntary": int(data["involuntary"]),
                         "switches_per_round_trip": switches / n if data["counted"] else None,
                         "gomaxprocs": int(data["gomaxprocs"]),
                         "go_version": str(data["go_version"])})
    frame = pd.DataFrame(rows)
    wide = frame.pivot_table(index="repeat", columns="locked", values="ns_per_round_trip")
    ratio = (wide[True] / wide[False]).to_numpy()
    summary = {"skipped": None,
               "unlocked_ns": stats.distribution(frame[~frame.locked].ns_per_round_trip),
               "locked_ns": stats.distribution(frame[frame.locked].ns_per_round_trip),
               "locked_over_unlocked": stats.distribution(ratio),
               "switches_per_round_trip": {
                   "unlocked": float(frame[~frame.locked].switches_per_round_trip.median()),
                   "locked": float(frame[frame.locked].switches_per_round_trip.median())}}
    return Result(GO_LOCKED, p, summary, {"runs": frame})


# ---------------------------------------------------------------- S12: NPTL waves

def _waves_child(wave: int, waves: int, stack_kib: int) -> list[dict[str, Any]]:
    rows = []
    create = ffi.new("int64_t[]", wave)
    for w in range(waves):
        out = ffi.new("tc_burst_result *")
        status = lib.tc_launch_burst(wave, stack_kib, create, out)
        rows.append({"wave": w, "status": int(status), "err": int(out.err),
                     "created": int(out.created),
                     "create_ns": int(out.create_total_ns), "join_ns": int(out.join_total_ns),
                     "threads_alive": int(out.threads_alive)})
        if status != lib.TC_OK:
            break
    return rows


def check_thread_waves(total: Any, wave: Any, repeats: Any,
                       stack_kib: Any = 0) -> tuple[int, int, int, int]:
    """What :func:`thread_waves` refuses: (total, wave, repeats, stack KiB)."""
    n = validate.integer("total", total, **TOTAL.bounds)
    w = validate.integer("wave", wave, **WAVE.bounds)
    r = validate.integer("repeats", repeats, **REPEATS.bounds)
    stack = validate.integer("stack_kib", stack_kib, minimum=0, maximum=1 << 20)
    budget = syslimits.thread_budget(max(stack, 64))
    if budget.caps(w + 16):
        raise ParameterError("wave", wave, f"must leave the reserves alone: {budget.detail}")
    return n, w, r, stack


def thread_waves(total: Any = TOTAL.default, wave: Any = WAVE.default,
                 repeats: Any = REPEATS.default, stack_kib: Any = 0) -> Result:
    """S12: ``total`` threads created and destroyed, in ``repeats`` repeats of
    ``total / repeats`` threads each, every repeat a fresh child process running
    waves of ``wave`` threads alive at once (start all, release all, join all).

    A repeat's rate is threads / (sum of its waves' create + join times); the time
    for ``total`` threads is the sum over all repeats. ``stack_kib`` 0: glibc's default.
    """
    n, w, r, stack = check_thread_waves(total, wave, repeats, stack_kib)
    per_repeat = max(1, n // r)
    waves = max(1, -(-per_repeat // w))
    p = {"total": n, "wave": w, "repeats": r, "stack_kib": stack, "waves_per_repeat": waves}
    rows = []
    limit_hit = None
    for rep in range(r):
        got = run_isolated(_waves_child, {"wave": w, "waves": waves, "stack_kib": stack},
                           timeout=60.0 + waves * w * 2e-4)
        rows += [{"repeat": rep, **row} for row in got]
        bad = [row for row in got if row["status"] != lib.TC_OK]
        if bad:
            limit_hit = {"limit": name_from_errno(bad[0]["err"], "threads"),
                         "errno": bad[0]["err"]}
            break
    frame = pd.DataFrame(rows)
    frame["wave_ns"] = frame.create_ns + frame.join_ns
    per = frame.groupby("repeat").agg(threads=("created", "sum"), ns=("wave_ns", "sum"))
    per["threads_per_s"] = per.threads / (per.ns / 1e9)
    per = per.reset_index()
    done = int(per.threads.sum())
    summary = {"threads": done, "seconds": float(per.ns.sum() / 1e9),
               "threads_per_s": stats.distribution(per.threads_per_s),
               "seconds_per_100k": stats.distribution(1e5 / per.threads_per_s),
               "max_alive": int(frame.threads_alive.max()) if len(frame) else 0}
    return Result(THREAD_WAVES, p, summary, {"waves": frame, "repeats": per}, limit_hit)


# ------------------------------------------------ S7: fork+exec vs posix_spawn, growing

SPAWN_GROWTH = "launch_spawn_growth"
SPAWN_KINDS = ("fork_exec", "posix_spawn", "fork")


def spawn_growth(parent_touch_mib: Any = tuple(SPAWN_MIB.default),
                 repeats: Any = REPEATS.default, iterations: Any = SPAWN_ITERATIONS.default,
                 warmup: Any = 3, pin: Any = "auto") -> Result:
    """S7: fork+exec and posix_spawn of the same tiny static binary, and a bare fork
    (the yardstick: where the growth comes from), from a small C parent that holds
    ``parent_touch_mib`` MiB with every 4 KiB page written (dirty), in ``repeats``
    repeats with the order of the sizes flipping (launch.growth_repeats).
    """
    got = launch.growth_repeats(kinds=SPAWN_KINDS, parent_touch_mib=parent_touch_mib,
                                repeats=repeats, iterations=iterations, warmup=warmup,
                                pin=pin)
    frame = got.tables["repeats"]
    slopes: dict[str, Any] = {}
    for kind, rows in frame.groupby("kind"):
        if rows.parent_touch_mib.nunique() >= 2 and len(rows) >= 3:
            slopes[str(kind)] = stats.fit_line(rows.parent_touch_mib,
                                               rows.lifecycle_ns_p50).as_dict()
    summary = {**got.summary, "lifecycle_slope_ns_per_mib": slopes,
               "variant": "dirty (every page of the parent written); the fragmented "
                          "variant is not run"}
    return Result(SPAWN_GROWTH, got.params, summary, got.tables, got.limit_hit)
