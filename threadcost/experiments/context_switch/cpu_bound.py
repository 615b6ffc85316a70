"""S3's experiment (claims C13, C14): CPU-bound tasks on one CPU, threads vs processes.

``tasks`` tasks (S3: 5) all pinned to one CPU, run either as threads of one
process or as separate (forked) processes. Each counts primes the naive way
(S3's loop: every i from 3 to ``limit`` tried against every j from 2 to
``limit``). In the working-set condition each task also writes every integer
of its own array of ``ws_ints`` 64-bit integers (S3: 1M Go ints, 8 MB) at the
start of every outer iteration, for ``ws_limit`` outer iterations. The only
difference between the two modes is whether a switch from one task to the
next also switches the address space.

What is reported, per task and per run:

- ``wall_s``: from the start gate (every task created, its working set
  faulted in, waiting) to the end of the task's loop; a run's wall is the last
  task's end;
- ``user_s`` / ``sys_s``: the task's getrusage(RUSAGE_THREAD) change over its
  loop (the same definition for threads and for a process's single thread);
  ``cpu_s``: its CLOCK_THREAD_CPUTIME_ID change over the loop;
- ``life_user_s`` / ``life_sys_s``: the task's whole life (a thread's
  RUSAGE_THREAD at its end; a process's wait4 rusage, which includes fork's
  copy-on-write faults and exit);
- ``whole_user_s`` / ``whole_sys_s`` (runs): like ``time`` around the whole
  thing, RUSAGE_SELF + RUSAGE_CHILDREN change from the first create to the
  last join/wait;
- ``dtlb_misses`` and ``perf_switches``: perf_event_open counters over the loop,
  where perf is allowed (else empty, and ``summary["perf"]`` says why);
  ``vcsw``/``ivcsw`` from getrusage are always there.

Conditions alternate A B A B (threads, processes) within each repeat, each run
in a fresh child process with a deadline.

Sizing: S3's fixed LIMIT is a fixed amount of work, which lasts twice as long on a
CPU whose division is twice as slow. Unless ``limit`` / ``ws_limit`` is given, a
short calibration before the timed runs (:func:`calibrate`: the same tasks as
threads, in one child process, a few probes of growing size until one lasts about
``PROBE_S``) measures the time per division and per working-set write, and sizes
each loop so that one run's CPU time is about ``run_s`` (no working set) or
``ws_run_s`` (its own working set). The probes are stored (table ``calibration``,
``summary["sizing"]``); the runs' own ``limit`` column says what they ran.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import KernelError, ParameterError, check_status, errno_name
from threadcost.experiments.parameters import declared
from threadcost.host import cpus, sysinfo
from threadcost.native import ffi, lib
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

EXPERIMENT = "cpu_bound"
MODES = {"threads": lib.TC_CPU_BOUND_THREADS, "processes": lib.TC_CPU_BOUND_PROCESSES}
WORKING_SETS = ("none", "own")  # no memory of its own / its own array per task
MAX_TASKS = int(lib.TC_CPU_BOUND_MAX_TASKS)
S3_TASKS = 5
S3_WS_INTS = 1_000_000
QUANTITIES = ("wall_s", "user_s", "sys_s", "cpu_s", "whole_user_s", "whole_sys_s",
              "dtlb_misses", "switches")


def _cpu(value: Any) -> int:
    """The CPU every task shares: "auto" (or None) is the last of the affinity mask."""
    mask = cpus.usable()
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return cpus.last(mask)
    cpu = validate.integer("cpu", value, minimum=0, maximum=1 << 20)
    if cpu not in mask:
        raise ParameterError("cpu", value, f"must be 'auto' (CPU {cpus.last(mask)}) or a CPU "
                                           f"this process may use ({cpus.in_words(mask)})")
    cpus.check_settable("cpu", value, [cpu])
    return cpu


TASKS, LIMIT = declared("cpu_bound_tasks"), declared("cpu_bound_limit")
WS_LIMIT, WS_INTS = declared("cpu_bound_ws_limit"), declared("cpu_bound_ws_ints")
REPEATS = declared("cpu_bound_repeats")
RUN_S, WS_RUN_S = declared("cpu_bound_run_s"), declared("cpu_bound_ws_run_s")


def _size(name: str, value: Any, param: Any) -> int | None:
    """A loop size: an integer within its declared range, or None (None, "auto" or
    "None", as the CLI spells the default: sized by the calibration)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("auto", "none")):
        return None
    return validate.integer(name, value, **param.bounds)


