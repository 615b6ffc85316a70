"""I/O-readiness switching: a bucket brigade of N tasks joined by N+1 pipes (or, with
``transport="socketpair"``, Unix stream socket pairs, S5's transport).

A byte enters pipe 0; task i reads pipe i and writes pipe i+1; the driver reads
pipe N. **One trip is N+1 hops**, and a hop is one pipe ``read`` plus one
``write`` plus whatever it takes to get the reader running. Kinds
(``native/brigade.c`` and ``native/peers/go/brigade.go``):

- ``thread``: N kernel threads, each blocking in ``read()``; the kernel wakes
  the next thread at every hop (a thread switch driven by the pipe);
- ``epoll``: one thread, non-blocking pipes, an epoll loop that runs the state
  machine of whichever task's pipe became readable (the event-driven design);
- ``one-thread``: one thread does every read and write in order: the pipe I/O
  alone, no switch and no readiness wait. **The baseline**: a kind's *net*
  per-hop cost is its per-hop p50 minus this kind's p50 at the same N and
  placement;
- ``goroutine``: N goroutines on ``os.Pipe`` ends, parked and woken by the Go
  runtime's poller (epoll). Without Go: "not run", with the reason.

Placement ``same-cpu`` pins every thread of the brigade (driver and tasks; the
whole Go process, so GOMAXPROCS=1) to one CPU; ``unpinned`` leaves placement to
the scheduler.

Per-hop time = (trip time - one clock read) / (N+1), a distribution over the
timed trips of every repeat. Memory per task = the slope over N of the growth
of VmRSS from before the brigade existed to after its warm-up (each run in a
fresh process); also the kernel side: growth of KernelStack +
PageTables + SUnreclaim (/proc/meminfo, system-wide, so noisy on a busy
machine), which includes the pipes themselves for every kind (the goroutine
kind reads the same counters from Go).

Every C run is a fresh child process with a deadline (:mod:`threadcost.runsafety.isolate`)
and a watchdog inside the kernel; the goroutine run is a subprocess with a
deadline and its own watchdog. A run that a system limit stops (fds, threads,
memory) gives the partial result with ``limit_hit`` naming the limit; larger N of
that kind and placement are then not tried.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from threadcost import cbuild, paths, stats
from threadcost.errors import KernelError
from threadcost.experiments.brigade.checks import (
    BASELINE,
    EXPERIMENT,
    ITERATIONS,
    KINDS,
    MAX_HOPS_PER_RUN,
    MAX_ITERATIONS,
    MAX_REPEATS,
    MAX_TASKS,
    PLACEMENTS,
    REFERENCE_BINARY,
    REFERENCE_SOURCE,
    REPEATS,
    STACK_KIB,
    TASK_BUDGET_KIB,
    TASKS,
    TRANSPORT,
    TRANSPORTS,
    WARMUP,
    check_params,
)
from threadcost.experiments.brigade.one_run import C_KINDS, GO_LIMITS, LIMITS, run_one
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.results import Result
from threadcost.settings import validate

# Re-exported: callers (commands, views, notebooks, tests) import everything from here.
__all__ = [
    "BASELINE", "C_KINDS", "EXPERIMENT", "GO_LIMITS", "KINDS", "LIMITS",
    "MAX_HOPS_PER_RUN", "MAX_ITERATIONS", "MAX_REPEATS", "MAX_TASKS", "PLACEMENTS",
    "REFERENCE_BINARY", "REFERENCE_SOURCE", "TASK_BUDGET_KIB", "TRANSPORTS", "build_reference",
    "check_params", "headline_rows", "per_hop_table", "reference_check", "run",
    "run_one",
]


# ------------------------------------------------------------------ the sweep


def _run_row(kind: str, tasks: int, placement: str, repeat: int,
             raw: dict[str, Any], transport: str = "pipe") -> dict[str, Any]:
    hops = tasks + 1
    per_hop = (raw["trip_ns"] - raw["timer_overhead_ns"]) / hops
    d = stats.distribution(per_hop)
    rss = None if raw["rss_ready_kib"] is None else raw["rss_ready_kib"] - raw["rss_before_kib"]
    kern = None if raw["kernel_ready_kib"] is None \
        else raw["kernel_ready_kib"] - raw["kernel_before_kib"]
    return {
        "kind": kind, "tasks": tasks, "placement": placement, "transport": transport,
        "repeat": repeat, "hops_per_trip": hops, "trips": int(raw["trip_ns"].size),
        "per_hop_ns_p50": d["p50"], "per_hop_ns_mean": d["mean"],
        "bytes_sent": raw["bytes_sent"], "bytes_arrived": raw["bytes_arrived"],
        "bytes_wrong": raw["bytes_wrong"], "rss_growth_kib": rss, "kernel_growth_kib": kern,
        "tasks_before": raw["tasks_before"], "tasks_height": raw["tasks_height"],
        "tasks_after": raw["tasks_after"], "fds_before": raw["fds_before"],
        "fds_ready": raw["fds_ready"], "fds_after": raw["fds_after"],
        "voluntary_switches": raw["voluntary"], "involuntary_switches": raw["involuntary"],
        "timer_overhead_ns": raw["timer_overhead_ns"], "limit": raw["limit"] or "",
    }


def _slope(rows: pd.DataFrame, column: str) -> dict[str, Any] | None:
    pts = rows.dropna(subset=[column])
    if len(pts) < 3 or pts.tasks.nunique() < 2:
        return None
    fit = stats.fit_line(pts.tasks, pts[column].astype(float))
    return {"slope": fit.slope, "ci95_low": fit.slope_ci95_low,
            "ci95_high": fit.slope_ci95_high, "r2": fit.r2, "n": fit.n}


def _memory_rows(runs: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    ok = runs[runs.trips > 0]
    for (kind, placement), group in ok.groupby(["kind", "placement"], sort=False):
        rss, kern = _slope(group, "rss_growth_kib"), _slope(group, "kernel_growth_kib")
        out.append({
            "kind": kind, "placement": placement, "runs": len(group),
            "max_tasks": int(group.tasks.max()),
            "rss_per_task_kib": rss["slope"] if rss else None,
            "rss_ci95_low": rss["ci95_low"] if rss else None,
            "rss_ci95_high": rss["ci95_high"] if rss else None,
            "rss_r2": rss["r2"] if rss else None,
            "kernel_per_task_kib": kern["slope"] if kern else None,
            "kernel_ci95_low": kern["ci95_low"] if kern else None,
            "kernel_ci95_high": kern["ci95_high"] if kern else None,
            "kernel_r2": kern["r2"] if kern else None,
        })
    return out


def _results(p: dict[str, Any], runs: pd.DataFrame, trips: pd.DataFrame,
             memory: list[dict[str, Any]], not_run: dict[str, str],
             limits: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The contract's rows: one per kind, tasks and placement."""
    mem = {(m["kind"], m["placement"]): m for m in memory}
    base: dict[tuple[int, str], float] = {}
    dists: dict[tuple[str, int, str], dict[str, float]] = {}
    for (kind, tasks, placement), group in trips.groupby(["kind", "tasks", "placement"],
                                                         sort=False):
        d = stats.distribution(group.per_hop_ns)
        dists[(kind, int(tasks), placement)] = d
        if kind == BASELINE:
            base[(int(tasks), placement)] = d["p50"]
    out: list[dict[str, Any]] = []
    for placement in p["placement"]:
        for tasks in p["tasks"]:
            for kind in p["kinds"]:
                row: dict[str, Any] = {"kind": kind, "tasks": tasks, "placement": placement,
                                       "transport": p["transport"]}
                d = dists.get((kind, tasks, placement))
                lim = limits.get((kind, placement))
                m = mem.get((kind, placement))
                if d is not None:
                    row["per_hop_ns"] = {k: d[k] for k in ("min", "p50", "p99", "max", "mean")}
                    row["trips"] = int(d["n"])
                    b = base.get((tasks, placement))
                    row["net_per_hop_ns"] = d["p50"] - b if b is not None else None
                    sel = runs[(runs.kind == kind) & (runs.tasks == tasks)
                               & (runs.placement == placement) & (runs.trips > 0)]
                    row["repeat_p50_ns"] = [float(v) for v in sel.per_hop_ns_p50]
                else:
                    row["per_hop_ns"] = None
                    row["net_per_hop_ns"] = None
                row["rss_per_task_kib"] = m["rss_per_task_kib"] if m else None
                row["kernel_per_task_kib"] = m["kernel_per_task_kib"] if m else None
                row["limit_hit"] = None
                if lim is not None and tasks >= lim["tasks"]:
                    row["limit_hit"] = lim
                if kind in not_run:
                    row["not_run"] = not_run[kind]
                out.append(row)
    return out


