"""threadcost fibers: C fibers, switch time, memory and creation per fiber."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "fibers"
HELP = ("two C fibers ping-pong on one pinned thread (ucontext or a hand-written switch); "
        "memory and creation time of N idle fibers")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--switch-iterations", "tasks_switch_iterations",
                 "timed round trips A->B->A")
    opt.declared(parser, "--warmup", "tasks_warmup", "untimed round trips before timing")
    opt.declared(parser, "--count", "tasks_fiber_count",
                 "idle fibers for the memory slope (at most about vm.max_map_count/2)")
    opt.declared(parser, "--stack-kib", "tasks_fiber_stack_kib",
                 "stack of each fiber (a PROT_NONE guard page is added below it), a multiple "
                 "of the page size")
    opt.declared(parser, "--touch-kib", "tasks_touch_kib",
                 "KiB of its stack each idle fiber writes, comma-separated (at most "
                 "stack-kib - the fiber's reserve)")
    opt.choice(parser, "--impl", opt.declaration("tasks_fiber_impls").choices, "asm",
               "asm: a hand-written register switch (x86-64); ucontext: "
               "makecontext/swapcontext",
               source="threadcost.experiments.user_space_tasks.fibers:IMPLS")
    opt.cpu(parser, "the measuring thread", none=True)
    opt.declared(parser, "--points", "tasks_memory_points",
                 "readings of /proc/self/status per memory run")


RUNS = "threadcost.experiments.user_space_tasks.fibers:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"switch_iterations": args.switch_iterations, "count": args.count,
            "stack_kib": args.stack_kib, "touch_kib": args.touch_kib, "impl": args.impl,
            "warmup": args.warmup, "cpu": args.cpu, "points": args.points}


def format_text(result: Result) -> str:
    s = result.summary
    d = s["round_trip_ns"]
    head = (f"{s['impl']}: {s['impl_description']}\n"
            f"round trip (2 switches, one clock read of ~{s['timer_overhead_ns']} ns included), "
            f"ns, {d['n']:,} samples:\n")
    dist = table(["min", "p50", "p90", "p99", "max"],
                 [[f"{d[k]:,.0f}" for k in ("min", "p50", "p90", "p99", "max")]])
    batch = (f"\nbatch without clock reads: {s['batch_round_trip_ns']:,.1f} ns per round trip, "
             f"{s['switch_ns_batch']:,.1f} ns per switch\n\nper idle fiber (slope over the "
             f"count):\n")
    rows = [[f"{r['touch_kib']:,}", f"{r['fibers']:,}",
             f"{r['rss_kib']:,.2f}" if r["rss_kib"] is not None else "-",
             f"{r['vsz_kib']:,.2f}" if r["vsz_kib"] is not None else "-",
             f"{r['create_ns']['p50']:,.0f}", f"{r['start_ns']['p50']:,.0f}"]
            for r in s["per_fiber_by_touch"]]
    mem = table(["touch KiB", "fibers", "RSS KiB", "VSZ KiB", "create p50 ns",
                 "first switch p50 ns"], rows)
    return head + dist + batch + mem
