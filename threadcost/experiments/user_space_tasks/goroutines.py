"""Go goroutines beside threads and fibers: the Go peers (native/peers/go).

``tcpeers`` is one small Go program, standard library only: the Go entry of
the peer registry (:mod:`threadcost.peers`), which builds it into
``build/peers/go/`` when a source changes. It prints one JSON object per run. Three programs:

- ``pingpong``: two goroutines send a value back and forth over unbuffered
  channels; one round trip is two goroutine switches (claim C04). Run twice:
  GOMAXPROCS=1 with the whole process pinned to one CPU, and the runtime
  default unpinned;
- ``memory``: N goroutines blocked on a channel; RSS/VSZ per goroutine by slope
  (claim C11, scaled down from a million);
- ``sleepers``: N goroutines each sleeping ``period_ms`` at a time (S4's workload;
  :mod:`threadcost.experiments.user_space_tasks.sleepers` runs it, repeated, beside Rust threads for
  C15/C17, and beside C threads in its sweep).

Without Go every row is reported as not run, with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.errors import ParameterError
from threadcost.experiments.parameters import declared
from threadcost.experiments.user_space_tasks.fibers import one_cpu
from threadcost.host import cpus
from threadcost.peers.base import clean_env, parse_json, run_command
from threadcost.peers.go import GO
from threadcost.results import Result
from threadcost.settings import validate

EXPERIMENT = "peers"
MAX_ITERATIONS = 10_000_000
MAX_GOROUTINES = 1_000_000
# A goroutine starts with a 2 KiB stack; allow 8 KiB each when checking memory.
GOROUTINE_BUDGET_KIB = 8


def go_absent_reason() -> str | None:
    """None when Go can be used, else why not (for ``not run here`` rows)."""
    return GO.absent_reason()


def go_version() -> str | None:
    return GO.version()


def ensure_built(timeout: float = 300.0) -> Path:
    """Build the Go peer when missing or when a source changed; return its path
    (through the peer registry, :mod:`threadcost.peers`).

    Raises KernelError when Go is absent or the build fails.
    """
    return Path(GO.ensure_built(timeout)[0])


def run_program(args: list[str], timeout: float, env: dict[str, str] | None = None
                ) -> dict[str, Any]:
    """Run the Go peer's ``ARGS`` and return its JSON (raises KernelError on failure)."""
    binary = ensure_built()
    out = run_command([str(binary), *args], timeout, f"go peer {args[0]}",
                      env=clean_env(env))
    return parse_json(out["stdout"], f"go peer {args[0]}")


def sleepers_go(count: int, period_ms: int, duration_ms: int, stagger_ms: int) -> dict[str, Any]:
    """The goroutine sleepers (parameters already validated by the caller)."""
    timeout = 120.0 + (duration_ms + stagger_ms) / 1000 * 3
    return run_program(["sleepers", "-count", str(count), "-period-ms", str(period_ms),
                        "-duration-ms", str(duration_ms), "-stagger-ms", str(stagger_ms)],
                       timeout=timeout)


MEMORY_COUNT, MEMORY_POINTS = declared("tasks_goroutines"), declared("tasks_memory_points")
PERIOD_MS, STAGGER_MS = declared("tasks_sleep_period_ms"), declared("tasks_sleep_stagger_ms")
LAUNCHES = declared("tasks_go_launch_iterations")
ITERATIONS, WARMUP = declared("tasks_go_iterations"), declared("tasks_warmup")