def run(tasks: Any = tuple(TASKS.default), kinds: Any = KINDS, placement: Any = PLACEMENTS,
        iterations: Any = ITERATIONS.default, warmup: Any = WARMUP.default,
        repeats: Any = REPEATS.default, cpu: Any = "auto",
        stack_kib: Any = STACK_KIB.default, timeout_s: Any = 10, max_fds: Any = None,
        progress: Callable[[str], None] | bool | None = None,
        transport: Any = TRANSPORT.default) -> Result:
    """Every kind at every N and placement, ``repeats`` times, interleaved.

    ``tasks``: brigade sizes (1 .. 10,000); ``kinds``: of ``KINDS``;
    ``placement``: of ``PLACEMENTS``; ``iterations`` timed trips after
    ``warmup`` untimed ones per run; ``cpu``: the CPU of ``same-cpu`` ("auto":
    the first usable); ``stack_kib``: task thread stacks (0: system default);
    ``transport``: what joins the tasks, ``pipe`` or ``socketpair`` (S5's: Unix
    stream socket pairs), every kind alike;
    ``timeout_s``: the watchdog (no trip for this long ends a run); ``max_fds``
    caps RLIMIT_NOFILE of every measuring process (soft and hard), to show a
    limit being hit (None: raise the soft limit to the hard one). Repeats are
    interleaved: each repeat runs every (placement, N) with the kinds in a
    rotated order. ``progress``: True for a tqdm bar, or a callable given one
    line per run.
    """
    p = check_params(tasks, kinds, placement, iterations, warmup, repeats, cpu, stack_kib,
                     timeout_s, max_fds, transport)
    not_run: dict[str, str] = {}
    if "goroutine" in p["kinds"]:
        why = peers.go_absent_reason()
        if why is None:
            try:
                peers.ensure_built()
            except KernelError as exc:
                why = f"the Go peer did not build: {exc}"
        if why is not None:
            not_run["goroutine"] = why
    kinds_run = [k for k in p["kinds"] if k not in not_run]
    steps = [(r, pl, n) for r in range(p["repeats"]) for pl in p["placement"]
             for n in p["tasks"]]
    bar = None
    say: Callable[[str], None] | None = progress if callable(progress) else None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(steps) * len(kinds_run), desc="brigade", unit="run")
    limits: dict[tuple[str, str], dict[str, Any]] = {}
    run_rows: list[dict[str, Any]] = []
    trip_frames: list[pd.DataFrame] = []
    for repeat, pl, n in steps:
        k = len(kinds_run)
        order = [kinds_run[(i + repeat) % k] for i in range(k)] if k else []
        for kind in order:
            if (kind, pl) in limits and n >= limits[(kind, pl)]["tasks"]:
                if bar is not None:
                    bar.update(1)
                continue
            raw = run_one(kind, n, pl, p)
            row = _run_row(kind, n, pl, repeat, raw, p["transport"])
            run_rows.append(row)
            if raw["limit"]:
                limits[(kind, pl)] = {"limit": raw["limit"], "errno": raw["errno"],
                                      "kind": kind, "placement": pl, "tasks": n,
                                      "tasks_ready": raw["tasks_ready"],
                                      "nofile_soft": raw["nofile_soft"]}
            elif raw["trip_ns"].size:
                per_hop = (raw["trip_ns"] - raw["timer_overhead_ns"]) / (n + 1)
                trip_frames.append(pd.DataFrame({
                    "kind": kind, "tasks": n, "placement": pl, "transport": p["transport"],
                    "repeat": repeat,
                    "trip_ns": raw["trip_ns"], "per_hop_ns": per_hop}))
            if say is not None:
                what = (f"limit: {raw['limit']}" if raw["limit"]
                        else f"p50 {row['per_hop_ns_p50']:,.0f} ns/hop")
                say(f"repeat {repeat + 1}/{p['repeats']} {pl} {kind} x{n:,}: {what}")
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    runs = pd.DataFrame(run_rows, columns=list(_run_row(
        "thread", 1, "same-cpu", 0, _EMPTY_RAW).keys()))
    trips = pd.concat(trip_frames, ignore_index=True) if trip_frames else pd.DataFrame(
        columns=["kind", "tasks", "placement", "transport", "repeat", "trip_ns",
                 "per_hop_ns"])
    memory = _memory_rows(runs)
    results = _results(p, runs, trips, memory, not_run, limits)
    limit_hit = next(iter(limits.values()), None)
    summary: dict[str, Any] = {
        "headline_io": headline_rows(results),
        "results": results,
        "memory": memory,
        "not_run": not_run,
        "limits": list(limits.values()),
        "go_version": peers.go_version() if "goroutine" in kinds_run else None,
        "transport": p["transport"],
        "definitions": {
            "hop": "one pipe read + one write, and getting the reader running; "
                   "a trip is tasks + 1 hops",
            "per_hop_ns": "(trip time - one clock read) / (tasks + 1), over every timed "
                          "trip of every repeat",
            "net_per_hop_ns": f"per-hop p50 minus the {BASELINE} per-hop p50 at the same "
                              "tasks and placement",
            "rss_per_task_kib": "slope over tasks of VmRSS growth from before the brigade "
                                "to after its warm-up, one fresh process per run",
            "kernel_per_task_kib": "slope over tasks of the growth of KernelStack + "
                                   "PageTables + SUnreclaim (system-wide; pipes included)",
        },
    }
    mem_frame = pd.DataFrame(memory, columns=[
        "kind", "placement", "runs", "max_tasks", "rss_per_task_kib", "rss_ci95_low",
        "rss_ci95_high", "rss_r2", "kernel_per_task_kib", "kernel_ci95_low",
        "kernel_ci95_high", "kernel_r2"])
    tables = {"runs": runs, "trips": trips, "per_hop": per_hop_table(results),
              "memory": mem_frame}
    return Result(EXPERIMENT, p, summary, tables, limit_hit)


