"""Virtual vs resident memory of one allocation, before, during and after touching.

Claim C07: allocating 400 MiB moves the virtual size (VSZ) at once but not the
resident set (RSS); only writing to the pages makes them resident.

The kernel runs in a child process forked from threadcost's forkserver
(:func:`threadcost.runsafety.isolate.run_isolated`), never in the caller's. The caller may be a
Jupyter kernel, whose own threads start threads whenever they like: pyzmq starts its
garbage-collector thread (and a ZMQ context with two more) the first time the IOPub
thread sends a large output, and each new thread adds its stack and a 64 MiB glibc
malloc arena to VSZ. In the caller's process such a start, landing inside the measured
window, drew a 72 MiB step into the curve that the experiment did not cause. The child
runs one thread, so every change in its readings is the experiment's; :func:`steps`
finds a change that is not.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.errors import check_status
from threadcost.experiments.malloc_touch.checks import (
    ALLOCATORS,
    EXPERIMENT,
    MAX_POINTS,
    MIB,
    POINTS,
    check_params,
)
from threadcost.experiments.malloc_touch.spec import STAGES
from threadcost.native import ffi, interruptible, lib, proc_status_dict
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated

# Re-exported: callers (commands, other experiments, tests) import them from here.
__all__ = ["ALLOCATORS", "EXPERIMENT", "MAX_POINTS", "STAGES", "VSZ_SLACK_KIB", "check_params",
           "run", "steps"]
ALLOCATOR_CODES = {"malloc": lib.TC_ALLOC_MALLOC, "mmap": lib.TC_ALLOC_MMAP}
# Readings of VSZ may differ by this much without the experiment's doing: none in a
# one-thread child, but a page of slack keeps the check about steps, not rounding.
VSZ_SLACK_KIB = 4


def run(mib: Any = MIB.default, allocator: Any = "malloc", points: Any = POINTS.default,
        touch_fraction: Any = 1.0) -> Result:
    """Allocate ``mib`` MiB, touch ``touch_fraction`` of it page by page, free it.

    Returns the four stage readings (``before``, ``after_alloc``,
    ``after_touch``, ``after_free``) and a ``touch_curve`` of ``points``
    readings taken while touching. All sizes are KiB of the measuring child process
    (a fork of threadcost's forkserver, numpy and pandas loaded) as
    /proc/self/status reports them.
    """
    p = check_params(mib, allocator, points, touch_fraction)
    raw = run_isolated(_measure, {"p": p}, timeout=60.0 + p["mib"] / 64)
    limit_hit = None
    if raw["status"] == lib.TC_ELIMIT:
        limit_hit = {"limit": "memory (allocation refused: RLIMIT_AS, overcommit or RAM)",
                     "errno": raw["err"]}
    stages = raw["stages"]
    points_rows = raw["curve"]
    base = stages["before"]
    touch_s = raw["touch_ns"] / 1e9
    touched_mib = (points_rows[-1]["touched_kib"] / 1024) if points_rows else 0.0
    summary: dict[str, Any] = {
        **{name: {"vsz_kib": s["vsz_kib"], "rss_kib": s["rss_kib"],
                  "rss_anon_kib": s["rss_anon_kib"]} for name, s in stages.items()},
        "touch_curve": points_rows,
        "deltas_kib": {
            name: {"vsz": stages[name]["vsz_kib"] - base["vsz_kib"],
                   "rss": stages[name]["rss_kib"] - base["rss_kib"]}
            for name in STAGES[1:]
        },
        "touched_mib": touched_mib,
        "touch_seconds": touch_s,
        "touch_mib_per_s": touched_mib / touch_s if touch_s > 0 else None,
    }
    stage_rows = [{"stage": name, **stages[name]} for name in STAGES]
    tables = {
        "stages": pd.DataFrame(stage_rows),
        "touch_curve": pd.DataFrame(points_rows),
    }
    return Result(EXPERIMENT, p, summary, tables, limit_hit)


def _measure(p: dict[str, Any]) -> dict[str, Any]:
    """In the isolated child: the C kernel's readings as plain (picklable) values."""
    curve = ffi.new("tc_touch_point[]", p["points"])
    out = ffi.new("tc_malloc_touch_result *")
    status = interruptible(lib.tc_malloc_touch, p["mib"], ALLOCATOR_CODES[p["allocator"]],
                           p["points"], round(p["touch_fraction"] * 1000), curve, out)
    check_status("tc_malloc_touch", status, out.err)
    return {
        "status": int(status),
        "err": int(out.err),
        "touch_ns": int(out.touch_ns),
        "stages": {name: proc_status_dict(getattr(out, name)) for name in STAGES},
        "curve": [
            {"touched_kib": int(curve[i].touched_kib), "vsz_kib": int(curve[i].vsz_kib),
             "rss_kib": int(curve[i].rss_kib), "rss_anon_kib": int(curve[i].rss_anon_kib)}
            for i in range(out.points_filled)
        ],
    }


def steps(stages: pd.DataFrame, curve: pd.DataFrame) -> list[str]:
    """Changes of virtual size that the experiment did not cause, in words (none: []).

    The experiment maps its buffer once and unmaps it once, so VSZ stays flat at its
    after-allocation value through the whole touch curve, and comes back to where it
    started once the buffer is freed; a thread started meanwhile shows as a step."""
    vsz = dict(zip(stages["stage"], stages["vsz_kib"].astype(int), strict=True))
    found = []
    if abs(vsz["after_free"] - vsz["before"]) > VSZ_SLACK_KIB:
        found.append(f"after free VSZ is {vsz['after_free'] - vsz['before']:+,} KiB "
                     "from before the allocation")
    if abs(vsz["after_touch"] - vsz["after_alloc"]) > VSZ_SLACK_KIB:
        found.append(f"VSZ moved {vsz['after_touch'] - vsz['after_alloc']:+,} KiB while "
                     "touching")
    moved = curve[(curve["vsz_kib"].astype(int) - vsz["after_alloc"]).abs() > VSZ_SLACK_KIB]
    if len(moved):
        first = moved.iloc[0]
        found.append(f"VSZ left its after-allocation value at {int(first.touched_kib):,} KiB "
                     f"touched ({int(first.vsz_kib) - vsz['after_alloc']:+,} KiB)")
    if "threads" in stages and stages["threads"].nunique() > 1:
        counts = ", ".join(str(int(t)) for t in stages["threads"])
        found.append(f"the thread count changed ({counts})")
    return found