def check_params(iterations: Any = ITERATIONS.default, warmup: Any = WARMUP.default,
                 cpu: Any = "auto",
                 memory_count: Any = MEMORY_COUNT.default,
                 memory_points: Any = MEMORY_POINTS.default, sleepers_count: Any = 0,
                 period_ms: Any = PERIOD_MS.default, duration_ms: Any = 2000,
                 stagger_ms: Any = STAGGER_MS.default) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError); the declared
    ones' defaults and ranges are the notebook parameters' (threadcost.experiments.parameters)."""
    p: dict[str, Any] = {
        "iterations": validate.integer("iterations", iterations, **ITERATIONS.bounds),
        "warmup": validate.integer("warmup", warmup, **WARMUP.bounds),
        "memory_count": validate.integer("memory_count", memory_count, **MEMORY_COUNT.bounds),
        "memory_points": validate.integer("memory_points", memory_points,
                                          **MEMORY_POINTS.bounds),
        "sleepers_count": validate.integer("sleepers_count", sleepers_count, minimum=0,
                                           maximum=MAX_GOROUTINES),
        "period_ms": validate.integer("period_ms", period_ms, **PERIOD_MS.bounds),
        "duration_ms": validate.integer("duration_ms", duration_ms, minimum=1,
                                        maximum=600_000),
        "stagger_ms": validate.integer("stagger_ms", stagger_ms, **STAGGER_MS.bounds),
    }
    if p["duration_ms"] < p["period_ms"]:
        raise ParameterError("duration_ms", duration_ms,
                             f"must be at least period_ms ({p['period_ms']} ms)")
    p["cpu"] = one_cpu("cpu", cpu, allow_none=False)  # the GOMAXPROCS=1 run's CPU
    p["memory_points"] = min(p["memory_points"], p["memory_count"] + 1)
    biggest = max(p["memory_count"], p["sleepers_count"])
    validate.memory_fits("memory_count", memory_count, biggest * GOROUTINE_BUDGET_KIB)
    return p


def _pingpong(p: dict[str, Any], pinned: bool) -> dict[str, Any]:
    args = ["pingpong", "-iterations", str(p["iterations"]), "-warmup", str(p["warmup"])]
    if pinned:
        args += ["-gomaxprocs", "1", "-cpu", str(p["cpu"])]
    timeout = 120.0 + p["iterations"] * 2 * 20e-6
    data = run_program(args, timeout=timeout)
    samples = np.asarray(data.pop("samples_ns"), dtype=np.int64)
    iters = int(data["iterations"])
    batch_rt = data["batch_ns"] / iters
    return {
        "mode": "GOMAXPROCS=1, pinned" if pinned else "default GOMAXPROCS, unpinned",
        "gomaxprocs": data["gomaxprocs"], "affinity": data["affinity"],
        "round_trip_ns": stats.distribution(samples),
        "round_trip_p5_p95_ns": [float(np.percentile(samples, 5)),
                                 float(np.percentile(samples, 95))],
        "batch_round_trip_ns": batch_rt,
        "switch_ns_batch": batch_rt / 2,
        "round_trips_per_s": 1e9 / batch_rt if batch_rt > 0 else None,
        "timer_overhead_ns": data["timer_overhead_ns"],
        "samples": samples,
    }


def _memory(p: dict[str, Any]) -> dict[str, Any]:
    timeout = 120.0 + p["memory_count"] * 50e-6
    data = run_program(["memory", "-count", str(p["memory_count"]),
                        "-points", str(p["memory_points"])], timeout=timeout)
    frame = pd.DataFrame(data["points"])
    out: dict[str, Any] = {"goroutines": int(data["count"]), "gomaxprocs": data["gomaxprocs"],
                           "points": data["points"]}
    for column, key in (("rss_kib", "rss_kib"), ("vsz_kib", "vsz_kib"),
                        ("stack_inuse_kib", "stack_kib")):
        fit = stats.fit_line(frame.goroutines, frame[column])
        out[f"per_goroutine_{key}"] = fit.slope
        out[f"per_goroutine_{key}_ci95"] = [fit.slope_ci95_low, fit.slope_ci95_high]
        out[f"per_goroutine_{key}_r2"] = fit.r2
    return out


def run(iterations: Any = ITERATIONS.default, warmup: Any = WARMUP.default, cpu: Any = "auto",
        memory_count: Any = MEMORY_COUNT.default, memory_points: Any = MEMORY_POINTS.default,
        sleepers_count: Any = 10_000, period_ms: Any = PERIOD_MS.default,
        duration_ms: Any = 2000, stagger_ms: Any = STAGGER_MS.default) -> Result:
    """The Go rows: channel ping-pong (pinned GOMAXPROCS=1 and default), memory
    per idle goroutine, and (when ``sleepers_count`` > 0) the goroutine sleepers.

    When Go is not on PATH the result is ``summary["skipped"]`` with the reason
    and every claim row ``not_run``; nothing raises.
    """
    p = check_params(iterations, warmup, cpu, memory_count, memory_points, sleepers_count,
                     period_ms, duration_ms, stagger_ms)
    reason = go_absent_reason()
    if reason is not None:
        summary = {"skipped": reason}
        return Result(EXPERIMENT, p, summary, {})

    ensure_built()
    pinned = _pingpong(p, pinned=True)
    free = _pingpong(p, pinned=False)
    memory = _memory(p)
    summary: dict[str, Any] = {
        "skipped": None,
        "go_version": go_version(),
        "channel_pingpong": {k: v for k, v in pinned.items() if k != "samples"},
        "channel_pingpong_default": {k: v for k, v in free.items() if k != "samples"},
        "goroutine_memory": memory,
    }
    if p["sleepers_count"] > 0:
        summary["sleepers"] = sleepers_go(p["sleepers_count"], p["period_ms"],
                                          p["duration_ms"], p["stagger_ms"])
    tables = {
        "round_trips": pd.concat([
            pd.DataFrame({"mode": "gomaxprocs1_pinned", "round_trip_ns": pinned["samples"]}),
            pd.DataFrame({"mode": "default", "round_trip_ns": free["samples"]})],
            ignore_index=True),
        "memory_points": pd.DataFrame(memory["points"]),
    }
    return Result(EXPERIMENT, p, summary, tables)


# --- goroutine launch and C04's pinning gain, each an experiment of its own ---------

LAUNCH_EXPERIMENT = "goroutine_launch"
PINNING_EXPERIMENT = "goroutine_pinning"


def _not_run_result(experiment: str, p: dict[str, Any], reason: str) -> Result:
    return Result(experiment, p, {"skipped": reason}, {})


def check_launch_run(iterations: Any, warmup: Any, cpu: Any) -> dict[str, Any]:
    """What :func:`launch_run` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"iterations": validate.integer("iterations", iterations, **LAUNCHES.bounds),
            "warmup": validate.integer("warmup", warmup, minimum=0, maximum=MAX_ITERATIONS),
            "cpu": one_cpu("cpu", cpu, allow_none=False)}