def headline_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A panel for the paper's headline: net cost per hop of each kind, same-cpu,
    at the largest N that every measured kind reached."""
    rows = [r for r in results if r["placement"] == "same-cpu" and r.get("per_hop_ns")]
    kinds = {r["kind"] for r in rows}
    sizes = [n for n in sorted({r["tasks"] for r in rows})
             if {r["kind"] for r in rows if r["tasks"] == n} == kinds]
    if not sizes:
        return []
    n = sizes[-1]
    return [{"task": r["kind"], "metric": "io_hop_net_ns", "value": r["net_per_hop_ns"],
             "p50_ns": r["per_hop_ns"]["p50"], "tasks": n, "placement": "same-cpu",
             "note": f"p50 per hop minus the {BASELINE} p50, {n:,} tasks on one CPU"}
            for r in rows if r["tasks"] == n]


_EMPTY_RAW: dict[str, Any] = {
    "trip_ns": np.zeros(0, np.int64), "timer_overhead_ns": 0, "rss_ready_kib": None,
    "rss_before_kib": 0, "kernel_ready_kib": None, "kernel_before_kib": 0, "bytes_sent": 0,
    "bytes_arrived": 0, "bytes_wrong": 0, "tasks_before": 0, "tasks_height": 0,
    "tasks_after": 0, "fds_before": 0, "fds_ready": 0, "fds_after": 0, "voluntary": None,
    "involuntary": None, "limit": None,
}


def per_hop_table(results: list[dict[str, Any]]) -> pd.DataFrame:
    """The results as one tidy table (a row per kind, tasks and placement)."""
    rows = []
    for r in results:
        d = r.get("per_hop_ns") or {}
        rows.append({"kind": r["kind"], "tasks": r["tasks"], "placement": r["placement"],
                     "transport": r.get("transport", "pipe"), "trips": r.get("trips", 0),
                     **{f"per_hop_ns_{k}": d.get(k) for k in ("min", "p50", "p99", "max",
                                                               "mean")},
                     "net_per_hop_ns": r["net_per_hop_ns"],
                     "rss_per_task_kib": r["rss_per_task_kib"],
                     "kernel_per_task_kib": r["kernel_per_task_kib"],
                     "limit": (r["limit_hit"] or {}).get("limit", ""),
                     "not_run": r.get("not_run", "")})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ the reference check


def build_reference() -> Path:
    """build/native/brigade_ref from native/brigade_reference/, compiled with the
    project's user-facing flags (warnings shown, never errors: threadcost.cbuild).
    Raises cbuild.CompileError naming the file and the compiler's first error lines."""
    dst = REFERENCE_BINARY
    if dst.is_file() and dst.stat().st_mtime >= REFERENCE_SOURCE.stat().st_mtime:
        return dst
    return cbuild.compile_program([REFERENCE_SOURCE], dst,
                                  program=str(REFERENCE_SOURCE.relative_to(paths.REPO_ROOT)))


