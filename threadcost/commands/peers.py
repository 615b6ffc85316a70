"""threadcost peers: the Go rows (goroutine ping-pong, memory, sleepers)."""

from __future__ import annotations

import argparse

from threadcost.experiments import peers
from threadcost.results import Result
from threadcost.textout import table

NAME = "peers"
HELP = ("goroutines measured by a small Go program (needs go on PATH; "
        "without it: exit 0 with a 'skipped' reason)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--iterations", default="100000",
                        help="timed channel round trips per mode (default 100000)")
    parser.add_argument("--warmup", default="10000",
                        help="untimed round trips first (default 10000)")
    parser.add_argument("--cpu", default="auto",
                        help="CPU the GOMAXPROCS=1 run is pinned to, or 'auto' (the first CPU "
                             "this process may use; default)")
    parser.add_argument("--memory-count", default="10000",
                        help="idle goroutines for the memory slope (default 10000)")
    parser.add_argument("--memory-points", default="11",
                        help="readings of /proc/self/status while starting them (default 11)")
    parser.add_argument("--sleepers-count", default="10000",
                        help="sleeping goroutines, 0 to skip (default 10000)")
    parser.add_argument("--period-ms", default="10", help="each sleep, ms (default 10)")
    parser.add_argument("--duration-ms", default="2000",
                        help="total sleep per goroutine, ms (default 2000)")
    parser.add_argument("--stagger-ms", default="200",
                        help="start delays spread below this, ms (default 200)")


def execute(args: argparse.Namespace) -> Result:
    return peers.run(iterations=args.iterations, warmup=args.warmup, cpu=args.cpu,
                     memory_count=args.memory_count, memory_points=args.memory_points,
                     sleepers_count=args.sleepers_count, period_ms=args.period_ms,
                     duration_ms=args.duration_ms, stagger_ms=args.stagger_ms)


def format_text(result: Result) -> str:
    s = result.summary
    if s.get("skipped"):
        return f"skipped: {s['skipped']}"
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
