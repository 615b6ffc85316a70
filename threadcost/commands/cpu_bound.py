"""threadcost cpu-bound: S3's CPU-bound tasks on one CPU, threads vs processes (C13, C14)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "cpu-bound"
HELP = ("CPU-bound tasks sharing one CPU as threads vs processes, with and without a "
        "working set each: wall, user, sys, dTLB misses (claims C13, C14)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--tasks", "cpu_bound_tasks", "tasks (S3: 5)")
    opt.declared(parser, "--limit", "cpu_bound_limit",
                 "prime-count limit without a working set (S3: 30,000; None or auto: "
                 "sized so a run lasts --run-s)")
    opt.declared(parser, "--ws-limit", "cpu_bound_ws_limit",
                 "outer iterations with the working set (None or auto: sized so a run "
                 "lasts --ws-run-s)")
    opt.declared(parser, "--run-s", "cpu_bound_run_s",
                 "seconds of CPU one run without a working set is sized to")
    opt.declared(parser, "--ws-run-s", "cpu_bound_ws_run_s",
                 "seconds of CPU one run with the working sets is sized to")
    opt.declared(parser, "--ws-ints", "cpu_bound_ws_ints",
                 "64-bit integers each task writes per outer iteration (1,000,000: S3's 8 MB)")
    opt.choice(parser, "--working-sets", ("none", "own"), "none,own",
               "none: no memory of its own; own: each task writes its own array",
               source="threadcost.experiments.context_switch.cpu_bound:WORKING_SETS", several=True)
    opt.choice(parser, "--modes", ("threads", "processes"), "threads,processes",
               "the tasks as threads of one process or as processes",
               source="threadcost.experiments.context_switch.cpu_bound:MODES", several=True)
    opt.declared(parser, "--repeats", "cpu_bound_repeats", "runs per condition, alternating")
    opt.value(parser, "--cpu", "auto", "the CPU every task is pinned to (auto: the last usable)")


RUNS = "threadcost.experiments.context_switch.cpu_bound:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"tasks": args.tasks, "limit": args.limit, "ws_limit": args.ws_limit,
            "ws_ints": args.ws_ints, "working_sets": args.working_sets, "modes": args.modes,
            "repeats": args.repeats, "cpu": args.cpu, "run_s": args.run_s,
            "ws_run_s": args.ws_run_s}


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
    for ws, got in (result.summary.get("sizing") or {}).items():
        how = (f"calibrated to about {got['target_s']:g} s of CPU per run"
               if got.get("sized") == "calibrated" else "fixed")
        out += f"\nloop size, working set {ws}: {got['size']:,} ({how})"
    ratios = result.tables["ratios"]
    wall = ratios[ratios.quantity == "wall_s"]
    for r in wall.itertuples():
        ci = (f" (95% interval {r.ci95_low:.3f} to {r.ci95_high:.3f})"
              if r.ci95_low == r.ci95_low and r.ci95_low is not None else "")
        out += f"\nwall, processes / threads, working set {r.working_set}: {r.ratio:.3f}{ci}"
    return out