def check_params(tasks: Any = TASKS.default, limit: Any = LIMIT.default,
                 ws_limit: Any = WS_LIMIT.default, ws_ints: Any = WS_INTS.default,
                 working_sets: Any = WORKING_SETS, modes: Any = tuple(MODES),
                 repeats: Any = REPEATS.default, cpu: Any = "auto",
                 run_timeout_s: Any = 120, run_s: Any = RUN_S.default,
                 ws_run_s: Any = WS_RUN_S.default) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError); defaults and
    ranges are the notebook parameters' (threadcost.experiments.parameters). ``limit`` /
    ``ws_limit`` None: sized by the calibration to ``run_s`` / ``ws_run_s``."""
    p: dict[str, Any] = {
        "tasks": validate.integer("tasks", tasks, **TASKS.bounds),  # the C limit (a test)
        "limit": _size("limit", limit, LIMIT),
        "ws_limit": _size("ws_limit", ws_limit, WS_LIMIT),
        "ws_ints": validate.integer("ws_ints", ws_ints, **WS_INTS.bounds),
        "working_sets": [w for w in WORKING_SETS
                         if w in validate.choice_list("working_sets", working_sets,
                                                      WORKING_SETS)],
        "modes": [m for m in MODES if m in validate.choice_list("modes", modes, MODES)],
        "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
        "cpu": _cpu(cpu),
        "run_timeout_s": validate.number("run_timeout_s", run_timeout_s, minimum=1,
                                         maximum=3600),
        "run_s": validate.number("run_s", run_s, minimum=RUN_S.minimum,
                                 maximum=RUN_S.maximum),
        "ws_run_s": validate.number("ws_run_s", ws_run_s, minimum=WS_RUN_S.minimum,
                                    maximum=WS_RUN_S.maximum),
    }
    if "own" in p["working_sets"]:
        validate.memory_fits("ws_ints", ws_ints, p["tasks"] * p["ws_ints"] * 8 // 1024 + 1)
    return p


def _one_run(mode: int, tasks: int, cpu: int, limit: int, ws_ints: int,
             deadline_s: float) -> dict[str, Any]:
    """In a child process: one run of the kernel, returned as plain data."""
    slots = ffi.new("tc_cpu_task[]", tasks)
    out = ffi.new("tc_cpu_bound_result *")
    status = lib.tc_cpu_bound_run(mode, tasks, cpu, limit, ws_ints, int(deadline_s * 1e9),
                                  slots, out)
    if status == lib.TC_ETIMEOUT:
        raise KernelError("tc_cpu_bound_run", int(status), 0,
                          f"the tasks did not finish within run_timeout_s = {deadline_s:g} s; "
                          "lower limit/ws_limit or raise run_timeout_s")
    check_status("tc_cpu_bound_run", status, out.err)
    names = ("end_ns", "cpu_ns", "user_us", "sys_us", "vcsw", "ivcsw", "life_user_us",
             "life_sys_us", "dtlb_misses", "perf_switches", "primes", "dtlb_errno",
             "switches_errno", "dtlb_user_only", "cpu", "completed", "err")
    return {
        "status": int(status), "err": int(out.err), "started": int(out.started),
        "stopped": int(out.stopped), "wall_ns": int(out.wall_ns),
        "self_user_us": int(out.self_user_us), "self_sys_us": int(out.self_sys_us),
        "children_user_us": int(out.children_user_us),
        "children_sys_us": int(out.children_sys_us),
        "tasks": [{n: int(getattr(slots[i], n)) for n in names}
                  for i in range(int(out.started))],
    }


# --- sizing by time --------------------------------------------------------------------------

# The calibration's probes grow until one lasts about PROBE_S of CPU (all its tasks
# together; never more than a quarter of the run it sizes): long enough that the thread
# CPU clock and the scheduler's slices (a few ms) are a small part of it, short enough
# that the calibration costs well under a second. Each probe is at most GROWTH times the
# last, so a wrong first guess cannot make one probe long.
PROBE_S = 0.12
FIRST_LIMIT, FIRST_WS_LIMIT = 600, 4  # the first probes: a few ms on any CPU
GROWTH = 8
MAX_PROBES = 6


def divisions(limit: int) -> int:
    """Divisions one task makes in S3's loop: every i in 3..limit against every j in
    2..limit."""
    return max(limit - 2, 0) * max(limit - 1, 0)


def writes(ws_limit: int, ws_ints: int) -> int:
    """Working-set writes one task makes: its ws_ints integers per outer iteration."""
    return max(ws_limit - 2, 0) * ws_ints


def predicted_s(size: int, tasks: int, ws_ints: int, s_per_division: float,
                s_per_write: float, fixed_s: float = 0.0) -> float:
    """CPU seconds of one run (all tasks) of loop size ``size`` by the calibrated costs:
    a fixed part (the first pass over caches the other tasks emptied) plus the work."""
    return fixed_s + tasks * (s_per_division * divisions(size)
                              + s_per_write * writes(size, ws_ints))


def size_for(target_s: float, tasks: int, ws_ints: int, s_per_division: float,
             s_per_write: float, minimum: int, maximum: int, fixed_s: float = 0.0) -> int:
    """The smallest loop size in [minimum, maximum] whose predicted run lasts at least
    ``target_s`` (maximum when none does, zero costs included)."""
    lo, hi = minimum, maximum
    costs = (tasks, ws_ints, s_per_division, s_per_write, fixed_s)
    if predicted_s(hi, *costs) < target_s:
        return hi
    while lo < hi:  # the prediction grows with the size: bisect
        mid = (lo + hi) // 2
        if predicted_s(mid, *costs) >= target_s:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _probes(ws: str, tasks: int, cpu: int, ws_ints: int, probe_s: float, deadline_s: float,
            bounds: dict[str, Any], s_per_division: float) -> tuple[list[dict[str, Any]], int]:
    """Probe runs (threads) of growing size until one lasts about ``probe_s``; returns
    their rows and the status of the last (TC_ELIMIT: a limit refused a task)."""
    size = FIRST_LIMIT if ws == "none" else FIRST_WS_LIMIT
    size = min(max(size, bounds["minimum"]), bounds["maximum"])
    n_ints = ws_ints if ws == "own" else 0
    rows: list[dict[str, Any]] = []
    for probe in range(MAX_PROBES):
        raw = _one_run(MODES["threads"], tasks, cpu, size, n_ints, deadline_s)
        cpu_s = sum(t["cpu_ns"] for t in raw["tasks"]) / 1e9
        rows.append({"working_set": ws, "probe": probe, "limit": size, "ws_ints": n_ints,
                     "tasks": int(raw["started"]), "cpu_s": cpu_s,
                     "wall_s": raw["wall_ns"] / 1e9})
        if raw["status"] != lib.TC_OK:
            return rows, int(raw["status"])
        if cpu_s >= probe_s / 2 or size >= bounds["maximum"]:
            break
        per_div, per_write, fixed = _fit(rows, s_per_division)
        wanted = size_for(probe_s, tasks, n_ints, per_div, per_write, fixed_s=fixed,
                          **bounds) if per_div + per_write > 0 else size * GROWTH
        size = min(max(wanted, size + 1), size * GROWTH, bounds["maximum"])
    return rows, lib.TC_OK


def _work(row: dict[str, Any]) -> int:
    """The units of a probe's varying cost: divisions without a working set, writes with."""
    tasks, size = max(int(row["tasks"]), 1), int(row["limit"])
    return tasks * (writes(size, int(row["ws_ints"])) if row["ws_ints"] else divisions(size))


