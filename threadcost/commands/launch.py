"""threadcost launch: how long a thread or a process takes to start (C09, C10)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.experiments.launch.spec import METRICS
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "launch"
HELP = ("start a thread (or fork/vfork/posix_spawn/clone a process) N times and report "
        "create, first-run, join and lifecycle times as distributions (claim C09)")
PROGRESS = True  # execute() passes args.progress on: the experiment draws its own bar


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--iterations", "launch_iterations",
                 "timed launches per kind and memory size")
    opt.declared(parser, "--warmup", "launch_warmup",
                 "launches before timing, reported apart as the first launches")
    opt.choice(parser, "--kind", opt.declaration("launch_kinds").choices, "thread",
               "what is launched", source="threadcost.experiments.launch.run:KINDS", several=True)
    opt.declared(parser, "--stack-kib", "launch_stack_kib", opt.STACK_KIB_HELP)
    opt.pin(parser, "the measuring process")
    opt.value(parser, "--parent-touch-mib", "0",
              "MiB of memory the parent holds, every page written; several comma-separated, "
              + opt.declaration("launch_parent_touch_mib").range_text())
    opt.value(parser, "--pause-us", "0", "sleep between create and join, outside the timing")
    opt.value(parser, "--burst", "",
              "also start bursts of N threads all alive at once, e.g. 100,1000 "
              f"({opt.declaration('launch_burst_sizes').range_text()}; default: none)")
    opt.declared(parser, "--burst-repeats", "launch_burst_repeats", "bursts per N")
    opt.declared(parser, "--memcpy-kib", "launch_memcpy_kib",
                 "size of the memcpy yardstick in KiB (0 skips it)")
    opt.switch(parser, "--no-baseline", "skip the plain create+join loop baseline")


RUNS = "threadcost.experiments.launch.run:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    opt.needs_checkout("launch", "its launch driver and spawn target")
    return {"kinds": args.kind, "iterations": args.iterations, "warmup": args.warmup,
            "stack_kib": args.stack_kib, "pin": args.pin,
            "parent_touch_mib": args.parent_touch_mib, "pause_us": args.pause_us,
            "burst_sizes": args.burst, "burst_repeats": args.burst_repeats,
            "memcpy_kib": args.memcpy_kib, "baseline": not args.no_baseline,
            "progress": args.progress}


def _us(ns: float | None) -> str:
    return "-" if ns is None or ns != ns else f"{ns / 1000:,.1f}"


def format_text(result: Result) -> str:
    s = result.summary
    rows = []
    for e in s["series"]:
        for metric in METRICS:
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
