"""Page 05's kernel-task rows: one switch between two threads, or a thread and a forked
process, both pinned to one CPU (measure only; notebook 05 stores each run, page 05 and the
headline draw from the stored runs).

One run of :func:`run` is notebook 04's futex ping-pong (:mod:`threadcost.experiments.
context_switch`), in one child process: :data:`BARE_BATCHES` bare batches, each a fresh
pair of tasks (the C kernel creates both anew on every call: two threads, or a thread and
a forked process) timed only as a whole (no clock read inside);
``summary["batch_round_trip_ns_runs"]`` holds their mean round trips, and every batch
records the CPU each task ran on once pinned (``pinning_verified``: true only when every
batch ran where it was pinned). The round trips timed one by one (a distribution, one
clock read in each) are notebook 04's sweep, the row page 05's table prints; runs stored
before also hold a sampled run of their own (its ``samples`` table and the summary's
distribution), which nothing here reads any more.

One switch, the paper's one definition, is half a bare batch's mean round trip, the median
of the batches with their range as its interval (the findings ``switch_thread_batch_median_ns``
and ``switch_process_batch_median_ns`` in :mod:`threadcost.findings.headline`).

Runs are stored as ``tasks_switch_thread`` and ``tasks_switch_process`` (one spec entry
each), under names of their own so that the claims, which read notebook 04's runs, never
take these for them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from threadcost.experiments.context_switch import checks as context_switch_params
from threadcost.experiments.context_switch import run as context_switch
from threadcost.experiments.parameters import declared
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

ITERATIONS = declared("tasks_kernel_switch_iterations")

# a row's task kind -> the experiment its runs are stored under, and the ping-pong's tasks
EXPERIMENTS = {"thread": "tasks_switch_thread", "process": "tasks_switch_process"}
PING_PONG_TASKS = {"thread": "threads", "process": "processes"}

# Bare batches per run: many short batches rather than a few long ones. A batch's mean
# takes in every preemption inside it, so on a busy machine one long batch can read several
# times another; the median of 11 short batches passes over the few a preemption hit.
BARE_BATCHES = 11
BARE_BATCH_SHARE = 10  # a batch: the run's round trips / this (1,000 to all)


def plan(iterations: int) -> dict[str, Any]:
    """The settings of each bare batch, for ``iterations`` round trips in the run: a tenth
    of them per batch, at least 1,000, at most all."""
    return dict(mechanism="futex", placement="same-cpu",
                iterations=min(iterations, max(iterations // BARE_BATCH_SHARE, 1000)),
                warmup=max(iterations // BARE_BATCH_SHARE // 10, 100))


def check_params(kind: Any = "thread", iterations: Any = ITERATIONS.default
                 ) -> dict[str, Any]:
    """Validate and normalise the parameters of :func:`run` (raises ParameterError naming
    the parameter, the value and what is allowed) before any C runs."""
    kind = validate.choice("kind", kind, tuple(EXPERIMENTS))
    n = validate.integer("iterations", iterations, **ITERATIONS.bounds)
    # the ping-pong's own checks (CPUs, memory) refuse first
    context_switch_params.check_params(tasks=PING_PONG_TASKS[kind], **plan(n))
    return {"kind": kind, "iterations": n}


def _batches(p: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Child side: ``count`` bare batches, one after the other, each a fresh pair of tasks
    (one child for all of them: a child per batch cost more to start than the batch took)."""
    return [context_switch._pingpong(p, per_sample=False, record_cpus=False, stall_after=-1)
            for _ in range(count)]


def run(kind: Any = "thread", iterations: Any = ITERATIONS.default) -> Result:
    """The futex ping-pong between two threads (``kind`` "thread"), or a thread and a
    forked process ("process"), pinned to one CPU: :data:`BARE_BATCHES` bare batches of a
    tenth of ``iterations`` round trips each. Returns the first batch's Result under this
    experiment's name, with every batch's mean round trip in
    ``summary["batch_round_trip_ns_runs"]``, the pinning record of all of them, and the
    batches' number and size in ``params``."""
    p = check_params(kind, iterations)
    batch = plan(p["iterations"])
    how = context_switch.check_params(tasks=PING_PONG_TASKS[p["kind"]], **batch)
    raws = run_isolated(_batches, {"p": how, "count": BARE_BATCHES},
                        timeout=(how["timeout_s"] * 3 + 60) * BARE_BATCHES)
    bare = [context_switch.assemble(how, raw, {}, per_sample=False, record_cpus=False)
            for raw in raws]
    result = bare[0]
    s = result.summary
    s["batch_round_trip_ns_runs"] = [float(b.summary["whole_run_mean_ns"]) for b in bare]
    # the pinning record of every batch (each notes its tasks' CPUs once pinned)
    s["pinning_verified"] = all(b.summary["pinning_verified"] for b in bare)
    for key in ("cpus_seen", "cpus_seen_a", "cpus_seen_b"):
        s[key] = sorted({c for b in bare for c in b.summary[key]})
    result.params.update(iterations=p["iterations"], warmup=batch["warmup"],
                         bare_batches=BARE_BATCHES, bare_batch_iterations=batch["iterations"])
    return dataclasses.replace(result, experiment=EXPERIMENTS[p["kind"]])