def _fit(rows: list[dict[str, Any]], s_per_division: float) -> tuple[float, float, float]:
    """(seconds per division, seconds per write, fixed seconds per run) from the probes of
    one working set. The last two probes give the cost per unit of work as the slope
    between them, so a fixed cost (the first pass over caches the other tasks emptied)
    is not spread over the work; one probe, or a slope the noise made useless, gives
    the mean cost. A working-set probe's divisions are charged at the no-working-set
    probes' rate, the rest to its writes."""
    def left(row: dict[str, Any]) -> float:  # CPU not spent on divisions
        if not row["ws_ints"]:
            return float(row["cpu_s"])
        return max(float(row["cpu_s"]) - s_per_division * max(int(row["tasks"]), 1)
                   * divisions(int(row["limit"])), 0.0)

    last = rows[-1]
    slope, fixed = left(last) / max(_work(last), 1), 0.0
    if len(rows) >= 2 and _work(last) >= 2 * _work(rows[-2]):
        between = (left(last) - left(rows[-2])) / (_work(last) - _work(rows[-2]))
        if 0 < between <= slope * 2:  # a plausible slope: keep it and its fixed part
            slope, fixed = between, max(left(last) - between * _work(last), 0.0)
    if last["ws_ints"]:
        return s_per_division, slope, fixed
    return slope, 0.0, fixed


