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
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import ParameterError
from threadcost.experiments.context_switch.checks import (
    BASELINE_TEXT,
    CLAIM_MECHANISMS,
    EXPERIMENT,
    ITERATIONS,
    MAX_ITERATIONS,
    MAX_MESSAGE,
    MECHANISMS,
    PLACEMENTS,
    TASKS,
    WARMUP,
    check_choices,
    check_params,
    check_placement_repeats,
    check_rounds,
    check_sweep,
    check_working_set_sweep,
    choose_cpus,
)
from threadcost.experiments.context_switch.kernels import (
    BASELINES,
    LIMITS,
    SELF_HOP,
    STEPS,
    _pingpong,
    _raise_for,
    baseline,
    measure_baselines,
    touch_cost,
)
from threadcost.experiments.context_switch.results import (
    _derived,
    _pinning_verified,
    _thp_mode,
    assemble,
    targets,
)
from threadcost.experiments.parameters import declared
from threadcost.host import cpus
from threadcost.progress import bar as tqdm
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate
from threadcost.stats import median_ci95

# The notebook parameters whose defaults are these functions' (threadcost.experiments.parameters).
WS_ITERATIONS = declared("switch_ws_iterations")
WS_SECONDS = declared("switch_ws_seconds_per_point")
PERF_ROUNDS, PERF_ITERATIONS = declared("switch_perf_rounds"), declared("switch_perf_iterations")
TIMING_ROUNDS = declared("switch_timing_rounds")
PLACED_REPEATS = declared("switch_placement_repeats")
PLACED_ITERATIONS = declared("switch_placement_iterations")

# Re-exported: callers (commands, views, notebooks, other experiments, tests) import
# everything from this module.
__all__ = [
    "BASELINES", "BASELINE_TEXT", "CLAIM_MECHANISMS", "EXPERIMENT", "LIMITS",
    "MAX_ITERATIONS", "MAX_MESSAGE", "MECHANISMS", "PLACEMENTS", "PLACEMENT_EXPERIMENT",
    "QUANTILES", "SELF_HOP", "STEPS", "TASKS", "_derived", "_pingpong", "_pinning_verified",
    "_raise_for", "_thp_mode", "assemble", "baseline", "check_choices", "check_params",
    "check_placement_repeats", "check_rounds", "check_sweep", "check_working_set_sweep",
    "choose_cpus",
    "measure_baselines", "median_ci95", "perf_bench_pipe", "perf_cross_check", "placement_repeats",
    "plan", "quantile_table", "run", "sweep", "targets", "timing_check", "touch_cost",
    "working_set_sweep",
]


# --------------------------------------------------------------------- run