def launch_run(iterations: Any = LAUNCHES.default, warmup: Any = LAUNCHES.default // 10,
               cpu: Any = "auto") -> Result:
    """A goroutine's whole life, one at a time: ``go`` statement, first run,
    ``wg.Done()``, and the ``wg.Wait()`` that sees it, with GOMAXPROCS=1 and the
    process pinned to ``cpu`` (as the thread launch of notebook 03 is pinned).

    ``launch_ns``: the distribution of per-launch samples (each includes one
    clock read, ``timer_overhead_ns``); ``batch_launch_ns``: a second batch of
    ``iterations`` launches timed as a whole, divided by their number (no
    clock read per launch). Without Go, ``summary["skipped"]`` says why.
    """
    p = check_launch_run(iterations, warmup, cpu)
    reason = go_absent_reason()
    if reason is not None:
        return _not_run_result(LAUNCH_EXPERIMENT, p, reason)
    ensure_built()
    data = run_program(["launch", "-iterations", str(p["iterations"]), "-warmup",
                        str(p["warmup"]), "-gomaxprocs", "1", "-cpu", str(p["cpu"])],
                       timeout=120.0 + p["iterations"] * 3 * 20e-6)
    samples = np.asarray(data.pop("samples_ns"), dtype=np.int64)
    summary = {
        "skipped": None, "go_version": data["go_version"], "gomaxprocs": data["gomaxprocs"],
        "affinity": data["affinity"], "launched": int(data["launched"]),
        "expected_launches": p["warmup"] + 2 * p["iterations"],
        "launch_ns": stats.distribution(samples),
        "batch_launch_ns": data["batch_ns"] / p["iterations"],
        "timer_overhead_ns": data["timer_overhead_ns"],
    }
    return Result(LAUNCH_EXPERIMENT, p, summary,
                  {"samples": pd.DataFrame({"launch_ns": samples})})


