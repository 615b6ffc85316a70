"""threadcost launch: how long a thread or a process takes to start (C09, C10)."""

from __future__ import annotations

import argparse

from threadcost.experiments import launch
from threadcost.results import Result
from threadcost.textout import table

NAME = "launch"
HELP = ("start a thread (or fork/vfork/posix_spawn/clone a process) N times and report "
        "create, first-run, join and lifecycle times as distributions (claim C09)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--iterations", default="1000",
                        help="timed launches per kind and memory size (1 .. 1,000,000; "
                             "default 1000)")
    parser.add_argument("--warmup", default="20",
                        help="launches before timing, reported apart as the first "
                             "launches (default 20)")
    parser.add_argument("--kind", default="thread",
                        help="thread (default), fork, vfork, posix_spawn or clone; "
                             "several comma-separated")
    parser.add_argument("--stack-kib", default="0",
                        help="thread stack size in KiB, a multiple of the page size "
                             ">= 16; 0 = the default (ulimit -s)")
    parser.add_argument("--pin", default=None,
                        help="CPUs to pin the measuring process to, e.g. 0 or 0,1 "
                             "(default: not pinned)")
    parser.add_argument("--parent-touch-mib", default="0",
                        help="MiB of memory the parent holds, every page written "
                             "(default 0; several comma-separated)")
    parser.add_argument("--pause-us", default="0",
                        help="sleep between create and join, outside the timing "
                             "(default 0)")
    parser.add_argument("--burst", default="",
                        help="also start bursts of N threads all alive at once, e.g. "
                             "100,1000 (at most 10,000; default none)")
    parser.add_argument("--burst-repeats", default="3", help="bursts per N (default 3)")
    parser.add_argument("--memcpy-kib", default="64",
                        help="size of the memcpy yardstick in KiB (default 64; 0 skips it)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the plain create+join loop baseline")


def execute(args: argparse.Namespace) -> Result:
    return launch.run(kinds=args.kind, iterations=args.iterations, warmup=args.warmup,
                      stack_kib=args.stack_kib, pin=args.pin,
                      parent_touch_mib=args.parent_touch_mib, pause_us=args.pause_us,
                      burst_sizes=args.burst, burst_repeats=args.burst_repeats,
                      memcpy_kib=args.memcpy_kib, baseline=not args.no_baseline)


def _us(ns: float | None) -> str:
    return "-" if ns is None or ns != ns else f"{ns / 1000:,.1f}"


def format_text(result: Result) -> str:
    s = result.summary
    rows = []
    for e in s["series"]:
        for metric in launch.METRICS:
            d = e[metric]
            rows.append([e["kind"], e["parent_touch_mib"], metric.removesuffix("_ns"),
                         _us(d["min"]), _us(d["p50"]), _us(d["p90"]), _us(d["p99"]),
                         _us(d["max"]), _us(d["mean"]), f"{d['n']:,}"])
    out = [table(["kind", "parent MiB", "time", "min us", "p50 us", "p90 us", "p99 us",
                  "max us", "mean us", "n"], rows)]
    out.append(f"\ntimer overhead: {s['timer_overhead_ns']} ns per clock read")
    if "baseline" in s:
        b = s["baseline"]
        out.append(f"baseline (plain create+join loop): {_us(b['mean_ns'])} us per thread")
    if "memcpy" in s:
        m = s["memcpy"]
        out.append(f"memcpy of {m['bytes'] // 1024} KiB: {_us(m['ns']['mean'])} us (mean)")
    for b in s.get("burst", []):
        out.append(f"burst of {b['n']:,} threads (repeat {b['repeat']}): "
                   f"{_us(b['create_mean_ns'])} us per create, "
                   f"{b['wall_ns'] / 1e6:,.1f} ms wall, user {b['user_us'] / 1000:,.1f} ms, "
                   f"sys {b['sys_us'] / 1000:,.1f} ms")
    return "\n".join(out)
