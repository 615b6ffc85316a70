"""The thread-memory explorer's small grid, measured for the paper's static chart.

In JupyterLab the thread-memory explorer re-measures at any value the reader picks. The
rendered paper has no kernel, so ``make paper`` measures a small grid of values here and
the paper's chart (``views/thread_memory_chart.py``) lets the reader move between its
points. The grid costs a few seconds with the default parameters.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.experiments.thread_memory import run as thread_memory
from threadcost.results import Result
from threadcost.settings import validate

THREAD_STACKS_KIB = (64, 256, 2048, 0)  # 0: the default stack (RLIMIT_STACK)
THREAD_TOUCH_KIB = (0, 16, 64, 200)
MAX_GRID_THREADS = 2000


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