def calibrate(tasks: int, cpu: int, ws_ints: int, targets: dict[str, float],
              deadline_s: float) -> dict[str, Any]:
    """In a child process: the loop size of each working set in ``targets`` ("none",
    "own": seconds of CPU one run should last), from probe runs of the same tasks as
    threads. The no-working-set probes always run first: they time a division, which the
    working-set loop makes too. Returns the sizes, the costs and every probe."""
    bounds = {"none": LIMIT.bounds, "own": WS_LIMIT.bounds}
    rows: list[dict[str, Any]] = []
    s_per_division, sizing = 0.0, {}
    for ws in ("none", "own"):
        if ws == "own" and "own" not in targets:
            break
        probe_s = min(PROBE_S, targets.get(ws, PROBE_S * 4) / 4)
        got, status = _probes(ws, tasks, cpu, ws_ints, probe_s, deadline_s, bounds[ws],
                              s_per_division)
        rows += got
        if status != lib.TC_OK:
            return {"status": status, "probes": rows, "sizing": sizing}
        per_div, per_write, fixed = _fit(got, s_per_division)
        if ws == "none":
            s_per_division = per_div
        if ws in targets:
            n_ints = ws_ints if ws == "own" else 0
            costs = (tasks, n_ints, per_div, per_write, fixed)
            size = size_for(targets[ws], *costs[:4], fixed_s=fixed, **bounds[ws])
            sizing[ws] = {"sized": "calibrated", "target_s": targets[ws], "size": size,
                          "predicted_s": predicted_s(size, *costs),
                          "ns_per_division": per_div * 1e9,
                          "ns_per_write": per_write * 1e9 if ws == "own" else None,
                          "fixed_ms": fixed * 1e3, "probes": len(got)}
    return {"status": lib.TC_OK, "probes": rows, "sizing": sizing}


def _perf_note(errno_value: int) -> str:
    if errno_value == 0:
        return "available"
    note = f"not available here (perf_event_open: {errno_name(errno_value)}: " \
           f"{os.strerror(errno_value)}"
    if errno_name(errno_value) in ("EACCES", "EPERM"):  # a permission: the sysctl that sets it
        note += f"; kernel.perf_event_paranoid = {sysinfo.sysctl('kernel.perf_event_paranoid')}"
    elif errno_name(errno_value) == "ENOENT":  # not a permission: no such event here
        note += "; this CPU exposes no such event here"
    return note + ")"


