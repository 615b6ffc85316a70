"""The malloc touch family's spec: its experiments, their tables, its notebook's
parameters and their checks (:mod:`threadcost.experiments.specs`)."""

from __future__ import annotations

from threadcost.experiments.specs import (
    Check,
    Experiment,
    Table,
    columns,
    family,
    param,
)

# The four readings of a run, in the order taken.
STAGES = ("before", "after_alloc", "after_touch", "after_free")

MALLOC_TOUCH_TOUCH_CURVE = columns(
    amount="touched_kib vsz_kib rss_kib rss_anon_kib")

PARAMETERS = (
    param('malloc_mib', 'int', 400,
          'MiB to allocate (C07 used 400)', unit='MiB', minimum=1, maximum=1 << 30,
          feeds=('checks.check_params',), narrowed=True),
    param('malloc_allocators', 'list[str]', ['malloc', 'mmap'],
          'allocators to compare', choices=('malloc', 'mmap')),
    param('malloc_points', 'int', 41,
          'readings taken while touching', minimum=2, maximum=10_000,
          feeds=('checks.check_params',)),
)

CHECKS = (
    Check("checks.check_params", {"mib": "malloc_mib", "allocator": "malloc_allocators",
                                  "points": "malloc_points"}, each="allocator"),
)

FAMILY = family(
    "malloc_touch", "01_malloc_touch",
    experiments=(
        Experiment("malloc_touch", "malloc_touch.run", (
            Table("stages", columns(
                    count="threads",
                    amount="vsz_kib rss_kib rss_anon_kib pte_kib stk_kib",
                    text="stage")),
            Table("touch_curve", MALLOC_TOUCH_TOUCH_CURVE),
        ), figures=("malloc_touch_curve",)),
        Experiment("malloc_touch_grid", "malloc_touch.grid", (
            Table("curves", columns(
                    percent="touched_pct",
                    amount="touched_kib vsz_kib rss_kib rss_anon_kib touched_mib mib",
                    signed="vsz_growth_mib rss_growth_mib",
                    text="allocator")),
        ), auxiliary=True),
    ),
    parameters=PARAMETERS,
    checks=CHECKS,
    prefixes=('malloc_',), explorers=True,
    title="malloc and touch",
    about="virtual vs resident memory of one allocation",
)