def check_reference(tasks: Any, iterations: Any, warmup: Any, rounds: Any,
                    cpu: Any) -> tuple[int, int, dict[str, Any]]:
    """What :func:`reference_check` refuses, before anything runs (threadcost.paper.prechecks)."""
    n = validate.integer("tasks", tasks, minimum=1, maximum=1000)
    r = validate.integer("rounds", rounds, minimum=1, maximum=50)
    p = check_params(tasks=[n], kinds=["thread", "one-thread"], placement=["same-cpu"],
                     iterations=iterations, warmup=warmup, cpu=cpu, stack_kib=64)
    return n, r, p


def reference_check(tasks: Any = 100, iterations: Any = 2000, warmup: Any = 200,
                    rounds: Any = 5, cpu: Any = "auto") -> dict[str, Any]:
    """The brigade kernel against a minimal independent C program, alternately.

    Each round runs the reference (``native/brigade_reference/brigade_ref.c``:
    every thread pinned to ``cpu`` through the process's affinity) and then this
    project's ``thread`` and ``one-thread`` kinds, ``same-cpu`` on the same CPU.
    The statistic is the same on both sides: the median trip of a round divided
    by the hops per trip (the mean per hop is kept beside it; a median shrugs
    off the few trips another process on the shared CPU interrupts). Returns the
    per-round values and, per kind, the ratio of the medians over the rounds
    (kernel / reference).
    """
    n, r, p = check_reference(tasks, iterations, warmup, rounds, cpu)
    try:
        binary = build_reference()
    except (KernelError, OSError, subprocess.SubprocessError) as exc:
        # a cross-check: its section says why (the compiler's first error lines), the
        # rest of the page stands
        return {"tasks": n, "cpu": p["cpu"], "rounds": r, "iterations": p["iterations"],
                "skipped": f"not run here: {exc}"}
    rows: list[dict[str, Any]] = []
    for i in range(r):
        proc = subprocess.run([str(binary), str(n), str(p["iterations"]), str(p["warmup"]),
                               str(p["cpu"])], capture_output=True, text=True,
                              timeout=60 + p["iterations"] * (n + 1) * 50e-6,
                              stdin=subprocess.DEVNULL, check=False)
        if proc.returncode != 0:
            raise KernelError("brigade_ref", 4, 0, proc.stderr.strip()[-300:])
        ref = json.loads(proc.stdout)
        rows.append({"round": i, "program": "reference", "kind": "thread",
                     "per_hop_ns": ref["thread_p50_per_hop_ns"],
                     "mean_per_hop_ns": ref["thread_per_hop_ns"]})
        rows.append({"round": i, "program": "reference", "kind": "one-thread",
                     "per_hop_ns": ref["one_thread_p50_per_hop_ns"],
                     "mean_per_hop_ns": ref["one_thread_per_hop_ns"]})
        for kind in ("thread", "one-thread"):
            raw = run_one(kind, n, "same-cpu", p)
            trips = raw["trip_ns"]
            rows.append({"round": i, "program": "threadcost", "kind": kind,
                         "per_hop_ns": float(np.median(trips)) / (n + 1),
                         "mean_per_hop_ns": float(trips.mean()) / (n + 1)})
    frame = pd.DataFrame(rows)
    med = frame.groupby(["program", "kind"]).per_hop_ns.median()
    ratios = {kind: float(med[("threadcost", kind)] / med[("reference", kind)])
              for kind in ("thread", "one-thread")}
    return {"tasks": n, "cpu": p["cpu"], "rounds": r, "iterations": p["iterations"],
            "skipped": None, "per_round": frame, "median_per_hop_ns": {f"{a}/{b}": float(v)
                                                      for (a, b), v in med.items()},
            "ratio": ratios}