def check_pinning_run(repeats: Any, iterations: Any, warmup: Any, cpu: Any) -> dict[str, Any]:
    """What :func:`pinning_run` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"repeats": validate.integer("repeats", repeats, minimum=2, maximum=1000),
            "iterations": validate.integer("iterations", iterations, minimum=1000,
                                           maximum=MAX_ITERATIONS),
            "warmup": validate.integer("warmup", warmup, minimum=0, maximum=MAX_ITERATIONS),
            "cpu": one_cpu("cpu", cpu, allow_none=False)}


def pinning_run(repeats: Any = 7, iterations: Any = 200_000, warmup: Any = 20_000,
                cpu: Any = "auto") -> Result:
    """C04's pinning gain: the channel ping-pong with GOMAXPROCS=1 pinned to
    ``cpu`` vs the runtime's defaults, ``repeats`` pairs run alternately (the
    order flips every pair). Each run's rate comes from its batch (no clock
    reads); the gain of a pair is pinned rate / default rate - 1, and the table
    ``gain`` gives the mean gain with a 95% t-interval over the pairs.

    With one usable CPU the runtime's default is GOMAXPROCS=1 on that CPU, the pinned
    mode itself: the run is stored as skipped (``summary["skipped"]`` says why)."""
    p = check_pinning_run(repeats, iterations, warmup, cpu)
    reason = cpus.two_cpus_reason() or go_absent_reason()
    if reason is not None:
        return _not_run_result(PINNING_EXPERIMENT, p, reason)
    ensure_built()
    rows = []
    for rep in range(p["repeats"]):
        order = (True, False) if rep % 2 == 0 else (False, True)
        for pinned in order:
            r = _pingpong(p, pinned=pinned)
            rows.append({"repeat": rep, "mode": "gomaxprocs1_pinned" if pinned else "default",
                         "gomaxprocs": r["gomaxprocs"],
                         "batch_round_trip_ns": r["batch_round_trip_ns"],
                         "round_trips_per_s": r["round_trips_per_s"],
                         "switch_ns_batch": r["switch_ns_batch"],
                         "round_trip_p50_ns": r["round_trip_ns"]["p50"]})
    runs = pd.DataFrame(rows)
    runs["median_rate_per_s"] = 1e9 / runs["round_trip_p50_ns"]
    gain_rows = []
    for basis, column in (("batch", "round_trips_per_s"), ("median sample", "median_rate_per_s")):
        wide = runs.pivot(index="repeat", columns="mode", values=column)
        gains = (wide["gomaxprocs1_pinned"] / wide["default"] - 1).to_numpy(dtype=float)
        mean = float(gains.mean())
        half = float(stats.t_quantile(0.975, gains.size - 1) * gains.std(ddof=1)
                     / np.sqrt(gains.size))
        gain_rows.append({"basis": basis, "pairs": int(gains.size), "gain_mean": mean,
                          "ci95_low": mean - half, "ci95_high": mean + half,
                          "ci95_half_width": half, "resolves_5_percent": bool(half < 0.05)})
    gain = pd.DataFrame(gain_rows)
    summary = {"skipped": None, "gain": gain.iloc[0].to_dict(),
               "gain_median_sample": gain.iloc[1].to_dict(),
               "pinned_switch_ns_batch": float(runs[runs["mode"] == "gomaxprocs1_pinned"]
                                               ["switch_ns_batch"].median()),
               "default_switch_ns_batch": float(runs[runs["mode"] == "default"]
                                                ["switch_ns_batch"].median())}
    return Result(PINNING_EXPERIMENT, p, summary, {"runs": runs, "gain": gain})