MAX_LOG_SPAN = 12 * math.log(10)  # the widest ratio interval stored: 10^-12 .. 10^12


def paired_ratios(runs: pd.DataFrame, quantity: str,
                  pairs: tuple[str, str] = ("processes", "threads")) -> pd.DataFrame:
    """processes / threads of ``quantity`` per working set: the geometric mean of
    the per-repeat ratios (runs of one repeat ran back to back) with a 95%
    t-interval on the log ratios; empty where a value is missing or zero."""
    rows = []
    top, bottom = pairs
    for ws, grp in runs.groupby("working_set", sort=False):
        wide = grp.pivot_table(index="repeat", columns="mode", values=quantity)
        if top not in wide or bottom not in wide:
            continue
        r = (wide[top] / wide[bottom]).replace([np.inf, -np.inf], np.nan).dropna()
        r = r[r > 0]
        row: dict[str, Any] = {"working_set": ws, "quantity": quantity, "n": int(r.size),
                               "ratio": None, "ci95_low": None, "ci95_high": None}
        if r.size >= 1:
            logs = np.log(r.to_numpy(dtype=float))
            row["ratio"] = float(math.exp(logs.mean()))
            if r.size >= 2:
                half = stats.t_quantile(0.975, r.size - 1) * float(logs.std(ddof=1)) / math.sqrt(
                    r.size)
                # An interval wider than a factor of 10^12 either way (two repeats of a
                # count that was 0 or 1 in one of them, a noisy machine) says nothing; it
                # stays empty rather than storing numbers no quantity of a run can be.
                if abs(logs.mean()) + half <= MAX_LOG_SPAN:
                    row["ci95_low"] = float(math.exp(logs.mean() - half))
                    row["ci95_high"] = float(math.exp(logs.mean() + half))
        rows.append(row)
    return pd.DataFrame(rows)


