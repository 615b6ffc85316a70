"""threadcost peers: the Go rows (goroutine ping-pong, memory, sleepers)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost import vocabulary
from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "peers"
HELP = ("goroutines measured by a small Go program (needs go on PATH; "
        "without it: exit 0 with a 'skipped' reason)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--iterations", "tasks_go_iterations",
                 "timed channel round trips per mode")
    opt.declared(parser, "--warmup", "tasks_warmup", "untimed round trips before timing")
    opt.cpu(parser, "the GOMAXPROCS=1 run")
    opt.declared(parser, "--memory-count", "tasks_goroutines",
                 "idle goroutines for the memory slope")
    opt.declared(parser, "--memory-points", "tasks_memory_points",
                 "readings of /proc/self/status while starting them")
    opt.value(parser, "--sleepers-count", "10000", "sleeping goroutines, 0 to skip")
    opt.declared(parser, "--period-ms", "tasks_sleep_period_ms", "each sleep")
    opt.value(parser, "--duration-ms", "2000", "total sleep per goroutine, ms")
    opt.declared(parser, "--stagger-ms", "tasks_sleep_stagger_ms",
                 "start delays spread below this")


RUNS = "threadcost.experiments.user_space_tasks.goroutines:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    opt.needs_checkout("peers", "its Go program")
    return {"iterations": args.iterations, "warmup": args.warmup, "cpu": args.cpu,
            "memory_count": args.memory_count, "memory_points": args.memory_points,
            "sleepers_count": args.sleepers_count, "period_ms": args.period_ms,
            "duration_ms": args.duration_ms, "stagger_ms": args.stagger_ms}


def format_text(result: Result) -> str:
    s = result.summary
    if s.get("skipped"):
        return f"not run here: {vocabulary.bare_reason(s['skipped'])}"
    rows = []
    for key in ("channel_pingpong", "channel_pingpong_default"):
        m = s[key]
        d = m["round_trip_ns"]
        rows.append([m["mode"], f"{d['min']:,.0f}", f"{d['p50']:,.0f}", f"{d['p99']:,.0f}",
                     f"{m['batch_round_trip_ns']:,.0f}", f"{m['round_trips_per_s']:,.0f}"])
    out = [f"{s['go_version']}", "channel round trip (2 goroutine switches), ns:",
           table(["mode", "min", "p50", "p99", "batch", "round trips/s"], rows)]
    mem = s["goroutine_memory"]
    out.append(f"\nper idle goroutine ({mem['goroutines']:,}): "
               f"RSS {mem['per_goroutine_rss_kib']:,.2f} KiB, "
               f"stack in use {mem['per_goroutine_stack_kib']:,.2f} KiB")
    if "sleepers" in s:
        z = s["sleepers"]
        out.append(f"{z['count']:,} sleeping goroutines: RSS {z['rss_before_kib']:,} -> "
                   f"{z['peak_rss_kib']:,} KiB, user {z['user_us'] / 1e6:.2f} s, "
                   f"sys {z['sys_us'] / 1e6:.2f} s, wall {z['wall_ns'] / 1e9:.2f} s")
    return "\n".join(out)
