"""The peers' task kinds beside the C thread, the fiber and the goroutine:
Rust threads, Tokio tasks, Java platform and virtual threads (notebook 05).

Per kind, through the peer registry (:mod:`threadcost.peers`):

- switch: a ping-pong between two tasks of the kind (rendezvous channels for
  threads, Tokio channels for tasks), the whole process pinned to ``cpu``; one
  round trip is two switches (per switch = half a round trip; p50 of the
  samples, and a second batch timed whole: a mean, S5's statistic). The
  ping-pong runs ``repeats`` times (fresh processes, kinds interleaved):
  ``switch_ns_batch_repeats`` holds each repeat's batch mean,
  ``switch_ns_batch`` their median;
- creation: a task's whole life one at a time (spawn, first run, exit, join),
  pinned to ``cpu``; p50 of the samples and a batch timed whole;
- memory: idle tasks blocked on a lock, RSS and VSZ read at ``points`` counts;
  per task = the slope (with R² and a 95% interval). Thread kinds use
  ``thread_count`` tasks (they hold pids), the others ``task_count``.

A kind whose toolchain is missing reads "not run here" with the reason; a kind
whose peer lacks a program (Java has no ping-pong) leaves that column empty.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import peers as registry
from threadcost import stats
from threadcost.errors import ParameterError
from threadcost.experiments.parameters import declared
from threadcost.experiments.user_space_tasks import sleepers
from threadcost.experiments.user_space_tasks.fibers import one_cpu
from threadcost.results import Result
from threadcost.settings import validate

EXPERIMENT = "peer_runtimes"
# The peers' runtimes of page 5's table and those holding a kernel thread each, as their
# registry entries declare them (threadcost.peers).
KINDS, THREAD_KINDS = registry.PAGE5_KINDS, registry.KERNEL_TASK_KINDS
ALL_KINDS = registry.ALL  # in ``kinds``: every one of KINDS (page 5's default)
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters).
ITERATIONS, LAUNCHES = declared("tasks_peer_iterations"), declared("tasks_peer_launch_iterations")
TASK_COUNT, THREAD_COUNT = declared("tasks_peer_tasks"), declared("tasks_peer_threads")
REPEATS = declared("tasks_peer_repeats")
BRIGADE_REPEATS = declared("brigade_repeats")  # S5's brigade repeats as page 07's own


def check_params(kinds: Any = (ALL_KINDS,), iterations: Any = ITERATIONS.default,
                 warmup: Any = ITERATIONS.default // 10,
                 launch_iterations: Any = LAUNCHES.default,
                 task_count: Any = TASK_COUNT.default, thread_count: Any = THREAD_COUNT.default,
                 points: Any = 6, cpu: Any = "auto",
                 repeats: Any = REPEATS.default) -> dict[str, Any]:
    chosen = validate.choice_list("kinds", kinds, (ALL_KINDS, *KINDS))
    p: dict[str, Any] = {
        "kinds": [k for k in KINDS if k in chosen or ALL_KINDS in chosen],
        "iterations": validate.integer("iterations", iterations, **ITERATIONS.bounds),
        "warmup": validate.integer("warmup", warmup, minimum=0, maximum=ITERATIONS.maximum),
        "launch_iterations": validate.integer("launch_iterations", launch_iterations,
                                              **LAUNCHES.bounds),
        "task_count": validate.integer("task_count", task_count, **TASK_COUNT.bounds),
        "thread_count": validate.integer("thread_count", thread_count, **THREAD_COUNT.bounds),
        "points": validate.integer("points", points, minimum=3, maximum=100),
        "cpu": one_cpu("cpu", cpu, allow_none=False),
        "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
    }
    validate.memory_fits("task_count", task_count, p["task_count"] * 16
                         + p["thread_count"] * 256)
    return p


def _timed(data: dict[str, Any], per: int) -> dict[str, Any]:
    samples = np.asarray(data["samples_ns"], dtype=np.int64)
    return {"distribution": stats.distribution(samples),
            "batch_ns": data["batch_ns"] / per,
            "timer_overhead_ns": data.get("timer_overhead_ns"), "samples": samples}


def _pingpong(kind: str, p: dict[str, Any]) -> dict[str, Any]:
    return registry.run_kind(kind, "pingpong", {"iterations": p["iterations"],
                                                "warmup": p["warmup"]},
                             timeout=120.0 + p["iterations"] * 3 * 50e-6, cpu=p["cpu"]).data


def _memory(kind: str, count: int, points: int) -> dict[str, Any]:
    data = registry.run_kind(kind, "memory", {"count": count, "points": points},
                             timeout=120.0 + count * 2e-3).data
    frame = pd.DataFrame(data["points"])
    out: dict[str, Any] = {"tasks": int(data["count"]), "points": data["points"]}
    for column in ("rss_kib", "vsz_kib"):
        fit = stats.fit_line(frame.tasks, frame[column])
        out[f"per_task_{column}"] = fit.slope
        out[f"per_task_{column}_ci95"] = [fit.slope_ci95_low, fit.slope_ci95_high]
        out[f"per_task_{column}_r2"] = fit.r2
    return out


def run(kinds: Any = (ALL_KINDS,), iterations: Any = ITERATIONS.default,
        warmup: Any = ITERATIONS.default // 10, launch_iterations: Any = LAUNCHES.default,
        task_count: Any = TASK_COUNT.default, thread_count: Any = THREAD_COUNT.default,
        points: Any = 6, cpu: Any = "auto", repeats: Any = REPEATS.default) -> Result:
    """Switch, creation and memory per task of each peer kind (see the module)."""
    p = check_params(kinds, iterations, warmup, launch_iterations, task_count, thread_count,
                     points, cpu, repeats)
    out: dict[str, dict[str, Any]] = {}
    samples: list[pd.DataFrame] = []
    for kind in p["kinds"]:
        peer = registry.peer_of(kind)
        reason = peer.absent_reason()
        row: dict[str, Any] = {"kind": kind, "label": registry.KINDS[kind].peer_label,
                               "not_run": reason}
        out[kind] = row
        if reason is not None:
            continue
        if "pingpong" in peer.programs:
            t = _timed(_pingpong(kind, p), p["iterations"])
            row["round_trip_ns"] = t["distribution"]
            row["batch_round_trip_ns"] = t["batch_ns"]
            row["switch_ns_batch_repeats"] = [t["batch_ns"] / 2]
            samples.append(pd.DataFrame({"kind": kind, "what": "round_trip_ns",
                                         "ns": t["samples"]}))
        data = registry.run_kind(kind, "launch", {"iterations": p["launch_iterations"],
                                                  "warmup": p["launch_iterations"] // 10},
                                 timeout=120.0 + p["launch_iterations"] * 3 * 1e-3,
                                 cpu=p["cpu"]).data
        t = _timed(data, p["launch_iterations"])
        row["create_ns"] = t["distribution"]
        row["batch_create_ns"] = t["batch_ns"]
        row["version"] = data.get("version")
        count = p["thread_count"] if kind in THREAD_KINDS else p["task_count"]
        row["memory"] = _memory(kind, count, min(p["points"], count + 1))
    # the further repeats of the switch: fresh processes, kinds interleaved, the order
    # flipped each repeat
    switching = [k for k, row in out.items() if "switch_ns_batch_repeats" in row]
    for rep in range(1, p["repeats"]):
        for kind in (switching if rep % 2 == 0 else switching[::-1]):
            t = _timed(_pingpong(kind, p), p["iterations"])
            out[kind]["switch_ns_batch_repeats"].append(t["batch_ns"] / 2)
    for kind in switching:
        out[kind]["switch_ns_batch"] = float(np.median(out[kind]["switch_ns_batch_repeats"]))
    summary = {"kinds": out, "cpu": p["cpu"]}
    tables = {"samples": pd.concat(samples, ignore_index=True) if samples
              else pd.DataFrame(columns=["kind", "what", "ns"])}
    return Result(EXPERIMENT, p, summary, tables)


BRIGADE_EXPERIMENT = "peer_brigade"
# every runtime of the Rust peer (threadcost.peers.rust), and S5's one-thread brigade
BRIGADE_KINDS = (*(k.key for k in registry.peer("rust").kinds), "one-thread")
BRIGADE_DEFAULT_KINDS = tuple(declared("brigade_peer_kinds").default)
PLACEMENTS = ("same-cpu", "unpinned")
PEER_TRANSPORTS = declared("brigade_peer_transports")
PEER_ITERATIONS, PEER_WARMUP = declared("brigade_peer_iterations"), declared("brigade_peer_warmup")
PEER_STACK_KIB = declared("brigade_peer_stack_kib")


def check_brigade(tasks: Any, kinds: Any, placements: Any, iterations: Any, warmup: Any,
                  repeats: Any, cpu: Any, transports: Any = tuple(PEER_TRANSPORTS.default),
                  stack_kib: Any = PEER_STACK_KIB.default) -> dict[str, Any]:
    """What :func:`brigade` refuses, before anything runs (threadcost.paper.prechecks)."""
    chosen = validate.choice_list("kinds", kinds, BRIGADE_KINDS)
    links = validate.choice_list("transports", transports, PEER_TRANSPORTS.choices)
    p: dict[str, Any] = {
        "tasks": sorted(set(validate.integer_list("tasks", tasks, minimum=1, maximum=4000))),
        "kinds": [k for k in BRIGADE_KINDS if k in chosen],
        "placements": [x for x in PLACEMENTS
                       if x in validate.choice_list("placements", placements, PLACEMENTS)],
        "transports": [t for t in PEER_TRANSPORTS.choices if t in links],
        "iterations": validate.integer("iterations", iterations, **PEER_ITERATIONS.bounds),
        "warmup": validate.integer("warmup", warmup, **PEER_WARMUP.bounds),
        "repeats": validate.integer("repeats", repeats, **BRIGADE_REPEATS.bounds),
        "cpu": one_cpu("cpu", cpu, allow_none=False),
        "stack_kib": validate.integer("stack_kib", stack_kib, **PEER_STACK_KIB.bounds),
    }
    if p["stack_kib"] and p["stack_kib"] < 64:
        raise ParameterError("stack_kib", stack_kib, "0 (Rust's default) or at least 64 KiB")
    if "rust-thread" in p["kinds"]:
        validate.integer("tasks", max(p["tasks"]), minimum=1, maximum=sleepers.max_threads())
    return p


def _cpu_time(data: dict[str, Any]) -> dict[str, float]:
    """The process's user and system CPU time and the wall time over a thread brigade's
    timed trips, ns (NaN: a Tokio brigade, which reads none)."""
    if "timed_wall_ns" not in data:
        return dict.fromkeys(("cpu_user_ns", "cpu_system_ns", "timed_wall_ns"), float("nan"))
    return {"cpu_user_ns": float(data["timed_user_us"]) * 1e3,
            "cpu_system_ns": float(data["timed_system_us"]) * 1e3,
            "timed_wall_ns": float(data["timed_wall_ns"])}


def brigade(tasks: Any = (500,), kinds: Any = BRIGADE_DEFAULT_KINDS,
            placements: Any = PLACEMENTS, iterations: Any = PEER_ITERATIONS.default,
            warmup: Any = PEER_WARMUP.default, repeats: Any = 5, cpu: Any = "auto",
            transports: Any = tuple(PEER_TRANSPORTS.default),
            stack_kib: Any = PEER_STACK_KIB.default) -> Result:
    """S5's bucket brigade on the Rust peer: ``tasks`` threads or Tokio tasks in a
    chain of links, one byte passed along; ``one-thread`` is S5's one-thread-brigade
    (the same links, one thread doing every read and write: the I/O alone).
    ``transports``: ``socketpair`` (S5's: Unix stream socket pairs) and/or ``pipe``;
    ``tokio-task-mt`` is Tokio's default multi-thread runtime (S5's ``#[tokio::main]``,
    one worker per usable CPU), ``tokio-task`` its current_thread runtime;
    ``stack_kib``: each Rust thread's stack (S5: 1024; 0: Rust's 2 MiB).
    Per repeat: ``per_task_ns_mean`` = mean trip / tasks (S5's "per task per iter"),
    ``per_hop_ns_p50`` = median trip / (tasks + 1) and, for Rust threads,
    ``cross_cpu_hops``: the timed trips' hops whose reader woke on another CPU than the
    thread that wrote to it (each thread reads its CPU as its read returns); for the
    thread and one-thread brigades, ``cpu_user_ns``, ``cpu_system_ns`` and
    ``timed_wall_ns``: the process's CPU time (getrusage, every thread) and the wall time
    over the timed trips. Kinds, placements and
    transports alternate within every repeat (the order flips each repeat);
    ``same-cpu`` pins the whole process to ``cpu``."""
    p = check_brigade(tasks, kinds, placements, iterations, warmup, repeats, cpu, transports,
                      stack_kib)
    reason = registry.PEERS["rust"].absent_reason()
    if reason is not None:
        return Result(BRIGADE_EXPERIMENT, p, {"skipped": reason}, {})
    conditions = [(k, x, t) for t in p["transports"] for k in p["kinds"]
                  for x in p["placements"]]
    rows = []
    for rep in range(p["repeats"]):
        for n in p["tasks"]:
            for kind, placement, link in (conditions if rep % 2 == 0 else conditions[::-1]):
                hops = (p["iterations"] + p["warmup"]) * (n + 1)
                args = {"tasks": n, "iterations": p["iterations"], "warmup": p["warmup"],
                        "transport": link}
                cpu = p["cpu"] if placement == "same-cpu" else None
                timeout = 60.0 + n * 2e-3 + hops * 100e-6
                if kind == "one-thread":
                    data = registry.PEERS["rust"].run("brigade", "thread",
                                                      {**args, "mode": "one-thread"},
                                                      timeout=timeout, cpu=cpu).data
                else:
                    if kind == "rust-thread":
                        args["stack-kib"] = p["stack_kib"]
                    data = registry.run_kind(kind, "brigade", args, timeout=timeout,
                                             cpu=cpu).data
                trip = np.asarray(data["samples_ns"], dtype=np.int64)
                # the thread brigade counts, per timed trip, the hops whose reader woke on
                # another CPU than its writer (the other kinds count none: NaN)
                cross = data.get("cross_cpu_per_trip")
                rows.append({"repeat": rep, "kind": kind, "placement": placement,
                             "transport": str(data.get("transport", link)), "tasks": n,
                             "trips": int(trip.size), "trip_p50_ns": float(np.median(trip)),
                             "trip_mean_ns": float(trip.mean()),
                             "per_task_ns_mean": float(trip.mean()) / n,
                             "per_hop_ns_p50": float(np.median(trip)) / (n + 1),
                             "cross_cpu_hops": float(np.sum(cross)) if cross is not None
                             else float("nan"),
                             **_cpu_time(data),
                             "bytes_wrong": int(data.get("bytes_wrong", 0)),
                             "workers": int(data.get("workers", 0)),
                             "rss_growth_kib": int(data.get("rss_ready_kib", 0))
                             - int(data.get("rss_before_kib", 0))})
    runs = pd.DataFrame(rows)
    med = (runs.groupby(["kind", "placement", "transport", "tasks"], as_index=False)
           ["per_hop_ns_p50"].median())
    summary = {"skipped": None, "version": registry.PEERS["rust"].version(),
               "per_hop_ns": med.to_dict(orient="records")}
    return Result(BRIGADE_EXPERIMENT, p, summary, {"runs": runs})
