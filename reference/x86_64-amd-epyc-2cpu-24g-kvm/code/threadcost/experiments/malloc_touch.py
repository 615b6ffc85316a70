"""Virtual vs resident memory of one allocation, before, during and after touching.

Claim C07: allocating 400 MiB moves the virtual size (VSZ) at once but not the
resident set (RSS); only writing to the pages makes them resident.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import validate
from threadcost.errors import check_status
from threadcost.native import ffi, lib, proc_status_dict
from threadcost.results import Result

EXPERIMENT = "malloc_touch"
ALLOCATORS = {"malloc": lib.TC_ALLOC_MALLOC, "mmap": lib.TC_ALLOC_MMAP}
STAGES = ("before", "after_alloc", "after_touch", "after_free")
MAX_POINTS = 10_000


def check_params(mib: Any, allocator: Any = "malloc", points: Any = 33,
                 touch_fraction: Any = 1.0) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError)."""
    size = validate.integer("mib", mib, minimum=1, maximum=1 << 30)
    validate.memory_fits("mib", mib, size * 1024)
    return {
        "mib": size,
        "allocator": validate.choice("allocator", allocator, ALLOCATORS),
        "points": validate.integer("points", points, minimum=2, maximum=MAX_POINTS),
        "touch_fraction": validate.fraction("touch_fraction", touch_fraction),
    }


def run(mib: Any = 64, allocator: Any = "malloc", points: Any = 33,
        touch_fraction: Any = 1.0) -> Result:
    """Allocate ``mib`` MiB, touch ``touch_fraction`` of it page by page, free it.

    Returns the four stage readings (``before``, ``after_alloc``,
    ``after_touch``, ``after_free``) and a ``touch_curve`` of ``points``
    readings taken while touching. All sizes are KiB of this process as
    /proc/self/status reports them.
    """
    p = check_params(mib, allocator, points, touch_fraction)
    curve = ffi.new("tc_touch_point[]", p["points"])
    out = ffi.new("tc_malloc_touch_result *")
    status = lib.tc_malloc_touch(p["mib"], ALLOCATORS[p["allocator"]], p["points"],
                                 round(p["touch_fraction"] * 1000), curve, out)
    check_status("tc_malloc_touch", status, out.err)

    limit_hit = None
    if status == lib.TC_ELIMIT:
        limit_hit = {"limit": "memory (allocation refused: RLIMIT_AS, overcommit or RAM)",
                     "errno": int(out.err)}

    stages = {name: proc_status_dict(getattr(out, name)) for name in STAGES}
    points_rows = [
        {"touched_kib": int(curve[i].touched_kib), "vsz_kib": int(curve[i].vsz_kib),
         "rss_kib": int(curve[i].rss_kib), "rss_anon_kib": int(curve[i].rss_anon_kib)}
        for i in range(out.points_filled)
    ]
    base = stages["before"]
    touch_s = out.touch_ns / 1e9
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
