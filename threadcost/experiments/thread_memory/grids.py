"""Small grids measured for the paper's static explorers.

In JupyterLab the malloc-touch and thread-memory explorers re-measure at any value
the reader picks. The rendered paper has no kernel, so ``make paper`` measures a
small grid of values here and the paper's charts (``views/malloc_touch_chart.py``,
``views/thread_memory_chart.py``) let the reader move between its points. Each grid
costs a few seconds with the default parameters.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.experiments.malloc_touch import run as malloc_touch
from threadcost.experiments.thread_memory import run as thread_memory
from threadcost.results import Result
from threadcost.settings import validate

MALLOC_SIZES_MIB = (16, 64, 256)
MALLOC_POINTS = 21  # readings while touching: every 5% of the buffer
THREAD_STACKS_KIB = (64, 256, 2048, 0)  # 0: the default stack (RLIMIT_STACK)
THREAD_TOUCH_KIB = (0, 16, 64, 200)
MAX_GRID_THREADS = 2000


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


def thread_memory_grid(threads: Any = 1000, stacks_kib: Any = THREAD_STACKS_KIB,
                       touches_kib: Any = THREAD_TOUCH_KIB) -> Result:
    """Four thread counts up to ``threads`` (one fresh process each) for every stack
    size x touch depth that fits (a touch deeper than the stack is skipped, named)."""
    n = validate.integer("threads", threads, minimum=4, maximum=MAX_GRID_THREADS)
    stacks = [validate.stack_kib("stacks_kib", s) for s in stacks_kib]
    touches = [validate.integer("touches_kib", t, minimum=0, maximum=1024 * 1024)
               for t in touches_kib]
    counts = sorted({max(n * k // 4, 1) for k in (1, 2, 3, 4)})
    frames, skipped = [], []
    for stack in stacks:
        room = thread_memory.effective_stack_kib(stack) - thread_memory.SAFETY_KIB
        for touch in touches:
            if touch > room:
                skipped.append({"stack_kib": stack, "touch_kib": touch,
                                "reason": f"a {touch} KiB touch does not fit in the stack"})
                continue
            run = thread_memory.run(thread_counts=counts, stack_kib=stack, touch_kib=touch,
                                    repeats=1)
            pts = run.tables["points"][["threads", "vsz_kib", "rss_kib", "kernel_kib"]].copy()
            pts["stack_kib"], pts["touch_kib"] = stack, touch
            frames.append(pts)
    return Result(experiment="thread_memory_grid",
                  params={"threads": counts, "stacks_kib": stacks, "touches_kib": touches},
                  summary={"runs": len(frames), "skipped": skipped},
                  tables={"points": pd.concat(frames, ignore_index=True),
                          "skipped": pd.DataFrame(skipped, columns=["stack_kib", "touch_kib",
                                                                    "reason"])})
