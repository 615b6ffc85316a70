"""threadcost cpu-bound: S3's CPU-bound tasks on one CPU, threads vs processes (C13, C14)."""

from __future__ import annotations

import argparse

from threadcost.experiments import cpu_bound
from threadcost.results import Result
from threadcost.textout import table

NAME = "cpu-bound"
HELP = ("CPU-bound tasks sharing one CPU as threads vs processes, with and without a "
        "working set each: wall, user, sys, dTLB misses (claims C13, C14)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", default="5", help="tasks, 1 .. 64 (default 5, as S3)")
    parser.add_argument("--limit", default="12000",
                        help="prime-count limit without a working set (S3: 30,000; "
                             "default 12,000)")
    parser.add_argument("--ws-limit", default="1000",
                        help="outer iterations with the working set (default 1,000)")
    parser.add_argument("--ws-ints", default="1000000",
                        help="64-bit integers each task writes per outer iteration "
                             "(default 1,000,000: S3's 8 MB)")
    parser.add_argument("--working-sets", default="none,own",
                        help="comma-separated: none, own (default none,own)")
    parser.add_argument("--modes", default="threads,processes",
                        help="comma-separated: threads, processes (default both)")
    parser.add_argument("--repeats", default="5",
                        help="runs per condition, alternating, 1 .. 1000 (default 5)")
    parser.add_argument("--cpu", default="auto",
                        help="the CPU every task is pinned to (default auto: the last usable)")


def execute(args: argparse.Namespace) -> Result:
    return cpu_bound.run(tasks=args.tasks, limit=args.limit, ws_limit=args.ws_limit,
                         ws_ints=args.ws_ints, working_sets=args.working_sets,
                         modes=args.modes, repeats=args.repeats, cpu=args.cpu)


def format_text(result: Result) -> str:
    t = result.tables.get("totals")
    if t is None or t.empty:
        return "no run completed"
    rows = [[r.working_set, r.mode, f"{r.wall_s_median:.3f}", f"{r.user_s_median:.3f}",
             f"{r.sys_s_median:.3f}", f"{r.whole_sys_s_median:.3f}",
             "-" if r.dtlb_misses_median != r.dtlb_misses_median
             else f"{r.dtlb_misses_median:,.0f}"] for r in t.itertuples()]
    out = table(["working set", "tasks as", "wall s", "user s", "sys s", "sys s (whole run)",
                 "dTLB load misses"], rows)
    ratios = result.tables["ratios"]
    wall = ratios[ratios.quantity == "wall_s"]
    for r in wall.itertuples():
        ci = (f" (95% interval {r.ci95_low:.3f} to {r.ci95_high:.3f})"
              if r.ci95_low == r.ci95_low and r.ci95_low is not None else "")
        out += f"\nwall, processes / threads, working set {r.working_set}: {r.ratio:.3f}{ci}"
    return out