def run(tasks: Any = S3_TASKS, limit: Any = LIMIT.default, ws_limit: Any = WS_LIMIT.default,
        ws_ints: Any = S3_WS_INTS, working_sets: Any = WORKING_SETS,
        modes: Any = tuple(MODES), repeats: Any = REPEATS.default, cpu: Any = "auto",
        run_timeout_s: Any = 120, progress: bool = False, run_s: Any = RUN_S.default,
        ws_run_s: Any = WS_RUN_S.default) -> Result:
    """S3's threads-vs-processes run on one CPU, ``repeats`` times per condition.

    ``limit``: S3's LIMIT without a working set (S3 used 30,000; None: sized so one run
    lasts about ``run_s`` seconds of CPU here); ``ws_limit``: outer iterations when each
    task writes its ``ws_ints`` integers every outer iteration (None: sized to
    ``ws_run_s``); ``working_sets``: "none" and/or "own"; ``cpu``: the CPU all
    tasks share ("auto": the last of the affinity mask); ``run_timeout_s``: the
    deadline of one run (and of each calibration probe).
    """
    p = check_params(tasks, limit, ws_limit, ws_ints, working_sets, modes, repeats, cpu,
                     run_timeout_s, run_s, ws_run_s)
    targets = {ws: p[key] for ws, key, size in (("none", "run_s", "limit"),
                                                ("own", "ws_run_s", "ws_limit"))
               if ws in p["working_sets"] and p[size] is None}
    sizing: dict[str, Any] = {}
    probes = pd.DataFrame()
    if targets:
        cal = run_isolated(calibrate, {"tasks": p["tasks"], "cpu": p["cpu"],
                                       "ws_ints": p["ws_ints"], "targets": targets,
                                       "deadline_s": p["run_timeout_s"]},
                           timeout=MAX_PROBES * 2 * p["run_timeout_s"] + 60)
        probes = pd.DataFrame(cal["probes"])
        if cal["status"] == lib.TC_ELIMIT:  # a limit refused a task before any run
            last = cal["probes"][-1]
            return Result(EXPERIMENT, p, {"cpu": p["cpu"], "perf": {}, "tasks_started": 0,
                                          "tasks_stopped": 0, "ratios": []},
                          {"calibration": probes},
                          {"limit": "task creation or its working set refused (threads-max, "
                                    "pid_max, cgroup pids.max or memory), calibrating",
                           "mode": "threads", "working_set": last["working_set"],
                           "tasks_started": last["tasks"], "tasks_asked": p["tasks"]})
        sizing = cal["sizing"]
        p["limit"] = sizing["none"]["size"] if "none" in sizing else p["limit"]
        p["ws_limit"] = sizing["own"]["size"] if "own" in sizing else p["ws_limit"]
    for ws, key, size in (("none", "run_s", "limit"), ("own", "ws_run_s", "ws_limit")):
        if ws not in sizing:  # given, or not run: no target stands for it
            p.pop(key)
            if ws in p["working_sets"]:
                sizing[ws] = {"sized": "fixed", "size": p[size]}
    plan = [(r, ws, mode) for r in range(p["repeats"]) for ws in p["working_sets"]
            for mode in p["modes"]]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(plan), desc="cpu-bound runs", unit="run")
    task_rows: list[dict[str, Any]] = []
    run_rows: list[dict[str, Any]] = []
    perf_errnos: dict[str, int] = {}
    limit_hit: dict[str, Any] | None = None
    user_only = False
    for order, (rep, ws, mode) in enumerate(plan):
        n_ints = p["ws_ints"] if ws == "own" else 0
        lim = p["ws_limit"] if ws == "own" else p["limit"]
        raw = run_isolated(_one_run, {"mode": MODES[mode], "tasks": p["tasks"],
                                      "cpu": p["cpu"], "limit": lim, "ws_ints": n_ints,
                                      "deadline_s": p["run_timeout_s"]},
                           timeout=p["run_timeout_s"] + 60)
        if raw["status"] == lib.TC_ELIMIT:
            # fewer tasks than asked is not the experiment: keep the runs so far
            limit_hit = {"limit": "task creation or its working set refused (threads-max, "
                                  "pid_max, cgroup pids.max or memory)",
                         "errno": raw["err"], "mode": mode, "working_set": ws,
                         "tasks_started": raw["started"], "tasks_asked": p["tasks"]}
            break
        ws_mib = n_ints * 8 / 2**20
        per_task = []
        for i, t in enumerate(raw["tasks"]):
            perf_errnos.setdefault("dtlb_misses", t["dtlb_errno"])
            user_only = user_only or bool(t["dtlb_user_only"])
            perf_errnos.setdefault("perf_switches", t["switches_errno"])
            per_task.append({
                "repeat": rep, "order": order, "mode": mode, "working_set": ws,
                "ws_mib": ws_mib, "limit": lim, "task": i,
                "end_ns": t["end_ns"],
                "cpu_s": t["cpu_ns"] / 1e9, "user_s": t["user_us"] / 1e6,
                "sys_s": t["sys_us"] / 1e6, "life_user_s": t["life_user_us"] / 1e6,
                "life_sys_s": t["life_sys_us"] / 1e6, "vcsw": t["vcsw"], "ivcsw": t["ivcsw"],
                "dtlb_misses": t["dtlb_misses"] if t["dtlb_errno"] == 0 else None,
                "perf_switches": t["perf_switches"] if t["switches_errno"] == 0 else None,
                "primes": t["primes"], "cpu": t["cpu"], "completed": bool(t["completed"]),
            })
        # per-task wall: from the gate, which is the run's end minus its wall
        last_end = max(t["end_ns"] for t in per_task)
        gate = last_end - raw["wall_ns"]
        for t in per_task:
            t["wall_s"] = (t.pop("end_ns") - gate) / 1e9
        task_rows.extend(per_task)
        tf = pd.DataFrame(per_task)
        dtlb = None if tf["dtlb_misses"].isna().any() else float(tf["dtlb_misses"].sum())
        psw = None if tf["perf_switches"].isna().any() else float(tf["perf_switches"].sum())
        run_rows.append({
            "repeat": rep, "order": order, "mode": mode, "working_set": ws, "ws_mib": ws_mib,
            "limit": lim, "tasks_started": raw["started"], "tasks_stopped": raw["stopped"],
            "tasks_completed": int(tf["completed"].sum()), "cpu": p["cpu"],
            "wall_s": raw["wall_ns"] / 1e9, "user_s": float(tf["user_s"].sum()),
            "sys_s": float(tf["sys_s"].sum()), "cpu_s": float(tf["cpu_s"].sum()),
            "life_user_s": float(tf["life_user_s"].sum()),
            "life_sys_s": float(tf["life_sys_s"].sum()),
            "whole_user_s": (raw["self_user_us"] + raw["children_user_us"]) / 1e6,
            "whole_sys_s": (raw["self_sys_us"] + raw["children_sys_us"]) / 1e6,
            "vcsw": int(tf["vcsw"].sum()), "ivcsw": int(tf["ivcsw"].sum()),
            "switches": psw if psw is not None else float(tf["vcsw"].sum() + tf["ivcsw"].sum()),
            "switches_source": "perf" if psw is not None else "getrusage",
            "dtlb_misses": dtlb,
        })
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    runs = pd.DataFrame(run_rows)
    if runs.empty:
        return Result(EXPERIMENT, p, {"cpu": p["cpu"], "perf": {}, "tasks_started": 0,
                                      "tasks_stopped": 0, "ratios": [], "sizing": sizing},
                      {"calibration": probes} if not probes.empty else {}, limit_hit)
    totals = (runs.groupby(["working_set", "mode"], sort=False)
              [["wall_s", "user_s", "sys_s", "cpu_s", "whole_user_s", "whole_sys_s",
                "switches", "dtlb_misses"]]
              .agg(["median", "min", "max"]))
    totals.columns = [f"{q}_{stat}" for q, stat in totals.columns]
    totals = totals.reset_index()
    totals.insert(2, "ws_mib", totals["working_set"].map(
        {"none": 0.0, "own": p["ws_ints"] * 8 / 2**20}))
    totals.insert(3, "repeats", runs.groupby(["working_set", "mode"], sort=False)
                  .size().to_numpy())
    ratio_frames = [paired_ratios(runs, q) for q in QUANTITIES
                    if not (q == "dtlb_misses" and runs["dtlb_misses"].isna().any())]
    ratios = pd.concat([f for f in ratio_frames if not f.empty], ignore_index=True) \
        if any(not f.empty for f in ratio_frames) else pd.DataFrame(
            columns=["working_set", "quantity", "n", "ratio", "ci95_low", "ci95_high"])
    perf = {k: _perf_note(v) for k, v in perf_errnos.items()}
    if user_only and perf.get("dtlb_misses") == "available":
        perf["dtlb_misses"] = ("available, user mode only (kernel.perf_event_paranoid "
                               "forbids counting the kernel)")
    summary: dict[str, Any] = {
        "cpu": p["cpu"], "perf": perf, "sizing": sizing,
        "thp": sysinfo.read_text("/sys/kernel/mm/transparent_hugepage/enabled"),
        "tasks_started": int(runs["tasks_started"].sum()),
        "tasks_stopped": int(runs["tasks_stopped"].sum()),
        "ratios": ratios.to_dict(orient="records"),
    }
    tables = {"tasks": pd.DataFrame(task_rows), "runs": runs, "totals": totals,
              "ratios": ratios}
    if not probes.empty:
        tables["calibration"] = probes
    return Result(EXPERIMENT, p, summary, tables, limit_hit)
