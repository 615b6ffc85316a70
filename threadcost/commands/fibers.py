"""threadcost fibers: C fibers, switch time, memory and creation per fiber."""

from __future__ import annotations

import argparse

from threadcost.experiments import fibers
from threadcost.results import Result
from threadcost.textout import table

NAME = "fibers"
HELP = ("two C fibers ping-pong on one pinned thread (ucontext or a hand-written switch); "
        "memory and creation time of N idle fibers")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--switch-iterations", default="100000",
                        help="timed round trips A->B->A (1 .. 10,000,000; default 100000)")
    parser.add_argument("--warmup", default="10000",
                        help="untimed round trips before timing (default 10000)")
    parser.add_argument("--count", default="1000",
                        help="idle fibers for the memory slope (3 .. about vm.max_map_count/2; "
                             "default 1000)")
    parser.add_argument("--stack-kib", default="64",
                        help="stack of each fiber in KiB, a multiple of the page size, >= 16 "
                             "(a PROT_NONE guard page is added below it; default 64)")
    parser.add_argument("--touch-kib", default="0",
                        help="KiB of its stack each idle fiber writes, or a comma list "
                             f"(0 .. stack-kib - {fibers.RESERVE_KIB}; default 0)")
    parser.add_argument("--impl", default="asm",
                        help="asm (hand-written register switch, x86-64; default) or ucontext "
                             "(makecontext/swapcontext)")
    parser.add_argument("--cpu", default="auto",
                        help="CPU to pin the measuring thread to, 'auto' (the first CPU this "
                             "process may use; default) or 'none'")
    parser.add_argument("--points", default="11",
                        help="readings of /proc/self/status per memory run (3 .. 1000; "
                             "default 11)")


def execute(args: argparse.Namespace) -> Result:
    return fibers.run(switch_iterations=args.switch_iterations, count=args.count,
                      stack_kib=args.stack_kib, touch_kib=args.touch_kib, impl=args.impl,
                      warmup=args.warmup, cpu=args.cpu, points=args.points)


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
