"""threadcost malloc-touch: virtual vs resident memory of one allocation (C07)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.experiments.malloc_touch.spec import STAGES
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "malloc-touch"
HELP = "allocate N MiB, touch it page by page, and watch VSZ and RSS (claim C07)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.value(parser, "--mib", None, "MiB to allocate (1 .. 80%% of MemAvailable)",
              required=True)
    opt.choice(parser, "--allocator", opt.declaration("malloc_allocators").choices, "malloc",
               "how the memory is taken",
               source="threadcost.experiments.malloc_touch.run:ALLOCATORS")
    opt.declared(parser, "--points", "malloc_points", "readings taken while touching")
    opt.value(parser, "--touch-fraction", "1.0", "share of the pages to touch, 0 .. 1")


RUNS = "threadcost.experiments.malloc_touch.run:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"mib": args.mib, "allocator": args.allocator, "points": args.points,
            "touch_fraction": args.touch_fraction}


def format_text(result: Result) -> str:
    s = result.summary
    rows = [[stage, f"{s[stage]['vsz_kib']:,}", f"{s[stage]['rss_kib']:,}"]
            for stage in STAGES]
    speed = s["touch_mib_per_s"]
    tail = f"\ntouched {s['touched_mib']:,.0f} MiB" + (
        f" at {speed:,.0f} MiB/s (first-touch page faults included)" if speed else "")
    return table(["stage", "VSZ (KiB)", "RSS (KiB)"], rows) + tail
