"""The malloc-touch explorer's small grid, measured for the paper's static chart.

In JupyterLab the malloc-touch explorer re-measures at any value the reader picks. The
rendered paper has no kernel, so ``make paper`` measures a small grid of values here and
the paper's chart (``views/malloc_touch_chart.py``) lets the reader move between its
points. The grid costs a few seconds with the default parameters.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.experiments.malloc_touch import run as malloc_touch
from threadcost.results import Result
from threadcost.settings import validate

MALLOC_SIZES_MIB = (16, 64, 256)
MALLOC_POINTS = 21  # readings while touching: every 5% of the buffer


def malloc_touch_grid(sizes_mib: Any = MALLOC_SIZES_MIB, allocators: Any = ("malloc", "mmap"),
                      points: Any = MALLOC_POINTS) -> Result:
    """One full touch curve per size and allocator (a curve's prefix is the run that
    touches that share of the buffer: the pages are written in the same order)."""
    sizes = [validate.integer("sizes_mib", s, minimum=1, maximum=4096) for s in sizes_mib]
    allocs = [validate.choice("allocators", a, malloc_touch.ALLOCATORS) for a in allocators]
    n = validate.integer("points", points, minimum=2, maximum=1000)
    curves = []
    for mib in sizes:
        for allocator in allocs:
            run = malloc_touch.run(mib=mib, allocator=allocator, points=n)
            curve = run.tables["touch_curve"].copy()
            base = run.summary["before"]
            curve["vsz_growth_mib"] = (curve.vsz_kib - base["vsz_kib"]) / 1024
            curve["rss_growth_mib"] = (curve.rss_kib - base["rss_kib"]) / 1024
            curve["touched_mib"] = curve.touched_kib / 1024
            curve["touched_pct"] = (100 * curve.touched_kib / (mib * 1024)).round(1)
            curve["mib"], curve["allocator"] = mib, allocator
            curves.append(curve)
    table = pd.concat(curves, ignore_index=True)
    return Result(experiment="malloc_touch_grid",
                  params={"sizes_mib": sizes, "allocators": allocs, "points": n},
                  summary={"runs": len(curves)}, tables={"curves": table})
