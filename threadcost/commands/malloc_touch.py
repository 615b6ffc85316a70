"""threadcost malloc-touch: virtual vs resident memory of one allocation (C07)."""

from __future__ import annotations

import argparse

from threadcost.experiments import malloc_touch
from threadcost.results import Result
from threadcost.textout import table

NAME = "malloc-touch"
HELP = "allocate N MiB, touch it page by page, and watch VSZ and RSS (claim C07)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mib", required=True, help="MiB to allocate (1 .. 80%% of MemAvailable)")
    parser.add_argument("--allocator", default="malloc", help="malloc (default) or mmap")
    parser.add_argument("--points", default="33",
                        help="readings taken while touching (2 .. 10000, default 33)")
    parser.add_argument("--touch-fraction", default="1.0",
                        help="share of the pages to touch, 0 .. 1 (default 1)")


def execute(args: argparse.Namespace) -> Result:
    return malloc_touch.run(mib=args.mib, allocator=args.allocator, points=args.points,
                            touch_fraction=args.touch_fraction)


def format_text(result: Result) -> str:
    s = result.summary
    rows = [[stage, f"{s[stage]['vsz_kib']:,}", f"{s[stage]['rss_kib']:,}"]
            for stage in malloc_touch.STAGES]
    speed = s["touch_mib_per_s"]
    tail = f"\ntouched {s['touched_mib']:,.0f} MiB" + (
        f" at {speed:,.0f} MiB/s (first-touch page faults included)" if speed else "")
    return table(["stage", "VSZ (KiB)", "RSS (KiB)"], rows) + tail