def run(mechanism: Any = "pipe", placement: Any = "same-cpu", tasks: Any = "threads",
        iterations: Any = ITERATIONS.default, warmup: Any = WARMUP.default,
        working_set_kib: Any = 0,
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
    - ``isolated``: run in a child process (threadcost.runsafety.isolate) instead of here.
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
        raw = run_isolated(_pingpong, kwargs, timeout=p["timeout_s"] * 3 + 60
                           + p["iterations"] * 1e-4)
    else:
        raw = _pingpong(**kwargs)
    base = (measure_baselines(p["mechanism"], p["cpu_a"], p["message_bytes"],
                              p["working_set_kib"], scale) if baselines else {})
    return assemble(p, raw, base, per_sample=bool(per_sample),
                    record_cpus=bool(record_cpus))


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
    check_choices(mechanisms, placements, tasks)
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
          iterations: int = ITERATIONS.default, warmup: int = WARMUP.default, *,
          baseline_scale: float = 1.0,
          progress: bool = True) -> tuple[Result, dict[tuple[str, str, str], Result]]:
    """Every mechanism x placement x task kind: one combined Result and the per-config ones.

    The combined result's tables: ``configs`` (one row per configuration),
    ``quantiles`` (to redraw each distribution), ``baselines`` (per pinned CPU),
    ``skipped`` (placements this machine cannot run, with the reason). Its
    summary holds the claim rows of every configuration.
    """
    baseline_scale = check_sweep(mechanisms, placements, tasks, iterations, warmup,
                                 baseline_scale)
    todo, skipped = plan(mechanisms, placements, tasks)
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
    two = cpus.pair()
    summary = {
        "configs": configs.to_dict("records"),
        "skipped": skipped,
        # which CPUs "cross-cpu" used and how they relate (two cores, or SMT siblings)
        "cross_cpu_pair": two.words() if two is not None else None,
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


# The probe that sizes a working-set point: 50 round trips (10 untimed first), fewer where
# touching the working set alone makes a round trip long (two touches per round trip), so
# that no probe lasts much over PROBE_S: at 32 MiB a round trip takes about 9 ms, and 60
# of them per task kind were a second of each sweep that only estimated a duration.
PROBE_ROUND_TRIPS, MIN_PROBE_ROUND_TRIPS, PROBE_S = 50, 5, 0.02


def probe_round_trips(touch_ns: float) -> int:
    """Round trips of the probe that sizes a point whose working set takes ``touch_ns``
    to touch once: PROBE_ROUND_TRIPS, cut to about PROBE_S of touching, at least
    MIN_PROBE_ROUND_TRIPS."""
    fit = int(PROBE_S * 1e9 / max(2 * touch_ns, 1.0))
    return max(MIN_PROBE_ROUND_TRIPS, min(PROBE_ROUND_TRIPS, fit))


def working_set_sweep(working_sets_kib: Sequence[int], tasks: Sequence[str] = tuple(TASKS),
                      mechanism: str = "pipe", placement: str = "same-cpu",
                      iterations: int = WS_ITERATIONS.default,
                      seconds_per_point: float = WS_SECONDS.default,
                      *,
                      progress: bool = True) -> Result:
    """Round trip vs each side's working set, threads vs processes (C13, C14).

    For each working set W, the warm cost of touching W once is measured
    alone; each point's iterations are cut so a point takes about
    ``seconds_per_point``. ``round_trip_minus_touch`` removes the two touches a
    round trip makes, leaving the switches plus what the switch did to the caches.
    """
    sizes, seconds, n_max = check_working_set_sweep(working_sets_kib, tasks, iterations,
                                                    seconds_per_point)
    cpu = choose_cpus(placement)[0]
    rows, qtables = [], []
    for w in tqdm(sizes, desc="working sets", disable=not progress):
        touch = touch_cost(w, cpu, budget_s=min(0.2, seconds / 4)) if w else np.zeros(1)
        t_touch = float(np.median(touch))
        probe_n = probe_round_trips(t_touch)
        for kind in tasks:
            probe = run(mechanism, placement, kind, probe_n, max(2, probe_n // 5), w,
                        baselines=False)
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


def perf_cross_check(rounds: int = PERF_ROUNDS.default,
                     iterations: int = PERF_ITERATIONS.default,
                     placement: str = "same-cpu") -> Result:
    """This kernel's pipe round trip (threads) beside ``perf bench sched pipe -T``,
    measured alternately with the same placement; the ratio of their mean round
    trips (each tool's median over the rounds, so one disturbed round does not decide).

    perf's "usecs/op" is one loop, in which each thread writes and reads once:
    one round trip, like ours. Our side is timed without per-sample stamps
    (whole-run mean) to match perf, and with them, to show the stamps' cost.
    """
    n_rounds, n = check_rounds(rounds, iterations)
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


def timing_check(rounds: int = TIMING_ROUNDS.default,
                 iterations: int = ITERATIONS.default, mechanism: str = "pipe",
                 placement: str = "same-cpu") -> Result:
    """The same configuration with per-sample stamps (and CPU notes) and without,
    alternately: do per-sample timing and the whole-run mean agree?"""
    n_rounds, _ = check_rounds(rounds, iterations, minimum=1)
    check_params(mechanism, placement, "threads", iterations, max(1, iterations // 10))
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


def placement_repeats(mechanisms: Sequence[str] = CLAIM_MECHANISMS,
                      repeats: int = PLACED_REPEATS.default,
                      iterations: int = PLACED_ITERATIONS.default,
                      warmup: int = WARMUP.default) -> Result:
    """S0's ping-pong between two threads, pinned to one CPU vs unpinned, as
    ``repeats`` independent runs of each, interleaved (the order of the two
    placements flips every repeat; each run is a fresh pair of threads).

    Each run is timed as a whole (no clock read per round trip), like S0's;
    ``switch_ns`` is half the mean round trip, S0's definition of one switch.
    The table ``repeats`` has one row per (repeat, mechanism, placement).

    With one usable CPU "unpinned" is "pinned" (the scheduler has no choice): the run
    is stored as skipped, ``summary["skipped"]`` saying why, with no table.
    """
    q = check_placement_repeats(mechanisms, repeats, iterations, warmup)
    mechs, n_rep, n, warm = q["mechanisms"], q["repeats"], q["iterations"], q["warmup"]
    params = {"mechanisms": list(mechs), "placements": ["same-cpu", "unpinned"],
              "tasks": "threads", "repeats": n_rep, "iterations": n, "warmup": warm}
    reason = cpus.two_cpus_reason()
    if reason is not None:
        return Result(PLACEMENT_EXPERIMENT, params, {"skipped": reason}, {})
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
    summary = {"skipped": None, "unpinned_over_pinned_median": ratios,
               "switch_ns_median": {f"{m} {pl}": float(g.switch_ns.median())
                                    for (m, pl), g in frame.groupby(["mechanism",
                                                                     "placement"])}}
    return Result(PLACEMENT_EXPERIMENT, params, summary, {"repeats": frame})
